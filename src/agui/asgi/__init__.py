r"""The AG-UI HTTP endpoint as a plain ASGI application: no web framework needed.

`asgi_app(agent)` answers one POST carrying a `RunAgentInput` with one `text/event-stream` of
`data: <json>\n\n` frames (LF only), or with the protobuf binding when the client asks for it
(see "Protobuf" below), and runs under any ASGI server. It mounts unchanged in
Starlette or FastAPI, `app.mount("/agent", agui.asgi_app(agent))`; it answers at any path it is
given, so the mount decides where it lives.

The package is laid out as a request flows: `_origins` and `_admission` decide whether it is
admitted, `_app` holds their order and the options, `_hooks` answers for the application's
hooks failing, `_streaming` runs the agent and streams the run in its `_encoding` through a
`_writer` (which the run's task reaches through `_stepping` and the endpoint's keep-alive ticker
through `_pings`), `_page` answers the inspector's GET with the page of `inspector`, and
`_server` binds the sockets of `agui serve` and `agui.testing.serving`.

**Refusals.** Everything that can be wrong with a request is refused before the first byte of
stream, as a JSON body `{"code": ..., "message": ...}` (`Content-Type: application/json`,
`Vary: Accept`) that names what was wrong, checked in this order:

| check | status | code |
|---|---|---|
| the request line and headers are over `max_header_bytes` | 431 | `HEADERS_TOO_LARGE` |
| an HTTP/1.1 request has no `Host` | 400 | `MISSING_HOST` |
| `Host` is not in `allowed_hosts` (when set) | 403 | `HOST_NOT_ALLOWED` |
| the method is not POST | 405 (`Allow: POST`) | `METHOD_NOT_ALLOWED` |
| `Origin` is another site's, not in `allowed_origins` | 403 | `ORIGIN_NOT_ALLOWED` |
| `authorize` says no | 401 / 403 | `UNAUTHORIZED` / `FORBIDDEN` |
| `Accept` excludes `text/event-stream` (and protobuf, or it is off) | 406 | `NOT_ACCEPTABLE` |
| `Content-Type` is missing or not JSON | 415 | `UNSUPPORTED_MEDIA_TYPE` |
| the body is over `max_body_bytes` (Content-Length first, then counted) | 413 | `BODY_TOO_LARGE` |
| the body is not whole within `body_timeout` seconds | 408 (`Connection: close`) | `BODY_TIMEOUT` |
| the body is empty, or not JSON | 400 | `EMPTY_BODY` / `INVALID_JSON` |
| the body is not a valid `RunAgentInput` | 422, with `errors` | `INVALID_INPUT` |
| a hook fails: `authorize`, `transformers`, `capabilities`, `thread_access` | 500 | `HOOK_FAILED` |

A 422 lists each problem once in `errors` (`{"path": <JSON Pointer>, "message": ...}`), at most
20 of them, with `omitted` counting the rest. A hook fails at its own step (`authorize` in its
row's place, the factory once the input is read); its `HOOK_FAILED` names the hook and the
exception's type, never its message, and the traceback is logged at ERROR (`agui.asgi._hooks`).
A page of an allowed origin gets its CORS headers on every refusal (the 405 too), and a refused
`HEAD` gets the body's headers without the body. Each refusal is logged at INFO on the
`agui.asgi` logger (method, status, code; never the body).

`Accept` is negotiated like the Rust SDK (`agui.asgi._admission`): missing means `*/*`, the most
specific range decides, and `q=0` refuses; the protobuf binding must be named, never a wildcard.

**Browsers.** A page of another site can make a visitor's browser POST anywhere; what stops it
here (`agui.asgi._origins`) is that the body must be typed JSON (which a browser sends cross-site
only after a CORS preflight), that a page's `Origin` must be the endpoint's own or one of
`allowed_origins`, checked before the body is read, and, with `allowed_hosts`, that `Host`
names this server (DNS rebinding). A page of an allowed origin gets `Access-Control-Allow-Origin`
on its answers, and its preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered
with 204; a preflight from any other origin gets 403.

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
body is read and returns `True` to admit the request, or a `str`, the caller's identity (it may
be async). When it returns `False` (or another falsy value, or neither a `bool` nor a `str`) the
status says whether credentials were offered: no `Authorization` header gives 401 with
`WWW-Authenticate: Bearer`, an `Authorization` header that was refused gives 403. A hook that
wants another status or message raises `agui.errors.Refused(message, status=...)`. An identity
must be printable text of 1 to 256 characters; another `str` is a 500 `HOOK_FAILED` naming
that rule.

**Identities.** With a run log (`runs=`), runs and threads belong to their owner: the identity
that started the thread's first run, or the shared space of every caller admitted with `True`
(`agui.runs.SHARED`). Every durable route (a run's events, a resume, a cancel, a thread, a POST
on an existing thread) answers another identity 404 with the body of an unknown id, and run ids
are per owner. `thread_access(identity, thread_id, action)` (sync or async; `"read"`, `"run"`,
`"cancel"`) is asked where that rule would refuse, and its `True` shares the thread for that
action; a shared thread's runs are named `runs/<id>/events?thread=<thread id>`. See
`agui.asgi._identity` and "Many users" in the HTTP guide.

**Streaming.** The 200 and its headers (`Cache-Control: no-cache, no-store, no-transform`,
`X-Accel-Buffering: no`, `Vary: Accept`) go out before the agent runs, so every run-time failure
is a `RUN_ERROR` inside the stream. Events are written as they are emitted, and coalesced:
whatever is queued when the writer wakes goes out as one `http.response.body` message (at most
1,024 events each). When an agent awaits between events, the writer also lets the loop turn a
few times (while each turn brings more, up to 256 events, 16 turns or 2 ms) before it sends, so
such an agent does not pay one send per event; an idle agent's event waits one turn of the loop,
a busy one's at most 2 ms and a turn. A run's first
batch (its `RUN_STARTED` and what came with it) goes out without that wait: on a server busy
with other streams every turn is long, and a new client should see its run start at once.
A `: ping` comment frame is sent after `keepalive` idle seconds, within a quarter of it (15 by
default, `None` for none), for proxies that drop quiet connections; clients ignore comments. An
event that cannot be serialized ends the stream with a `RUN_ERROR` frame (code
`SERIALIZATION_ERROR`) and cancels the run.

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

**Buffering.** Each stream holds what its client has not read: past `max_buffered_bytes`
`await ctx.writable()` waits, past `buffer_hard_limit` the run is cancelled. `buffer_budget`
(256 MiB) bounds all the streams together: past it, the run of the stream holding the most is
cancelled the same way and logged at WARNING with its run id and bytes (`agui.asgi._budget`);
`buffered_bytes` is the figure, zero while every client keeps up.

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
    >>> LOOPBACK_HOSTS
    ('localhost', '127.0.0.1', '::1')
"""

from __future__ import annotations

from agui.asgi._admission import MAX_HEADER_BYTES, Receive, Scope, Send
from agui.asgi._app import BODY_TIMEOUT, KEEPALIVE, MAX_BODY_BYTES, AguiApp, Authorize, asgi_app
from agui.asgi._identity import MAX_IDENTITY_LENGTH, Action, ThreadAccess
from agui.asgi._origins import LOOPBACK_HOSTS
from agui.asgi._profile import TransformerFactory
from agui.asgi._streaming import DisconnectHook

__all__ = [
    "BODY_TIMEOUT",
    "KEEPALIVE",
    "LOOPBACK_HOSTS",
    "MAX_BODY_BYTES",
    "MAX_HEADER_BYTES",
    "MAX_IDENTITY_LENGTH",
    "Action",
    "AguiApp",
    "Authorize",
    "DisconnectHook",
    "Receive",
    "Scope",
    "Send",
    "ThreadAccess",
    "TransformerFactory",
    "asgi_app",
]
