"""Streaming a run's events to its client: the run's task, disconnects, shutdown.

`agui.asgi` admits a request; a `Streamer` then owns the run (its task, its cancellation when
the client leaves, the runs detached from theirs), and its `Writer` (`agui.asgi._writer`) moves
the run's events onto the wire, from the agent's own steps where it can (see there), in the
stream's `Encoding` (`agui.asgi._encoding`).

Backpressure: the writer tells the run's receiver what it holds and when a send waits on the
client (`agui.sink`), in slices of at most `MAX_SEND_BYTES`. Past the hard limit the run is
cancelled and the cause logged; its stream still ends with its terminal event if the client
reads again. The streams of one endpoint share a `Budget` (`agui.asgi._budget`): past it, the
run of the stream holding the most is cancelled the same way.

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
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Literal, TypeVar

from agui._emit.receiver import run_receiver
from agui.asgi._admission import Message, Receive, Refusal, Send, send_refusal, uncancel
from agui.asgi._budget import Budget
from agui.asgi._encoding import Encoding
from agui.asgi._hooks import new_chain
from agui.asgi._pings import Pings
from agui.asgi._profile import Chain
from agui.asgi._writer import Outcome, Writer, try_send
from agui.cancellation import CancellationToken
from agui.context import RunContext
from agui.events import RunErrorEvent
from agui.runner import AgentLike, drive
from agui.sink import HARD_LIMIT, HIGH_WATER, EventReceiver
from agui.types import RunAgentInput

__all__ = [
    "DisconnectHook",
    "Streamer",
    "ending",
    "finish_detached",
    "log_failure",
    "watch_client",
]

S = TypeVar("S")
T = TypeVar("T")

DisconnectHook = Callable[[RunAgentInput], Awaitable[None] | None]
"""`on_disconnect(input)`, sync or async; told when a client leaves before its stream ended."""

Abandoned = Literal["ended", "cut"] | None
"""How a stream whose run ignored the shutdown ended: a frame of the endpoint's, or cut."""

