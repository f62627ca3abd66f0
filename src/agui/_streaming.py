"""Streaming a run's events to its client: coalescing, keep-alive pings, disconnects.

`agui.asgi` admits a request and owns the run; this module moves the run's events onto the wire
as SSE frames and tells it when the client is gone (see "Streaming" and "Disconnects" there).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Literal, cast

from agui._negotiation import Message, Receive, Send
from agui.cancellation import CancellationToken
from agui.errors import AguiError
from agui.events import Event
from agui.sink import EventReceiver
from agui.sse import SSE_MEDIA_TYPE, comment_frame, event_json

__all__ = [
    "STREAM_HEADERS",
    "Outcome",
    "Writer",
    "ending",
    "finish_detached",
    "log_failure",
    "try_send",
    "wait_disconnect",
]

Outcome = Literal["done", "gone", "broken"]
"""How a stream ended: the run's events all went out, the client left, or an event was broken."""

STREAM_HEADERS = [
    (b"content-type", SSE_MEDIA_TYPE.encode()),
    (b"cache-control", b"no-cache, no-store, no-transform"),
    (b"x-accel-buffering", b"no"),
    (b"vary", b"Accept"),
]
"""The headers of a 200 that answers with an event stream."""

_log = logging.getLogger("agui.asgi")
_PING = comment_frame("ping")
_MAX_EVENTS_PER_SEND = 1024
_GATHER_TURNS = 16
_GATHER_ENOUGH = 32
_SERIALIZATION_FRAME = (
    b'data: {"type":"RUN_ERROR","message":"an event could not be serialized",'
    b'"code":"SERIALIZATION_ERROR"}\n\n'
)


class Writer:
    """Moves a run's events from its receiver to the client, coalescing what is queued.

    `pump` waits on the receiver directly, so an event costs no task or timer of its own;
    `ping` runs beside it only when keep-alive is on. A lock keeps their sends apart.
    """

    def __init__(self, send: Send, receiver: EventReceiver, keepalive: float | None) -> None:
        self._send = send
        self._receiver = receiver
        self._lock = asyncio.Lock()
        self._last = 0.0 if keepalive is None else asyncio.get_running_loop().time()

    async def pump(self) -> Outcome:
        """Stream until the receiver closes (`done`), a send fails, or encoding fails."""
        # `batches()` is an async generator (annotated as an iterator); close it when done.
        batches = cast("AsyncGenerator[list[Event], None]", self._receiver.batches())
        try:
            async for batch in batches:
                outcome = await self._write(await self._gather(batch))
                if outcome != "done":
                    return outcome
            return "done"
        finally:
            await batches.aclose()

    async def _gather(self, batch: list[Event]) -> list[Event]:
        """Add what an agent emitting as it goes produces in the next few turns of the loop.

        An agent that awaits between events would otherwise cost one send per event. Each turn
        lets it run once more; gathering stops at the first turn that adds nothing, so an idle
        agent delays its event by one turn of the loop, and a busy one by at most a few. A batch
        that is already large goes out at once: sends are amortized, latency matters more.
        """
        for _ in range(_GATHER_TURNS):
            if len(batch) >= _GATHER_ENOUGH:
                break
            await asyncio.sleep(0)
            more = self._receiver.drain()
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
            elif not await self._send_body(_PING):
                return

    async def _write(self, batch: list[Event]) -> Outcome:
        for start in range(0, len(batch), _MAX_EVENTS_PER_SEND):
            part = batch[start : start + _MAX_EVENTS_PER_SEND]
            try:
                frames = _frames([event_json(event) for event in part])
            except (ValueError, AguiError):
                await self._send_body(_broken_frames(part))
                return "broken"
            if not await self._send_body(frames):
                return "gone"
        return "done"

    async def _send_body(self, data: bytes) -> bool:
        async with self._lock:
            self._last = asyncio.get_running_loop().time()
            return await try_send(self._send, _body(data))


def ending(pumping: asyncio.Task[Outcome]) -> Outcome:
    """How the stream ended: `gone` when the writer was stopped because the client left."""
    if pumping.cancelled():
        return "gone"
    error = pumping.exception()
    if error is not None:
        _log.error("streaming failed; treating the client as gone", exc_info=error)
        return "gone"
    return pumping.result()


def _frames(payloads: list[bytes]) -> bytes:
    return b"data: " + b"\n\ndata: ".join(payloads) + b"\n\n" if payloads else b""


def _broken_frames(part: list[Event]) -> bytes:
    """The frames before the first event that cannot be serialized, then a RUN_ERROR frame."""
    payloads: list[bytes] = []
    for event in part:  # pragma: no branch - `part` holds an event that fails
        try:
            payloads.append(event_json(event))
        except (ValueError, AguiError):
            _log.exception("a %s event could not be serialized; ending the stream", event.type)
            break
    return _frames(payloads) + _SERIALIZATION_FRAME


def log_failure(run: asyncio.Task[None]) -> None:
    """Retrieve a finished run task's exception: `drive` only raises on a bug or an interrupt."""
    if run.done() and not run.cancelled() and (error := run.exception()) is not None:
        _log.error("run task %r failed", run.get_name(), exc_info=error)


def _body(data: bytes) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def try_send(send: Send, message: Message) -> bool:
    """Send one ASGI message; `False` when the client is gone (a failed send is a disconnect)."""
    try:
        await send(message)
    except OSError:
        return False
    return True


async def wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def finish_detached(
    run: asyncio.Task[None], token: CancellationToken, receiver: EventReceiver
) -> None:
    """Let a run whose client left go on to its end; its events are read and dropped."""
    try:
        async for _ in receiver.batches():
            pass
        await asyncio.wait({run})
    finally:
        if not run.done():
            token.cancel("the server is shutting down")
            run.cancel()
            await asyncio.wait({run})
        log_failure(run)
