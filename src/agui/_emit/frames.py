"""The emit core's writer: the bytes of a run's queued items, records written straight.

A transport that reads a run's queue as it is (the endpoint, the durable log) gets events and
compact records (`agui._emit.record`) mixed; this is the one place that turns both into bytes,
so no public signature needs to know a record. A record's bytes are exactly its event's
(`agui.sse.event_json`, `agui.sse.encode_sse`), which the property tests compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from json.encoder import encode_basestring

from agui._emit.record import HEADS, Item, Kind, materialize, record_text
from agui.events import Event
from agui.sse import event_json

__all__ = ["encode_items", "event_of", "item_json"]

_q = encode_basestring
_LAST_DELTA = Kind.LAST_DELTA


def event_of(item: Item) -> Event:
    """The event a queued item stands for: itself, or the event its record holds.

    Examples:
        >>> event_of((Kind.TOOL_END, "c1", "")).type
        'TOOL_CALL_END'
    """
    return materialize(item) if isinstance(item, tuple) else item


def item_json(item: Item) -> bytes:
    """The wire JSON of one queued item: an event, or one the queue holds as a record.

    Examples:
        >>> from agui.events import TextMessageEndEvent
        >>> item_json((Kind.TEXT_CONTENT, "m1", "Hi"))
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}'
        >>> item_json(TextMessageEndEvent(message_id="m1"))
        b'{"type":"TEXT_MESSAGE_END","messageId":"m1"}'
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
    a run of deltas of one block is its block's text around the JSON of each delta.

    Raises:
        ValueError, agui.AguiError: an event cannot be serialized (as `encode_sse`).

    Examples:
        >>> from agui.events import TextMessageEndEvent
        >>> items = [(Kind.TEXT_CONTENT, "m1", "Hi"), TextMessageEndEvent(message_id="m1")]
        >>> print(encode_items(items).decode())
        data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}
        <BLANKLINE>
        data: {"type":"TEXT_MESSAGE_END","messageId":"m1"}
        <BLANKLINE>
    """
    if len(items) == 1:
        # A token stream's send: one delta. The loop below costs it about 2 us more.
        return b"data: %b\n\n" % item_json(items[0])
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
            add(f"data: {event_json(item).decode()}\n\n")
    try:
        return "".join(parts).encode()
    except UnicodeEncodeError:  # a lone surrogate: each item its own way
        return b"".join(b"data: %b\n\n" % item_json(item) for item in items)
