"""The endpoint itself: `asgi_app` checks its options once, and `AguiApp` answers each request.

A request goes through the checks of `agui.asgi._origins` (host, origin) and
`agui.asgi._admission` (method, authorization, negotiation, body), in the order the table in
`agui.asgi` gives, and is then streamed by `agui.asgi._streaming`. This module only holds the
order, the run's lifetime (its task, its cancellation, the detached runs) and the options.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Generic, Literal, TypeVar

from agui.asgi._admission import (
    MAX_HEADER_BYTES,
    Receive,
    Refusal,
    Scope,
    Send,
    check_accept,
    check_content_type,
    check_head,
    check_method,
    decode_input,
    read_body,
    refuse_websocket,
    request_headers,
    send_refusal,
)
from agui.asgi._budget import BUFFER_BUDGET, Budget
from agui.asgi._capabilities import (
    CapabilitiesSetting,
    answer_capabilities,
    derive,
    is_capabilities_path,
    not_found,
    resolve,
)
from agui.asgi._durable import Durable, RunLog
from agui.asgi._encoding import Encoding
from agui.asgi._hooks import hook_failed, lets_through
from agui.asgi._identity import ThreadAccess, identity_of
from agui.asgi._options import check_options, encodings_for
from agui.asgi._origins import OriginPolicy, is_preflight
from agui.asgi._page import answer_inspector
from agui.asgi._profile import ProtocolSetting, TransformerFactory, is_legacy, profiled
from agui.asgi._streaming import DisconnectHook, Streamer
from agui.asgi._writer import try_send
from agui.capabilities import AgentCapabilities
from agui.errors import Refused, UsageError
from agui.proto import PROTO_MEDIA_TYPE
from agui.runner import AgentLike, check_agent
from agui.runs import SHARED
from agui.sink import HARD_LIMIT, HIGH_WATER
from agui.types import RunAgentInput

__all__ = ["BODY_TIMEOUT", "KEEPALIVE", "MAX_BODY_BYTES", "AguiApp", "Authorize", "asgi_app"]

S = TypeVar("S")

Authorize = Callable[[Mapping[str, str]], bool | str | Awaitable[bool | str]]
"""`authorize(headers) -> bool | str`, sync or async; header names are lower-case.

