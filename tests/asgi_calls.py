"""Calling an ASGI app in process, as a server would, for the tests that need no socket.

`call` sends one request to the endpoint and records everything the app sent (an `Exchange`);
`post_in_process` posts a run and keeps the body parts. `drive` runs a test's coroutine on a
fresh loop, bounded, and checks that it leaves no task behind. `Cutting` wraps an app served
for real, to cut its responses short.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import json
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import Any, TypeVar

from pydantic import JsonValue

import agui
from agui import RunContext
from agui.asgi import AguiApp
from agui.asgi._admission import Message
from agui.events import (
    Event,
)
from agui.proto import PROTO_MEDIA_TYPE, decode_proto
from agui.testing import assert_valid

T = TypeVar("T")
Ctx = RunContext[JsonValue]
App = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]

BODY = json.dumps({"threadId": "t", "runId": "r", "messages": []}).encode()
JSON_HEADERS = {"content-type": "application/json", "accept": "text/event-stream"}
PROTO_HEADERS = {"content-type": "application/json", "accept": PROTO_MEDIA_TYPE}
PING = b": ping\n\n"


def drive(main: Coroutine[Any, Any, T], *, timeout: float = 10.0) -> T:
    """Run one test's coroutine on a fresh loop, bounded, and check it leaves no task behind."""

    async def bounded() -> T:
        before = asyncio.all_tasks()
        result = await asyncio.wait_for(main, timeout)
        await asyncio.sleep(0)  # let finished tasks be reaped
        leftover = asyncio.all_tasks() - before - {asyncio.current_task()}
        assert leftover == set(), f"tasks left running: {leftover}"
        return result

    return asyncio.run(bounded())


@dataclasses.dataclass
class Exchange:
    """Everything the app sent for one request, and how many times it read the request."""

    sent: list[Message] = dataclasses.field(default_factory=list[Message])
    reads: int = 0

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {bytes(k).decode(): bytes(v).decode() for k, v in self.sent[0]["headers"]}

    @property
    def bodies(self) -> list[bytes]:
        return [bytes(message.get("body", b"")) for message in self.sent[1:]]

    @property
    def body(self) -> bytes:
        return b"".join(self.bodies)

    def json(self) -> dict[str, Any]:
        assert self.headers["content-type"] == "application/json"
        value: dict[str, Any] = json.loads(self.body)
        return value

    def events(self) -> list[Event]:
        """The streamed events, checked: LF-only `data:` frames that make a valid stream."""
        assert self.sent[-1].get("more_body", False) is False
        events = [agui.parse_event(frame) for frame in data_frames(self.body)]
        assert_valid(events)
        return events

    def proto_events(self) -> list[Event]:
        """The events of a protobuf stream, checked: each send holds whole frames, all valid."""
        assert self.headers["content-type"] == PROTO_MEDIA_TYPE
        assert self.sent[-1].get("more_body", False) is False
        events = [event for body in self.bodies for event in decode_proto(body)]
        assert_valid(events)
        return events


def data_frames(body: bytes) -> list[bytes]:
    assert b"\r" not in body
    assert body.endswith(b"\n\n")
    frames = body[:-2].split(b"\n\n")
    assert all(frame.startswith((b"data: ", b": ")) for frame in frames)
    return [frame.removeprefix(b"data: ") for frame in frames if frame.startswith(b"data: ")]


def frame_count(body: bytes) -> int:
    return body.count(b"data: ")


