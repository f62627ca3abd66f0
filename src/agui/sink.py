"""Where emitted events wait for their reader.

Emitting is synchronous: agent code appends to this queue and moves on, so after agent code
returns every event it emitted is already here (`drain()` takes them without waiting). The
transport reads the same queue asynchronously; `batches()` hands it everything queued at once,
so one network send can carry many frames.

A streamed delta, or a handle's opening or closing event, may wait here as a compact record rather
than an event model (see `agui._record`): readers of events never see one, as `drain()` and
`batches()` build the model; a transport that only needs bytes reads the queue as it is with
`drain_items()` and `item_batches()`, and writes each item with `agui.sse.item_json`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable

from agui._record import BUILDERS, Item, Record
from agui.events import Event

__all__ = ["EventReceiver"]


class EventReceiver:
    """The reading end of a run's event queue: `drain()` for tests, `async for` for transports.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> ctx.say("Hello")
        'r-msg-1'
        >>> [event.type for event in events.drain()]
        ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']
        >>> events.drain()
        []
    """

    def __init__(self) -> None:
        self._queue: deque[Item] = deque()
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None
        self.push_record: Callable[[Record], None] = self._queue.append
        """Queue a delta or a start or end as a record (used by the run context, see
        `agui._record`). While no reader waits this is the queue's own `append`, so the
        commonest push of a stream runs no Python code; a waiting reader swaps in a push that
        wakes it."""

    @property
    def closed(self) -> bool:
        """Whether the writer has finished; queued events may still be read."""
        return self._closed

    def push(self, event: Event) -> None:
        """Queue one event and wake the reader (used by the run context)."""
        self._queue.append(event)
        if self._waiter is not None:
            self._wake()

    def _push_waking(self, record: Record) -> None:
        self._queue.append(record)
        self._wake()
        self.push_record = self._queue.append  # woken once is enough

    def close(self) -> None:
        """Mark the end of the stream; a reader finishes once the queue is empty."""
        self._closed = True
        self._wake()

    def drain(self) -> list[Event]:
        """Take every queued event, without waiting."""
        # `materialize` unrolled: one call per record fewer, on the test path's every event.
        build = BUILDERS
        return [
            build[item[0]](item[1], item[2]) if isinstance(item, tuple) else item
            for item in self.drain_items()
        ]

    def drain_items(self) -> list[Item]:
        """Take everything queued as it is: events, and deltas still held as records.

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> from agui.sse import item_json
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> ctx.say("Hi")
            'r-msg-1'
            >>> [item_json(item) for item in events.drain_items()][1]
            b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"r-msg-1","delta":"Hi"}'
        """
        items = list(self._queue)
        self._queue.clear()
        return items

    async def batches(self) -> AsyncIterator[list[Event]]:
        """Yield everything queued as one list of events each time, until closed and empty."""
        while await self._ready():
            yield self.drain()

    async def item_batches(self) -> AsyncIterator[list[Item]]:
        """Yield everything queued as it is (see `drain_items`), until closed and empty."""
        while await self._ready():
            yield self.drain_items()

    async def _ready(self) -> bool:
        """Wait until something is queued (`True`), or the queue is closed and empty."""
        while not self._queue:
            if self._closed:
                return False
            self._waiter = asyncio.get_running_loop().create_future()
            self.push_record = self._push_waking
            try:
                await self._waiter
            finally:
                self._waiter = None
                self.push_record = self._queue.append
        return True

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        async for batch in self.batches():
            for event in batch:
                yield event

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
