"""Durable runs: an endpoint with a run log owns its runs apart from their connections.

With `asgi_app(agent, runs=log)` a POST reserves the thread in the log (409 `THREAD_BUSY` while
another run holds it), starts the run as a task of the endpoint's own, and streams the response
from the log like any other reader (`agui.asgi._following`). The run's task writes what the
agent emits to the log, one append per batch of queued events, renews its lease, listens for a
cancel from any worker, is cancelled past `max_run_seconds`, and with its last batch writes the
thread record: the thread's messages and state folded with the run (`agui.fold`). The client
leaving changes nothing; `aclose()` (the lifespan's shutdown) cancels the runs still going.

The routes under the endpoint's path (`agui.asgi._routes`) answer after the endpoint's own
origin and authorization checks: the events of a run from an id onwards, a cancel, a thread.

Every run and thread is its owner's (`agui.asgi._identity`): a POST begins its run under its
key in the caller's space, and the log refuses it there (`Owned`) when the thread is another's,
before anything else of the thread is looked at; a route finds a run by its key in the caller's
space, so a run the caller does not own is not found, at no cost to the runs it does own. Only
what the owner rule refuses costs more: a look at the thread's owner and the application's
`thread_access`, which may share it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Generic, TypeVar

from pydantic import JsonValue

from agui._emit.frames import item_json
from agui._emit.joined import RunEvents
from agui._emit.receiver import run_receiver
from agui._emit.record import Item
from agui.asgi._admission import Receive, Refusal, Scope, Send, check_accept, send_refusal
from agui.asgi._encoding import Encoding
from agui.asgi._following import Follower
from agui.asgi._hooks import new_chain
from agui.asgi._identity import Access, Action, ThreadAccess, run_not_found, thread_not_found
from agui.asgi._origins import OriginPolicy
from agui.asgi._profile import Chain
from agui.asgi._routes import Route, check_ids, parse_route, resume_after, thread_of
from agui.asgi._streaming import Streamer, log_failure
from agui.asgi._writer import try_send
from agui.cancellation import CancellationToken
from agui.context import RunContext
from agui.errors import AguiError, RunLogError
from agui.events import RunErrorEvent, RunFinishedEvent
from agui.runner import AgentLike, drive
from agui.runs import SHARED, Owned, Page, RunLog, run_key
from agui.runs._served import serving
from agui.runs._tail import Tail
from agui.runs._thread import thread_after
from agui.sse import event_json
from agui.transform import Transformer
from agui.types import RunAgentInput

__all__ = ["Admission", "Durable", "RunLog", "RunOptions", "batch_frames", "record_run"]

S = TypeVar("S")
_T = TypeVar("_T")
RunOptions = tuple[AgentLike[S], type[S] | None, Chain | None, bool, float | None, float]
"""What a run needs of the endpoint: agent, state type, transformers, debug, keepalive, grace."""
Admission = tuple[
    Mapping[str, Encoding], OriginPolicy, Callable[[Mapping[str, str]], Awaitable[str]]
]
"""The endpoint's encodings, origin policy and authorization check (to the caller's owner)."""

_log = logging.getLogger("agui.asgi")
_UNSERIALIZABLE = event_json(
    RunErrorEvent(message="an event could not be serialized", code="SERIALIZATION_ERROR")
)
_Stop = Callable[[str], None]
_BURST = 8
"""A batch of this many items or more is a burst: the items after it within `_LINGER` join it."""
_LINGER = 0.002
"""Seconds a burst waits for more (an append costs about 0.1 ms of this process's CPU)."""


class Durable(Generic[S]):
    """How an endpoint runs: on its `Streamer` without a run log, from the log with one.

    It answers the durable-run routes too (`answer`), and only with a log.
    """

    def __init__(
        self,
        log: RunLog | None,
        run: RunOptions[S],
        streamer: Streamer[S],
        admission: Admission,
        thread_access: ThreadAccess | None = None,
    ) -> None:
        self._log = None if log is None else Tail(log)
        self._access = Access(thread_access)
        self._agent, self._state, self._transformers, self._debug, keepalive, self._grace = run
        self._streamer = streamer
        encodings, self._origins, self._authorize = admission
        self._encodings = dict(encodings)
        self._follower = None if self._log is None else Follower(self._log, keepalive)
        self._owned: dict[str, tuple[asyncio.Task[None], _Stop]] = {}

    @property
    def durable(self) -> bool:
        """Whether runs are kept in a run log; without one, `stream` is the streamer's."""
        return self._log is not None

    async def aclose(self) -> None:
        """Cancel the runs still going, wait for their last frames, and close the log."""
        await self._streamer.aclose()
        owned = list(self._owned.values())
        for _, stop in owned:
            stop("the server is shutting down")
        if owned:
            await asyncio.wait([task for task, _ in owned], timeout=self._grace + 1.0)
        if self._log is not None:
            await self._log.aclose()

    # -- POST <P> ------------------------------------------------------------------------------

    async def stream(
        self,
        run_input: RunAgentInput,
        encoding: Encoding,
        cors: list[tuple[bytes, bytes]],
        receive: Receive,
        send: Send,
        *,
        owner: str = SHARED,
        legacy: bool = False,
    ) -> None:
        """Reserve the thread, start the run, and stream it to this client from the log."""
        log, follower = self._log, self._follower
        # Without a log the app streams through the streamer itself (`durable`): one frame
        # fewer held by every open stream.
        assert log is not None  # noqa: S101 - see `durable`
        assert follower is not None  # noqa: S101 - made with the log
        try:
            check_ids(run_input.run_id, run_input.thread_id)
            # Before the thread is reserved: a factory that fails leaves nothing to release.
            chain = new_chain(self._transformers, legacy=legacy)
            key, space = await self._begin(log, run_input, owner)
            self._launch(log, run_input, chain, space)
            first = await self._log_call(log.read(key, 0, 0))
        except Refusal as refusal:
            await send_refusal(send, refusal.with_cors(cors))
            return
        # `None` only for a run gone the moment it began: the follower ends at once.
        empty = Page([], ended=True)
        await follower.stream(key, 0, first or empty, encoding, cors, receive, send)

    async def _begin(self, log: Tail, run_input: RunAgentInput, owner: str) -> tuple[str, str]:
        """Begin the run in its thread owner's space: its key there, and that owner."""
        thread_id = run_input.thread_id
        space = owner
        key = run_key(space, run_input.run_id)
        answer = await self._log_call(log.begin(key, thread_id, owner=space))
        if isinstance(answer, Owned):
            # Another's thread: shared with this caller, or as unknown to it as any other id.
            if not await self._access.allows(owner, thread_id, answer.owner, "run"):
                raise thread_not_found(thread_id)
            space = answer.owner
            key = run_key(space, run_input.run_id)
            answer = await self._log_call(log.begin(key, thread_id, owner=space))
            if isinstance(answer, Owned):  # the thread changed hands in between
                raise thread_not_found(thread_id)
        if answer is not None:
            raise _busy(run_input, answer.rpartition("/")[2])
        return key, space

    def _launch(
        self, log: Tail, run_input: RunAgentInput, chain: Sequence[Transformer], owner: str
    ) -> None:
        token = CancellationToken()
        ctx: RunContext[S] = RunContext(
            run_input, state=self._state, transformers=chain, token=token
        )
        with serving(log, owner):  # what the agent keeps per thread goes where its runs are
            run = asyncio.create_task(
                drive(self._agent, ctx, debug=self._debug), name=f"agui run {run_input.run_id}"
            )

        def stop(why: str) -> None:
            token.cancel(why)
            run.cancel()

        key = run_key(owner, run_input.run_id)
        owning = asyncio.create_task(self._own(log, (run_input, owner), ctx, run, stop))
        self._owned[key] = (owning, stop)
        owning.add_done_callback(lambda _: self._owned.pop(key, None))

    async def _own(
        self,
        log: Tail,
        owned: tuple[RunAgentInput, str],
        ctx: RunContext[S],
        run: asyncio.Task[None],
        stop: _Stop,
    ) -> None:
        run_input, owner = owned
        run_id = run_key(owner, run_input.run_id)
        unwatch = log.watch(run_id, lambda: stop("the run was cancelled"))
        longest = log.settings.max_run_seconds
        timer = asyncio.get_running_loop().call_later(
            longest, stop, f"the run went on longer than max_run_seconds ({longest:g} s)"
        )
        renewing = asyncio.create_task(_renew(log, run_id, stop))
        try:
            await record_run(log, run_input, ctx, stop, owner=owner)
        finally:
            timer.cancel()
            renewing.cancel()
            unwatch()
            await log.release(run_id)  # a no-op unless the run stopped before its end
            done, _ = await asyncio.wait({run}, timeout=self._grace)
            if not done:
                _log.error("run task %r ignored being cancelled; it is left running", run_id)
            log_failure(run)

    # -- the routes ----------------------------------------------------------------------------

    async def answer(
        self, scope: Scope, method: str, headers: Mapping[str, str], receive: Receive, send: Send
    ) -> bool:
        """Answer a durable-run route after the endpoint's checks; `False`: not one (or no log).

        Raises `Refusal` for the endpoint to send, with the CORS headers of an allowed page.
        """
        log, follower = self._log, self._follower
        route = None if log is None or follower is None else parse_route(scope)
        if route is None or log is None or follower is None:
            return False
        cors = self._origins.check_origin(headers)
        try:
            identity = await self._authorize(headers)
            _check_method(route, method)
            if route.kind == "events":
                encoding = self._encodings[check_accept(headers, tuple(self._encodings))]
                after = resume_after(scope, headers)
                key = await self._run(log, identity, route.target, thread_of(scope), "read")
                first = await self._resumed(log, key, route.target, after)
                await follower.stream(key, after, first, encoding, cors, receive, send)
            elif route.kind == "cancel":
                key = await self._run(log, identity, route.target, thread_of(scope), "cancel")
                await self._cancel(log, key, route.target, (cors, send))
            else:
                await self._thread(log, identity, route.target, cors, send)
        except Refusal as refusal:
            raise refusal.with_cors(cors) from None
        return True

    async def _run(
        self, log: RunLog, identity: str, run_id: str, thread_id: str | None, action: Action
    ) -> str:
        """The key of the run a route names: the caller's own, or one of a thread it may reach.

        The caller's own run costs nothing here: its key is in the caller's space, and a run
        the caller does not own is simply not there (404 when the route reads it).
        """
        if thread_id is None:
            return run_key(identity, run_id)
        owner = await self._log_call(log.owner(thread_id))
        if owner is None or not await self._access.allows(identity, thread_id, owner, action):
            raise run_not_found(run_id)
        key = run_key(owner, run_id)
        if await self._log_call(log.run_thread(key)) != thread_id:
            raise run_not_found(run_id)
        return key

    async def _resumed(self, log: RunLog, key: str, run_id: str, after: int) -> Page:
        """The page after frame `after`, which the log must hold or have held (400 if not)."""
        # Read from the frame before, still one read: the page shows whether frame `after` was
        # ever written, so an id past the run's last frame is refused, not taken for its end.
        page = await self._log_call(log.read(key, max(0, after - 1), 0))
        if page is None:
            raise run_not_found(run_id)
        if after == 0:
            return page
        if not page.frames:
            message = (
                f"the event id {after} is past the last frame of run {run_id!r} in its log, so "
                "this endpoint never sent it; send the id of the last frame you read, or none to "
                "read the run from its start"
            )
            raise Refusal(400, "INVALID_EVENT_ID", message)
        return Page([frame for frame in page.frames if frame[0] > after], page.ended)

    async def _cancel(
        self, log: RunLog, key: str, run_id: str, answering: tuple[list[tuple[bytes, bytes]], Send]
    ) -> None:
        cors, send = answering
        answer = await self._log_call(log.cancel(key))
        if answer == "unknown":
            raise run_not_found(run_id)
        if answer == "ended":
            message = f"run {run_id!r} has ended already; there is nothing to cancel"
            raise Refusal(409, "RUN_ENDED", message)
        await _send_json(send, 202, {"runId": run_id, "status": "cancelling"}, cors)

    async def _thread(
        self,
        log: RunLog,
        identity: str,
        thread_id: str,
        cors: list[tuple[bytes, bytes]],
        send: Send,
    ) -> None:
        record = await self._log_call(log.thread(thread_id))
        if record is None or not await self._access.allows(
            identity, thread_id, record.owner, "read"
        ):
            raise thread_not_found(thread_id)
        await _send_json(send, 200, record.wire(), cors)

    @staticmethod
    async def _log_call(call: Awaitable[_T]) -> _T:
        try:
            return await call
        except RunLogError as error:
            raise Refusal(503, error.code, str(error), [("retry-after", "1")]) from None


async def _renew(log: RunLog, run_id: str, stop: _Stop) -> None:
    while True:
        await asyncio.sleep(log.settings.renew_every)
        try:
            answer = await log.renew(run_id)
        except RunLogError:
            _log.warning("renewing the lease of run %s failed", run_id, exc_info=True)
            continue
        if answer == "cancel":
            stop("the run was cancelled")
        elif answer == "gone":
            stop("the run log no longer holds this run")
            return


async def record_run(
    log: RunLog, run_input: RunAgentInput, ctx: RunContext[S], stop: _Stop, *, owner: str = SHARED
) -> None:
    """Append each batch the run queues; the one with the terminal event ends the run.

    The run is kept in `owner`'s space, the owner of its thread.

    An append costs a round trip whatever it holds, so when the agent emits faster than the
    log takes its batches (a batch of `_BURST` items or more), what follows within `_LINGER`
    goes in the same append. The run's first batch and its last go at once, and so does a slow
    agent's every event: a burst is the only thing that waits.
    """
    events = RunEvents()
    key = run_key(owner, run_input.run_id)
    started = False
    receiver = run_receiver(ctx.receiver)
    async for taken in receiver.item_batches():
        batch = taken
        if started and len(batch) >= _BURST and not _ends(batch):
            await asyncio.sleep(_LINGER)
            batch = [*batch, *receiver.items()]
        frames, broken = batch_frames(batch)
        events.add(batch[: len(frames)])
        started = True
        if broken:
            stop("an event could not be serialized")
            frames.append(_UNSERIALIZABLE)
        final = broken or _ends(batch)
        try:
            thread = (
                await thread_after(log, run_input, events.events(), owner=owner) if final else None
            )
            written = await log.append(key, frames, thread=thread)
        except RunLogError:
            _log.exception("run %s could not be written to its log; stopping it", run_input.run_id)
            written = False
        if not written:
            stop("the run could not be written to its log")
        if final or not written:
            # What a stopped run still emits has nowhere to go; its owner waits for it a while.
            break


def _ends(batch: list[Item]) -> bool:
    return isinstance(batch[-1], (RunFinishedEvent, RunErrorEvent))


def batch_frames(batch: list[Item]) -> tuple[list[bytes], bool]:
    """The batch's JSON, up to the first event that cannot be serialized; whether one could not."""
    frames: list[bytes] = []
    for item in batch:
        try:
            frames.append(item_json(item))
        except (ValueError, AguiError):
            _log.exception("an event could not be serialized; ending the run")
            return frames, True
    return frames, False


def _busy(run_input: RunAgentInput, holder: str) -> Refusal:
    if holder == run_input.run_id:
        message = f"run {holder!r} exists already; start a run with a new runId"
        return Refusal(409, "RUN_EXISTS", message)
    message = (
        f"thread {run_input.thread_id!r} has a live run, {holder!r}; read it at "
        f"runs/{holder}/events, cancel it at runs/{holder}/cancel, or wait for it to end"
    )
    refusal = Refusal(409, "THREAD_BUSY", message)
    refusal.body["runId"] = holder
    return refusal


def _check_method(route: Route, method: str) -> None:
    allowed = "POST" if route.kind == "cancel" else "GET"
    if method != allowed:
        message = f"this path answers {allowed}; {method} is not allowed"
        raise Refusal(405, "METHOD_NOT_ALLOWED", message, [("allow", allowed)])


async def _send_json(
    send: Send, status: int, body: Mapping[str, JsonValue], cors: list[tuple[bytes, bytes]]
) -> None:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"cache-control", b"no-store"),
        *cors,
    ]
    await try_send(send, {"type": "http.response.start", "status": status, "headers": headers})
    await try_send(send, {"type": "http.response.body", "body": data})
