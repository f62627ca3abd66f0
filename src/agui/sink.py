"""Where emitted events wait for their reader.

Emitting is synchronous: agent code appends to this queue and moves on, so after agent code
returns every event it emitted is already here (`drain()` takes them without waiting). The
transport reads the same queue asynchronously; `batches()` hands it everything queued at once,
so one network send can carry many frames.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator

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
        self._queue: deque[Event] = deque()
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        """Whether the writer has finished; queued events may still be read."""
        return self._closed

    def push(self, event: Event) -> None:
        """Queue one event and wake the reader (used by the run context)."""
        self._queue.append(event)
        if self._waiter is not None:
            self._wake()

    def close(self) -> None:
        """Mark the end of the stream; a reader finishes once the queue is empty."""
        self._closed = True
        self._wake()

    def drain(self) -> list[Event]:
        """Take every queued event, without waiting."""
        events = list(self._queue)
        self._queue.clear()
        return events

    async def batches(self) -> AsyncIterator[list[Event]]:
        """Yield everything queued as one list each time, until closed and empty."""
        while True:
            if self._queue:
                yield self.drain()
                continue
            if self._closed:
                return
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

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
