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

A unit test frames what `drain()` built from the queue's records, one `encode_sse` per event. A
delta built so carries its kind's shared fields-set (`agui._protocol.model`), which says every
other field is at its default, so it is written as its record is: `encode_sse` keeps the
frame's head (its type and id) of the last one it framed, one tuple swapped whole so that
threads never mix two blocks' parts, and a delta of the same block is that head and its own
text, found without a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel

from agui._emit.record import FIELDS, HEADS, Item, Kind, materialize, record_text
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
    "encode_items",
    "encode_sse",
    "event_json",
    "item_json",
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


def item_json(item: Item) -> bytes:
    """The wire JSON of one queued item: an event, or a delta the queue holds as a record.

    A transport reading a run's queue as it is (`EventReceiver.drain_items`) writes each item
    with this; a record's bytes are exactly its event's (see `agui.sink`).

    Examples:
        >>> from agui.events import TextMessageEndEvent
        >>> from agui._emit.record import Kind
        >>> record = (Kind.TEXT_CONTENT, "m1", "Hi")
        >>> item_json(record), item_json(TextMessageEndEvent(message_id="m1"))
        (b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}',
         b'{"type":"TEXT_MESSAGE_END","messageId":"m1"}')
    """
    if isinstance(item, tuple):
        try:
            return record_text(*item).encode()
        except UnicodeEncodeError:  # a lone surrogate: the serializer has its own way
            return event_json(materialize(item))
    return event_json(item)


def encode_items(items: Sequence[Item]) -> bytes:
    r"""The SSE frames of queued items, one after the other: what one send of a batch carries.

    Byte for byte `b"".join(encode_sse(event) ...)` of the items' events, written in one pass:
    a delta record's frame is its block's text around the JSON of its id and its text.

    Raises:
        ValueError, agui.AguiError: an event cannot be serialized (as `encode_sse`).

    Examples:
        >>> from agui._emit.record import Kind
        >>> from agui.events import TextMessageEndEvent
        >>> items = [(Kind.TEXT_CONTENT, "m1", "Hi"), TextMessageEndEvent(message_id="m1")]
        >>> print(encode_items(items).decode())
        data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}
        <BLANKLINE>
        data: {"type":"TEXT_MESSAGE_END","messageId":"m1"}
        <BLANKLINE>
    """
    parts: list[str] = []
    add = parts.append
    run: list[str] = []  # the JSON strings of consecutive deltas of one block
    last_kind, last_id, joint = -1, None, ""
    for item in [*items, None]:  # `None` ends the last run
        if isinstance(item, tuple):
            kind, entity_id, text = item
            if entity_id is last_id and kind == last_kind:
                run.append(_q(text))
                continue
        if run:
            add(joint.join(run))
            add("}\n\n")
            run, last_id = [], None
        if isinstance(item, tuple):
            kind, entity_id, text = item
            if kind <= _LAST_DELTA:  # a block's run of deltas begins
                head = f'data: {HEADS[kind]}{_q(entity_id)},"delta":'
                add(head)
                joint = "}\n\n" + head  # between two deltas of the block: one ends, one begins
                run = [_q(text)]
                last_kind, last_id = kind, entity_id
            else:  # a block's start or end
                add(f"data: {record_text(kind, entity_id, text)}\n\n")
        elif item is not None:
            add("data: ")
            add(_event_text(item))
            add("\n\n")
    try:
        return "".join(parts).encode()
    except UnicodeEncodeError:  # a lone surrogate: each item its own way
        return b"".join(b"data: %b\n\n" % item_json(item) for item in items)


def _event_text(event: Event) -> str:
    """`event_json(event)` as text, without a trip through bytes when a quick writer has it."""
    text = _quick(_JSON, event)
    return text if text is not None else _serialized(event).decode()


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
    # A delta drained from its record, of the block the last one framed belonged to: its frame
    # is that frame's head and its own text. Nearly every event of a test is one.
    try:
        given, id_field, entity, head = _drained[0]
        if event.__pydantic_fields_set__ is given:
            fields = event.__dict__
            if fields[id_field] is entity:
                return f"{head}{_q(fields['delta'])}}}\n\n".encode()
    except (AttributeError, KeyError, TypeError, UnicodeEncodeError):
        pass  # not a model, a field unset or not text, or a lone surrogate: the way below
    return _frame(event)


def _frame(event: Event) -> bytes:
    """`encode_sse` of any event: the first drained delta of a block, quickly, or pydantic's."""
    cls = type(event)
    drained = _DRAINED.get(cls)
    if drained is not None and event.__pydantic_fields_set__ is drained[0]:
        given, id_field, start = drained
        fields = event.__dict__
        try:
            entity = fields[id_field]
            head = f'{start}{_q(entity)},"delta":'
            frame = f"{head}{_q(fields['delta'])}}}\n\n".encode()
        except (KeyError, TypeError, UnicodeEncodeError):
            pass  # a field unset or not text after all, or a lone surrogate
        else:
            _drained[0] = (given, id_field, entity, head)  # whole: no thread mixes two blocks
            return frame
    write = _FRAMES.get(cls)  # `_quick` unrolled: every start, end and result of a test
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
_LAST_DELTA = Kind.LAST_DELTA
_ENVELOPE = ("type", "timestamp", "raw_event", "metadata", "subagent_run_id")


def _delta_writer(cls: type[BaseModel], id_field: str, lead: str, tail: str) -> Writer:
    """The writer of an id-and-delta event, between `lead` and `tail`: every token takes it.

    A message's or call's deltas share one id object, so the text around its JSON is kept from
    one delta to the next.
    """
    kind = cast("str", cls.model_fields["type"].default)
    start = f'{lead}{{"type":"{kind}"'
    id_key = f',"{cls.model_fields[id_field].alias}":'
    end = f"}}{tail}"
    # (id, the text before the delta without a timestamp, the id's part after one), swapped whole
    last: list[tuple[object, str, str]] = [(None, "", "")]

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
        seen, head, middle = last[0]
        if seen is not entity:
            middle = f'{id_key}{_q(entity)},"delta":'
            head = start + middle
            last[0] = (entity, head, middle)
        timestamp = fields["timestamp"]
        if timestamp is None:
            return f"{head}{_q(delta)}{end}"
        if type(timestamp) is int:  # pydantic-core writes every int in decimal, as str() does
            return f'{start},"timestamp":{timestamp}{middle}{_q(delta)}{end}'
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
"""Each delta class: the fields-set of its models built as a record's are, its id field, its
frame's start."""
_drained: list[tuple[object, str, object, str]] = [(None, "message_id", None, "")]
"""The last drained delta framed: its fields-set, id field, id and frame head, swapped whole."""
