"""A real uvicorn on 127.0.0.1 with the HTTP parser and socket buffers a test chooses.

`agui.testing.serving` runs what `agui serve` runs (h11); the tests of the limits run each parser
uvicorn may pick, and the tests of buffering a server whose socket send buffers are small, so
that what a client does not read stays in the server's accounting rather than the kernel's.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from typing import Literal
from urllib.parse import urlsplit

import uvicorn

from agui import RunAgentInput
from agui.asgi import AguiApp
from agui.asgi._server import LIMITS, listen

Parser = Literal["h11", "httptools"]
START_SECONDS = 10.0
WAIT_SECONDS = 20.0


@contextmanager
def served(
    app: AguiApp[object], http: Parser = "h11", *, send_buffer: int | None = None
) -> Generator[int, None, None]:
    """Serve `app` with uvicorn's `http` parser and agui's other limits; yield its port.

    `send_buffer` sets the listening socket's `SO_SNDBUF`, which its connections inherit.
    """
    sock = listen("127.0.0.1", 0)
    if send_buffer is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    config = uvicorn.Config(
        app,
        http=http,
        loop="asyncio",
        h11_max_incomplete_event_size=LIMITS["h11_max_incomplete_event_size"],
        timeout_keep_alive=LIMITS["timeout_keep_alive"],
        log_level="critical",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_SECONDS
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(START_SECONDS)
        sock.close()


@contextmanager
def silent_client(
    url: str, run_input: RunAgentInput, *, receive_buffer: int = 64 * 1024
) -> Generator[socket.socket, None, None]:
    """A connection that has sent a run's request and reads nothing until told to."""
    port = urlsplit(url).port
    assert port is not None
    body = run_input.model_dump_json(by_alias=True, exclude_none=True).encode()
    head = (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.settimeout(WAIT_SECONDS)
        sock.connect(("127.0.0.1", port))
        sock.sendall(head + body)
        yield sock
    finally:
        sock.close()
