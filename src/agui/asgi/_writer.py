"""Writing a run's events onto the wire: coalescing, slicing, keep-alive pings.

A `Streamer` (`agui.asgi._streaming`) owns the run; its `Writer` moves the run's events from
the receiver to the client, in the stream's `Encoding` (`agui.asgi._encoding`). What is queued
when it wakes goes out in one send. In a burst, what the agent adds in the next few turns of the
loop goes with it, so sends are amortized over the events they carry; a stream that emits now
and then (a token every few tens of milliseconds) sends each event at once. A lock keeps the
keep-alive pings apart from the sends.

Backpressure: the writer tells the run's receiver what it holds and when a send waits on the
client (`agui.sink`), and sends at most `MAX_SEND_BYTES` at a time, since a server's transport
buffers all of one send however slow its client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Literal, cast

from agui._emit.receiver import run_receiver
from agui._emit.record import Item
from agui.asgi._admission import Message, Send
from agui.asgi._encoding import SSE, Encoding, broken_frames
from agui.errors import AguiError
from agui.sink import EventReceiver
from agui.sse import comment_frame

__all__ = ["MAX_SEND_BYTES", "Outcome", "Writer", "try_send"]

Outcome = Literal["done", "gone", "broken"]
"""How a stream ended: the run's events all went out, the client left, or an event was broken."""

_PING = comment_frame("ping")
_MAX_EVENTS_PER_SEND = 1024
_GATHER_TURNS = 16
_GATHER_ENOUGH = 256
_GATHER_SECONDS = 0.002

MAX_SEND_BYTES = 256 * 1024
"""The most one send carries: a larger batch's frames go out in slices of this size."""


class Writer:
    """Moves a run's events from its receiver to the client, coalescing what is queued.

    `pump` waits on the receiver directly, so an event costs no task or timer of its own;
    `ping` runs beside it only when keep-alive is on (and the encoding has pings). A lock keeps
    their sends apart.
    """

    def __init__(
        self,
        send: Send,
        receiver: EventReceiver,
        keepalive: float | None,
        encoding: Encoding = SSE,
    ) -> None:
        self._send = send
        self._receiver = run_receiver(receiver)
        self._encoding = encoding
        self._frames = encoding.frames
        self._lock = asyncio.Lock()
        self.torn = False
        """Whether the stream may end inside a frame: a slice of one is out, not all of them."""
        self._last = 0.0 if keepalive is None else asyncio.get_running_loop().time()

    async def pump(self) -> Outcome:
        """Stream until the receiver closes (`done`), a send fails, or encoding fails."""
        # `item_batches()` is an async generator (annotated as an iterator); close it when done.
        batches = cast("AsyncGenerator[list[Item], None]", self._receiver.item_batches())
        loop = asyncio.get_running_loop()
        # The first batch (RUN_STARTED and what came with it) goes out at once: on a busy
        # server, each turn spent gathering delays a client's first event.
        sent = -_GATHER_SECONDS
        try:
            async for batch in batches:
                # Gather only in a burst: when the last send went out under `_GATHER_SECONDS`
                # ago. A token stream's delta comes alone; gathering it found nothing and cost
                # a turn of the loop per delta: 2-10% of the server's CPU per delta, and 1.5 to
                # 3 times the p50 latency on a saturated loop (`bench_streams.py`). Not gathering
                # at all cost the dense burst (`bench_served.py`) 12%. bench/README.md has both.
                if loop.time() - sent < _GATHER_SECONDS:
                    batch = await self._gather(batch)  # noqa: PLW2901 - the batch, grown
                outcome = await self._write(batch)
                if outcome != "done":
                    return outcome
                sent = loop.time()
            return "done"
        finally:
            self._receiver.unbind()
            await batches.aclose()

    async def _gather(self, batch: list[Item]) -> list[Item]:
        """Add what an agent emitting as it goes produces in the next few turns of the loop.

        Called in a burst only (see `pump`): an agent that awaits between events would
        otherwise cost one send per event. Each turn lets it run once more; gathering stops at
        the first turn that adds nothing, so a burst that ends delays its last event by one turn
        of the loop. A busy one delays it by at most 16
        turns or 2 ms, whichever comes first, and one turn more: a turn that runs long (an agent
        computing between two awaits) cannot hold back what is already gathered. A batch that
        is already large goes out at once: sends are amortized, latency matters more.
        """
        loop = asyncio.get_running_loop()
        until = loop.time() + _GATHER_SECONDS
        for _ in range(_GATHER_TURNS):
            if len(batch) >= _GATHER_ENOUGH or loop.time() >= until:
                break
            await asyncio.sleep(0)
            more = self._receiver.items()
            if not more:
                break
            batch += more
        return batch

    async def ping(self, keepalive: float) -> None:
        """Send a comment frame after each `keepalive` idle seconds; return once one fails."""
        loop = asyncio.get_running_loop()
        while True:
            idle = loop.time() - self._last
            if idle < keepalive:
                await asyncio.sleep(keepalive - idle)
            elif not await self._send_ping():
                return

    async def _send_ping(self) -> bool:
        async with self._lock:
            if self._receiver.closed:
                # The run has ended: its last frames go out (or went) before this lock, and a
                # comment must not follow its terminal event. The pump is ending the stream.
                self._last = asyncio.get_running_loop().time()
                return True
            return await self._send_unlocked(_PING)

    async def _write(self, batch: list[Item]) -> Outcome:
        """Encode the batch, then send it in slices, telling the receiver what is still held.

        The lock is held for the whole batch: a slice may end inside a frame, and a ping sent
        between two slices would land inside that frame and break it.
        """
        blobs, outcome = self._encode(batch)
        batch.clear()  # the frames stand for it now: what the client has not taken is counted once
        held = sum(map(len, blobs))
        async with self._lock:
            for blob in blobs:
                held = await self._send_blob(blob, held)
                if held < 0:
                    return "gone"
        return outcome

    async def _send_blob(self, blob: bytes, held: int) -> int:
        """Send one blob of frames in slices; what is still held after it, or -1 if one failed."""
        receiver = self._receiver
        sliced = len(blob) > MAX_SEND_BYTES
        for start in range(0, len(blob), MAX_SEND_BYTES):
            data = blob[start : start + MAX_SEND_BYTES] if sliced else blob
            receiver.sending(held)
            # A slice stopped midway (the client gone, the task cancelled) may end in a frame.
            self.torn = sliced
            went = await self._send_unlocked(data)
            self.torn = start + len(data) < len(blob)
            held -= len(data)
            receiver.sent(held)
            if not went:
                return -1
        return held

    def _encode(self, batch: list[Item]) -> tuple[list[bytes], Outcome]:
        blobs: list[bytes] = []
        for start in range(0, len(batch), _MAX_EVENTS_PER_SEND):
            part = batch[start : start + _MAX_EVENTS_PER_SEND]
            try:
                blobs.append(self._frames(part))
            except (ValueError, AguiError):
                blobs.append(broken_frames(part, self._encoding))
                return blobs, "broken"
        return blobs, "done"

    async def _send_unlocked(self, data: bytes) -> bool:
        self._last = asyncio.get_running_loop().time()
        return await try_send(self._send, _body(data))


def _body(data: bytes) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def try_send(send: Send, message: Message) -> bool:
    """Send one ASGI message; `False` when the client is gone (a failed send is a disconnect)."""
    try:
        await send(message)
    except OSError:
        return False
    return True
