"""The run's receiver: the event queue, holding records too, as the core and transports read it.

`agui.sink.EventReceiver` is the public reading end of a run's queue, and speaks events. A run's
queue is this subclass: the pipeline queues the commonest events on it as records
(`agui._emit.record`), `drain()` and `batches()` build their events, and a transport takes the
queue as it is (`items`, `item_batches`), to write it with the core's writer
(`agui._emit.frames`).

`push_record` is an attribute, swapped as the queue's readers come and go: while no reader waits
it is the queue's own `append`, so the commonest push of a stream runs no Python code; a waiting
reader swaps in a push that wakes it, and a send waiting on the client one that weighs it. A
writer that sends from the agent's own steps (`agui.asgi._writer`) waits differently: it asks to
be told of each push (`notify`) while it is idle, to learn of events emitted from another task.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Literal, cast

from agui._emit.record import BUILDERS, Item, Record
from agui.events import Event
from agui.sink import EventReceiver

__all__ = ["RunReceiver", "run_receiver"]

_RECORD_WEIGHT = 64
"""About what a record's frame adds to its id and text: the type, the member names, framing."""


class RunReceiver(EventReceiver):
    """A run's event queue, which also takes and hands over records.

    Examples:
        >>> from agui._emit.record import Kind
        >>> receiver = RunReceiver()
        >>> receiver.push_record((Kind.TEXT_CONTENT, "m1", "Hi"))
        >>> receiver.items()
        [(<Kind.TEXT_CONTENT: 0>, 'm1', 'Hi')]
    """

    def __init__(self) -> None:
        super().__init__()
        self._items = cast("list[Item]", self._queue)  # the same queue, records and all
        self.push_record: Callable[[Record], None] = self._items.append
        """Queue a record: a handle's delta, or a block's plain start or end."""
        self._on_push: Callable[[], None] = _unheard
        # Bound once: a bound method made each time the push is swapped would outlive the swap
        # (held here until the next), one more young object per stream for the collector.
        self._notifying = self._push_notifying
        self._appending = self._items.append

    def notify(self, on_push: Callable[[], None] | None) -> None:
        """Call `on_push()` at every push and at the close, until `notify(None)`.

        Standing, not once: a writer idle between the agent's steps is told of each delta its
        step queues (one call, which returns at once) rather than asking again after every
        send, which cost a token stream seven calls a delta (bench/README.md, run 12).

        Examples:
            >>> from agui._emit.record import Kind
            >>> receiver = RunReceiver()
            >>> receiver.notify(lambda: print("pushed"))
            >>> receiver.push_record((Kind.TEXT_CONTENT, "m1", "Hi"))
            pushed
            >>> receiver.notify(None)
            >>> receiver.push_record((Kind.TEXT_CONTENT, "m1", "again"))
        """
        self._on_push = _unheard if on_push is None else on_push
        self._pushing("counting" if self._blocked else "plain")

    def push(self, event: Event) -> None:
        """Queue one event, and tell the writer waiting to be told (see `notify`)."""
        super().push(event)
        self._on_push()

    def close(self) -> None:
        """Mark the end of the stream, and tell the writer waiting to be told (see `notify`)."""
        super().close()
        self._on_push()

    def drain(self) -> list[Event]:
        """Take every queued event, records built as their events, without waiting."""
        # `materialize` unrolled: one call per record fewer, on the test path's every event.
        build = BUILDERS
        return [
            build[item[0]](item[1], item[2]) if isinstance(item, tuple) else item
            for item in self.items()
        ]

    @property
    def waiting(self) -> bool:
        """Whether anything is queued for the reader to take.

        Examples:
            >>> receiver = RunReceiver()
            >>> receiver.waiting
            False
        """
        return bool(self._items)

    def items(self) -> list[Item]:
        """Take everything queued as it is: events, and those still held as records."""
        return cast("list[Item]", self._drain_items())

    async def item_batches(self) -> AsyncIterator[list[Item]]:
        """Yield everything queued as it is each time, until the queue is closed and empty."""
        while await self._ready():
            yield self.items()

    def _pushing(self, mode: Literal["plain", "waking", "counting"]) -> None:
        if mode == "waking":
            self.push_record = self._push_waking
        elif mode == "counting":
            self.push_record = self._push_counting
        elif self._on_push is not _unheard:
            self.push_record = self._notifying
        else:
            self.push_record = self._appending

    def _push_notifying(self, record: Record) -> None:
        self._items.append(record)
        self._on_push()

    def _push_waking(self, record: Record) -> None:
        self._items.append(record)
        self._wake()
        self.push_record = self._appending  # woken once is enough

    def _push_counting(self, record: Record) -> None:
        self._items.append(record)
        self._count(len(record[1]) + len(record[2]) + _RECORD_WEIGHT)


def _unheard() -> None:
    """No writer asked to be told of pushes."""


def run_receiver(receiver: EventReceiver) -> RunReceiver:
    """The run receiver behind a run context's `receiver`: every context makes one.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> run_receiver(events) is events
        True
    """
    assert isinstance(receiver, RunReceiver)  # noqa: S101 - every run context makes one
    return receiver
