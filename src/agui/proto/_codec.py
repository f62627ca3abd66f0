"""Writing and reading the frames of the protobuf binding (see `agui.proto` for the mapping).

This is the half of `agui.proto` that needs the `protobuf` package; `agui.proto` loads it the
first time `encode_proto` or `decode_proto` is asked for, so its media type, and `agui.asgi`,
import without it.
"""

from __future__ import annotations

import json
import struct
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, cast

from google.protobuf import __version__ as protobuf_version
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError as _ProtobufDecodeError
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from agui._protocol.text import unicode_problem
from agui.errors import DecodeError, UnknownMemberWarning, UsageError
from agui.events import (
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from agui.patch import escape_pointer_token
from agui.proto._mapping import from_proto, to_proto
from agui.proto._requirement import require_protobuf
from agui.proto._schema import EVENT, EVENT_TYPES
from agui.proto._values import read_open, varint, write_open
from agui.sse import event_json
from agui.wire import parse_event

__all__ = ["decode_proto", "encode_proto"]

require_protobuf(protobuf_version)

_LENGTH = struct.Struct(">I")
_Layout = tuple[bytes, bytes, bytes, bytes, str]
_EXTRAS = ("timestamp", "raw_event", "metadata", "subagent_run_id")
_UNIONS = frozenset({"ag_ui.InputContent", "ag_ui.InputContentSource"})
_WIRE_TYPES = {
    FieldDescriptor.TYPE_INT64: 0,
    FieldDescriptor.TYPE_BOOL: 0,
    FieldDescriptor.TYPE_ENUM: 0,
}
"""The wire type of each kind of event field that is not length-delimited (wire type 2)."""
_WIRE_NAMES = (
    "a varint",
    "8 bytes",
    "length-delimited bytes",
    "a group",
    "a group's end",
    "4 bytes",
)
_FRAMING = (
    "; a frame is a 4-byte big-endian length and then that many bytes, so the body was cut "
    "short (the run's stream ended early) or is not protobuf frames at all (SSE, say)"
)


def encode_proto(event: Event) -> bytes:
    r"""One frame of the protobuf binding: a 4-byte big-endian length, then the event message.

    Raises `UsageError` when a number in the event's JSON data does not fit a double, and what
    `agui.sse.event_json` raises for an event that cannot be serialized at all.

    Examples:
        >>> from agui.events import TextMessageContentEvent
        >>> frame = encode_proto(TextMessageContentEvent(message_id="m1", delta="Hi"))
        >>> frame
        b'\x00\x00\x00\x0e\x12\x0c\n\x02\x08\x01\x12\x02m1\x1a\x02Hi'
        >>> int.from_bytes(frame[:4], "big") == len(frame) - 4
        True
    """
    payload = _delta(event)
    if payload is None:
        payload = _message(event).SerializeToString()
    return _LENGTH.pack(len(payload)) + payload


def decode_proto(data: bytes | bytearray | memoryview) -> list[Event]:
    """The events of a body of protobuf frames, in order, each validated like `parse_event`.

    Raises `UsageError` for what is not bytes, `DecodeError` for a body that ends mid-frame or
    a frame that does not decode (a `MalformedEvent` names the field of an event that decodes
    but does not validate); warns `UnknownMemberWarning` for each frame it drops because it
    carries an unknown event type, and for each frame with fields the schema does not declare,
    which it drops.

    Examples:
        >>> from agui.events import RunStartedEvent, TextMessageContentEvent
        >>> body = encode_proto(RunStartedEvent(thread_id="t", run_id="r")) + encode_proto(
        ...     TextMessageContentEvent(message_id="m1", delta="Hi")
        ... )
        >>> [event.type for event in decode_proto(body)]
        ['RUN_STARTED', 'TEXT_MESSAGE_CONTENT']
        >>> decode_proto(body[:-1])
        Traceback (most recent call last):
        ...
        agui.errors.DecodeError: the body ends mid-frame: frame 1 declares 14 bytes, 13 follow; ...
    """
    data = _body(data)
    events: list[Event] = []
    offset = index = 0
    while offset < len(data):
        start = offset + _LENGTH.size
        if start > len(data):
            message = (
                f"the body ends mid-frame: frame {index} has {len(data) - offset} of the 4 bytes "
                f"of its length{_FRAMING}"
            )
            raise DecodeError(message)
        (size,) = _LENGTH.unpack_from(data, offset)
        offset = start + size
        if offset > len(data):
            message = (
                f"the body ends mid-frame: frame {index} declares {size} bytes, "
                f"{len(data) - start} follow{_FRAMING}"
            )
            raise DecodeError(message)
        event = _decode_frame(bytes(data[start:offset]), index)
        if event is not None:
            events.append(event)
        index += 1
    return events


def _body(data: object) -> bytes | bytearray:
    if isinstance(data, (bytes, bytearray)):
        return data
    if isinstance(data, memoryview):
        return data.tobytes()  # its items may be wider than a byte
    hint = (
        ": read the response's body as bytes (httpx's `response.content`, not `.text`)"
        if isinstance(data, str)
        else ""
    )
    message = (
        "decode_proto takes the bytes of a body of protobuf frames (bytes, bytearray or "
        f"memoryview), not {type(data).__name__}{hint}"
    )
    raise UsageError(message)


# -- writing -----------------------------------------------------------------------------------


def _tag(number: int) -> bytes:
    """The key of a length-delimited field (wire type 2)."""
    return varint(number << 3 | 2)


def _delta_layout(cls: type[BaseModel], id_name: str) -> _Layout:
    """A delta event's parts, from the schema: arm key, `baseEvent`, id and delta keys, id name."""
    kind: str = cls.model_fields["type"].default
    arm = EVENT.DESCRIPTOR.fields_by_name[kind.lower()]
    assert arm.message_type is not None  # noqa: S101 - every arm is a message field
    fields = arm.message_type.fields_by_name
    base = b"\x08" + varint(EVENT_TYPES.index(kind))
    id_key, delta_key = _tag(fields[id_name].number), _tag(fields["delta"].number)
    return _tag(arm.number), _tag(1) + varint(len(base)) + base, id_key, delta_key, id_name


def _has_any(fields: Mapping[str, object], names: tuple[str, ...]) -> bool:
    return any(fields[name] is not None for name in names)


def _string(key: bytes, text: str) -> bytes:
    """A string field; the empty string is its default, which proto3 leaves out."""
    data = text.encode()
    return key + varint(len(data)) + data if data else b""


_DELTAS: dict[type[BaseModel], _Layout] = {
    cls: _delta_layout(cls, id_name)
    for cls, id_name in (
        (TextMessageContentEvent, "message_id"),
        (ToolCallArgsEvent, "tool_call_id"),
        (ReasoningMessageContentEvent, "message_id"),
    )
}


def _delta(event: Event) -> bytes | None:
    """A streamed delta's message written directly, when it has only its id and text.

    Deltas are nearly every event of a stream, and this gives the bytes the schema-driven path
    gives (fields in number order, an empty string left out) without building a message.
    """
    layout = _DELTAS.get(type(event))
    if layout is None:
        return None
    arm, base, id_key, delta_key, id_name = layout
    fields = event.__dict__
    entity, delta = fields[id_name], fields["delta"]
    if type(entity) is not str or type(delta) is not str or _has_any(fields, _EXTRAS):
        return None
    try:
        body = base + _string(id_key, entity) + _string(delta_key, delta)
    except UnicodeEncodeError:  # a lone surrogate: `_message` says where it is
        return None
    return arm + varint(len(body)) + body


def _message(event: Event) -> Message:
    """The `ag_ui.Event` message of an event, filled from its wire JSON."""
    try:
        text = event_json(event)
    except PydanticSerializationError as error:
        if "surrogates not allowed" not in str(error):
            raise
        where = _surrogate_in(event.model_dump(by_alias=True, warnings=False), "")
        problem = (
            f"a {event.type} event cannot be written: {where or 'its JSON holds a surrogate'}; "
            "AG-UI text travels as UTF-8, which cannot encode it; decode the source with "
            "errors='replace', or drop the surrogate"
        )
        raise UsageError(problem) from None
    wire: dict[str, Any] = json.loads(text)
    body = to_proto(wire)
    write_open(body, event.type)
    message = EVENT()
    try:
        json_format.ParseDict(body, message)
    except json_format.ParseError as error:
        problem = f"a {event.type} event cannot be written in the protobuf binding: {error}"
        raise UsageError(problem) from None
    return message


def _surrogate_in(value: object, path: str) -> str | None:
    """Which field of an event's data holds its first lone surrogate, and where in it.

    A member name that holds one is told by the field around it: in the pointer, it would make
    the message itself impossible to print as UTF-8.
    """
    items: list[tuple[str, object]] = []
    if isinstance(value, str):
        problem = unicode_problem(value)
        return None if problem is None else f"its field '{path}' holds {problem}"
    if isinstance(value, dict):
        for key, item in cast("dict[str, object]", value).items():
            problem = unicode_problem(key)
            if problem is not None:
                return f"a member name in its field '{path}' holds {problem}"
            items.append((escape_pointer_token(key), item))
    elif isinstance(value, list):
        items = [(str(position), item) for position, item in enumerate(cast("list[object]", value))]
    for token, item in items:
        found = _surrogate_in(item, f"{path}/{token}")
        if found is not None:
            return found
    return None


# -- reading -----------------------------------------------------------------------------------


def _decode_frame(payload: bytes, index: int) -> Event | None:
    try:
        message = EVENT.FromString(payload)
        frame = json_format.MessageToDict(message, always_print_fields_with_no_presence=True)
        read_open(frame, index)
    except (_ProtobufDecodeError, json_format.Error) as error:
        problem = (
            f"frame {index} is not an ag_ui.Event message: {error}; each frame of the protobuf "
            "binding holds one serialized AG-UI 1.0 ag_ui.Event, so check that the producer "
            "writes this binding"
        )
        raise DecodeError(problem) from None
    undeclared = _undeclared(message, index)
    if not frame:
        if not payload:
            problem = (
                f"frame {index} is empty: it carries no event; each frame holds one ag_ui.Event "
                "(a 0.x @ag-ui/proto wrote an empty frame for an event type it did not have)"
            )
            raise DecodeError(problem)
        text = f"frame {index} carries an event type this version does not know; it was dropped"
        warnings.warn(text, UnknownMemberWarning, stacklevel=3)
        return None
    if undeclared:
        text = (
            f"frame {index} carries fields this version does not know "
            f"({', '.join(undeclared)}); they were dropped"
        )
        warnings.warn(text, UnknownMemberWarning, stacklevel=3)
    return parse_event(from_proto(frame, index))


def _undeclared(message: Message, index: int) -> list[str]:
    """The fields of a message the schema does not declare, named; refused if it does.

    Protobuf's reader sets both aside as unknown fields: a later protocol's, and a declared
    field that came with another wire type, which would otherwise read as its default (`""`,
    `0`), as if it had not been sent.
    """
    names: set[str] = set()
    for holder, number, wire_type in _unread(message):
        owner = holder.DESCRIPTOR
        field = owner.fields_by_number.get(number)
        if field is None:
            names.add(f"{owner.full_name} field {number}")
            continue
        expected = _WIRE_TYPES.get(field.type, 2)
        problem = (
            f"frame {index} carries {owner.full_name} field {number} ({field.json_name}) with "
            f"the wrong wire type: the schema sends it as {_WIRE_NAMES[expected]} (wire type "
            f"{expected}), and it came as {_WIRE_NAMES[wire_type]} (wire type {wire_type}); "
            "check that the producer writes the AG-UI 1.0 schema"
        )
        raise DecodeError(problem)
    return sorted(names)


def _unread(message: Message) -> Iterator[tuple[Message, int, int]]:
    """The fields protobuf set aside in a message and the messages in it.

    Each is the message that holds it, its field number and its wire type.
    """
    fields = message.ListFields()
    declared = message.DESCRIPTOR.fields_by_number
    # A part or source with no arm set is of a kind this version lacks; `_mapping` says so.
    armless = not fields and message.DESCRIPTOR.full_name in _UNIONS
    unknown = UnknownFieldSet(message)
    for position in range(len(unknown)):  # the stubs give it no __iter__
        entry = unknown[position]
        number: int = entry.field_number
        if not armless or number in declared:
            yield message, number, entry.wire_type
    for field, value in fields:
        if field.message_type is not None:
            for item in [value] if isinstance(value, Message) else value:
                yield from _unread(item)
