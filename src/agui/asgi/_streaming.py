"""Streaming a run's events to its client: coalescing, keep-alive pings, disconnects.

`agui.asgi` admits a request; a `Streamer` then owns the run (its task, its cancellation when
the client leaves, the runs detached from theirs), and its `Writer` moves the run's events onto
the wire (see "Streaming" and "Disconnects" there), in the stream's `Encoding`
(`agui.asgi._encoding`).

Backpressure: the writer tells the run's receiver what it holds and when a send waits on the
client (`agui.sink`), and sends at most `MAX_SEND_BYTES` at a time, since a server's transport
buffers all of one send however slow its client. Past the hard limit the run is cancelled and
the cause logged; its stream still ends with its terminal event if the client reads again.

Shutdown: `Streamer.aclose` cancels every run in flight (its stream ends with `RUN_FINISHED`,
outcome `cancelled`, as when its client leaves, and the agent's `finally` blocks run) and waits
for the streams to end, each for the grace period. A server that cancels a connection's task
(uvicorn does once its graceful-shutdown timeout is over) gets the same: the run is cancelled
and its stream given the grace period to end before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Generic, Literal, TypeVar, cast

from agui._record import Item
from agui.asgi._admission import Message, Receive, Send
from agui.asgi._encoding import SSE, Encoding, broken_frames
from agui.cancellation import CancellationToken
from agui.context import RunContext
from agui.errors import AguiError
from agui.runner import AgentLike, drive
from agui.sink import HARD_LIMIT, HIGH_WATER, EventReceiver
from agui.sse import comment_frame
from agui.transform import Transformer
from agui.types import RunAgentInput

__all__ = [
    "MAX_SEND_BYTES",
    "DisconnectHook",
    "Outcome",
    "Streamer",
    "TransformerFactory",
    "Writer",
    "buffering_problems",
    "ending",
    "finish_detached",
    "log_failure",
    "try_send",
    "wait_disconnect",
]

S = TypeVar("S")

DisconnectHook = Callable[[RunAgentInput], Awaitable[None] | None]
"""`on_disconnect(input)`, sync or async; told when a client leaves before its stream ended."""
TransformerFactory = Callable[[], Sequence[Transformer]]
"""Builds a fresh transformer chain for each request (transformers keep per-run state)."""
Outcome = Literal["done", "gone", "broken"]
"""How a stream ended: the run's events all went out, the client left, or an event was broken."""

_log = logging.getLogger("agui.asgi")
_PING = comment_frame("ping")
_MAX_EVENTS_PER_SEND = 1024
_GATHER_TURNS = 16
_GATHER_ENOUGH = 32
_SHUTDOWN = "the server is shutting down"

MAX_SEND_BYTES = 256 * 1024
"""The most one send carries: a larger batch's frames go out in slices of this size."""


