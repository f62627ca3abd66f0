r"""Server-Sent Events framing, exactly as AG-UI clients read it.

Each event is one frame, `data: <compact one-line UTF-8 JSON>\n\n`: LF only (the official
TypeScript client splits frames on `\n\n` alone, so CRLF never splits), no `event:` or `id:`
lines, no ASCII escaping. Serialized JSON never holds a raw newline, so one `data:` line is
always enough. Comment frames (`: ping\n\n`) keep an idle connection alive through proxies.

Two quicker paths give the serializer's very bytes. The streaming deltas (text, tool-call
arguments, reasoning), which are most of a stream, are written directly when their envelope is
empty or holds only a timestamp: a constant prefix per event type, then the id's and the delta's
JSON strings. `json.encoder.encode_basestring` escapes a string exactly as pydantic-core does
(the same characters, the same `\u00XX` spellings; the tests compare every code point). The
other events whose fields are all text (starts and ends, steps, results) hold `None` only in
optional fields, which the wire leaves out, so pydantic-core's `exclude_none` writes them
without calling the per-field omission check. Anything else takes the model's serializer.

`encode_sse` keeps nothing between calls: each frame is written from its event alone. (A run's
queue may hold a delta as a compact record until it is read; the endpoint writes those with the
emit core's private writer, `agui._emit.frames`, and `drain()` hands a test the event.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from json.encoder import encode_basestring
from typing import Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel

from agui._emit.record import FIELDS, HEADS, Kind
from agui.errors import UsageError
from agui.events import (
    AttributableEvent,
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
    ToolCallResultEvent,
)

__all__ = [
    "SSE_MEDIA_TYPE",
    "comment_frame",
    "encode_sse",
    "event_json",
]

SSE_MEDIA_TYPE = "text/event-stream"
"""The media type of an AG-UI event stream over SSE."""


def event_json(event: Event) -> bytes:
    """The wire JSON of one event: camelCase, compact, optional absent fields left out.

    Examples:
        >>> from agui.events import CustomEvent
        >>> event_json(CustomEvent(name="ping", value=None))
        b'{"type":"CUSTOM","name":"ping","value":null}'
    """
    text = _quick(_JSON, event)
    if text is not None:
        try:
            return text.encode()
        except UnicodeEncodeError:
            pass  # a lone surrogate: the serializer has its own way
    return _serialized(event)


def _quick(writers: Mapping[type[BaseModel], Writer], event: Event) -> str | None:
    """The event's text from its quick writer, or `None` when it has none or declines."""
    write = writers.get(type(event))
    if write is None:
        return None
    try:
        return write(event.__dict__)
    except KeyError:  # a field left unset: the serializer has its own way
        return None


def _serialized(event: Event) -> bytes:
    """The event's JSON from pydantic-core: lean (`exclude_none`) when the model allows it."""
    required = _LEAN.get(type(event))
    if required is not None and _holds_all(event.__dict__, required):
        return event.__pydantic_serializer__.to_json(event, exclude_none=True)
    return _serialize(event)


def encode_sse(event: Event) -> bytes:
    r"""One SSE frame for one event: `data: <json>\n\n`, UTF-8, LF only.

    Examples:
        >>> from agui.events import TextMessageContentEvent
        >>> frame = encode_sse(TextMessageContentEvent(message_id="m1", delta="héllo\n"))
        >>> print(frame.decode(), end="")
        data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"héllo\n"}
        <BLANKLINE>
    """
    cls = type(event)
    drained = _DRAINED.get(cls)
    if drained is not None and event.__pydantic_fields_set__ is drained[0]:
        # A delta built from its id and text alone (a drained record's, see `_DRAINED`): every
        # other field is at its default, so its frame is its head, its id and its text.
        _, id_field, start = drained
        fields = event.__dict__
        try:
            return f'{start}{_q(fields[id_field])},"delta":{_q(fields["delta"])}}}\n\n'.encode()
        except (KeyError, TypeError, UnicodeEncodeError):
            pass  # a field unset or not text after all, or a lone surrogate
    write = _FRAMES.get(cls)
    if write is not None:
        try:
            text = write(event.__dict__)
            if text is not None:
                return text.encode()
        except KeyError:  # a field left unset: the serializer has its own way
            pass
        except UnicodeEncodeError:  # a lone surrogate: the serializer has its own way
            pass
    return b"data: %b\n\n" % _serialized(event)


def _serialize(event: Event) -> bytes:
    if not isinstance(cast("object", event), BaseModel):
        message = (
            f"expected an AG-UI event model, got {type(event).__name__}: "
            "build one (e.g. agui.events.CustomEvent(...)) or read a dict with agui.parse_event"
        )
        raise UsageError(message)
    return event.__pydantic_serializer__.to_json(event)


def comment_frame(text: str = "ping") -> bytes:
    r"""An SSE comment frame; clients ignore it, proxies see traffic.

    Examples:
        >>> comment_frame()
        b': ping\n\n'
    """
    if "\n" in text or "\r" in text:
        message = f"an SSE comment is one line; got {text!r}"
        raise UsageError(message)
    return b": " + text.encode() + b"\n\n"


# -- the quicker paths -------------------------------------------------------------------------

Writer = Callable[[Mapping[str, object]], Union[str, None]]  # noqa: UP007 - a runtime alias on 3.10
"""Writes a delta event's JSON (or frame) from its `__dict__`, or `None` to leave it to pydantic."""