_log = logging.getLogger("agui.asgi")
_SHUTDOWN = "the server is shutting down"
_IGNORED = "run task %r ignored being cancelled (%s) for %.1f s; it is left running"
_END_MARGIN = 0.5  # seconds past the grace period for a stream to write the end of its run
_ABANDONED = RunErrorEvent(
    message="the server shut down, and the run did not stop when it was cancelled",
    code="RUN_ABANDONED",
)


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
        transformers: Chain | None,
        debug: bool,
        keepalive: float | None,
        detach: bool,
        on_disconnect: DisconnectHook | None,
        cancel_grace: float,
        buffering: tuple[int, int] = (HIGH_WATER, HARD_LIMIT),
        budget: Budget | None = None,
    ) -> None:
        self._agent = agent
        self._budget = Budget(None) if budget is None else budget
        self._state = state
        self._transformers = transformers
        self._debug = debug
        self._pings = None if keepalive is None else Pings(keepalive)
        self._detach = detach
        self._on_disconnect = on_disconnect
        self._grace = cancel_grace
        self._high_water, self._hard_limit = buffering
        self._detached: set[asyncio.Task[None]] = set()
        self._live: dict[asyncio.Task[None], _Live] = {}

    @property
    def detached_runs(self) -> int:
        """How many detached runs are still going."""
        return len(self._detached)

    @property
    def buffered_bytes(self) -> int:
        """About how many bytes the streams hold that their clients have not read yet."""
        return self._budget.total

    async def aclose(self) -> None:
        """Cancel the runs in flight and the detached ones; wait for their streams to end.

        Each stream ends with its terminal event (`RUN_FINISHED`, outcome `cancelled`); the
        wait lasts at most the grace period, and a moment more for the stream of a run that
        ignored its cancellation to write the `RUN_ERROR` that ends it.
        """
        live = list(self._live.values())
        for stream in live:
            _shut_down(stream.run, stream.token)
        tasks = list(self._detached)
        for task in tasks:
            task.cancel()
        waits: list[asyncio.Future[None]] = [*tasks, *(stream.ended for stream in live)]
        if waits:
            await asyncio.wait(waits, timeout=self._grace + _END_MARGIN)

    async def stream(
        self,
        run_input: RunAgentInput,
        encoding: Encoding,
        cors: list[tuple[bytes, bytes]],
        receive: Receive,
        send: Send,
        *,
        legacy: bool = False,
    ) -> None:
        """Run the agent on `run_input` and stream its events until the end or the client left.

        This frame watches the client itself, until it leaves or the stream ends: every frame
        between the request's and the client's `receive` is held while the stream is open.
        """
        try:
            chain = new_chain(self._transformers, legacy=legacy)
        except Refusal as refusal:
            await send_refusal(send, refusal.with_cors(cors))
            return
        token = CancellationToken()
        ctx: RunContext[S] = RunContext(
            run_input, state=self._state, transformers=chain, token=token
        )
        if not await try_send(send, _response_start(encoding, cors)):
            return
        writer, run, ended = self._launch(ctx, token, send, encoding)
        abandoned: Abandoned = None
        try:
            await watch_client(receive, writer.ended)
        except asyncio.CancelledError:
            # The server cancelled this connection (a shutdown past its graceful timeout): end
            # the run, and give its stream the grace period to carry the terminal event out;
            # the cancellation then goes on, as the server (or a timeout around it) expects.
            abandoned = await self._end_at_shutdown(run, token, (writer, send, encoding))
            raise
        finally:
            try:
                await self._settle(run, token, ctx, writer, (send, abandoned))
            finally:
                del self._live[run]
                self._budget.leave(ctx.receiver)
                ended.set_result(None)

    def _launch(
        self, ctx: RunContext[S], token: CancellationToken, send: Send, encoding: Encoding
    ) -> tuple[Writer, asyncio.Task[None], asyncio.Future[None]]:
        """Start the run's task and its writer; the future set once its stream has ended."""
        writer = Writer(send, ctx.receiver, self._pings, encoding)
        run_id = ctx.input.run_id
        run = asyncio.create_task(
            writer.run(functools.partial(drive, self._agent, ctx, debug=self._debug)),
            name=f"agui run {run_id}",
        )
        live = _Live(run, token, run_id, self._hard_limit)
        ledger = self._budget.enter(ctx.receiver, run_id, live.shed)
        ctx.receiver.bind(self._high_water, self._hard_limit, live.overflow, ledger=ledger)
        self._live[run] = live
        writer.start()
        return writer, run, live.ended

    async def _settle(
        self,
        run: asyncio.Task[None],
        token: CancellationToken,
        ctx: RunContext[S],
        writer: Writer,
        ended: tuple[Send, Abandoned],
    ) -> None:
        """End the stream, and settle its run as the stream's end says."""
        send, abandoned = ended
        await writer.stop()
        outcome = ending(writer.ended)
        if outcome != "gone" or abandoned == "ended":
            await try_send(send, {"type": "http.response.body", "body": b""})
        if abandoned is not None:
            pass  # cancelled, waited for and logged already; the stream has its end, or none
        elif outcome == "done":
            if not run.done():  # it ended in the step that sent its end, nearly always
                await asyncio.wait({run})
            log_failure(run)
        elif outcome == "broken":
            # An event that cannot be serialized ended the stream: stop the run, tell no hook.
            await self._cancel(run, token, "an event could not be serialized")
        else:
            await self._client_gone(run, token, ctx.receiver, ctx.input)

    async def _end_at_shutdown(
        self,
        run: asyncio.Task[None],
        token: CancellationToken,
        channel: tuple[Writer, Send, Encoding],
    ) -> Abandoned:
        """Cancel the run for a shutdown; whether it ignored that, and how its stream ended here.

        A run that is still going after the grace period will never write its terminal event,
        so the stream gets a `RUN_ERROR` of its own (`ended`): the client learns the run is
        lost, rather than reading a stream cut short. A stream stopped inside a frame cannot
        carry another one, and is cut (`cut`): a frame glued to half of one is read as neither.
        """
        writer, send, encoding = channel
        _shut_down(run, token)
        either: list[asyncio.Future[Any]] = [writer.ended, run]  # of two result types
        await asyncio.wait(either, timeout=self._grace)
        if run.done():
            return None
        _log.error(_IGNORED, run.get_name(), _SHUTDOWN, self._grace)
        if writer.ended.done():  # the client is gone, or the stream broke: nobody to tell
            return None
        await writer.stop()
        if writer.torn:
            return "cut"
        frame = encoding.frame(_ABANDONED)
        await try_send(send, {"type": "http.response.body", "body": frame, "more_body": True})
        return "ended"

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
            _log.error(_IGNORED, run.get_name(), why, self._grace)

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


