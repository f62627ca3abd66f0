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
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as _ProtobufDecodeError
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from pydantic import BaseModel

from agui.errors import DecodeError, UnknownMemberWarning, UsageError
from agui.events import (
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from agui.proto._mapping import from_proto, to_proto
from agui.proto._schema import EVENT, EVENT_TYPES
from agui.proto._values import read_open, varint, write_open
from agui.sse import event_json
from agui.wire import parse_event

__all__ = ["decode_proto", "encode_proto"]

_LENGTH = struct.Struct(">I")
_Layout = tuple[bytes, bytes, bytes, bytes, str]
_EXTRAS = ("timestamp", "raw_event", "metadata", "subagent_run_id")
_UNIONS = frozenset({"ag_ui.InputContent", "ag_ui.InputContentSource"})
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


def decode_proto(data: bytes) -> list[Event]:
    """The events of a body of protobuf frames, in order, each validated like `parse_event`.

    Raises `DecodeError` for a body that ends mid-frame or a frame that does not decode (a
    `MalformedEvent` names the field of an event that decodes but does not validate); warns
    `UnknownMemberWarning` for each frame it drops because it carries an unknown event type,
    and for each frame with fields the schema does not declare, which it drops.

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
    except UnicodeEncodeError:  # a lone surrogate: the serializer reports it
        return None
    return arm + varint(len(body)) + body


def _message(event: Event) -> Message:
    """The `ag_ui.Event` message of an event, filled from its wire JSON."""
    wire: dict[str, Any] = json.loads(event_json(event))
    body = to_proto(wire)
    write_open(body, event.type)
    message = EVENT()
    try:
        json_format.ParseDict(body, message)
    except json_format.ParseError as error:
        problem = f"a {event.type} event cannot be written in the protobuf binding: {error}"
        raise UsageError(problem) from None
    return message


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
    unknown = sorted(set(_unknown_fields(message)))
    if unknown:
        text = (
            f"frame {index} carries fields this version does not know ({', '.join(unknown)}); "
            "they were dropped"
        )
        warnings.warn(text, UnknownMemberWarning, stacklevel=3)
    return parse_event(from_proto(frame, index))


def _unknown_fields(message: Message) -> Iterator[str]:
    """The fields the schema does not declare, in a message and the messages in it."""
    fields = message.ListFields()
    name = message.DESCRIPTOR.full_name
    unknown = UnknownFieldSet(message)
    # A part or source with no arm set is of a kind this version lacks; `_mapping` says so.
    if fields or name not in _UNIONS:
        for position in range(len(unknown)):  # the stubs give it no __iter__
            yield f"{name} field {unknown[position].field_number}"
    for field, value in fields:
        if field.message_type is not None:
            for item in [value] if isinstance(value, Message) else value:
                yield from _unknown_fields(item)