class Streamer(Generic[S]):
    """Runs the agent for each admitted request and streams the run to its client.

    It keeps the detached runs (`disconnect="detach"`) until they end, so `aclose` can cancel
    the ones still going.
    """

    def __init__(  # noqa: PLR0913 - the options of asgi_app, validated there
        self,
        agent: AgentLike[S],
        *,
        state: type[S] | None,
        transformers: TransformerFactory | None,
        debug: bool,
        keepalive: float | None,
        detach: bool,
        on_disconnect: DisconnectHook | None,
        cancel_grace: float,
        buffering: tuple[int, int] = (HIGH_WATER, HARD_LIMIT),
    ) -> None:
        self._agent = agent
        self._state = state
        self._transformers = transformers
        self._debug = debug
        self._keepalive = keepalive
        self._detach = detach
        self._on_disconnect = on_disconnect
        self._grace = cancel_grace
        self._high_water, self._hard_limit = buffering
        self._detached: set[asyncio.Task[None]] = set()
        self._live: dict[asyncio.Task[None], tuple[CancellationToken, asyncio.Future[None]]] = {}

    @property
    def detached_runs(self) -> int:
        """How many detached runs are still going."""
        return len(self._detached)

    async def aclose(self) -> None:
        """Cancel the runs in flight and the detached ones; wait for their streams to end.

        Each stream ends with its terminal event (`RUN_FINISHED`, outcome `cancelled`); the
        wait lasts at most the grace period.
        """
        live = list(self._live.items())
        for run, (token, _) in live:
            _shut_down(run, token)
        tasks = list(self._detached)
        for task in tasks:
            task.cancel()
        waits: list[asyncio.Future[None]] = [*tasks, *(ended for _, (_, ended) in live)]
        if waits:
            await asyncio.wait(waits, timeout=self._grace)

    async def stream(
        self,
        run_input: RunAgentInput,
        encoding: Encoding,
        cors: list[tuple[bytes, bytes]],
        receive: Receive,
        send: Send,
    ) -> None:
        """Run the agent on `run_input` and stream its events until the end or the client left."""
        token = CancellationToken()
        ctx: RunContext[S] = RunContext(
            run_input, state=self._state, transformers=self._new_chain(), token=token
        )
        headers = [*encoding.headers, *cors] if cors else encoding.headers
        start = {"type": "http.response.start", "status": 200, "headers": headers}
        if not await try_send(send, start):
            return
        run = asyncio.create_task(
            drive(self._agent, ctx, debug=self._debug), name=f"agui run {run_input.run_id}"
        )
        overflow = functools.partial(_overflow, run, token, (run_input.run_id, self._hard_limit))
        ctx.receiver.bind(self._high_water, self._hard_limit, overflow)
        ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._live[run] = (token, ended)
        try:
            await self._relay(run, token, ctx, encoding, (receive, send))
        finally:
            del self._live[run]
            ended.set_result(None)

    async def _relay(
        self,
        run: asyncio.Task[None],
        token: CancellationToken,
        ctx: RunContext[S],
        encoding: Encoding,
        channel: tuple[Receive, Send],
    ) -> None:
        """Stream the run's events until the end or the client left; then settle the run."""
        receive, send = channel
        run_input = ctx.input
        writer = Writer(send, ctx.receiver, self._keepalive, encoding)
        pumping = asyncio.create_task(writer.pump())
        # Each watcher returns once the client is gone: its disconnect, or a ping that failed.
        watchers = {asyncio.create_task(wait_disconnect(receive))}
        if self._keepalive is not None and encoding.pings:
            watchers.add(asyncio.create_task(writer.ping(self._keepalive)))
        try:
            await asyncio.wait({pumping, *watchers}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The server cancelled this connection (a shutdown past its graceful timeout): end
            # the run, and give its stream the grace period to carry the terminal event out;
            # the cancellation then goes on, as the server (or a timeout around it) expects.
            _shut_down(run, token)
            await asyncio.wait({pumping}, timeout=self._grace)
            raise
        finally:
            for task in (pumping, *watchers):
                task.cancel()
            await asyncio.wait({pumping, *watchers})
            outcome = ending(pumping)
            for watcher in watchers:
                if not watcher.cancelled() and (error := watcher.exception()) is not None:
                    _log.error("watching the client failed; treating it as gone", exc_info=error)
            if outcome != "gone":
                await try_send(send, {"type": "http.response.body", "body": b""})
            if outcome == "done":
                await asyncio.wait({run})
                log_failure(run)
            elif outcome == "broken":
                # An event that cannot be serialized ended the stream: stop the run, tell no hook.
                await self._cancel(run, token, "an event could not be serialized")
            else:
                await self._client_gone(run, token, ctx.receiver, run_input)

    def _new_chain(self) -> Sequence[Transformer]:
        return () if self._transformers is None else self._transformers()

    async def _client_gone(
        self,
        run: asyncio.Task[None],
        token: CancellationToken,
        receiver: EventReceiver,
        run_input: RunAgentInput,
    ) -> None:
        if self._detach and not run.done():
            task = asyncio.create_task(finish_detached(run, token, receiver))
            self._detached.add(task)
            task.add_done_callback(self._detached.discard)
        else:
            await self._cancel(run, token, "the client disconnected")
        await self._notify(run_input)

    async def _cancel(self, run: asyncio.Task[None], token: CancellationToken, why: str) -> None:
        token.cancel(why)
        run.cancel()
        done, _ = await asyncio.wait({run}, timeout=self._grace)
        if not done:
            message = "run task %r ignored being cancelled (%s) for %.1f s; it is left running"
            _log.error(message, run.get_name(), why, self._grace)

    async def _notify(self, run_input: RunAgentInput) -> None:
        hook = self._on_disconnect
        if hook is None:
            return
        try:
            result = hook(run_input)
            if inspect.isawaitable(result):
                await result
        except Exception:  # noqa: BLE001 - a failing hook is logged; the server goes on
            _log.exception("the on_disconnect hook failed for run %s", run_input.run_id)


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
            self._receiver.unbind()
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
        """Encode the batch, then send it in slices, telling the receiver what is still held."""
        blobs, outcome = self._encode(batch)
        batch.clear()  # the frames stand for it now: what the client has not taken is counted once
        receiver = self._receiver
        held = sum(map(len, blobs))
        for blob in blobs:
            for start in range(0, len(blob), MAX_SEND_BYTES):
                data = blob if len(blob) <= MAX_SEND_BYTES else blob[start : start + MAX_SEND_BYTES]
                receiver.sending(held)
                went = await self._send_body(data)
                held -= len(data)
                receiver.sent(held)
                if not went:
                    return "gone"
        return outcome

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


def buffering_problems(high_water: int, hard_limit: int) -> list[str]:
    """What is wrong with `asgi_app`'s `max_buffered_bytes` and `buffer_hard_limit`, if anything.

    Examples:
        >>> buffering_problems(1 << 20, 1 << 10)
        ['buffer_hard_limit must be at least max_buffered_bytes (1048576), not 1024: ...']
    """
    if not high_water > 0:
        return [f"max_buffered_bytes must be a positive number of bytes, not {high_water}"]
    if not hard_limit >= high_water:
        limit = f"buffer_hard_limit must be at least max_buffered_bytes ({high_water})"
        return [f"{limit}, not {hard_limit}: past it, a run whose client stopped reading ends"]
    return []


def _shut_down(run: asyncio.Task[None], token: CancellationToken) -> None:
    token.cancel(_SHUTDOWN)
    run.cancel()


def _overflow(
    run: asyncio.Task[None], token: CancellationToken, limit: tuple[str, int], queued: int
) -> None:
    """The client left about `queued` bytes unread, past the hard limit: cancel the run."""
    run_id, hard_limit = limit
    _log.error(
        "run %s: its client has not read about %d bytes of its stream, past the limit of %d "
        "(buffer_hard_limit); cancelling the run",
        run_id,
        queued,
        hard_limit,
    )
    token.cancel("its client stopped reading the stream")
    run.cancel()


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
            token.cancel(_SHUTDOWN)
            run.cancel()
            await asyncio.wait({run})
        log_failure(run)
