r"""A streamed delta, or a block's start or end, kept as a record until somebody needs its model.

Text, argument and reasoning deltas are nearly every event of a stream, and a transport only
needs their bytes. When a handle streams a delta that the verifier can see is fine without
changing anything (the run is active, the block is open, no chunk stream or subagent is
involved), the context queues the record `(kind, id, text)` instead of an event model; the
receiver builds the model when a reader asks for events (`drain()`, `batches()`), and the SSE
writer writes the record's JSON straight from it, the same bytes the model would give.

`kind` is the verifier ledger's index of the block (`TEXT`, `TOOL` or `THOUGHT`) for a delta.
A handle's closing `TEXT_MESSAGE_END` or `TOOL_CALL_END` is a record too, of kind `TEXT_END` or
`TOOL_END` with no text, when the verifier closes its block in the common case; so is a text
message's `TEXT_MESSAGE_START` without a name, of kind `TEXT_START`, its text the role.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Union

from agui._fast import (
    reasoning_content,
    text_content,
    text_end,
    text_start,
    tool_args,
    tool_end,
)
from agui.events import Event
from agui.verify._ledger import TEXT, THOUGHT, TOOL

__all__ = [
    "HEADS",
    "TEXT",
    "TEXT_END",
    "TEXT_START",
    "THOUGHT",
    "TOOL",
    "TOOL_END",
    "Item",
    "Record",
    "materialize",
    "record_text",
]

Record = tuple[int, str, str]
"""Kind, id, text: a delta (`TEXT`, `TOOL`, `THOUGHT`), an end (`TEXT_END`, `TOOL_END`, no
text) or a text message's start (`TEXT_START`, the role as text)."""

TEXT_END, TOOL_END, TEXT_START = 3, 4, 5
"""The kinds of a text message's and a tool call's closing event, and of a text message's
opening event (its text is the role; it has no name), held as a record."""
Item = Union[Event, Record]  # noqa: UP007 - a runtime alias on 3.10
"""What a run's queue holds: an event, or one still held as a record."""

_BUILD: tuple[Callable[[str, str], Event], ...] = (
    text_content,
    tool_args,
    reasoning_content,
    lambda message_id, _: text_end(message_id),
    lambda tool_call_id, _: tool_end(tool_call_id),
    lambda message_id, role: text_start(message_id, role, None),
)
# The JSON of each kind's event up to its id, which follows: then a delta's text, a start's
# role, or an end's `}`.
HEADS = (
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":',
    '{"type":"TOOL_CALL_ARGS","toolCallId":',
    '{"type":"REASONING_MESSAGE_CONTENT","messageId":',
    '{"type":"TEXT_MESSAGE_END","messageId":',
    '{"type":"TOOL_CALL_END","toolCallId":',
    '{"type":"TEXT_MESSAGE_START","messageId":',
)
_q = encode_basestring


def materialize(record: Record) -> Event:
    """The event model a record stands for, exactly as the handle would have built it.

    Examples:
        >>> materialize((TOOL_END, "c1", ""))
        ToolCallEndEvent(type='TOOL_CALL_END', ..., tool_call_id='c1')
        >>> materialize((TEXT, "m1", "Hi"))
        TextMessageContentEvent(type='TEXT_MESSAGE_CONTENT', ..., message_id='m1', delta='Hi')
    """
    kind, entity_id, text = record
    return _BUILD[kind](entity_id, text)


def record_text(kind: int, entity_id: str, text: str) -> str:
    """A record's wire JSON: byte for byte what its event model serializes to.

    Examples:
        >>> record_text(TOOL, "c1", "{}")
        '{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}'
        >>> record_text(TEXT_START, "m1", "assistant")
        '{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}'
    """
    if kind <= THOUGHT:
        return f'{HEADS[kind]}{_q(entity_id)},"delta":{_q(text)}}}'
    if kind == TEXT_START:
        return f'{HEADS[kind]}{_q(entity_id)},"role":{_q(text)}}}'
    return f"{HEADS[kind]}{_q(entity_id)}}}"
