r"""The AG-UI HTTP endpoint as a plain ASGI application: no web framework needed.

`asgi_app(agent)` answers one POST carrying a `RunAgentInput` with one `text/event-stream` of
`data: <json>\n\n` frames (LF only), or with the protobuf binding when the client asks for it
(see "Protobuf" below), and runs under any ASGI server. It mounts unchanged in
Starlette or FastAPI, `app.mount("/agent", agui.asgi_app(agent))`; it answers at any path it is
given, so the mount decides where it lives.

**Refusals.** Everything that can be wrong with a request is refused before the first byte of
stream, as a JSON body `{"code": ..., "message": ...}` (`Content-Type: application/json`,
`Vary: Accept`) that names what was wrong, checked in this order:

| check | status | code |
|---|---|---|
| the method is not POST | 405 (`Allow: POST`) | `METHOD_NOT_ALLOWED` |
| `authorize` says no | 401 / 403 | `UNAUTHORIZED` / `FORBIDDEN` |
| `Accept` excludes `text/event-stream` (and protobuf, or it is off) | 406 | `NOT_ACCEPTABLE` |
| `Content-Type` is not JSON (a missing one is accepted) | 415 | `UNSUPPORTED_MEDIA_TYPE` |
| the body is over `max_body_bytes` (Content-Length first, then counted) | 413 | `BODY_TOO_LARGE` |
| the body is empty, or not JSON | 400 | `EMPTY_BODY` / `INVALID_JSON` |
| the body is not a valid `RunAgentInput` | 422, with `errors` | `INVALID_INPUT` |

`Accept` is negotiated like the Rust SDK (`agui.asgi._admission`): missing means `*/*`, the most
specific range decides, and `q=0` refuses; the protobuf binding must be named, never a wildcard.

**The inspector.** With `inspector=True` the endpoint also answers `GET` (and `HEAD`) at its
path with the inspector page (`agui.asgi.inspector`): one self-contained HTML page that POSTs runs
to the same URL and shows the conversation, tool calls, state, outcome and event log. The page is
static and holds nothing of the agent's, so it is served without calling `authorize`; the runs it
starts are POSTs, admitted as any other. Its `Accept` is negotiated like a POST's: a `GET` that
cannot take `text/html`, such as an `EventSource` asking only for `text/event-stream`, is refused
with 406 (`NOT_ACCEPTABLE`, naming POST as the way to a stream), since GET does exist there but has
only the page to give. Other methods get 405 with `Allow: GET, HEAD, POST`. Without the inspector
(the default), a `GET` is refused with 405 and `Allow: POST`, as in the table above.

**Authorization.** `authorize(headers)` gets the request headers (lower-case names) before the
body is read and returns `True` to admit the request (it may be async). When it returns `False`
the status says whether credentials were offered: no `Authorization` header gives 401 with
`WWW-Authenticate: Bearer`, an `Authorization` header that was refused gives 403. A hook that
wants another status or message raises `Refused(message, status=...)`.

**Streaming.** The 200 and its headers (`Cache-Control: no-cache, no-store, no-transform`,
`X-Accel-Buffering: no`, `Vary: Accept`) go out before the agent runs, so every run-time failure
is a `RUN_ERROR` inside the stream. Events are written as they are emitted, and coalesced:
whatever is queued when the writer wakes goes out as one `http.response.body` message (at most
1,024 events each). When an agent awaits between events, the writer also lets the loop turn a
few times (while each turn brings more, up to 32 events) before it sends, so such an agent does
not pay one send per event; an idle agent's event waits one turn of the loop. A run's first
batch (its `RUN_STARTED` and what came with it) goes out without that wait: on a server busy
with other streams every turn is long, and a new client should see its run start at once.
With `keepalive` set, a `: ping` comment frame is sent after that many idle seconds, for
proxies that drop quiet connections; clients ignore comments. An event that cannot be
serialized ends the stream with a `RUN_ERROR` frame (code `SERIALIZATION_ERROR`) and cancels
the run.

**Disconnects.** While streaming, the endpoint listens for `http.disconnect`; a send that fails
(raises `OSError`) counts too. With `disconnect="cancel"` (the default) the run's cancellation
token trips and its task is cancelled, so the agent unwinds (its handles close, its `finally`
blocks run) and is awaited for at most `cancel_grace` seconds; then `on_disconnect(input)` is
told (sync or async).
With `disconnect="detach"` the run goes on to its end without a listener: `on_disconnect` is told
at once, the run's events still pass the transformers and the verifier and still end with their
terminal event, and are then discarded, since there is no one to send them to. The endpoint
keeps a reference to each detached run until it ends (`detached_runs`), and `aclose()` cancels
the ones still going: the endpoint calls it on lifespan shutdown when it is the server's app;
mounted in a framework (which keeps lifespan to itself), call it from the framework's shutdown.

**Protobuf.** AG-UI 1.0 defines an optional binary binding, `agui.proto`: each event is a
4-byte big-endian length and one `ag_ui.Event` message (`Content-Type` exactly
`application/vnd.ag-ui.event+proto`, with the same `Cache-Control`, `X-Accel-Buffering` and
`Vary` headers). It needs the `proto` extra (`pip install "agui-server[proto]"`). With
`protobuf=None` (the default) it is offered when the extra is installed, `True` requires it
(`UsageError` when the app is built without it), `False` turns it off. It answers only a request
whose `Accept` names its media type with a higher `q` than SSE's (`*/*` and `application/*` never
select it; SSE wins a tie); without it, an `Accept` that admits only protobuf gets 406. Coalescing
and the serialization fallback are the same in both bindings, but binary frames have no comments,
so a protobuf stream sends no keep-alive pings.

Examples:
    >>> import agui
    >>> async def hello(ctx):
    ...     ctx.say("Hello!")
    >>> app = agui.asgi_app(hello, keepalive=15.0)
    >>> app.detached_runs
    0
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import ClassVar, Generic, Literal, TypeVar

from agui.asgi._admission import (
    PROTO_MEDIA_TYPE,
    Receive,
    Refusal,
    Scope,
    Send,
    check_accept,
    check_content_type,
    check_method,
    decode_input,
    read_body,
    request_headers,
    send_refusal,
)
from agui.asgi._page import answer_inspector
from agui.asgi._streaming import (
    SSE,
    Encoding,
    Writer,
    ending,
    finish_detached,
    log_failure,
    proto_encoding,
    try_send,
    wait_disconnect,
)
from agui.cancellation import CancellationToken
from agui.context import RunContext
from agui.errors import AguiError, UsageError
from agui.runner import Agent, AgentLike, drive
from agui.sink import EventReceiver
from agui.sse import SSE_MEDIA_TYPE
from agui.transform import Transformer
from agui.types import RunAgentInput

__all__ = [
    "MAX_BODY_BYTES",
    "AguiApp",
    "Authorize",
    "DisconnectHook",
    "Receive",
    "Refused",
    "Scope",
    "Send",
    "TransformerFactory",
    "asgi_app",
]

S = TypeVar("S")

Authorize = Callable[[Mapping[str, str]], bool | Awaitable[bool]]
"""`authorize(headers) -> bool`, sync or async; header names are lower-case."""
DisconnectHook = Callable[[RunAgentInput], Awaitable[None] | None]
"""`on_disconnect(input)`, sync or async; told when a client leaves before its stream ended."""
TransformerFactory = Callable[[], Sequence[Transformer]]
"""Builds a fresh transformer chain for each request (transformers keep per-run state)."""

MAX_BODY_BYTES = 1 << 20
"""The default request body limit: 1 MiB."""

_log = logging.getLogger("agui.asgi")


class Refused(AguiError):
    """Raised by an `authorize` hook to refuse a request with a status and message of its own.

    The JSON body's code is `UNAUTHORIZED` for 401, `FORBIDDEN` for 403, else `REFUSED`.

    Examples:
        >>> error = Refused("this agent needs the 'agents:run' scope", status=403)
        >>> error.status, error.wire_code
        (403, 'FORBIDDEN')
    """

    code: ClassVar[str] = "REFUSED"

    def __init__(
        self, message: str, *, status: int = 403, headers: Mapping[str, str] | None = None
    ) -> None:
        if not 400 <= status < 500:  # noqa: PLR2004 - the range of client-error statuses
            problem = f"a refusal is a 4xx status, not {status}"
            raise UsageError(problem)
        super().__init__(message)
        self.status = status
        self.wire_code = {401: "UNAUTHORIZED", 403: "FORBIDDEN"}.get(status, "REFUSED")
        self.headers = dict(headers or {})


class AguiApp(Generic[S]):
    """The ASGI application `asgi_app` builds; see the module docstring for its behaviour.

    `media_types` lists what it answers with, in order of preference: `text/event-stream`, then
    `application/vnd.ag-ui.event+proto` when the protobuf binding is enabled.

    Examples:
        >>> import asyncio
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> app = asgi_app(hello)
        >>> async def lifespan():
        ...     sent = []
        ...     incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
        ...     async def receive():
        ...         return next(incoming)
        ...     async def send(message):
        ...         sent.append(message["type"])
        ...     await app({"type": "lifespan"}, receive, send)
        ...     return sent
        >>> asyncio.run(lifespan())
        ['lifespan.startup.complete', 'lifespan.shutdown.complete']
        >>> asgi_app(hello, protobuf=False).media_types
        ('text/event-stream',)
    """

    def __init__(  # noqa: PLR0913 - the options of asgi_app, validated once here
        self,
        agent: AgentLike[S],
        *,
        state: type[S] | None,
        transformers: TransformerFactory | None,
        debug: bool,
        max_body_bytes: int,
        keepalive: float | None,
        disconnect: Literal["cancel", "detach"],
        on_disconnect: DisconnectHook | None,
        authorize: Authorize | None,
        cancel_grace: float,
        inspector: bool,
        encodings: Mapping[str, Encoding],
    ) -> None:
        self._agent = agent
        self._state = state
        self._transformers = transformers
        self._debug = debug
        self._max_body_bytes = max_body_bytes
        self._keepalive = keepalive
        self._detach = disconnect == "detach"
        self._on_disconnect = on_disconnect
        self._authorize = authorize
        self._grace = cancel_grace
        self._inspector = inspector
        self._encodings = dict(encodings)
        self._media_types = tuple(self._encodings)
        self._detached: set[asyncio.Task[None]] = set()

    @property
    def media_types(self) -> tuple[str, ...]:
        """The media types this endpoint answers with, in order of preference."""
        return self._media_types

    @property
    def detached_runs(self) -> int:
        """How many detached runs are still going."""
        return len(self._detached)

    async def aclose(self) -> None:
        """Cancel the detached runs still going and wait for them (each for the grace period)."""
        tasks = list(self._detached)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=self._grace)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI connection: `http`, `lifespan`, or a refused `websocket`."""
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await _refuse_websocket(receive, send)
        else:
            message = f"agui.asgi_app cannot handle an ASGI {kind!r} scope"
            raise ValueError(message)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while (await receive())["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        # The only other lifespan message is the shutdown.
        await self.aclose()
        await send({"type": "lifespan.shutdown.complete"})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "GET")
        if self._inspector and method != "POST":
            try:
                await answer_inspector(scope, send, method)
            except Refusal as refusal:
                await send_refusal(send, refusal)
            return
        try:
            admitted = await self._admit(scope, receive)
        except Refusal as refusal:
            await send_refusal(send, refusal)
            return
        if admitted is not None:
            await self._stream(*admitted, receive, send)

    # -- admission -------------------------------------------------------------------------

    async def _admit(self, scope: Scope, receive: Receive) -> tuple[RunAgentInput, Encoding] | None:
        """The input and its stream's encoding; `None` if the client left; else `Refusal`."""
        headers = request_headers(scope)
        check_method(scope.get("method", "GET"))
        await self._check_authorized(headers)
        encoding = self._encodings[check_accept(headers, self.media_types)]
        check_content_type(headers)
        body = await read_body(headers, receive, self._max_body_bytes)
        return None if body is None else (decode_input(body), encoding)

    async def _check_authorized(self, headers: Mapping[str, str]) -> None:
        if self._authorize is None:
            return
        try:
            verdict = self._authorize(headers)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Refused as refused:
            raise Refusal(
                refused.status, refused.wire_code, str(refused), list(refused.headers.items())
            ) from None
        if verdict is True:
            return
        if "authorization" not in headers:
            message = "this endpoint needs credentials: send an Authorization header"
            raise Refusal(401, "UNAUTHORIZED", message, [("www-authenticate", "Bearer")])
        raise Refusal(403, "FORBIDDEN", "the credentials sent do not allow running this agent")

    # -- streaming -------------------------------------------------------------------------

    async def _stream(
        self, run_input: RunAgentInput, encoding: Encoding, receive: Receive, send: Send
    ) -> None:
        token = CancellationToken()
        ctx: RunContext[S] = RunContext(
            run_input, state=self._state, transformers=self._new_chain(), token=token
        )
        start = {"type": "http.response.start", "status": 200, "headers": encoding.headers}
        if not await try_send(send, start):
            return
        run = asyncio.create_task(
            drive(self._agent, ctx, debug=self._debug), name=f"agui run {run_input.run_id}"
        )
        writer = Writer(send, ctx.receiver, self._keepalive, encoding)
        pumping = asyncio.create_task(writer.pump())
        # Each watcher returns once the client is gone: its disconnect, or a ping that failed.
        watchers = {asyncio.create_task(wait_disconnect(receive))}
        if self._keepalive is not None and encoding.pings:
            watchers.add(asyncio.create_task(writer.ping(self._keepalive)))
        try:
            await asyncio.wait({pumping, *watchers}, return_when=asyncio.FIRST_COMPLETED)
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


