"""The endpoint's methods and content negotiation: 405, `Accept`, SSE or protobuf, JSON types."""

from __future__ import annotations

import pytest

from agui.asgi import asgi_app
from agui.proto import PROTO_MEDIA_TYPE
from asgi_calls import (
    PROTO_HEADERS,
    SITE,
    SSE,
    call,
    drive,
    hello,
)

# -- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "OPTIONS"])
def test_other_methods_are_refused_with_405_and_allow_post(method: str) -> None:
    exchange = drive(call(asgi_app(hello), method=method))

    assert exchange.status == 405
    assert exchange.headers["allow"] == "POST"
    assert exchange.headers["vary"] == "Accept"
    assert exchange.json() == {
        "code": "METHOD_NOT_ALLOWED",
        "message": f"this endpoint runs an agent on POST; {method} is not allowed",
    }
    assert exchange.reads == 0


def test_a_refused_head_gets_the_headers_of_the_json_body_and_no_body() -> None:
    head = drive(call(asgi_app(hello), method="HEAD"))
    get = drive(call(asgi_app(hello), method="GET"))

    assert head.status == 405
    assert head.headers["allow"] == "POST"
    assert head.body == b""
    assert head.headers["content-length"] == str(len(get.body.replace(b"GET", b"HEAD")))


def test_a_405_tells_an_allowed_page_why_and_another_sites_page_nothing_more() -> None:
    app = asgi_app(hello, allowed_origins=["https://app.example"])
    allowed = drive(call(app, method="GET", headers={**SITE, "origin": "https://app.example"}))
    other = drive(call(app, method="GET", headers={**SITE, "origin": "https://evil.example"}))

    assert (allowed.status, other.status) == (405, 405)
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert allowed.headers["access-control-expose-headers"] == "allow"
    assert "access-control-allow-origin" not in other.headers


@pytest.mark.parametrize(
    ("accept", "status"),
    [
        ("*/*", 200),
        ("text/*", 200),
        ("text/event-stream", 200),
        ("text/html;q=0.9, text/event-stream;q=1.0", 200),
        ("application/json, text/*;q=0.1", 200),
        ("text/*;q=0.4, application/json", 200),
        ("", 200),
        ("  ", 200),
        ("TEXT/EVENT-STREAM", 200),
        ("text/event-stream;q=oops", 200),
        ("application/vnd.ag-ui.event+proto, text/event-stream", 200),
        ("application/xml", 406),
        ("text/plain", 406),
        ("text/event-stream;q=0", 406),
        ("*/*;q=0", 406),
        ("text/event-stream;q=0, */*", 406),
        ("application/vnd.ag-ui.event+proto", 406),
        ("not-a-media-type", 406),
    ],
)
def test_accept_is_negotiated_like_the_rust_table(accept: str, status: int) -> None:
    headers = {"content-type": "application/json", "accept": accept}
    exchange = drive(call(asgi_app(hello, protobuf=False), headers=headers))

    assert exchange.status == status
    assert exchange.headers["vary"] == "Accept"
    if status == 406:
        assert exchange.json()["code"] == "NOT_ACCEPTABLE"
        assert repr(accept) in exchange.json()["message"]
        assert "text/event-stream" in exchange.json()["message"]
        assert exchange.reads == 0
    else:
        exchange.events()


@pytest.mark.parametrize(
    ("accept", "answer"),
    [
        (PROTO_MEDIA_TYPE, PROTO_MEDIA_TYPE),
        ("APPLICATION/VND.AG-UI.EVENT+PROTO", PROTO_MEDIA_TYPE),
        (f"{PROTO_MEDIA_TYPE};q=0.2", PROTO_MEDIA_TYPE),
        (f"{PROTO_MEDIA_TYPE}, text/event-stream;q=0.5", PROTO_MEDIA_TYPE),
        (f"text/*;q=0.5, {PROTO_MEDIA_TYPE}", PROTO_MEDIA_TYPE),
        (f"{PROTO_MEDIA_TYPE};q=0.5, */*;q=0.4", PROTO_MEDIA_TYPE),
        (f"{PROTO_MEDIA_TYPE}, text/event-stream", SSE),
        (f"{PROTO_MEDIA_TYPE};q=0.5, text/event-stream", SSE),
        (f"{PROTO_MEDIA_TYPE}, */*", SSE),
        ("*/*", SSE),
        ("", SSE),
        ("application/*, text/event-stream;q=0.1", SSE),
        ("application/*", None),
        (f"{PROTO_MEDIA_TYPE};q=0", None),
        ("application/vnd.ag-ui.event+json", None),
    ],
)
def test_protobuf_is_chosen_only_when_accept_names_it_above_sse(
    accept: str, answer: str | None
) -> None:
    headers = {"content-type": "application/json", "accept": accept}
    exchange = drive(call(asgi_app(hello), headers=headers))

    if answer is None:
        assert exchange.status == 406
        assert exchange.json()["message"].endswith(f"emits: {SSE}, {PROTO_MEDIA_TYPE}")
    else:
        assert exchange.status == 200
        assert exchange.headers["content-type"] == answer


