"""A run's queued items joined for the thread fold: each run of deltas of one block as one event.

When a durable run ends, its thread's record is the fold of the run's events (`agui.runs`); the
fold of the joined events is the same, and far cheaper. The deltas are joined while they are
still records: building a model for each of a run's thousands of deltas only to join it to the
next would cost more than the fold itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from agui._emit.record import Item, Kind, materialize
from agui.events import (
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)

__all__ = ["RunEvents"]


class RunEvents:
    """A run's events as the thread fold takes them: each run of deltas of one block as one.

    Items are joined as the run's batches come, so what the run's end folds is held as a few
    events and strings rather than as every item of the run (thousands of tuples a run, which
    the garbage collector would walk again and again while the run lasts).

    Examples:
        >>> from agui._emit.record import Kind
        >>> events = RunEvents()
        >>> events.add([(Kind.TEXT_CONTENT, "m", "He")])
        >>> events.add([(Kind.TEXT_CONTENT, "m", "llo"), (Kind.TEXT_END, "m", "")])
        >>> [(type(e).__name__, getattr(e, "delta", None)) for e in events.events()]
        [('TextMessageContentEvent', 'Hello'), ('TextMessageEndEvent', None)]
        >>> events = RunEvents()
        >>> events.add([ToolCallArgsEvent(tool_call_id="c", delta=p) for p in ('{"a"', ":1}")])
        >>> [e.delta for e in events.events()]
        ['{"a":1}']
    """

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._kind, self._id = -1, ""  # the block of the deltas held: a delta `Kind` and an id
        self._head: Item | None = None
        self._parts: list[str] = []

    def add(self, items: Iterable[Item]) -> None:
        """Take a batch of the run's items, in order."""
        for item in items:
            if isinstance(item, tuple):  # nearly every item: compared without building a thing
                kind, entity_id, text = item
                if kind > Kind.LAST_DELTA:
                    self._close()
                    self._events.append(materialize(item))
                    continue
            else:
                block = _block(item)
                if block is None:
                    self._close()
                    self._events.append(item)
                    continue
                (kind, entity_id), text = block, cast("_Delta", item).delta
            if kind == self._kind and entity_id == self._id:
                self._parts.append(text)
            else:
                self._close()
                self._kind, self._id, self._head, self._parts = kind, entity_id, item, [text]

    def events(self) -> list[Event]:
        """The events so far, the last run of deltas joined too."""
        self._close()
        return self._events

    def _close(self) -> None:
        head = self._head
        if head is None:
            return
        if len(self._parts) == 1:
            self._events.append(materialize(head) if isinstance(head, tuple) else head)
        elif isinstance(head, tuple):  # build the one event, not one to copy
            self._events.append(materialize((head[0], head[1], "".join(self._parts))))
        else:
            self._events.append(head.model_copy(update={"delta": "".join(self._parts)}))
        self._kind, self._head = -1, None


_Delta = TextMessageContentEvent | ToolCallArgsEvent | ReasoningMessageContentEvent


def _block(event: Event) -> tuple[Kind, str] | None:
    """The block a delta event adds to, or `None` for any other event (a group of its own).

    A delta with metadata is a group of its own too: the fold merges each event's metadata, and
    joining it to its neighbours would drop theirs.

    Examples:
        >>> _block(ToolCallArgsEvent(tool_call_id="c", delta="{}"))
        (<Kind.TOOL_ARGS: 1>, 'c')
        >>> _block(ReasoningMessageContentEvent(message_id="r", delta="hm"))
        (<Kind.REASONING_CONTENT: 2>, 'r')
        >>> _block(TextMessageContentEvent(message_id="m", delta="a"))
        (<Kind.TEXT_CONTENT: 0>, 'm')
        >>> _block(TextMessageContentEvent(message_id="m", delta="a", metadata={"k": 1})) is None
        True
    """
    if event.metadata is not None:
        return None
    match event:
        case TextMessageContentEvent():
            return Kind.TEXT_CONTENT, event.message_id
        case ReasoningMessageContentEvent():
            return Kind.REASONING_CONTENT, event.message_id
        case ToolCallArgsEvent():
            return Kind.TOOL_ARGS, event.tool_call_id
        case _:
            return None  # only a delta joins its block's run
