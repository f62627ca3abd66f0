"""Serving an ASGI app with uvicorn on a socket agui binds: for `agui serve`, the demo and tests.

Binding the socket before uvicorn starts gives a free port (port 0) whose number is known at
once, and `serving` stops its server when the block is left, whatever happens inside it.

Every socket made here is a TCP socket with `TCP_NODELAY`: a connection accepted from it
inherits the option, and asyncio sets it again on each connection of a socket created with the
TCP protocol number (one created as plain `socket.socket(AF_INET)` is skipped). Without it,
Nagle's algorithm holds back a response's second small write until the client acknowledges the
first, which it delays by about 40 ms, so each request on a keep-alive connection, and each
small SSE frame, waits that long.

The uvicorn limits are stated once here (`LIMITS`), so `agui serve` and `serving` run with
the same: a request's line and headers together at most `MAX_HEADER_BYTES` (uvicorn answers a
larger head with 400), an idle keep-alive connection closed after `KEEPALIVE_TIMEOUT` seconds,
and a backlog of `BACKLOG` connections waiting to be accepted.

The HTTP parser is pinned to h11, even where httptools is installed (uvicorn would pick it):
httptools has no limit on a request's head, so a client sending one endless header line grows
the server's memory until the connection ends, and only a limit applied while the head is read
bounds that. The endpoint refuses what reaches it over the limit, or an HTTP/1.1 request without
`Host` (`agui.asgi._admission`), under any parser; h11 refuses them before they take memory.
What the pin costs was measured with a bare ASGI app streaming small frames: about 5 us of
server CPU per send (a quarter of a bare server's cost per send); an unknown method, which
httptools answers itself with a plain-text 400, reaches the endpoint under h11 and gets its JSON
405.

Left to itself, uvicorn shuts down by waiting for open connections to close, up to its graceful
timeout, and then cancels them: an endless stream is cut without its terminal event, and the
ASGI lifespan's shutdown, where an app could end its runs, comes only after that. A
`graceful_server` first stops accepting and awaits its hook (`AguiApp.aclose`: the runs in
flight are cancelled and their streams end), and only then shuts down as uvicorn does.

A run that ignores its cancellation is left running by the endpoint, and `asyncio.run` (which
uvicorn's `run` is) would then wait for it forever after the server is done: the process would
outlive its shutdown until killed. `run_to_end` runs the server on a loop of its own instead,
cancels what is left once it is done, waits up to a grace period, and leaves behind what still
runs, saying how many, so the command can exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Literal, TypedDict

from agui.asgi._admission import MAX_HEADER_BYTES

if TYPE_CHECKING:
    import uvicorn

__all__ = [
    "BACKLOG",
    "KEEPALIVE_TIMEOUT",
    "LIMITS",
    "MAX_HEADER_BYTES",
    "Limits",
    "graceful_server",
    "listen",
    "run_to_end",
    "serving",
    "tcp_socket",
]

_log = logging.getLogger("agui.asgi")

AsgiApp = Callable[..., Awaitable[None]]
"""Any ASGI 3 application: `await app(scope, receive, send)`."""

KEEPALIVE_TIMEOUT = 5
"""Seconds an idle keep-alive connection stays open."""
BACKLOG = 2048
"""Connections the kernel queues before the server accepts them."""


class Limits(TypedDict):
    """The limits, as the `uvicorn.Config` keyword arguments that set them."""

    http: Literal["h11"]
    h11_max_incomplete_event_size: int
    timeout_keep_alive: int
    backlog: int


LIMITS = Limits(
    http="h11",
    h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    timeout_keep_alive=KEEPALIVE_TIMEOUT,
    backlog=BACKLOG,
)
"""The limits `agui serve` and `serving` give uvicorn: `uvicorn.Config(app, **LIMITS)`."""


def tcp_socket(host: str) -> socket.socket:
    """A TCP socket of the address family of `host`, whose connections have `TCP_NODELAY`.

    Examples:
        >>> import socket
        >>> with tcp_socket("127.0.0.1") as sock:
        ...     sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        True
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:  # pragma: no cover - every TCP stack agui runs on has the option
        sock.close()
        raise
    return sock


