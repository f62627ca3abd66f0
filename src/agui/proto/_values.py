"""The JSON that AG-UI leaves open, written and read as `google.protobuf.Value` bytes by agui.

State, metadata, payloads and raw events travel as `Value` (or `Struct`) messages. The schema
declares those fields as bytes (see `agui.proto._schema`) and this module fills and reads them,
one nesting level at a time, so JSON nests as deep on this binding as on SSE: protobuf's
readers stop at 100 nested messages, which a `Value` reaches at about 33 levels of objects.

`write_open` and `read_open` walk an event's `json_format` form alongside its message
descriptor and turn each such field from JSON into the base64 of its bytes, or back.
"""

from __future__ import annotations

import base64
import functools
import math
import struct
from collections.abc import Callable
from typing import Any, cast

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from agui.errors import DecodeError, UsageError
from agui.proto._schema import EVENT_DESCRIPTOR, JSON_ARRAY, JSON_OBJECT, JSON_VALUE, STRUCTS

__all__ = ["MAX_DEPTH", "read_open", "varint", "write_open"]

MAX_DEPTH = 256
"""How deep open JSON may nest on this binding: past what `parse_event` and pydantic accept."""

_Json = dict[str, Any]
_Convert = Callable[[object, bool], object]
_DOUBLE = struct.Struct("<d")
_SAFE_INTEGER = 2**53


def varint(number: int) -> bytes:
    """A non-negative integer as a protobuf base-128 varint."""
    out = bytearray()
    while number > 0x7F:  # noqa: PLR2004 - the largest number one varint byte holds
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): a message, a string or bytes."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def _walk(body: _Json, message: Descriptor, convert: _Convert) -> None:
    """Convert each open field of `body` (a message's JSON form) and of the messages in it."""
    for field in _open_fields(message):
        if field.json_name not in body:
            continue
        item: object = body[field.json_name]
        if field.message_type is None:
            body[field.json_name] = convert(item, field.full_name in STRUCTS)
        else:
            # A repeated field's JSON is a list, a message's an object: the form says which.
            parts = cast("list[_Json]", item) if isinstance(item, list) else [cast("_Json", item)]
            for part in parts:
                _walk(part, field.message_type, convert)


@functools.cache
def _open_fields(message: Descriptor) -> tuple[FieldDescriptor, ...]:
    """A message's fields that hold open JSON (as bytes), or a message that does somewhere."""
    return tuple(
        field
        for field in message.fields
        if field.type == FieldDescriptor.TYPE_BYTES
        or (field.message_type is not None and _open_fields(field.message_type))
    )


# -- writing -----------------------------------------------------------------------------------


def write_open(body: _Json, kind: str) -> None:
    """In an `Event`'s JSON form, each open value as the base64 of its `Value` or `Struct`."""

    def convert(item: object, is_struct: bool) -> str:  # noqa: FBT001 - a callback
        data = _object(cast("_Json", item)) if is_struct else _value(item)
        return base64.b64encode(data).decode()

    unwritable = f"a {kind} event cannot be written in the protobuf binding: its JSON"
    try:
        _walk(body, EVENT_DESCRIPTOR, convert)
    except OverflowError:
        problem = (
            f"{unwritable} holds an integer beyond the range of a double, and this binding "
            "carries JSON numbers as doubles; send the number as a string, or use SSE"
        )
        raise UsageError(problem) from None


def _object(members: _Json) -> bytes:
    entries: list[bytes] = []
    for key, item in members.items():  # a loop, not a comprehension: one frame per level
        entries.append(_field(1, _field(1, key.encode()) + _field(2, _value(item))))
    return b"".join(entries)


def _value(item: object) -> bytes:
    """A JSON value as the bytes of a `Value` message, fields as protobuf writes them.

    Its depth needs no check: `event_json` refuses JSON nested past `MAX_DEPTH` before this.
    """
    if item is None:
        return b"\x08\x00"
    if isinstance(item, bool):
        return b"\x20\x01" if item else b"\x20\x00"
    if isinstance(item, int | float):
        return b"\x11" + _DOUBLE.pack(float(item))
    if isinstance(item, str):
        return _field(3, item.encode())
    if isinstance(item, dict):
        return _field(5, _object(cast("_Json", item)))
    values: list[bytes] = []
    for part in cast("list[object]", item):
        values.append(_field(1, _value(part)))  # noqa: PERF401 - see _object
    return _field(6, b"".join(values))


# -- reading -----------------------------------------------------------------------------------


def read_open(body: _Json, index: int) -> None:
    """In an `Event`'s JSON form, the base64 of each `Value` or `Struct` as the JSON it holds."""

    def convert(item: object, is_struct: bool) -> object:  # noqa: FBT001 - a callback
        data = base64.b64decode(cast("str", item))
        return _read_object(data, 0) if is_struct else _read_value(data, 0)

    try:
        _walk(body, EVENT_DESCRIPTOR, convert)
    except _TooDeepError:
        problem = (
            f"frame {index} holds JSON nested deeper than {MAX_DEPTH} levels; AG-UI values "
            "are read to that depth, as on SSE; the producer must flatten the value"
        )
        raise DecodeError(problem) from None
    except _NotFiniteError as error:
        problem = (
            f"frame {index} holds the number {error}, which JSON cannot hold; AG-UI values are "
            "JSON, so a producer must send finite numbers"
        )
        raise DecodeError(problem) from None


class _TooDeepError(Exception):
    """Open JSON nested past `MAX_DEPTH`."""


class _NotFiniteError(Exception):
    """A `Value` holding NaN or an infinity; its text is the number."""


def _parse(cls: type[Message], data: bytes) -> Any:  # noqa: ANN401 - a message of the schema
    """One level of open JSON: protobuf checks its wire form, this module walks its fields."""
    return cls.FromString(data)


def _read_object(data: bytes, depth: int) -> _Json:
    members: _Json = {}
    for entry in _parse(JSON_OBJECT, data).fields:
        members[entry.key] = _read_value(entry.value, depth + 1)  # a later one wins, as in a map
    return members


def _read_value(data: bytes, depth: int) -> object:
    """The JSON of a `Value`'s bytes; a number without a fraction, to 2^53, as an `int`."""
    if depth > MAX_DEPTH:
        raise _TooDeepError
    value = _parse(JSON_VALUE, data)
    kind: str | None = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    item: object = getattr(value, kind)
    if kind == "struct_value":
        return _read_object(cast("bytes", item), depth)
    if kind == "list_value":
        items: list[object] = []
        for part in _parse(JSON_ARRAY, cast("bytes", item)).values:
            items.append(_read_value(part, depth + 1))  # noqa: PERF401 - see _object
        return items
    if isinstance(item, float):
        return _number(item)
    return item


def _number(number: float) -> float | int:
    if not math.isfinite(number):
        raise _NotFiniteError(number)
    return int(number) if number.is_integer() and abs(number) <= _SAFE_INTEGER else number