async def _refuse_websocket(receive: Receive, send: Send) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        # Closing before accepting makes the server answer the handshake with 403.
        await send({"type": "websocket.close", "code": 1003})


def asgi_app(  # noqa: PLR0913 - every option is keyword-only and has a default
    agent: AgentLike[S],
    *,
    state: type[S] | None = None,
    transformers: TransformerFactory | None = None,
    debug: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
    keepalive: float | None = None,
    disconnect: Literal["cancel", "detach"] = "cancel",
    on_disconnect: DisconnectHook | None = None,
    authorize: Authorize | None = None,
    cancel_grace: float = 5.0,
    inspector: bool = False,
    protobuf: bool | None = None,
) -> AguiApp[S]:
    """An ASGI app that runs `agent` for each POSTed `RunAgentInput` and streams its events.

    The stream is SSE, or the protobuf binding for a client that asks for it by name.

    Args:
        agent: an `async def agent(ctx)` or an object with such a `run` method.
        state: the run state type (pydantic model, dataclass, TypedDict), as for `agui.run`.
        transformers: a factory returning a fresh transformer chain for each request.
        debug: put exception text into `RUN_ERROR.message` (never in production).
        max_body_bytes: the request body limit; larger bodies get 413.
        keepalive: seconds of idle SSE stream before a `: ping` comment frame; `None` for
            none (binary frames have no comments: a protobuf stream gets no pings).
        disconnect: `"cancel"` the run when its client leaves, or `"detach"` it to finish.
        on_disconnect: told the run's input when its client left before the stream ended.
        authorize: decides from the request headers, before the body is read (401/403).
        cancel_grace: how long a cancelled run may take to unwind, in seconds.
        inspector: also answer GET at the endpoint's path with the inspector page, a browser
            view of the runs it starts (see `agui.asgi.inspector`); off by default (GET gets 405).
        protobuf: offer the protobuf binding to clients that ask for it by name: `None` when
            the `proto` extra is installed, `True` always (it must be), `False` never.

    Examples:
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> app = asgi_app(hello, transformers=lambda: [], keepalive=15.0)
        >>> asgi_app(hello, transformers=[])
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: transformers must be a factory ...
    """
    _check_options(agent, transformers, max_body_bytes, keepalive, disconnect, cancel_grace)
    encodings = _encodings(protobuf)
    return AguiApp(
        agent,
        state=state,
        transformers=transformers,
        debug=debug,
        max_body_bytes=max_body_bytes,
        keepalive=keepalive,
        disconnect=disconnect,
        on_disconnect=on_disconnect,
        authorize=authorize,
        cancel_grace=cancel_grace,
        inspector=inspector,
        encodings=encodings,
    )


