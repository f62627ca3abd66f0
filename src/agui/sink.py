"""Where emitted events wait for their reader.

Emitting is synchronous: agent code appends to this queue and moves on, so after agent code
returns every event it emitted is already here (`drain()` takes them without waiting). The
transport reads the same queue asynchronously; `batches()` hands it everything queued at once,
so one network send can carry many frames.

A run's queue is a subclass of this one, the emit core's (`agui._emit.receiver`): a streamed
delta, or a handle's opening or closing event, may wait there as a compact record rather than an
event model, and readers of events never see one, as `drain()` and `batches()` build the model.

Backpressure. Emitting never blocks, so a client that stops reading would let the queue grow
without end. A transport that is bound (`bind`) reports what it holds and when a send of its
waits on the client (`sending`, `sent`); `queued_bytes` is then what the client has not taken
yet, and `writable()` waits until that is below the high-water mark, so an agent that awaits it
at its natural await points holds about that much at most. Past the hard limit the transport is
told (`on_overflow`), to cancel the run. Counting is what keeps the hot path fast: an item is
weighed only when it is queued while a send waits on the client, which is never while the client
keeps up, and weighing is cheap (a record's text length; an event's text and values walked, never
JSON-encoded), so the figure is the approximate size of the frames, not their exact bytes.
A transport may also give a ledger (`bind(..., ledger=)`), told each change of that figure, to
keep a budget over many streams; it is told only when the figure changes, which is at each send
and while a send waits on the client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Literal, cast

from pydantic import BaseModel

from agui.errors import UsageError
from agui.events import Event

__all__ = ["HARD_LIMIT", "HIGH_WATER", "EventReceiver"]

HIGH_WATER = 1 << 20
"""The default high-water mark of a stream's queued bytes: 1 MiB."""
HARD_LIMIT = 64 << 20
"""The default hard limit of a stream's queued bytes, past which its run is cancelled: 64 MiB."""