def ending(ended: asyncio.Future[Outcome]) -> Outcome:
    """How the stream ended: `gone` when the writer was stopped because the client left."""
    if ended.cancelled():
        return "gone"
    error = ended.exception()
    if error is not None:
        _log.error("streaming failed; treating the client as gone", exc_info=error)
        return "gone"
    return ended.result()


def _shut_down(run: asyncio.Task[None], token: CancellationToken) -> None:
    token.cancel(_SHUTDOWN)
    run.cancel()


def _response_start(encoding: Encoding, cors: list[tuple[bytes, bytes]]) -> Message:
    """The 200 that starts a stream (not a local of the stream's frame, which would hold it)."""
    headers = [*encoding.headers, *cors] if cors else encoding.headers
    return {"type": "http.response.start", "status": 200, "headers": headers}


class _Live:
    """A stream's run, as a shutdown and the buffer limits reach it while the stream is open.

    One slotted object a stream, with the callbacks as its methods: partials over the run,
    its token and its limit, and the tuples of their arguments, were six objects more a stream
    for the garbage collector to walk.
    """

    __slots__ = ("ended", "hard_limit", "run", "run_id", "token")

    def __init__(
        self, run: asyncio.Task[None], token: CancellationToken, run_id: str, hard_limit: int
    ) -> None:
        self.run = run
        self.token = token
        self.run_id = run_id
        self.hard_limit = hard_limit
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Set once the stream has ended: what a shutdown waits for."""

    def overflow(self, queued: int) -> None:
        """The client left about `queued` bytes unread, past the hard limit: cancel the run."""
        if self.token.cancelled:  # by the budget already, which said why
            return
        _log.error(
            "run %s: its client has not read about %d bytes of its stream, past the limit of %d "
            "(buffer_hard_limit); cancelling the run",
            self.run_id,
            queued,
            self.hard_limit,
        )
        self.token.cancel("its client stopped reading the stream")
        self.run.cancel()

    def shed(self, _queued: int) -> None:
        """The server's streams hold more than its budget, this one the most: cancel its run."""
        self.token.cancel("the server holds too much of its clients' streams unread")
        self.run.cancel()


def log_failure(run: asyncio.Task[None]) -> None:
    """Retrieve a finished run task's exception: `drive` only raises on a bug or an interrupt."""
    if run.done() and not run.cancelled() and (error := run.exception()) is not None:
        _log.error("run task %r failed", run.get_name(), exc_info=error)


async def watch_client(receive: Receive, ended: asyncio.Future[T]) -> None:
    """Wait, in the calling task, until the client leaves or the stream `ended`, whichever first.

    The stream's end cancels the wait, and only the wait: a cancellation from elsewhere (the
    server's) propagates. A `receive` that fails is logged, and read as the client gone. No
    watcher task, no `asyncio.wait` over the two: a stream holds one task fewer.
    """
    task = asyncio.current_task()
    assert task is not None  # noqa: S101 - an ASGI app runs in a task
    watch = _Watch(task)
    ended.add_done_callback(watch.stop)
    try:
        while (await receive())["type"] != "http.disconnect":
            pass
    except asyncio.CancelledError:
        if not watch.stopped or uncancel(task) > 0:
            raise
    except Exception as error:  # noqa: BLE001 - logged; the stream ends as if the client left
        _log.error("watching the client failed; treating it as gone", exc_info=error)
    finally:
        watch.waiting = False
        ended.remove_done_callback(watch.stop)


class _Watch:
    """What `watch_client` shares with the callback that stops its wait.

    Every open stream holds one: an object of three slots, not a closure over three cells.
    """

    __slots__ = ("stopped", "task", "waiting")

    def __init__(self, task: asyncio.Task[object]) -> None:
        self.task = task
        self.waiting = True
        self.stopped = False

    def stop(self, _ended: asyncio.Future[T]) -> None:
        if self.waiting:
            self.stopped = True
            self.task.cancel()


async def finish_detached(
    run: asyncio.Task[None], token: CancellationToken, receiver: EventReceiver
) -> None:
    """Let a run whose client left go on to its end; its events are read and dropped."""
    try:
        async for _ in run_receiver(receiver).item_batches():
            pass
        await asyncio.wait({run})
    finally:
        if not run.done():
            token.cancel(_SHUTDOWN)
            run.cancel()
            await asyncio.wait({run})
        log_failure(run)
