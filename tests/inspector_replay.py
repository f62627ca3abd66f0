"""A server that is not agui: the inspector page, and recorded streams replayed on POST.

`ReplayApp` is a raw ASGI application. `GET /<name>` answers with the inspector page from
`agui.asgi.inspector` (the public page and headers, nothing of agui's endpoint); `POST /<name>`
reads the request body and answers with the SSE frames of the `stream` of the conformance fixture
`<name>.json`, byte for byte what a foreign server would send, however wrong. The page posts to its
own URL, so each fixture has a page of its own. Query options, kept by the page on its POST:

- `crlf=1` ends lines with CRLF instead of LF;
- `split=N` sends the body in pieces of N bytes, cutting frames and UTF-8 sequences anywhere.

Every POST body is recorded in `requests`. `serving(app)` runs any ASGI app under uvicorn in a
thread on a free port of 127.0.0.1. By hand, `python tests/inspector_replay.py` serves the corpus
and prints the URL of each fixture's page.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from typing import Any
from urllib.parse import parse_qs

import corpus
from agui import testing
from agui.asgi import inspector

STREAMS = {path.stem: path for path in corpus.streams()}
STARTUP_SECONDS = 10.0

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def fixture(name: str) -> dict[str, Any]:
    """The conformance fixture `name` (its `stream`, its `expect`, ...)."""
    loaded: dict[str, Any] = json.loads(STREAMS[name].read_text(encoding="utf-8"))
    return loaded


def sse_body(stream: list[Any], *, crlf: bool = False) -> bytes:
    """The SSE frames of `stream`: one `data:` line per event, each frame ended by a blank line."""
    end = "\r\n" if crlf else "\n"
    frames = (f"data: {json.dumps(event, ensure_ascii=False)}{end}{end}" for event in stream)
    return "".join(frames).encode("utf-8")


class ReplayApp:
    """The page on GET, a fixture's recorded stream on POST; 404 for an unknown fixture."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        name = str(scope["path"]).strip("/")
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        if name not in STREAMS:
            await _respond(send, 404, [(b"content-type", b"text/plain")], b"no such fixture")
        elif scope["method"] == "GET":
            headers = [(k.encode(), v.encode()) for k, v in inspector.headers()]
            await _respond(send, 200, headers, inspector.page().encode("utf-8"))
        elif scope["method"] == "POST":
            self.requests.append(json.loads(await _read_body(receive)))
            body = sse_body(fixture(name)["stream"], crlf=query.get("crlf") == ["1"])
            size = int(query.get("split", ["0"])[0]) or len(body) or 1
            start = {"type": "http.response.start", "status": 200}
            await send({**start, "headers": [(b"content-type", b"text/event-stream")]})
            for at in range(0, len(body), size):
                piece = body[at : at + size]
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        else:
            await _respond(send, 405, [(b"allow", b"GET, POST")], b"")


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(bytes(message.get("body", b"")))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _respond(
    send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def serving(app: App, port: int = 0) -> Generator[str, None, None]:
    """`agui.testing.serving`, with the base URL given without its trailing slash."""
    with testing.serving(app, port=port, timeout=STARTUP_SECONDS) as url:
        yield url.rstrip("/")


def main() -> None:  # pragma: no cover - for looking at the corpus by hand
    """Serve the corpus until Ctrl-C: `python tests/inspector_replay.py [PORT]`."""
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    with serving(ReplayApp(), port) as url:
        for name in STREAMS:
            print(f"{url}/{name}")  # noqa: T201
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
