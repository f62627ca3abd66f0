"""Streaming a run's events to its client: coalescing, keep-alive pings, disconnects.

`agui.asgi` admits a request and owns the run; this module moves the run's events onto the wire
and tells it when the client is gone (see "Streaming" and "Disconnects" there). How events
become bytes is the stream's `Encoding`, chosen once per request by content negotiation: `SSE`,
or the protobuf binding's (`proto_encoding()`, present only with the `proto` extra). Each gives
a batch's frames in one call, so the writer pays for the choice once per send, not per event.
The binary framing has no comments, so a protobuf stream gets no keep-alive pings.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Literal, cast

from agui._record import Item, materialize
from agui.asgi._admission import Message, Receive, Send
from agui.cancellation import CancellationToken
from agui.errors import AguiError
from agui.events import Event, RunErrorEvent
from agui.sink import EventReceiver
from agui.sse import SSE_MEDIA_TYPE, comment_frame, encode_items, encode_sse

__all__ = [
    "SSE",
    "Encoding",
    "Outcome",
    "Writer",
    "ending",
    "finish_detached",
    "log_failure",
    "proto_encoding",
    "try_send",
    "wait_disconnect",
]

Outcome = Literal["done", "gone", "broken"]
"""How a stream ended: the run's events all went out, the client left, or an event was broken."""

_log = logging.getLogger("agui.asgi")
_PING = comment_frame("ping")
_MAX_EVENTS_PER_SEND = 1024
_GATHER_TURNS = 16
_GATHER_ENOUGH = 32
_UNSERIALIZABLE = RunErrorEvent(
    message="an event could not be serialized", code="SERIALIZATION_ERROR"
)
"""What ends a stream whose next event cannot be serialized."""


@dataclasses.dataclass(frozen=True)
class Encoding:
    """How a stream's events become bytes, with the headers of the 200 that carries them."""

    headers: list[tuple[bytes, bytes]]
    """The response headers: the media type, and never cached or buffered."""
    frames: Callable[[list[Item]], bytes]
    """A batch's frames, from the queue's items (events, and deltas held as records, see
    `agui.sink`); raises `ValueError` or `AguiError` when an event cannot be written."""
    frame: Callable[[Event], bytes]
    """One event's frame, for the events before one that cannot be written."""
    pings: bool
    """Whether the framing has comment frames to keep an idle connection open with."""
    unserializable: bytes
    """The RUN_ERROR frame that ends a stream when an event cannot be written."""


def _headers(media_type: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", media_type.encode()),
        (b"cache-control", b"no-cache, no-store, no-transform"),
        (b"x-accel-buffering", b"no"),
        (b"vary", b"Accept"),
    ]


SSE = Encoding(
    headers=_headers(SSE_MEDIA_TYPE),
    frames=encode_items,
    frame=encode_sse,
    pings=True,
    unserializable=encode_sse(_UNSERIALIZABLE),
)
"""Server-Sent Events: `data: <json>\\n\\n` frames, `: ping` comments when idle."""


def proto_encoding() -> Encoding | None:
    """The protobuf binding (`agui.proto`), or `None` when the `proto` extra is not installed."""
    try:
        from agui.proto import PROTO_MEDIA_TYPE, encode_proto  # noqa: PLC0415 - optional
    except ImportError:
        return None

    def frames(part: list[Item]) -> bytes:
        return b"".join([encode_proto(_event(item)) for item in part])

    return Encoding(
        headers=_headers(PROTO_MEDIA_TYPE),
        frames=frames,
        frame=encode_proto,
        pings=False,
        unserializable=_unserializable(encode_proto),
    )


@functools.cache
def _unserializable(encode: Callable[[Event], bytes]) -> bytes:
    """The RUN_ERROR frame of an encoding, written once, however many apps are built."""
    return encode(_UNSERIALIZABLE)


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
        self._receiver = receiver
        self._encoding = encoding
        self._frames = encoding.frames
        self._lock = asyncio.Lock()
        self._last = 0.0 if keepalive is None else asyncio.get_running_loop().time()

    async def pump(self) -> Outcome:
        """Stream until the receiver closes (`done`), a send fails, or encoding fails."""
        # `item_batches()` is an async generator (annotated as an iterator); close it when done.
        batches = cast("AsyncGenerator[list[Item], None]", self._receiver.item_batches())
        first = True
        try:
            async for batch in batches:
                # The first batch (RUN_STARTED and what came with it) goes out at once: on a
                # busy server, each turn spent gathering delays a client's first event.
                outcome = await self._write(batch if first else await self._gather(batch))
                if outcome != "done":
                    return outcome
                first = False
            return "done"
        finally:
            await batches.aclose()

    async def _gather(self, batch: list[Item]) -> list[Item]:
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
            more = self._receiver.drain_items()
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

    async def _write(self, batch: list[Item]) -> Outcome:
        for start in range(0, len(batch), _MAX_EVENTS_PER_SEND):
            part = batch[start : start + _MAX_EVENTS_PER_SEND]
            try:
                frames = self._frames(part)
            except (ValueError, AguiError):
                await self._send_body(_broken_frames(part, self._encoding))
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


def _event(item: Item) -> Event:
    return materialize(item) if isinstance(item, tuple) else item


def _broken_frames(part: list[Item], encoding: Encoding) -> bytes:
    """The frames before the first event that cannot be serialized, then a RUN_ERROR frame."""
    frames: list[bytes] = []
    for event in map(_event, part):  # pragma: no branch - `part` holds an event that fails
        try:
            frames.append(encoding.frame(event))
        except (ValueError, AguiError):
            _log.exception("a %s event could not be serialized; ending the stream", event.type)
            break
    return b"".join(frames) + encoding.unserializable


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
        async for _ in receiver.item_batches():
            pass
        await asyncio.wait({run})
    finally:
        if not run.done():
            token.cancel("the server is shutting down")
            run.cancel()
            await asyncio.wait({run})
        log_failure(run)