`True` admits to the shared space, a `str` admits as that identity, `False` refuses."""

MAX_BODY_BYTES = 1 << 20
"""The default request body limit: 1 MiB."""
BODY_TIMEOUT = 10.0
"""The default time a request body has to arrive whole, in seconds."""
KEEPALIVE = 15.0
"""The default idle time, in seconds, before a `: ping` comment frame: well inside the 60 s that
nginx, AWS load balancers and many ingresses wait before they close a quiet connection."""

_log = logging.getLogger("agui.asgi")
_Admitted = tuple[RunAgentInput, Encoding, list[tuple[bytes, bytes]], str]


class AguiApp(Generic[S]):
    """The ASGI application `asgi_app` builds; see `agui.asgi` for its behaviour.

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

    def __init__(  # noqa: PLR0913 - the options of asgi_app, validated once there
        self,
        agent: AgentLike[S],
        *,
        state: type[S] | None,
        transformers: TransformerFactory | None,
        debug: bool,
        limits: tuple[int, float, int],
        keepalive: float | None,
        disconnect: Literal["cancel", "detach"],
        on_disconnect: DisconnectHook | None,
        authorize: Authorize | None,
        cancel_grace: float,
        inspector: bool,
        encodings: Mapping[str, Encoding],
        origins: OriginPolicy,
        capabilities: CapabilitiesSetting = None,
        buffering: tuple[int, int] = (HIGH_WATER, HARD_LIMIT),
        protocol_version: ProtocolSetting = "auto",
        runs: RunLog | None = None,
        thread_access: ThreadAccess | None = None,
        buffer_budget: int | None = BUFFER_BUDGET,
    ) -> None:
        self._protocol_version: ProtocolSetting = protocol_version
        self._streamer: Streamer[S] = Streamer(
            agent,
            state=state,
            transformers=profiled(transformers),
            debug=debug,
            keepalive=keepalive,
            detach=disconnect == "detach",
            on_disconnect=on_disconnect,
            cancel_grace=cancel_grace,
            buffering=buffering,
            budget=Budget(buffer_budget),
        )
        self._max_body_bytes, self._body_timeout, self._max_header_bytes = limits
        self._authorize = authorize
        self._inspector = inspector
        self._encodings = dict(encodings)
        self._media_types = tuple(self._encodings)
        self._origins = origins
        derived = derive(agent, state, protobuf=PROTO_MEDIA_TYPE in self._encodings)
        self._capabilities = capabilities
        self._derived = derived
        run = (agent, state, profiled(transformers), debug, keepalive, cancel_grace)
        admission = (encodings, origins, self._check_authorized)
        self._runs = Durable(runs, run, self._streamer, admission, thread_access)

    @property
    def capabilities(self) -> AgentCapabilities | None:
        """What `GET <path>/capabilities` answers, or `None` when the route is off (404).

        Examples:
            >>> async def hello(ctx):
            ...     ctx.say("Hello!")
            >>> asgi_app(hello, protobuf=False).capabilities.transport.streaming
            True
            >>> asgi_app(hello, capabilities=False).capabilities is None
            True
        """
        return resolve(self._capabilities, self._derived)

    @property
    def media_types(self) -> tuple[str, ...]:
        """The media types this endpoint answers with, in order of preference."""
        return self._media_types

    @property
    def detached_runs(self) -> int:
        """How many detached runs are still going."""
        return self._streamer.detached_runs

    @property
    def buffered_bytes(self) -> int:
        """Unread bytes of all streams together, about: what `buffer_budget` limits."""
        return self._streamer.buffered_bytes

    async def aclose(self) -> None:
        """Cancel the runs in flight and the detached ones; wait for them (the grace period).

        A stream in flight ends with `RUN_FINISHED`, outcome `cancelled`.
        """
        await self._runs.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI connection: `http`, `lifespan`, or a refused `websocket`."""
        kind = scope["type"]
        if kind != "http":
            await self._other(kind, receive, send)
            return
        # This frame streams the run: each frame under it is held while the stream is open.
        method = scope.get("method", "GET")
        try:
            admitted = await self._answer_or_admit(scope, method, receive, send)
        except Refusal as refusal:
            _log.info("refused a %s request: %d %s", method, refusal.status, refusal.code)
            await send_refusal(send, refusal, head=method == "HEAD")
            return
        if admitted is None:  # answered; else only what the stream needs outlives admission
            return
        run_input, encoding, cors, owner = admitted
        del admitted  # a local of this frame is held while the stream is open
        legacy = is_legacy(run_input, self._protocol_version)
        if self._runs.durable:
            await self._runs.stream(
                run_input, encoding, cors, receive, send, owner=owner, legacy=legacy
            )
        else:
            await self._streamer.stream(run_input, encoding, cors, receive, send, legacy=legacy)

    async def _other(self, kind: str, receive: Receive, send: Send) -> None:
        if kind == "websocket":
            await refuse_websocket(receive, send)
            return
        if kind != "lifespan":
            message = f"agui.asgi_app cannot handle an ASGI {kind!r} scope"
            raise ValueError(message)
        while (await receive())["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        await self.aclose()  # the only other lifespan message is the shutdown
        await send({"type": "lifespan.shutdown.complete"})

    # -- admission -------------------------------------------------------------------------

    async def _answer_or_admit(
        self, scope: Scope, method: str, receive: Receive, send: Send
    ) -> _Admitted | None:
        """Answer a preflight or the inspector's GET, or admit a run; `None` once answered."""
        headers = request_headers(scope)
        check_head(scope, headers, self._max_header_bytes)
        self._origins.check_host(headers)
        if is_preflight(method, headers):
            await _answer_preflight(send, self._origins.preflight(headers))
            return None
        if await self._runs.answer(scope, method, headers, receive, send):
            return None
        if is_capabilities_path(scope):
            await self._answer_capabilities(method, headers, send)
            return None
        if self._inspector and method != "POST":
            await answer_inspector(scope, send, method)
            return None
        return await self._admit(method, headers, receive)

    async def _admit(
        self, method: str, headers: Mapping[str, str], receive: Receive
    ) -> _Admitted | None:
        """The input, its stream's encoding and CORS headers; `None` if the client left."""
        try:
            check_method(method)
        except Refusal as refusal:
            raise refusal.with_cors(self._cors_if_allowed(headers)) from None
        cors = self._origins.check_origin(headers)
        try:
            owner = await self._check_authorized(headers)
            encoding = self._encodings[check_accept(headers, self.media_types)]
            check_content_type(headers)
            body = await read_body(headers, receive, self._max_body_bytes, self._body_timeout)
            run_input = None if body is None else decode_input(body)
        except Refusal as refusal:
            raise refusal.with_cors(cors) from None
        return None if run_input is None else (run_input, encoding, cors, owner)

    def _cors_if_allowed(self, headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
        """The CORS headers of an admitted page, or none: an answer decided before the origin."""
        try:
            return self._origins.check_origin(headers)
        except Refusal:
            return []

    async def _answer_capabilities(
        self, method: str, headers: Mapping[str, str], send: Send
    ) -> None:
        if self._capabilities is False:
            raise not_found()
        cors = self._origins.check_origin(headers)
        try:
            await self._check_authorized(headers)
            await answer_capabilities(send, method, self._served_capabilities(), cors)
        except Refusal as refusal:
            raise refusal.with_cors(cors) from None

    def _served_capabilities(self) -> AgentCapabilities:
        try:
            served = self.capabilities
        except BaseException as error:  # its SystemExit too (agui.asgi._hooks)
            raise hook_failed(error, "capabilities") from error
        if not isinstance(served, AgentCapabilities):
            message = f"capabilities= returned {type(served).__qualname__}, not AgentCapabilities"
            raise hook_failed(UsageError(message), "capabilities")
        return served

    async def _check_authorized(self, headers: Mapping[str, str]) -> str:
        """The owner the request is admitted as (`SHARED` without an identity); or a refusal."""
        if self._authorize is None:
            return SHARED
        try:
            verdict = self._authorize(headers)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Refused as refused:
            raise Refusal(
                refused.status, refused.wire_code, str(refused), list(refused.headers.items())
            ) from None
        except BaseException as error:  # its SystemExit too, as every hook's (agui.asgi._hooks)
            if lets_through(error):
                raise
            raise hook_failed(error, "authorize") from error
        owner = identity_of(verdict)
        if owner is not None:
            return owner
        if "authorization" not in headers:
            message = "this endpoint needs credentials: send an Authorization header"
            raise Refusal(401, "UNAUTHORIZED", message, [("www-authenticate", "Bearer")])
        raise Refusal(403, "FORBIDDEN", "the credentials sent do not allow running this agent")


async def _answer_preflight(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    await try_send(send, {"type": "http.response.start", "status": 204, "headers": headers})
    await try_send(send, {"type": "http.response.body", "body": b""})


def asgi_app(  # noqa: PLR0913 - every option is keyword-only and has a default
    agent: AgentLike[S],
    *,
    state: type[S] | None = None,
    transformers: TransformerFactory | None = None,
    debug: bool = False,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_header_bytes: int = MAX_HEADER_BYTES,
    body_timeout: float = BODY_TIMEOUT,
    keepalive: float | None = KEEPALIVE,
    disconnect: Literal["cancel", "detach"] = "cancel",
    on_disconnect: DisconnectHook | None = None,
    authorize: Authorize | None = None,
    allowed_origins: Sequence[str] = (),
    allowed_hosts: Sequence[str] | None = None,
    cancel_grace: float = 5.0,
    max_buffered_bytes: int = HIGH_WATER,
    buffer_hard_limit: int = HARD_LIMIT,
    buffer_budget: int | None = BUFFER_BUDGET,
    inspector: bool = False,
    protobuf: bool | None = None,
    capabilities: CapabilitiesSetting = None,
    protocol_version: ProtocolSetting = "auto",
    runs: RunLog | None = None,
    thread_access: ThreadAccess | None = None,
) -> AguiApp[S]:
    """An ASGI app that runs `agent` for each POSTed `RunAgentInput` and streams its events.

    The stream is SSE, or the protobuf binding for a client that asks for it by name.

    Args:
        agent: an `async def agent(ctx)` or an object with such a `run` method.
        state: the run state type (pydantic model, dataclass, TypedDict), as for `agui.run`.
        transformers: a factory returning a fresh transformer chain for each request.
        debug: put exception text into `RUN_ERROR.message` (never in production).
        max_body_bytes: the request body limit; larger bodies get 413.
        max_header_bytes: the limit of the request line and headers together (16 KiB); a
            larger head gets 431, whichever HTTP parser the server runs (h11 refuses it first).
        body_timeout: seconds a request body has to arrive whole, from its headers; a body
            that trickles or stalls gets 408.
        keepalive: seconds of idle SSE stream before a `: ping` comment frame (15); `None`
            for none (binary frames have no comments: a protobuf stream gets no pings).
        disconnect: `"cancel"` the run when its client leaves, or `"detach"` it to finish.
        on_disconnect: told the run's input when its client left before the stream ended.
        authorize: decides from the request headers, before the body is read: `True` admits
            to the shared space, a `str` admits as that identity (its runs and threads are its
            own, see `agui.asgi`), `False` refuses (401/403).
        allowed_origins: the origins (`"https://app.example"`) of pages of other sites that
            may run the agent and read its stream (CORS); `"*"` for any. Requests without
            `Origin` and from the endpoint's own origin are always admitted; others get 403.
        allowed_hosts: the host names a request's `Host` may name, such as
            `agui.asgi.LOOPBACK_HOSTS` for a server on loopback (against DNS rebinding);
            `None` (the default) admits any.
        cancel_grace: how long a cancelled run may take to unwind, in seconds.
        max_buffered_bytes: the high-water mark of a stream's unsent frames, about 1 MiB by
            default: past it, `await ctx.writable()` (awaited by the tool loop after each model
            chunk and before each tool call) waits until the client has read below it.
        buffer_hard_limit: past this many unsent bytes (64 MiB by default) the run is
            cancelled and the cause logged: an agent that never awaits `ctx.writable()` for a
            client that stopped reading.
        buffer_budget: past this many unsent bytes of all streams together (256 MiB; `None`
            for no limit), the largest holder's run is cancelled, as at its hard limit.
        inspector: also answer GET at the endpoint's path with the inspector page, a browser
            view of the runs it starts (see `agui.asgi.inspector`); off by default (GET gets 405).
        protobuf: offer the protobuf binding to clients that ask for it by name: `None` when
            the `proto` extra is installed, `True` always (it must be), `False` never.
        capabilities: what `GET <path>/capabilities` answers: `None` for what agui derives
            from the agent (streaming, interrupts, protobuf, the state's schema, a tool loop's
            tools), an `AgentCapabilities` to serve instead, a function from the derived ones
            to the ones to serve (called for each request), or `False` for none (404).
        runs: a run log (`agui.runs`): runs outlive their connections (see "Durable runs").
        thread_access: `thread_access(identity, thread_id, action) -> bool`, sync or async:
            lets an identity `"read"`, `"run"` on or `"cancel"` in a thread another owns.
        protocol_version: `"auto"` downgrades the stream of a request without `protocolVersion`
            (a pre-1.0 client) to what it accepts (`agui.asgi._profile`); `"1.0"`/`"0.x"` force.

    Examples:
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> app = asgi_app(hello, transformers=lambda: [], keepalive=15.0)
        >>> app = asgi_app(hello, allowed_origins=["https://app.example"], body_timeout=5.0)
        >>> asgi_app(hello, transformers=[])
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: transformers must be a factory ...
    """
    check_agent(agent)  # what cannot be an agent, refused as `agui.run` and `collect` refuse it
    check_options(locals())  # every option, by the name the caller gave it; before any local
    origins = OriginPolicy.build(allowed_origins, allowed_hosts)
    return AguiApp(
        agent,
        state=state,
        transformers=transformers,
        debug=debug,
        limits=(max_body_bytes, body_timeout, max_header_bytes),
        keepalive=keepalive,
        disconnect=disconnect,
        on_disconnect=on_disconnect,
        authorize=authorize,
        cancel_grace=cancel_grace,
        inspector=inspector,
        encodings=encodings_for(protobuf),
        origins=origins,
        capabilities=capabilities,
        buffering=(max_buffered_bytes, buffer_hard_limit),
        protocol_version=protocol_version,
        runs=runs,
        thread_access=thread_access,
        buffer_budget=buffer_budget,
    )