@pytest.mark.parametrize(
    ("accept", "answer"),
    [
        (f'{PROTO_MEDIA_TYPE};profile="a,b";q=0, text/event-stream;q=0.5', SSE),
        ('text/*;q=0;note="a,text/event-stream,b"', None),
        ('text/*;q=0;note="a\\",text/event-stream,b"', None),
        ('text/*;q=0;note="unclosed, text/event-stream', None),
        (f'{PROTO_MEDIA_TYPE}, text/event-stream;q="0.5"', PROTO_MEDIA_TYPE),
        (f'{PROTO_MEDIA_TYPE};q=0.4;note="a,b", text/event-stream;q=0.3', PROTO_MEDIA_TYPE),
    ],
    ids=["q-after-quoted-comma", "comma", "escaped-quote", "unclosed", "quoted-q", "extension"],
)
def test_a_comma_inside_a_quoted_accept_parameter_is_text(accept: str, answer: str | None) -> None:
    headers = {"content-type": "application/json", "accept": accept}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == (406 if answer is None else 200)
    if answer is not None:
        assert exchange.headers["content-type"] == answer


@pytest.mark.parametrize(
    ("accept", "status"),
    [
        ("text/event-stream;level=1;q=0, text/event-stream", 200),
        ("text/event-stream;level=1", 406),
        ("text/event-stream;level=1, text/*;q=0.2", 200),
        ("text/event-stream;charset=utf-8", 200),
        ('text/event-stream; Charset="UTF-8"', 200),
        ("text/event-stream;charset=utf-16", 406),
        ("text/event-stream;charset=utf-8;q=0, text/event-stream", 406),
        ("text/event-stream;charset=utf-8;level=1;q=0, text/event-stream;charset=utf-8", 200),
        ("*/*;charset=utf-8", 200),
        ("text/event-stream;;q=0", 406),
    ],
)
def test_an_accept_range_with_parameters_matches_only_a_type_that_has_them(
    accept: str, status: int
) -> None:
    """RFC 9110, 12.5.1: `text/event-stream` carries only `charset=utf-8`."""
    headers = {"content-type": "application/json", "accept": accept}
    exchange = drive(call(asgi_app(hello, protobuf=False), headers=headers))

    assert exchange.status == status


def test_the_inspector_page_is_negotiated_with_parameters_read_the_same_way() -> None:
    app = asgi_app(hello, inspector=True)
    page = drive(call(app, method="GET", headers={"accept": 'text/html;charset="utf-8"'}))
    narrowed = drive(call(app, method="GET", headers={"accept": "text/html;level=1;q=0, */*"}))
    refused = drive(call(app, method="GET", headers={"accept": '*/*;q=0;x="a,text/html,b"'}))

    assert (page.status, narrowed.status, refused.status) == (200, 200, 406)


def test_a_proto_only_accept_is_refused_when_protobuf_is_off() -> None:
    exchange = drive(call(asgi_app(hello, protobuf=False), headers=PROTO_HEADERS))

    assert exchange.status == 406
    assert exchange.headers["vary"] == "Accept"
    assert exchange.json() == {
        "code": "NOT_ACCEPTABLE",
        "message": (
            "cannot produce any media type this request accepts "
            "('application/vnd.ag-ui.event+proto'); this endpoint emits: text/event-stream "
            "(the protobuf binding is not enabled)"
        ),
    }
    assert exchange.reads == 0


def test_a_missing_accept_header_is_answered_with_sse() -> None:
    exchange = drive(call(asgi_app(hello), headers={"content-type": "application/json"}))

    assert exchange.status == 200
    assert exchange.headers["content-type"] == "text/event-stream"


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "Application/JSON; charset=UTF-8",
        "application/json;charset=utf-8",
        'application/json; profile="run"; charset="UTF8"',
        "application/vnd.api+json",
        "text/json",
    ],
)
def test_json_content_types_are_accepted(content_type: str) -> None:
    headers = {"content-type": content_type, "accept": "text/event-stream"}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 200
    exchange.events()