def listen(host: str, port: int) -> socket.socket:
    """A `tcp_socket` bound to `host` and `port` and listening; `port=0` picks a free one.

    Examples:
        >>> with listen("127.0.0.1", 0) as sock:
        ...     sock.getsockname()[1] > 0
        True
    """
    sock = tcp_socket(host)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def graceful_server(
    config: uvicorn.Config, before_shutdown: Callable[[], Awaitable[None]]
) -> uvicorn.Server:
    """A uvicorn server that, told to exit, stops accepting and awaits `before_shutdown()` first.

    Then it shuts down as uvicorn does: it waits for the connections still open, up to
    `config.timeout_graceful_shutdown` seconds, and sends the lifespan's shutdown.

    Examples:
        >>> import uvicorn, agui
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> app = agui.asgi_app(hello)
        >>> graceful_server(uvicorn.Config(app), app.aclose).should_exit
        False
    """
    import uvicorn  # noqa: PLC0415 - an optional dependency

    class GracefulServer(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            for server in self.servers:
                server.close()  # no new connection while the runs end
            await before_shutdown()
            await super().shutdown(sockets=sockets)

    return GracefulServer(config)


def run_to_end(server: uvicorn.Server, sockets: list[socket.socket], *, grace: float) -> int:
    """Run `server` to its end, as `server.run` does; how many tasks ignored their cancellation.

    What the server leaves running once it is done is cancelled and given `grace` seconds; a
    task still running then is left behind (logged on `agui.asgi`), not waited for. A signal
    uvicorn re-raises after its shutdown (`KeyboardInterrupt`) still propagates, after that.

    Examples:
        >>> import uvicorn, agui
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> server = uvicorn.Server(uvicorn.Config(agui.asgi_app(hello), log_level="warning"))
        >>> server.should_exit = True  # told to stop before it starts: it starts, then stops
        >>> with listen("127.0.0.1", 0) as sock:
        ...     run_to_end(server, [sock], grace=1.0)
        0
    """
    factory = getattr(server.config, "get_loop_factory", lambda: None)()  # uvicorn >= 0.36
    loop = factory() if factory is not None else asyncio.new_event_loop()
    try:
        loop.run_until_complete(server.serve(sockets=sockets))
    finally:
        left = _cancel_left(loop, grace)
        loop.close()
    return left


def _cancel_left(loop: asyncio.AbstractEventLoop, grace: float) -> int:
    """Cancel what `loop` still runs, wait up to `grace` seconds; how many tasks ignored it."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=grace))
    stubborn = [task for task in tasks if not task.done()]
    for task in stubborn:
        _log.error("task %r ignored its cancellation; the server leaves it behind", task.get_name())
    return len(stubborn)


@contextlib.contextmanager
def serving(app: AsgiApp, *, port: int = 0, timeout: float = 10.0) -> Generator[str, None, None]:
    """Serve an ASGI `app` with uvicorn on 127.0.0.1 in a thread; yield its URL; stop it after.

    `port=0` picks a free port. Needs uvicorn (`agui-server[serve]`); it runs on asyncio's own
    loop, as the test it serves does, even where uvloop is installed. Raises `TimeoutError`
    when the server does not start within `timeout` seconds, and at once, saying why, when it
    stops before it starts (an app uvicorn cannot load, say).

    Examples:
        >>> import httpx, agui
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> with serving(agui.asgi_app(hello)) as url:
        ...     body = httpx.post(url, json={"threadId": "t", "runId": "r"}).text
        >>> body.splitlines()[0]
        'data: {"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}'
    """
    import uvicorn  # noqa: PLC0415 - an optional dependency

    sock = listen("127.0.0.1", port)
    config = uvicorn.Config(
        app,
        loop="asyncio",  # the loop tests know: uvloop, where installed, warns of what a cut leaves
        log_level="warning",
        access_log=False,
        ws="none",
        timeout_graceful_shutdown=2,
        **LIMITS,
    )
    server = uvicorn.Server(config)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as error:  # noqa: BLE001 - handed to the caller, who is waiting
            failed.append(error)

    thread = threading.Thread(target=run, name="agui server", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive():  # it never will: say why now, not at the deadline
                message = "the server stopped before it started" + _why(failed)
                raise TimeoutError(message) from (failed[0] if failed else None)
            if time.monotonic() > deadline:
                message = f"the server did not start within {timeout} s"
                raise TimeoutError(message)
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(timeout)
        if thread.is_alive():  # pragma: no cover - a run that ignores its cancellation
            server.force_exit = True
            thread.join(timeout)
        sock.close()


def _why(failed: list[BaseException]) -> str:
    """Why `serving`'s server stopped, from what its thread raised (if anything)."""
    if not failed:
        return "; uvicorn's log says why"
    error = failed[0]
    if isinstance(error, SystemExit):  # uvicorn logs the cause, then exits (an app it cannot load)
        return f": uvicorn exited with status {error.code}; its log says why"
    return f": {type(error).__name__}: {error}"