_q = encode_basestring
_ENVELOPE = ("type", "timestamp", "raw_event", "metadata", "subagent_run_id")


def _delta_writer(cls: type[BaseModel], id_field: str, lead: str, tail: str) -> Writer:
    """The writer of an id-and-delta event, between `lead` and `tail`: every token takes it."""
    kind = cast("str", cls.model_fields["type"].default)
    start = f'{lead}{{"type":"{kind}"'
    id_key = f',"{cls.model_fields[id_field].alias}":'
    end = f"}}{tail}"

    def write(fields: Mapping[str, object]) -> str | None:
        entity, delta = fields[id_field], fields["delta"]
        if (
            type(entity) is not str
            or type(delta) is not str
            or fields["type"] != kind
            or fields["subagent_run_id"] is not None
            or fields["raw_event"] is not None
            or fields["metadata"] is not None
        ):
            return None
        timestamp = fields["timestamp"]
        if timestamp is None:
            return f'{start}{id_key}{_q(entity)},"delta":{_q(delta)}{end}'
        if type(timestamp) is int:  # pydantic-core writes every int in decimal, as str() does
            return f'{start},"timestamp":{timestamp}{id_key}{_q(entity)},"delta":{_q(delta)}{end}'
        return None

    return write


def _holds_all(fields: Mapping[str, object], required: tuple[str, ...]) -> bool:
    """Whether every required field holds a value (only a model built unvalidated may not)."""
    return all(fields.get(name) is not None for name in required)


def _is_text(annotation: object) -> bool:
    """Whether a field holds text only: `str`, a `Literal` of strings, or either or `None`."""
    if annotation is str:
        return True
    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return all(type(arg) is str for arg in args)
    if get_origin(annotation) is Union:
        return all(arg is type(None) or _is_text(arg) for arg in args)
    return False


def _lean() -> dict[type[BaseModel], tuple[str, ...]]:
    """The events that hold `None` only where the wire omits it, with their required fields.

    Those are the attributable events whose own fields are text (the envelope's `raw_event`
    and `metadata` are data, whose nulls `exclude_none` keeps), and `TOOL_CALL_RESULT`, whose
    content parts hold `None` only in optional fields too.
    """
    lean: dict[type[BaseModel], tuple[str, ...]] = {}
    for cls in cast("tuple[type[BaseModel], ...]", get_args(get_args(Event)[0])):
        own = [f for name, f in cls.model_fields.items() if name not in _ENVELOPE]
        if issubclass(cls, AttributableEvent) and (
            cls is ToolCallResultEvent or all(_is_text(f.annotation) for f in own)
        ):
            lean[cls] = tuple(name for name, f in cls.model_fields.items() if f.exclude_if is None)
    return lean


def _text_writer(cls: type[BaseModel], lead: str, tail: str) -> Writer:
    """The writer of an event whose own fields are text, when its envelope is empty.

    Its members are written in field order, each exact `str` as its JSON string and each
    `None` left out, as the wire does; any other value leaves the event to pydantic.
    """
    kind = cast("str", cls.model_fields["type"].default)
    start = f'{lead}{{"type":"{kind}"'
    # (field, its key, whether the wire leaves it out when None)
    own = tuple(
        (name, f',"{field.alias or name}":', field.exclude_if is not None)
        for name, field in cls.model_fields.items()
        if name not in _ENVELOPE
    )
    end = f"}}{tail}"

    def write(fields: Mapping[str, object]) -> str | None:
        if (
            fields["type"] != kind
            or fields["timestamp"] is not None
            or fields["raw_event"] is not None
            or fields["metadata"] is not None
            or fields["subagent_run_id"] is not None
        ):
            return None
        parts = [start]
        for name, key, optional in own:
            value = fields[name]
            if type(value) is str:
                parts.append(key)
                parts.append(_q(value))
            elif value is not None or not optional:
                return None
        parts.append(end)
        return "".join(parts)

    return write


def _writers(lead: str, tail: str) -> dict[type[BaseModel], Writer]:
    """The quick writers, between `lead` and `tail`: the deltas', then the text events'."""
    writers: dict[type[BaseModel], Writer] = {
        cls: _delta_writer(cls, id_field, lead, tail)
        for cls, id_field in (
            (TextMessageContentEvent, "message_id"),
            (ToolCallArgsEvent, "tool_call_id"),
            (ReasoningMessageContentEvent, "message_id"),
        )
    }
    for cls in _LEAN:
        writers.setdefault(cls, _text_writer(cls, lead, tail))
    return writers


_LEAN = _lean()
_JSON = _writers("", "")
_FRAMES = _writers("data: ", "\n\n")
_DRAINED: dict[type[BaseModel], tuple[set[str], str, str]] = {
    cls: (FIELDS[kind], id_field, f"data: {HEADS[kind]}")
    for kind, cls, id_field in (
        (Kind.TEXT_CONTENT, TextMessageContentEvent, "message_id"),
        (Kind.TOOL_ARGS, ToolCallArgsEvent, "tool_call_id"),
        (Kind.REASONING_CONTENT, ReasoningMessageContentEvent, "message_id"),
    )
}
"""Each delta class: the fields-set its models share when built from an id and a text alone, as
a drained record's are (`agui._emit.record.FIELDS`), its id field, and its frame's start. A
constant table: `encode_sse` keeps nothing between calls."""
