"""Calling an ASGI app in process, as a server would, for the tests that need no socket."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from agui.asgi import Receive, Scope, Send
from agui.asgi._admission import Message

App = Callable[[Scope, Receive, Send], Awaitable[None]]


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
