"""`authorize`: who may run the agent, and the order of the refusals."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, MutableMapping
from typing import Any

import pytest

from agui import UsageError
from agui.asgi import asgi_app
from agui.errors import Refused
from asgi_calls import (
    BODY,
    JSON_HEADERS,
    Exchange,
    call,
    drive,
    hello,
)

# -- authorization -----------------------------------------------------------------------------


def test_authorize_refuses_a_request_without_credentials_with_401_before_reading() -> None:
    seen: list[Mapping[str, str]] = []

    def authorize(headers: Mapping[str, str]) -> bool:
        seen.append(headers)
        return False

    headers = {**JSON_HEADERS, "X-Trace": "abc"}
    exchange = drive(call(asgi_app(hello, authorize=authorize), headers=headers))

    assert exchange.status == 401
    assert exchange.headers["www-authenticate"] == "Bearer"
    assert exchange.json()["code"] == "UNAUTHORIZED"
    assert exchange.reads == 0
    assert seen[0]["x-trace"] == "abc"


def test_authorize_refuses_credentials_it_does_not_accept_with_403() -> None:
    async def authorize(headers: Mapping[str, str]) -> bool:
        await asyncio.sleep(0)
        return headers.get("authorization") == "Bearer good"

    app = asgi_app(hello, authorize=authorize)
    refused = drive(call(app, headers={**JSON_HEADERS, "authorization": "Bearer bad"}))
    admitted = drive(call(app, headers={**JSON_HEADERS, "authorization": "Bearer good"}))

    assert refused.status == 403
    assert refused.json()["code"] == "FORBIDDEN"
    assert "www-authenticate" not in refused.headers
    assert admitted.status == 200


def test_authorize_may_refuse_with_a_status_and_message_of_its_own() -> None:
    def authorize(_headers: Mapping[str, str]) -> bool:
        message = "slow down"
        raise Refused(message, status=429, headers={"Retry-After": "3"})

    exchange = drive(call(asgi_app(hello, authorize=authorize)))

    assert exchange.status == 429
    assert exchange.headers["retry-after"] == "3"
    assert exchange.json() == {"code": "REFUSED", "message": "slow down"}


def test_a_refusal_must_be_a_client_error_status() -> None:
    with pytest.raises(UsageError, match="a refusal is a 4xx status, not 200"):
        Refused("fine", status=200)


def test_repeated_headers_reach_authorize_joined() -> None:
    seen: list[str] = []

    def authorize(headers: Mapping[str, str]) -> bool:
        seen.append(headers["x-tag"])
        return True

    async def main() -> Exchange:
        app = asgi_app(hello, authorize=authorize)

        async def doubled(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
            scope["headers"] = [*scope["headers"], (b"x-tag", b"a"), (b"X-Tag", b"b")]
            await app(scope, receive, send)

        return await call(doubled)

    assert drive(main()).status == 200
    assert seen == ["a, b"]


@pytest.mark.parametrize(
    ("method", "headers", "status"),
    [
        ("GET", {"accept": "text/plain", "content-type": "text/plain"}, 405),
        ("POST", {"accept": "text/plain", "content-type": "text/plain"}, 401),
    ],
)
def test_method_is_checked_before_authorize_and_authorize_before_accept(
    method: str, headers: dict[str, str], status: int
) -> None:
    exchange = drive(
        call(asgi_app(hello, authorize=lambda _: False), method=method, headers=headers)
    )

    assert exchange.status == status


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({"accept": "text/plain", "content-type": "text/plain"}, BODY, 406),
        ({"content-type": "text/plain", "content-length": "99999"}, BODY, 415),
        ({"content-type": "application/json", "content-length": "99999"}, b"{", 413),
        ({"content-type": "application/json"}, b"{", 400),
        ({"content-type": "application/json"}, b"{}", 422),
    ],
)
def test_refusals_come_in_order_accept_type_size_json_input(
    headers: dict[str, str], body: bytes, status: int
) -> None:
    exchange = drive(call(asgi_app(hello, max_body_bytes=1000), headers=headers, body=body))

    assert exchange.status == status
