"""A scripted model endpoint on a real uvicorn: each POST answered by the next reply, recorded.

The model tests (`test_openai.py`, `test_anthropic.py`) speak each provider's streaming wire
format through it, so the official SDKs run against real HTTP on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, MutableMapping, Sequence
from typing import cast

import uvicorn
from pydantic import JsonValue

Json = dict[str, JsonValue]
_Message = MutableMapping[str, object]
_Scope = MutableMapping[str, object]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]


@dataclasses.dataclass
class Reply:
    """One scripted HTTP response: a status, body pieces, and how the body ends."""

    status: int = 200
    pieces: Sequence[bytes] = ()
    ending: str = "complete"  # or "drop" (abort), "hang" (stop sending), "silent" (send nothing)
    content_type: bytes = b"text/event-stream"


class FakeEndpoint:
    """An ASGI app that answers each POST with the next reply and records the requests."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Json] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += cast("bytes", message.get("body", b""))
            if not message.get("more_body"):
                break
        self.requests.append(cast("Json", json.loads(body)))
        raw = cast("list[tuple[bytes, bytes]]", scope["headers"])
        self.headers.append({k.decode(): v.decode() for k, v in raw})
        self.paths.append(cast("str", scope["path"]))
        reply = self.replies.pop(0)
        if reply.ending == "silent":
            await self.release.wait()
        headers = [(b"content-type", reply.content_type)]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        for piece in reply.pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        if reply.ending == "drop":
            reason = "the fake endpoint drops the connection"
            raise ConnectionAbortedError(reason)
        if reply.ending == "hang":
            await self.release.wait()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _server(endpoint: FakeEndpoint) -> uvicorn.Server:
    config = uvicorn.Config(
        endpoint,
        host="127.0.0.1",
        port=0,
        log_level="critical",
        lifespan="off",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


def _url(server: uvicorn.Server) -> str:
    return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


@contextlib.asynccontextmanager
async def serving(endpoint: FakeEndpoint, path: str = "") -> AsyncGenerator[str, None]:
    """Serve `endpoint` in this loop; yields its base URL (with `path` appended)."""
    server = _server(endpoint)
    task = asyncio.ensure_future(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn has no event to wait on
        await asyncio.sleep(0.005)
    try:
        yield _url(server) + path
    finally:
        endpoint.release.set()
        server.should_exit = True
        await task


@contextlib.contextmanager
def serving_in_a_thread(endpoint: FakeEndpoint) -> Generator[str, None, None]:
    """One server for many examples: uvicorn in a thread of its own, stopped on the way out."""
    server = _server(endpoint)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(2000):
        if server.started:
            break
        thread.join(0.005)
    try:
        yield _url(server)
    finally:
        server.should_exit = True
        thread.join(10)
