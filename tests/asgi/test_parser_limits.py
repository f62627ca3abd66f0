"""The request limits hold whichever HTTP parser uvicorn runs: h11 or httptools.

uvicorn picks httptools when it is installed, and httptools has none of h11's limits: a head of
any size and an HTTP/1.1 request without `Host` reach the app, and it answers a method it does
not know with a plain-text 400 of its own. Each test runs a real uvicorn on 127.0.0.1 with each
parser and talks to it with raw sockets, as a hostile client would; `agui serve` pins h11.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import agui
from agui.asgi import MAX_HEADER_BYTES
from uvicorn_server import Parser, served

PARSERS: tuple[Parser, ...] = ("h11", "httptools")
SECONDS = 10.0
BODY = b'{"threadId":"t","runId":"r"}'
AGUI = Path(sys.executable).parent / "agui"
HELLO = Path(__file__).parents[2] / "examples" / "hello.py"


async def hello(ctx: agui.RunContext[object]) -> None:
    ctx.say("Hello!")


def exchange(port: int, request: bytes) -> bytes:
    """Send a request and read the answer until the server closes the connection.

    A server that refuses a head before it has read all of it closes the connection with the
    rest unread, which resets it: sending may fail then, and the answer, already queued on this
    side, is still read; reading stops at the reset.
    """
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=SECONDS) as sock:
        with contextlib.suppress(ConnectionError):
            sock.sendall(request)
        with contextlib.suppress(ConnectionError):
            while chunk := sock.recv(65536):
                answer += chunk
    return answer


def request(
    method: str = "POST", *, version: str = "1.1", host: bool = True, extra: bytes = b""
) -> bytes:
    """A run's request, with `Connection: close` so the server ends it after its answer."""
    lines = [f"{method} / HTTP/{version}".encode()]
    if host:
        lines.append(b"Host: 127.0.0.1")
    lines += [
        b"Content-Type: application/json",
        b"Accept: text/event-stream",
        f"Content-Length: {len(BODY)}".encode(),
        b"Connection: close",
    ]
    if extra:
        lines.append(extra)
    return b"\r\n".join(lines) + b"\r\n\r\n" + BODY


def status_of(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1."), answer[:200]
    return int(answer.split(b" ", 2)[1])


def json_code(answer: bytes) -> str:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    code: str = json.loads(body)["code"]
    return code


# The answers that differ are uvicorn's own, before the app: h11 refuses a head it cannot take
# with a plain-text 400; httptools passes it on, and the endpoint answers with its JSON.
OVERSIZED = {"h11": (400, None), "httptools": (431, "HEADERS_TOO_LARGE")}
HOSTLESS = {"h11": (400, None), "httptools": (400, "MISSING_HOST")}
UNKNOWN_METHOD = {"h11": (405, "METHOD_NOT_ALLOWED"), "httptools": (400, None)}


def refusal(answer: bytes) -> tuple[int, str | None]:
    status = status_of(answer)
    head = answer.partition(b"\r\n\r\n")[0].lower()
    return status, json_code(answer) if b"application/json" in head else None


@pytest.mark.parametrize("http", PARSERS)
def test_a_head_of_200_kb_is_refused_and_never_runs_the_agent(http: Parser) -> None:
    big = b"X-Padding: " + b"a" * 200_000
    with served(agui.asgi_app(hello), http) as port:
        answer = exchange(port, request(extra=big))

    assert refusal(answer) == OVERSIZED[http]
    assert b"RUN_STARTED" not in answer


@pytest.mark.parametrize("http", PARSERS)
def test_a_head_over_max_header_bytes_gets_a_json_431_under_either_parser(http: Parser) -> None:
    app = agui.asgi_app(hello, max_header_bytes=4096)
    with served(app, http) as port:
        over = exchange(port, request(extra=b"X-Padding: " + b"a" * 8000))
        under = exchange(port, request(extra=b"X-Padding: " + b"a" * 3000))

    assert refusal(over) == (431, "HEADERS_TOO_LARGE")
    assert b"connection: close" in over.lower()
    assert status_of(under) == 200
    assert b"RUN_FINISHED" in under


@pytest.mark.parametrize("http", PARSERS)
def test_a_head_just_under_the_default_limit_is_served_under_either_parser(http: Parser) -> None:
    padding = b"X-Padding: " + b"a" * (MAX_HEADER_BYTES - 512)
    with served(agui.asgi_app(hello), http) as port:
        answer = exchange(port, request(extra=padding))

    assert status_of(answer) == 200
    assert b"RUN_FINISHED" in answer


@pytest.mark.parametrize("http", PARSERS)
def test_an_http_1_1_request_without_host_is_refused_and_an_http_1_0_one_is_served(
    http: Parser,
) -> None:
    with served(agui.asgi_app(hello), http) as port:
        hostless = exchange(port, request(host=False))
        old = exchange(port, request(version="1.0", host=False))

    assert refusal(hostless) == HOSTLESS[http]
    assert b"RUN_STARTED" not in hostless
    assert status_of(old) == 200
    assert b"RUN_FINISHED" in old


@pytest.mark.parametrize("http", PARSERS)
def test_a_method_other_than_post_never_runs_the_agent(http: Parser) -> None:
    with served(agui.asgi_app(hello), http) as port:
        unknown = exchange(port, request("BREW"))
        known = exchange(port, request("PUT"))

    assert refusal(unknown) == UNKNOWN_METHOD[http]
    assert refusal(known) == (405, "METHOD_NOT_ALLOWED")
    assert b"allow: POST" in known
    assert b"RUN_STARTED" not in unknown + known


def test_asgi_app_refuses_a_header_limit_that_is_not_a_positive_byte_count() -> None:
    with pytest.raises(agui.UsageError, match=r"max_header_bytes must be a positive whole number"):
        agui.asgi_app(hello, max_header_bytes=0)


def test_agui_serve_parses_with_h11_though_httptools_is_installed() -> None:
    """An unknown method reaches the endpoint (httptools would answer it itself), and a head
    of 2 MB is refused before it is read whole."""
    assert importlib.util.find_spec("httptools")  # installed: uvicorn would pick it
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", f"{HELLO}:agent", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("agui: serving on "), line
        url: str = line.removeprefix("agui: serving on ").strip()  # http://127.0.0.1:PORT/
        port = int(url.rsplit(":", 1)[1].strip("/"))
        unknown = exchange(port, request("BREW"))
        huge = exchange(port, request(extra=b"X-Padding: " + b"a" * 2_000_000))
        served_run = exchange(port, request())
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=SECONDS)
        assert process.stdout is not None
        process.stdout.close()

    assert refusal(unknown) == (405, "METHOD_NOT_ALLOWED")
    assert status_of(huge) == 400
    assert b"RUN_STARTED" not in huge
    assert b"RUN_FINISHED" in served_run
