"""Browsers: origins, CORS preflights and allowed hosts."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from agui.asgi import LOOPBACK_HOSTS, asgi_app
from agui.errors import Refused
from asgi_calls import (
    JSON_HEADERS,
    SITE,
    Ctx,
    call,
    drive,
    hello,
)


def test_a_cross_site_post_without_a_type_from_another_origin_runs_nothing() -> None:
    """What a page of another site sends with no preflight: a plain POST, its own Origin."""
    ran: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ran.append(ctx.run_id)

    headers = {"host": "127.0.0.1:8000", "origin": "https://evil.example"}
    exchange = drive(call(asgi_app(agent), headers=headers))

    assert exchange.status == 403
    assert exchange.json()["code"] == "ORIGIN_NOT_ALLOWED"
    assert ran == []
    assert exchange.reads == 0


def test_a_page_of_another_origin_is_refused_before_the_body_is_read() -> None:
    exchange = drive(call(asgi_app(hello), headers={**SITE, "origin": "https://evil.example"}))

    assert exchange.status == 403
    assert exchange.json() == {
        "code": "ORIGIN_NOT_ALLOWED",
        "message": "a page of the origin 'https://evil.example' may not run this agent: only "
        "same-origin pages and the origins in allowed_origins may; add it to "
        "asgi_app(allowed_origins=[...]) if that page is yours",
    }
    assert exchange.reads == 0
    assert "access-control-allow-origin" not in exchange.headers


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("agent.example:8000", "http://agent.example:8000"),
        ("agent.example:8000", "https://AGENT.example:8000"),
        ("agent.example", "https://agent.example"),
        ("agent.example:443", "https://agent.example"),
        ("agent.example", "http://agent.example:80"),
        ("[::1]:8000", "http://[::1]:8000"),
        ("agent.example.:8000", "http://agent.example:8000"),
        ("agent.example:8000", " http://agent.example:8000 "),
    ],
)
def test_a_same_origin_page_is_admitted_without_cors_headers(host: str, origin: str) -> None:
    exchange = drive(
        call(asgi_app(hello), headers={**JSON_HEADERS, "host": host, "origin": origin})
    )

    assert exchange.status == 200
    assert "access-control-allow-origin" not in exchange.headers
    exchange.events()


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("agent.example:8000", "http://agent.example:8001"),
        ("agent.example", "http://agent.example:8000"),
        ("agent.example:8000", "http://agent.example.evil:8000"),
        ("agent.example:8000", "null"),
        ("agent.example:8000", "ftp://agent.example:8000"),
        ("agent.example:8000", "http://agent.example:8000/path"),
    ],
)
def test_an_origin_that_only_looks_like_the_servers_is_refused(host: str, origin: str) -> None:
    headers = {**JSON_HEADERS, "host": host, "origin": origin}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 403


def test_an_origin_without_a_host_to_compare_with_is_refused() -> None:
    exchange = drive(call(asgi_app(hello), headers={**JSON_HEADERS, "origin": "http://a.example"}))

    assert exchange.status == 403


@pytest.mark.parametrize("allowed", [["https://app.example"], ["HTTPS://app.example/"], ["*"]])
def test_an_allowed_origin_may_run_the_agent_and_read_the_stream(allowed: list[str]) -> None:
    app = asgi_app(hello, allowed_origins=allowed)
    exchange = drive(call(app, headers={**SITE, "origin": "https://app.example"}))

    assert exchange.status == 200
    assert exchange.headers["access-control-allow-origin"] == "https://app.example"
    assert ("vary", "Origin") in [
        (bytes(k).decode(), bytes(v).decode()) for k, v in exchange.sent[0]["headers"]
    ]
    exchange.events()


def test_an_allowed_origin_may_read_why_it_was_refused() -> None:
    app = asgi_app(hello, allowed_origins="https://app.example")
    exchange = drive(call(app, headers={**SITE, "origin": "https://app.example"}, body=b"{}"))

    assert exchange.status == 422
    assert exchange.headers["access-control-allow-origin"] == "https://app.example"
    assert "access-control-expose-headers" not in exchange.headers


def test_an_allowed_origin_may_read_the_headers_of_a_refusal_that_has_them() -> None:
    def authorize(headers: Mapping[str, str]) -> bool:
        if headers.get("authorization") == "Bearer busy":
            message = "slow down"
            raise Refused(message, status=429, headers={"Retry-After": "3"})
        return False

    app = asgi_app(hello, authorize=authorize, allowed_origins="https://app.example")
    origin = {**SITE, "origin": "https://app.example"}
    unauthorized = drive(call(app, headers=origin))
    busy = drive(call(app, headers={**origin, "authorization": "Bearer busy"}))

    assert unauthorized.status == 401
    assert unauthorized.headers["access-control-expose-headers"] == "www-authenticate"
    assert busy.status == 429
    assert busy.headers["access-control-expose-headers"] == "Retry-After"
    assert busy.headers["retry-after"] == "3"


def test_the_origin_is_echoed_byte_for_byte_on_a_refusal() -> None:
    origin = "https://\u00ff.example"  # sent as UTF-8, read as Latin-1
    app = asgi_app(hello, allowed_origins=["*"])
    exchange = drive(call(app, headers={**SITE, "origin": origin}, body=b"{}"))
    echoed = dict(exchange.sent[0]["headers"])[b"access-control-allow-origin"]

    assert exchange.status == 422
    assert echoed == origin.encode()


def test_a_preflight_from_an_allowed_origin_is_answered_with_204() -> None:
    headers = {
        "host": "agent.example",
        "origin": "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, authorization",
    }
    exchange = drive(
        call(
            asgi_app(hello, allowed_origins=["https://app.example"]),
            method="OPTIONS",
            headers=headers,
        )
    )

    assert exchange.status == 204
    assert exchange.headers == {
        "access-control-allow-origin": "https://app.example",
        "vary": "Origin",
        "access-control-allow-methods": "GET, HEAD, POST",
        "access-control-allow-headers": "content-type, authorization",
        "access-control-max-age": "600",
        "cache-control": "no-store",
    }
    assert exchange.body == b""
    assert exchange.reads == 0


def test_a_preflight_asking_no_headers_is_allowed_none() -> None:
    headers = {"origin": "https://app.example", "access-control-request-method": "POST"}
    app = asgi_app(hello, allowed_origins=["*"], inspector=True)
    exchange = drive(call(app, method="OPTIONS", headers=headers))

    assert exchange.status == 204
    assert "access-control-allow-headers" not in exchange.headers


def test_a_preflight_from_another_origin_is_refused_with_403() -> None:
    headers = {"origin": "https://evil.example", "access-control-request-method": "POST"}
    exchange = drive(call(asgi_app(hello), method="OPTIONS", headers=headers))

    assert exchange.status == 403
    assert exchange.json()["code"] == "ORIGIN_NOT_ALLOWED"


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.2"])
def test_a_host_outside_allowed_hosts_is_refused_on_every_method(method: str, host: str) -> None:
    app = asgi_app(hello, allowed_hosts=LOOPBACK_HOSTS, inspector=True)
    exchange = drive(call(app, method=method, headers={**JSON_HEADERS, "host": host}))

    assert exchange.status == 403
    assert exchange.json() == {
        "code": "HOST_NOT_ALLOWED",
        "message": f"this endpoint does not answer for the host {host!r}: it serves "
        "127.0.0.1, ::1, localhost, and a page on another name that resolves here is refused "
        "(DNS rebinding); reach it by one of those names",
    }
    assert exchange.reads == 0


@pytest.mark.parametrize(
    "host", ["localhost:8000", "LOCALHOST", "localhost.", "127.0.0.1:8000", "[::1]:8000", "::1"]
)
def test_a_loopback_host_is_admitted(host: str) -> None:
    app = asgi_app(hello, allowed_hosts=LOOPBACK_HOSTS)
    exchange = drive(call(app, headers={**JSON_HEADERS, "host": host}))

    assert exchange.status == 200


def test_a_request_without_a_host_is_not_a_browsers_and_is_admitted() -> None:
    exchange = drive(call(asgi_app(hello, allowed_hosts="localhost")))

    assert exchange.status == 200