def _encodings(protobuf: bool | None) -> dict[str, Encoding]:  # noqa: FBT001 - the option
    """The bindings to offer, by media type: SSE, then protobuf unless it is off or missing."""
    encodings = {SSE_MEDIA_TYPE: SSE}
    proto = None if protobuf is False else proto_encoding()
    if proto is not None:
        encodings[PROTO_MEDIA_TYPE] = proto
    elif protobuf:
        message = (
            "protobuf=True needs the protobuf package, which is not installed: "
            'pip install "agui-server[proto]"'
        )
        raise UsageError(message)
    return encodings


def _check_options(
    agent: object,
    transformers: object,
    max_body_bytes: int,
    keepalive: float | None,
    disconnect: str,
    cancel_grace: float,
) -> None:
    problems: list[str] = []
    if not (isinstance(agent, Agent) or callable(agent)):
        problems.append(
            f"agent must be an async function taking the run context or an object with an "
            f"async run(ctx) method, not {type(agent).__name__}"
        )
    if transformers is not None and not callable(transformers):
        problems.append(
            "transformers must be a factory that builds a fresh chain for each request "
            "(transformers keep per-run state), e.g. transformers=lambda: [FilterToolCalls(...)]"
        )
    if max_body_bytes <= 0:
        problems.append(f"max_body_bytes must be positive, not {max_body_bytes}")
    if keepalive is not None and not keepalive > 0:
        problems.append(f"keepalive must be a positive number of seconds or None, not {keepalive}")
    if disconnect not in ("cancel", "detach"):
        problems.append(f"disconnect must be 'cancel' or 'detach', not {disconnect!r}")
    if not cancel_grace >= 0:
        problems.append(f"cancel_grace must be zero or more seconds, not {cancel_grace}")
    if problems:
        raise UsageError("; ".join(problems))