async def call(  # noqa: PLR0913 - a request has this many parts
    app: App,
    *,
    method: str = "POST",
    path: str = "/",
    headers: Mapping[str, str] = JSON_HEADERS,
    body: bytes = BODY,
    chunks: list[bytes] | None = None,
    on_send: Callable[[Message, Exchange], None] | None = None,
    gone: asyncio.Event | None = None,
    send_error: Callable[[Message], bool] | None = None,
    send_exception: type[Exception] = OSError,
    slow: int = 0,
    extra: list[Message] | None = None,
    raw_headers: tuple[tuple[bytes, bytes], ...] = (),
) -> Exchange:
    """One request: the body (in `chunks` if given), then `http.disconnect` once `gone` is set.

    `slow` is how many loop turns each send takes; `extra` are messages received after the body;
    `raw_headers` are sent after `headers` as they are, for bytes UTF-8 cannot spell.
    """
    exchange = Exchange()
    pending: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": True}
        for chunk in (chunks if chunks is not None else [body])
    ]
    if pending:
        pending[-1]["more_body"] = False
    pending += extra or []
    left = gone if gone is not None else asyncio.Event()

    async def receive() -> Message:
        exchange.reads += 1
        if pending:
            return pending.pop(0)
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if send_error is not None and send_error(message):
            raise send_exception("the client went away")  # noqa: EM101, TRY003 - a fake transport
        for _ in range(slow):
            await asyncio.sleep(0)
        exchange.sent.append(message)
        if on_send is not None:
            on_send(message, exchange)

    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        # Only HTTP/1.0 lets a request leave out Host, as most of these do.
        "http_version": "1.1" if any(name.lower() == "host" for name in headers) else "1.0",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [*((k.lower().encode(), v.encode()) for k, v in headers.items()), *raw_headers],
    }
    await app(scope, receive, send)
    return exchange


async def hello(ctx: Ctx) -> None:
    ctx.say("Hello!")


SSE = "text/event-stream"


SITE = {**JSON_HEADERS, "host": "agent.example:8000"}


async def post_slowly(
    app: App, exchange: Exchange, pause: Callable[[Exchange], Awaitable[None]]
) -> None:
    """POST `BODY` with a client that never leaves and awaits `pause` before each body it takes."""

    async def receive() -> Message:
        if exchange.reads == 0:
            exchange.reads += 1
            return {"type": "http.request", "body": BODY}
        await asyncio.Event().wait()
        raise AssertionError  # pragma: no cover - never woken

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            await pause(exchange)
        exchange.sent.append(message)

    headers = [(b"content-type", b"application/json")]
    await app({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive, send)


async def lifespan(app: AguiApp[Any]) -> list[Message]:
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    await app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    return sent


async def post_in_process(app: App, body: bytes, *, path: str = "/") -> list[bytes]:
    """POST `body` to `app` as ASGI, in process, with a client that never leaves; the body parts."""
    parts: list[bytes] = []
    incoming: list[Message] = [{"type": "http.request", "body": body}]
    never = asyncio.Event()

    async def receive() -> Message:
        if incoming:
            return incoming.pop()
        await never.wait()
        return {"type": "http.disconnect"}  # pragma: no cover - the stream ends first

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            parts.append(message["body"])

    headers = [(b"content-type", b"application/json"), (b"accept", b"text/event-stream")]
    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "root_path": "",
        "query_string": b"",
        "headers": headers,
    }
    await app(scope, receive, send)
    return parts


class Cutting:
    """An ASGI wrapper that cuts a response after its first `limits[method]` body messages.

    The cut is a send that fails: the endpoint takes its client as gone and stops, leaving the
    response unfinished, so uvicorn closes the connection mid-body. `requests` records each
    request's method, path and `Last-Event-ID`.
    """

    def __init__(self, app: App, limits: dict[str, int]) -> None:
        self.app = app
        self.limits = limits
        self.requests: list[tuple[str, str, str | None]] = []

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {bytes(k).decode(): bytes(v).decode() for k, v in scope["headers"]}
        method, path = str(scope["method"]), str(scope["path"])
        self.requests.append((method, path, headers.get("last-event-id")))
        limit = self.limits.get(method)
        bodies = 0

        async def cutting(message: MutableMapping[str, Any]) -> None:
            nonlocal bodies
            if limit is not None and message["type"] == "http.response.body":
                bodies += 1
                if bodies > limit:
                    raise OSError(errno.ECONNRESET, "cut by the test")
            await send(message)

        await self.app(scope, receive, cutting)
