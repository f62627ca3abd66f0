"""Scopes other than HTTP (lifespan, websocket), and mounting inside Starlette."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from agui.asgi import asgi_app
from agui.asgi._admission import Message
from agui.events import (
    EventType,
)
from asgi_calls import call, drive, hello, lifespan


def test_lifespan_startup_and_shutdown_complete() -> None:
    sent = drive(lifespan(asgi_app(hello)))

    assert sent == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]


@pytest.mark.parametrize(
    ("first", "answer"),
    [
        ("websocket.connect", [{"type": "websocket.close", "code": 1003}]),
        ("websocket.disconnect", []),
    ],
)
def test_a_websocket_is_refused(first: str, answer: list[Message]) -> None:
    async def main() -> list[Message]:
        sent: list[Message] = []

        async def receive() -> Message:
            return {"type": first}

        async def send(message: Message) -> None:
            sent.append(message)

        await asgi_app(hello)({"type": "websocket", "path": "/"}, receive, send)
        return sent

    assert drive(main()) == answer


def test_an_unknown_scope_type_is_an_error() -> None:
    async def main() -> None:
        async def receive() -> Message:
            raise AssertionError

        async def send(_message: Message) -> None:
            raise AssertionError

        await asgi_app(hello)({"type": "telepathy"}, receive, send)

    with pytest.raises(ValueError, match="cannot handle an ASGI 'telepathy' scope"):
        drive(main())


def test_the_app_mounts_inside_starlette_beside_other_routes() -> None:
    async def health(_request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    site = Starlette(
        routes=[Route("/health", health), Mount("/agent", app=asgi_app(hello))],
    )
    streamed = drive(call(site, path="/agent/"))
    refused = drive(call(site, path="/agent/", method="GET"))
    checked = drive(call(site, path="/health", method="GET"))

    assert streamed.status == 200
    assert [e.type for e in streamed.events()][-1] == EventType.RUN_FINISHED
    assert refused.status == 405
    assert (checked.status, checked.body) == (200, b"ok")
