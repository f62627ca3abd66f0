"""A real uvicorn server in a thread, for `agui demo` and for tests over real HTTP.

Binding the socket before uvicorn starts gives a free port (port 0) whose number is known at
once, and the server stops when the block is left, whatever happens inside it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Generator

__all__ = ["serving"]

AsgiApp = Callable[..., Awaitable[None]]
"""Any ASGI 3 application: `await app(scope, receive, send)`."""


@contextlib.contextmanager
def serving(app: AsgiApp, *, port: int = 0, timeout: float = 10.0) -> Generator[str, None, None]:
    """Serve an ASGI `app` with uvicorn on 127.0.0.1 in a thread; yield its URL; stop it after.

    `port=0` picks a free port. Needs uvicorn (`agui-server[serve]`). Raises `TimeoutError`
    when the server does not start within `timeout` seconds.

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

    sock = socket.socket(socket.AF_INET)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, ws="none", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="agui server", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
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
