r"""A streamed delta kept as a record until somebody needs its model.

Text, argument and reasoning deltas are nearly every event of a stream, and a transport only
needs their bytes. When a handle streams a delta that the verifier can see is fine without
changing anything (the run is active, the block is open, no chunk stream or subagent is
involved), the context queues the record `(kind, id, text)` instead of an event model; the
receiver builds the model when a reader asks for events (`drain()`, `batches()`), and the SSE
writer writes the record's JSON straight from it, the same bytes the model would give.

`kind` is the verifier ledger's index of the block: `TEXT`, `TOOL` or `THOUGHT`.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Union

from agui._chunks import TEXT, THOUGHT, TOOL
from agui._fast import reasoning_content, text_content, tool_args
from agui.events import Event

__all__ = [
    "HEADS",
    "TEXT",
    "THOUGHT",
    "TOOL",
    "Item",
    "Record",
    "materialize",
    "record_json",
]

Record = tuple[int, str, str]
"""A streamed delta: the block's kind (`TEXT`, `TOOL`, `THOUGHT`), its id, the text."""
Item = Union[Event, Record]  # noqa: UP007 - a runtime alias on 3.10
"""What a run's queue holds: an event, or a delta still held as a record."""

_BUILD: tuple[Callable[[str, str], Event], ...] = (text_content, tool_args, reasoning_content)
# The JSON of each kind's event up to its id, which follows.
HEADS = (
    '{"type":"TEXT_MESSAGE_CONTENT","messageId":',
    '{"type":"TOOL_CALL_ARGS","toolCallId":',
    '{"type":"REASONING_MESSAGE_CONTENT","messageId":',
)
_q = encode_basestring
# Per kind, the last id seen and the JSON before its delta: a block's deltas share their id.
_last: list[tuple[object, str]] = [(None, ""), (None, ""), (None, "")]


def materialize(record: Record) -> Event:
    """The event model a record stands for, exactly as the handle would have built it.

    Examples:
        >>> materialize((TEXT, "m1", "Hi"))
        TextMessageContentEvent(type='TEXT_MESSAGE_CONTENT', ..., message_id='m1', delta='Hi')
    """
    kind, entity_id, text = record
    return _BUILD[kind](entity_id, text)


def record_json(record: Record) -> bytes:
    """The record's wire JSON: byte for byte what the event model serializes to.

    Raises:
        UnicodeEncodeError: the text holds a lone surrogate; serialize the model instead.

    Examples:
        >>> record_json((TOOL, "c1", "{}"))
        b'{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}'
    """
    kind, entity_id, text = record
    seen, head = _last[kind]
    if seen is not entity_id:
        head = f'{HEADS[kind]}{_q(entity_id)},"delta":'
        _last[kind] = (entity_id, head)
    return f"{head}{_q(text)}}}".encode()