_FRAME_WEIGHT = 64
"""About what a frame adds to its text and values: the type, the member names, framing."""
_VALUE_WEIGHT = 8
"""About what a number, a boolean, a null or a member name adds to a frame."""


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
        # A list, not a deque: it is only appended to and taken whole, and an empty list is 56
        # bytes where a deque keeps a block of 64 slots (about 0.6 KiB a stream), even cleared.
        self._queue: list[Event] = []
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._high_water = HIGH_WATER
        self._hard_limit = HARD_LIMIT
        self._on_overflow: Callable[[int], None] | None = None
        self._ledger: Callable[[int], None] | None = None
        self._bound = False
        self._blocked = False
        self._held = 0
        self._counted = 0
        self._writable: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        """Whether the writer has finished; queued events may still be read."""
        return self._closed

    def push(self, event: Event) -> None:
        """Queue one event and wake the reader (used by the run context).

        Refused once the queue is closed: no reader would take the event.
        """
        if self._closed:
            message = (
                f"cannot queue {event.type}: this run's stream has ended (its receiver is "
                "closed), so no reader would take it; emit before the run ends"
            )
            raise UsageError(message)
        self._queue.append(event)
        if self._blocked:
            self._count(_weight(event))
        if self._waiter is not None:
            self._wake()

    def close(self) -> None:
        """Mark the end of the stream; a reader finishes once the queue is empty."""
        self._closed = True
        self._wake()

    def drain(self) -> list[Event]:
        """Take every queued event, without waiting."""
        return self._drain_items()

    def _drain_items(self) -> list[Event]:
        """Take everything queued as it is (a run's receiver holds records too)."""
        items = self._queue.copy()
        self._queue.clear()
        if self._counted:
            self._settle(self._held, 0)
        return items

    async def batches(self) -> AsyncIterator[list[Event]]:
        """Yield everything queued as one list of events each time, until closed and empty."""
        while await self._ready():
            yield self.drain()

    async def _ready(self) -> bool:
        """Wait until something is queued (`True`), or the queue is closed and empty."""
        while not self._queue:
            if self._closed:
                return False
            if self._waiter is not None:
                # One slot: a second reader would take it, and the first would never wake.
                message = (
                    "this event queue already has a reader waiting on it; each event goes to "
                    "one reader, once; read the stream in one place and fan it out from there"
                )
                raise UsageError(message)
            self._waiter = asyncio.get_running_loop().create_future()
            self._pushing("waking")
            try:
                await self._waiter
            finally:
                self._waiter = None
                self._pushing("plain")
        return True

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        async for batch in self.batches():
            for event in batch:
                yield event

    def _pushing(self, mode: Literal["plain", "waking", "counting"]) -> None:
        """Note how a record is queued from now on; only a run's receiver holds records.

        A run's receiver (`agui._emit.receiver`) swaps its record push here; this queue holds
        events alone, and has nothing to swap.
        """

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- backpressure ----------------------------------------------------------------------

    @property
    def queued_bytes(self) -> int:
        """About how many bytes of frames the client has not taken yet (see the module's notes).

        Zero while nothing waits on the client, and always for a receiver no transport reads.

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> ctx.say("Hello")
            'r-msg-1'
            >>> events.queued_bytes
            0
        """
        return self._held + self._counted

    def bind(
        self,
        high_water: int,
        hard_limit: int,
        on_overflow: Callable[[int], None],
        *,
        ledger: Callable[[int], None] | None = None,
    ) -> None:
        """A transport will read this queue: `writable()` now waits past `high_water` bytes.

        `on_overflow(queued_bytes)` is called once, from the push that takes the queued bytes
        past `hard_limit`; the transport cancels the run there. `ledger(change)` is told each
        change of `queued_bytes`, until it is back to zero once the transport stopped reading.
        """
        self._high_water = high_water
        self._hard_limit = hard_limit
        self._on_overflow = on_overflow
        self._ledger = ledger
        self._bound = True

    def sending(self, held: int) -> None:
        """The transport is about to send, holding `held` bytes the client has not taken.

        Until `sent`, whatever is queued is weighed: the send may wait on the client. What the
        transport holds counts too, against the hard limit: a burst the agent queued without
        awaiting was taken whole, before any send could weigh its pushes.
        """
        self._settle(held, self._counted)
        self._blocked = True
        self._pushing("counting")
        self._count(0)

    def sent(self, held: int) -> None:
        """The send returned; the transport still holds `held` bytes. Wakes `writable()`."""
        self._settle(held, self._counted)
        if self._blocked:
            self._blocked = False
            self._pushing("plain")
        if self._writable is not None and self.queued_bytes < self._high_water:
            self._writable.set_result(None)
            self._writable = None

    def unbind(self) -> None:
        """The transport stopped reading (the stream ended or its client left): nothing waits."""
        self._bound = False
        self._settle(self._held, 0)
        self.sent(0)

    async def writable(self) -> None:
        """Return once the client has caught up: fewer than the high-water mark's bytes queued.

        After one turn of the event loop when no transport reads this queue (`RunContext.new`,
        `agui.run`, or a stream whose client left) or when the client keeps up; emitting itself
        never waits (see the module's notes).

        Examples:
            >>> import asyncio
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> asyncio.run(events.writable())
        """
        # Always a turn of the loop, bound or not: an agent that awaits nothing else lets the
        # transport send (and count) what is queued, and, once the transport stopped reading
        # (its client left), lets the endpoint run on to cancel it, instead of spinning here.
        await asyncio.sleep(0)
        while self._bound and self.queued_bytes >= self._high_water:
            if self._writable is None:
                self._writable = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._writable)

    def _settle(self, held: int, counted: int) -> None:
        """Set what the transport holds and what is counted; tell the ledger the change."""
        change = held + counted - self._held - self._counted
        self._held = held
        self._counted = counted
        if self._ledger is not None:
            self._ledger(change)

    def _count(self, weight: int) -> None:
        self._counted += weight
        if self._ledger is not None:
            self._ledger(weight)
        overflow = self._on_overflow
        if overflow is not None and self.queued_bytes > self._hard_limit:
            self._on_overflow = None  # told once
            overflow(self.queued_bytes)


def _weight(event: Event) -> int:
    """About how many bytes an event's frame takes: its text and values walked, not encoded."""
    total = _FRAME_WEIGHT
    stack: list[object] = list(event.__dict__.values())
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            total += len(value) + 2
        elif isinstance(value, dict):
            members = cast("dict[object, object]", value)
            total += _VALUE_WEIGHT
            stack += members.keys()
            stack += members.values()
        elif isinstance(value, (list, tuple)):
            total += _VALUE_WEIGHT
            stack += cast("list[object]", value)
        elif isinstance(value, BaseModel):
            stack += value.__dict__.values()  # a model inside (a message, a content part)
        else:
            total += _VALUE_WEIGHT
    return total
