r"""Queue records: a handle's delta, or a block's start or end, kept compact until read as an event.

Text, argument and reasoning deltas are nearly every event of a stream, and a transport only
needs their bytes. When a handle streams a delta that the verifier accepts without looking
closer (the run is active, the block is open, no chunk stream or subagent is involved), the run's
pipeline queues the record `(kind, id, text)` instead of an event model (see `agui._emit.pipeline`);
the receiver builds the model when a reader asks for events (`drain()`, `batches()`), and the
SSE writer writes the record's JSON straight from it, the same bytes the model would give.

A record stands for one of six events, its `Kind`: the three deltas (its text is the delta), a
text message's `TEXT_MESSAGE_START` without a name (its text is the role), and a text message's
or tool call's end (no text). A record is a plain tuple, so that queueing one costs a tuple and
nothing else, and `Kind` is an `IntEnum`, so that the writers index their tables with it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from json.encoder import encode_basestring
from typing import Union

from agui.events import (
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
)

__all__ = [
    "BUILDERS",
    "FIELDS",
    "HEADS",
    "Item",
    "Kind",
    "Record",
    "materialize",
    "record_text",
]


class Kind(IntEnum):
    """The event a record stands for; the deltas come first, so `kind <= LAST_DELTA` is a delta.

    Examples:
        >>> Kind.TOOL_ARGS <= Kind.LAST_DELTA < Kind.TEXT_END
        True
    """

    TEXT_CONTENT = 0
    """`TEXT_MESSAGE_CONTENT`; the text is the delta."""
    TOOL_ARGS = 1
    """`TOOL_CALL_ARGS`; the text is the argument fragment."""
    REASONING_CONTENT = 2
    """`REASONING_MESSAGE_CONTENT`; the text is the delta."""
    TEXT_END = 3
    """`TEXT_MESSAGE_END`; no text."""
    TOOL_END = 4
    """`TOOL_CALL_END`; no text."""
    TEXT_START = 5
    """`TEXT_MESSAGE_START` without a name; the text is the role."""

    LAST_DELTA = REASONING_CONTENT
    """The last of the delta kinds (an alias)."""


Record = tuple[Kind, str, str]
"""Kind, id, text: what a queued record holds (see `Kind` for what the text is)."""

Item = Union[Event, Record]  # noqa: UP007 - a runtime alias on 3.10
"""What a run's queue holds: an event, or one still held as a record."""

_text_content = TextMessageContentEvent.trusted_builder("message_id", "delta")
_tool_args = ToolCallArgsEvent.trusted_builder("tool_call_id", "delta")
_reasoning_content = ReasoningMessageContentEvent.trusted_builder("message_id", "delta")
_text_end = TextMessageEndEvent.trusted_builder("message_id")
_tool_end = ToolCallEndEvent.trusted_builder("tool_call_id")
_text_start = TextMessageStartEvent.trusted_builder("message_id", "role", "name")

BUILDERS: tuple[Callable[[str, str], Event], ...] = (
    _text_content,
    _tool_args,
    _reasoning_content,
    lambda message_id, _: _text_end(message_id),
    lambda tool_call_id, _: _tool_end(tool_call_id),
    lambda message_id, role: _text_start(message_id, role, None),
)
"""Each kind's event from a record's id and text, in `Kind` order."""

FIELDS = tuple(build("", "").__pydantic_fields_set__ for build in BUILDERS)
"""The fields-set each kind's models share, in `Kind` order (see `WireModel.trusted_builder`): a
model holding one was built trusted from those fields alone, every other field at its default,
as a record's is (a start built so may still have a name: a record's never has)."""

HEADS = (
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":',
    '{"type":"TOOL_CALL_ARGS","toolCallId":',
    '{"type":"REASONING_MESSAGE_CONTENT","messageId":',
    '{"type":"TEXT_MESSAGE_END","messageId":',
    '{"type":"TOOL_CALL_END","toolCallId":',
    '{"type":"TEXT_MESSAGE_START","messageId":',
)
"""Each kind's JSON up to its id, in `Kind` order: then a delta's text, a start's role, or `}`."""

_q = encode_basestring
_LAST_DELTA, _TEXT_START = Kind.LAST_DELTA, Kind.TEXT_START  # an enum member's lookup costs a call


def materialize(record: Record) -> Event:
    """The event model a record stands for, exactly as validation would build it.

    Examples:
        >>> materialize((Kind.TOOL_END, "c1", ""))
        ToolCallEndEvent(type='TOOL_CALL_END', ..., tool_call_id='c1')
        >>> materialize((Kind.TEXT_CONTENT, "m1", "Hi"))
        TextMessageContentEvent(type='TEXT_MESSAGE_CONTENT', ..., message_id='m1', delta='Hi')
    """
    kind, entity_id, text = record
    return BUILDERS[kind](entity_id, text)


def record_text(kind: Kind, entity_id: str, text: str) -> str:
    """A record's wire JSON: byte for byte what its event model serializes to.

    Examples:
        >>> record_text(Kind.TOOL_ARGS, "c1", "{}")
        '{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}'
        >>> record_text(Kind.TEXT_START, "m1", "assistant")
        '{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}'
    """
    if kind <= _LAST_DELTA:
        return f'{HEADS[kind]}{_q(entity_id)},"delta":{_q(text)}}}'
    if kind == _TEXT_START:
        return f'{HEADS[kind]}{_q(entity_id)},"role":{_q(text)}}}'
    return f"{HEADS[kind]}{_q(entity_id)}}}"
