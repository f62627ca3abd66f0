"""The ASGI endpoint, driven with hand-written `receive`/`send` so delivery and disconnects show.

Each test runs its own event loop (`asyncio.run`, bounded by `drive`'s timeout) and checks that
every task it started is gone when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import re
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import Any, TypeVar, cast

import pytest
from pydantic import JsonValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from typing_extensions import Never

import agui
from agui import RunAgentInput, RunContext, UsageError
from agui.asgi import LOOPBACK_HOSTS, AguiApp, asgi_app
from agui.asgi._admission import MAX_LISTED_PROBLEMS
from agui.asgi._writer import MAX_SEND_BYTES
from agui.capabilities import AgentCapabilities
from agui.errors import Refused
from agui.events import (
    CustomEvent,
    Event,
    EventType,
    TextMessageContentEvent,
    TextMessageStartEvent,
)
from agui.proto import PROTO_MEDIA_TYPE, decode_proto
from agui.testing import assert_valid
from agui.transform import FilterToolCalls, Transformer

T = TypeVar("T")
Ctx = RunContext[JsonValue]
Message = MutableMapping[str, Any]
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
        "http_version": "1.1",
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


SSE = "text/event-stream"


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


@pytest.mark.parametrize("headers", [{}, {"content-type": ""}, {"content-type": "  "}])
def test_a_missing_or_empty_content_type_is_refused_with_415_before_reading(
    headers: dict[str, str],
) -> None:
    """A browser sends a body without a type cross-site with no preflight; JSON it cannot."""
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 415
    assert exchange.json()["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert "send Content-Type: application/json" in exchange.json()["message"]
    assert exchange.reads == 0


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "json"],
)
def test_a_body_that_is_not_json_is_refused_with_415(content_type: str) -> None:
    headers = {"content-type": content_type}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 415
    assert exchange.json() == {
        "code": "UNSUPPORTED_MEDIA_TYPE",
        "message": f"expected a JSON request body, got Content-Type {content_type!r}",
    }
    assert exchange.reads == 0


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    headers = {**JSON_HEADERS, "content-length": "2000"}
    exchange = drive(call(asgi_app(hello, max_body_bytes=1000), headers=headers))

    assert exchange.status == 413
    assert exchange.json()["code"] == "BODY_TOO_LARGE"
    assert "limit of 1000 bytes (2000 bytes)" in exchange.json()["message"]
    assert exchange.reads == 0


def test_a_chunked_body_is_counted_and_refused_as_soon_as_it_passes_the_limit() -> None:
    chunks = [b" " * 400] * 10
    exchange = drive(call(asgi_app(hello, max_body_bytes=1000), chunks=chunks))

    assert exchange.status == 413
    assert exchange.json()["code"] == "BODY_TOO_LARGE"
    assert exchange.reads == 3


def test_a_body_of_exactly_the_limit_is_read() -> None:
    body = BODY + b" " * (1000 - len(BODY))
    headers = {**JSON_HEADERS, "content-length": str(len(body))}
    exchange = drive(call(asgi_app(hello, max_body_bytes=1000), headers=headers, body=body))

    assert exchange.status == 200


def test_a_body_split_in_chunks_is_reassembled() -> None:
    chunks = [BODY[:5], b"", BODY[5:20], BODY[20:]]
    exchange = drive(call(asgi_app(hello), chunks=chunks))

    assert exchange.status == 200
    assert [e.type for e in exchange.events()][-1] == EventType.RUN_FINISHED


@pytest.mark.parametrize("length", ["-1", "ten", "1e3", ""])
def test_a_content_length_that_is_not_a_count_is_refused_with_400(length: str) -> None:
    headers = {**JSON_HEADERS, "content-length": length}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 400
    assert exchange.json()["code"] == "INVALID_CONTENT_LENGTH"


@pytest.mark.parametrize("length", [b"\xb2", b"1\xb9"])
def test_a_content_length_of_digits_that_are_not_ascii_is_refused_with_400(length: bytes) -> None:
    exchange = drive(call(asgi_app(hello), raw_headers=((b"content-length", length),)))

    assert exchange.status == 400
    assert exchange.json()["code"] == "INVALID_CONTENT_LENGTH"
    assert exchange.reads == 0


@pytest.mark.parametrize("body", [b"", b"  \n\t "])
def test_an_empty_body_is_refused_with_400(body: bytes) -> None:
    exchange = drive(call(asgi_app(hello), body=body))

    assert exchange.status == 400
    assert exchange.json() == {
        "code": "EMPTY_BODY",
        "message": "the request body is empty; expected an AG-UI RunAgentInput JSON object",
    }


@pytest.mark.parametrize("body", [b"{", b'{"threadId": "t",}', b"NaN"])
def test_a_body_that_is_not_json_is_refused_with_400(body: bytes) -> None:
    exchange = drive(call(asgi_app(hello), body=body))

    assert exchange.status == 400
    assert exchange.json()["code"] == "INVALID_JSON"
    assert exchange.json()["message"].startswith("the body is not valid JSON")


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"\xff\xfe", r"it looks like UTF-16 or UTF-32"),
        ('{"threadId": "t"}'.encode("utf-16"), r"it looks like UTF-16 or UTF-32"),
        ('{"threadId": "t"}'.encode("utf-32-le"), r"it looks like UTF-16 or UTF-32"),
        ('{"threadId": "caf\u00e9", "runId": "r"}'.encode("latin-1"), r"byte 17 is not"),
    ],
)
def test_a_body_that_is_not_utf8_is_refused_with_400_saying_so(body: bytes, why: str) -> None:
    exchange = drive(call(asgi_app(hello), body=body))

    assert exchange.status == 400
    assert exchange.json()["code"] == "INVALID_JSON"
    message = exchange.json()["message"]
    assert re.match(r"the body is not UTF-8 \(" + why + r"\); JSON travels as UTF-8", message)


def test_a_body_that_starts_with_a_byte_order_mark_is_read_without_it() -> None:
    exchange = drive(call(asgi_app(hello), body=b"\xef\xbb\xbf" + BODY))

    assert exchange.status == 200
    assert [e.type for e in exchange.events()][-1] == EventType.RUN_FINISHED


@pytest.mark.parametrize("charset", ["latin-1", "UTF-16", '"windows-1252"'])
def test_a_body_announced_in_another_charset_than_utf8_is_refused_with_415(charset: str) -> None:
    headers = {**JSON_HEADERS, "content-type": f"application/json; charset={charset}"}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 415
    assert exchange.json()["code"] == "UNSUPPORTED_MEDIA_TYPE"
    named = charset.strip('"').lower()
    assert exchange.json()["message"].startswith(
        f"the body is announced as charset {named!r}; JSON travels as UTF-8"
    )
    assert exchange.reads == 0


@pytest.mark.parametrize("coding", ["gzip", "br", "GZIP, deflate"])
def test_a_compressed_body_is_refused_with_415_before_reading(coding: str) -> None:
    headers = {**JSON_HEADERS, "content-encoding": coding}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 415
    assert exchange.json() == {
        "code": "UNSUPPORTED_MEDIA_TYPE",
        "message": (
            f"the body is sent with Content-Encoding {coding.lower()!r}, which this endpoint "
            "does not decode: send it uncompressed (a run's input is one JSON document)"
        ),
    }
    assert exchange.headers["accept-encoding"] == "identity"
    assert exchange.reads == 0


@pytest.mark.parametrize("coding", ["identity", " Identity ", ""])
def test_an_identity_content_encoding_is_read_as_no_encoding(coding: str) -> None:
    headers = {**JSON_HEADERS, "content-encoding": coding}
    exchange = drive(call(asgi_app(hello), headers=headers))

    assert exchange.status == 200


def test_an_input_that_does_not_validate_is_refused_with_422_naming_the_fields() -> None:
    body = json.dumps({"threadId": "t", "messages": [{"role": "user"}]}).encode()
    exchange = drive(call(asgi_app(hello), body=body))

    assert exchange.status == 422
    answer = exchange.json()
    assert answer["code"] == "INVALID_INPUT"
    assert answer["message"].startswith("the run input is invalid")
    paths = [error["path"] for error in answer["errors"]]
    assert "/runId" in paths
    assert any(path.startswith("/messages/0") for path in paths)
    assert all(set(error) == {"path", "message"} for error in answer["errors"])


@pytest.mark.parametrize(
    ("body", "kind"), [(b"[]", "an array"), (b'"x"', "a string"), (b"null", "null"), (b"1", "a")]
)
def test_an_input_that_is_not_an_object_is_refused_with_422(body: bytes, kind: str) -> None:
    exchange = drive(call(asgi_app(hello), body=body))

    assert exchange.status == 422
    assert f"must be a JSON object, not {kind}" in exchange.json()["message"]
    assert exchange.json()["errors"][0]["path"] == ""


LENIENT_INPUTS: list[dict[str, JsonValue]] = [
    {"thread_id": "t", "run_id": "r", "messages": []},
    {"threadId": "t", "runId": "r"},
    {
        "threadId": "t",
        "runId": "r",
        "state": {"a": 1},
        "messages": [{"id": "m1", "role": "user", "content": "hi"}],
        "tools": [{"name": "search", "description": "look", "parameters": {}}],
        "context": [{"description": "tz", "value": "UTC"}],
        "forwardedProps": {"x": None},
    },
    {
        "thread_id": "t",
        "run_id": "r",
        "state": None,
        "tools": [],
        "context": [],
        "forwarded_props": {},
    },
]


@pytest.mark.parametrize(
    "body",
    LENIENT_INPUTS,
    ids=["snake", "minimal", "camel-full", "snake-empty"],
)
def test_camel_and_snake_case_inputs_with_or_without_extras_are_accepted(
    body: dict[str, JsonValue],
) -> None:
    seen: list[RunAgentInput] = []

    async def agent(ctx: Ctx) -> None:
        seen.append(ctx.input)

    exchange = drive(call(asgi_app(agent), body=json.dumps(body).encode()))

    assert exchange.status == 200
    assert [e.type for e in exchange.events()] == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    assert (seen[0].thread_id, seen[0].run_id) == ("t", "r")


def test_unknown_members_are_stripped_and_logged_not_warned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = json.dumps({"threadId": "t", "runId": "r", "colour": "red"}).encode()
    with caplog.at_level(logging.INFO, logger="agui.asgi"):
        exchange = drive(call(asgi_app(hello), body=body))

    assert exchange.status == 200
    assert "Removed unrecognised material at '/colour'" in caplog.text


def test_a_client_that_leaves_while_sending_its_body_gets_nothing() -> None:
    async def main() -> Exchange:
        gone = asyncio.Event()
        gone.set()
        return await call(asgi_app(hello), chunks=[], gone=gone)

    exchange = drive(main())

    assert exchange.sent == []


def stalled(chunks: list[bytes]) -> Callable[[], Awaitable[Message]]:
    """A `receive` that delivers `chunks` of a body that never ends, then stays silent."""
    pending = [{"type": "http.request", "body": chunk, "more_body": True} for chunk in chunks]

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        await asyncio.Event().wait()
        raise AssertionError  # pragma: no cover - the wait never ends

    return receive


@pytest.mark.parametrize("chunks", [[], [b'{"threadId": "t", '], [b"{", b'"a"', b":"]])
def test_a_body_that_stalls_is_refused_with_408_and_the_connection_closed(
    chunks: list[bytes],
) -> None:
    async def main() -> Exchange:
        exchange = Exchange()

        async def send(message: Message) -> None:
            exchange.sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "headers": [(b"content-type", b"application/json")],
        }
        await asgi_app(hello, body_timeout=0.05)(scope, stalled(chunks), send)
        return exchange

    exchange = drive(main())

    assert exchange.status == 408
    assert exchange.headers["connection"] == "close"
    assert exchange.json() == {
        "code": "BODY_TIMEOUT",
        "message": "the request body did not arrive within 0.05 s, this endpoint's body_timeout: "
        "send the whole body at once (a run's input is one JSON document), or raise "
        "body_timeout on asgi_app for slow links",
    }


def test_a_cancellation_from_outside_while_the_body_is_read_is_not_a_timeout() -> None:
    async def main() -> list[Message]:
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "headers": [(b"content-type", b"application/json")],
        }
        task = asyncio.ensure_future(asgi_app(hello, body_timeout=5.0)(scope, stalled([]), send))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return sent

    assert drive(main()) == []


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tasks count cancellations from 3.11")
def test_a_timed_out_body_leaves_its_task_not_cancelling() -> None:
    async def main() -> tuple[int, int]:
        exchange = Exchange()

        async def send(message: Message) -> None:
            exchange.sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "headers": [(b"content-type", b"application/json")],
        }
        await asgi_app(hello, body_timeout=0.01)(scope, stalled([b"{"]), send)
        task = asyncio.current_task()
        assert task is not None
        assert sys.version_info >= (3, 11)  # for the type checkers, which read 3.10
        return exchange.status, task.cancelling()

    assert drive(main()) == (408, 0)


def test_a_body_that_arrives_within_the_timeout_is_read() -> None:
    exchange = drive(call(asgi_app(hello, body_timeout=5.0), chunks=[BODY[:5], BODY[5:]]))

    assert exchange.status == 200
    exchange.events()


def test_an_input_with_thousands_of_problems_lists_each_once_and_counts_the_rest() -> None:
    messages = [{"role": "user", "id": f"m{index}"} for index in range(20_000)]
    body = json.dumps({"threadId": "t", "runId": "r", "messages": messages}).encode()
    exchange = drive(call(asgi_app(hello, max_body_bytes=len(body)), body=body), timeout=60)

    answer = exchange.json()
    assert exchange.status == 422
    assert len(answer["errors"]) == MAX_LISTED_PROBLEMS
    assert answer["omitted"] == 20_000 - MAX_LISTED_PROBLEMS
    assert answer["errors"][0] == {"path": "/messages/0/content", "message": "Field required"}
    assert answer["message"] == (
        "the run input is invalid in 20000 places, listed in 'errors' "
        "(the first: '/messages/0/content': Field required)"
    )
    assert len(exchange.body) < 4096


def test_an_input_with_one_problem_names_it_in_the_message() -> None:
    exchange = drive(call(asgi_app(hello), body=b'{"threadId": "t"}'))

    assert exchange.json() == {
        "code": "INVALID_INPUT",
        "message": "the run input is invalid: '/runId': Field required",
        "errors": [{"path": "/runId", "message": "Field required"}],
    }


def test_each_refusal_is_logged_with_its_method_status_and_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="agui.asgi"):
        drive(call(asgi_app(hello), method="PUT"))

    assert [record.getMessage() for record in caplog.records] == [
        "refused a PUT request: 405 METHOD_NOT_ALLOWED"
    ]


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


# -- browsers ----------------------------------------------------------------------------------

SITE = {**JSON_HEADERS, "host": "agent.example:8000"}


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


# -- streaming ---------------------------------------------------------------------------------


def test_a_run_streams_sse_with_no_buffering_headers() -> None:
    exchange = drive(call(asgi_app(hello)))

    assert exchange.status == 200
    assert exchange.headers == {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-store, no-transform",
        "x-accel-buffering": "no",
        "vary": "Accept",
    }
    assert [e.type for e in exchange.events()] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
    ]
    assert all(message.get("more_body") for message in exchange.sent[1:-1])


def test_frames_arrive_while_the_agent_is_still_running() -> None:
    async def main() -> tuple[Exchange, list[str]]:
        release = asyncio.Event()
        log: list[str] = []

        async def agent(ctx: Ctx) -> None:
            ctx.say("first")
            await release.wait()
            log.append("released")
            ctx.say("second")

        def on_send(message: Message, exchange: Exchange) -> None:
            if b"TEXT_MESSAGE_END" in message.get("body", b"") and not release.is_set():
                log.append(f"saw {frame_count(exchange.body)} frames")
                release.set()

        return await call(asgi_app(agent), on_send=on_send), log

    exchange, log = drive(main())

    assert log == ["saw 4 frames", "released"]
    assert len(exchange.events()) == 8


def test_events_emitted_without_awaiting_go_out_in_one_send() -> None:
    async def main() -> Exchange:
        proceed = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("one")
            ctx.say("two")
            await proceed.wait()
            ctx.say("three")
            ctx.say("four")

        def on_send(message: Message, _exchange: Exchange) -> None:
            if message["type"] == "http.response.body":
                proceed.set()

        return await call(asgi_app(agent), on_send=on_send)

    exchange = drive(main())

    assert [frame_count(body) for body in exchange.bodies] == [7, 7, 0]
    exchange.events()


def test_an_agent_that_awaits_between_events_still_shares_sends() -> None:
    async def agent(ctx: Ctx) -> None:
        for index in range(64):
            ctx.emit(CustomEvent(name="tick", value=index))
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent)))

    counts = [frame_count(body) for body in exchange.bodies]
    assert sum(counts) == 66
    assert len(counts) <= 8
    exchange.events()


def test_events_queued_during_a_slow_send_go_out_together_in_the_next() -> None:
    async def agent(ctx: Ctx) -> None:
        for index in range(30):
            ctx.emit(CustomEvent(name="tick", value=index))
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent), slow=10))

    counts = [frame_count(body) for body in exchange.bodies]
    assert sum(counts) == 32
    assert len(counts) < 10
    assert max(counts) >= 5
    exchange.events()


def test_request_messages_after_the_body_do_not_end_the_stream() -> None:
    extra: list[Message] = [{"type": "http.request", "body": b"", "more_body": False}]
    exchange = drive(call(asgi_app(hello), extra=extra))

    assert len(exchange.events()) == 5


def test_a_run_task_that_fails_outside_the_agent_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_drive(_agent: object, ctx: Ctx, *, debug: bool) -> None:
        del debug
        ctx.receiver.close()
        message = "the driver broke"
        raise RuntimeError(message)

    monkeypatch.setattr("agui.asgi._streaming.drive", broken_drive)
    exchange = drive(call(asgi_app(hello)))

    assert exchange.status == 200
    assert exchange.body == b""
    assert "run task 'agui run r' failed" in caplog.text
    assert "the driver broke" in caplog.text


def test_a_large_batch_is_split_into_bounded_sends() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.message() as message:
            for index in range(2500):
                message.delta(f"{index} ")

    exchange = drive(call(asgi_app(agent)))

    assert [frame_count(body) for body in exchange.bodies] == [1024, 1024, 456, 0]
    assert len(exchange.events()) == 2504


def test_the_first_batch_goes_out_at_once_and_a_large_later_one_without_gathering() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("first")
        await asyncio.sleep(0)
        with ctx.message() as message:
            for index in range(300):
                message.delta(f"{index} ")
        await asyncio.sleep(0)
        ctx.say("last")

    exchange = drive(call(asgi_app(agent)))

    # RUN_STARTED and the first message; then 302 events already queued, sent as they are; the
    # last message and RUN_FINISHED.
    assert [frame_count(body) for body in exchange.bodies] == [4, 302, 4, 0]


def compute(seconds: float) -> None:
    """Hold the loop for `seconds` at least, as an agent computing between two awaits does."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def test_gathering_stops_two_milliseconds_in_when_each_turn_runs_long() -> None:
    async def agent(ctx: Ctx) -> None:
        for index in range(12):
            ctx.emit(CustomEvent(name="tick", value=index))
            compute(0.001)
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent)))

    counts = [frame_count(body) for body in exchange.bodies]
    assert sum(counts) == 14
    # Each turn takes a millisecond or more, so a gathered batch holds what came before the
    # 2 ms were up and the one turn after: three events at most, never the 16 turns' worth.
    assert max(counts[1:]) <= 3
    assert len(counts) >= 5


def test_an_idle_stream_gets_keepalive_comment_frames() -> None:
    async def main() -> Exchange:
        wake = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("thinking")
            await wake.wait()
            ctx.say("done")

        def on_send(_message: Message, exchange: Exchange) -> None:
            if exchange.bodies.count(PING) == 3:
                wake.set()

        return await call(asgi_app(agent, keepalive=0.01), on_send=on_send)

    exchange = drive(main())

    pings = [index for index, body in enumerate(exchange.bodies) if body == PING]
    assert pings == [1, 2, 3]
    assert [e.type for e in exchange.events()].count("TEXT_MESSAGE_START") == 2


def test_a_keepalive_ping_never_lands_inside_a_frame_split_across_sends() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("x" * (3 * MAX_SEND_BYTES))

    async def pause(exchange: Exchange) -> None:
        if len(exchange.bodies) < 3:  # a slow client: each slice takes many keep-alive periods
            await asyncio.sleep(0.05)

    exchange = Exchange()
    drive(post_slowly(asgi_app(agent, keepalive=0.001), exchange, pause))

    # The slices of the frame went out back to back; pings came only between whole frames.
    events = exchange.events()
    assert [len(body) for body in exchange.bodies[:3]] == [MAX_SEND_BYTES] * 3
    text = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
    assert text == "x" * (3 * MAX_SEND_BYTES)


def test_no_keepalive_ping_follows_the_terminal_event() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("x" * (3 * MAX_SEND_BYTES))  # its last batch takes many keep-alive periods

    async def pause(exchange: Exchange) -> None:
        if len(exchange.bodies) < 3:
            await asyncio.sleep(0.05)

    exchange = Exchange()
    drive(post_slowly(asgi_app(agent, keepalive=0.001), exchange, pause))

    bodies = [body for body in exchange.bodies if body]
    last = max(i for i, body in enumerate(bodies) if b'"type":"RUN_FINISHED"' in body)
    assert PING not in bodies[last:]
    assert exchange.events()[-1].type == "RUN_FINISHED"


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


# -- the protobuf binding ----------------------------------------------------------------------


def test_a_proto_run_streams_length_prefixed_frames_with_no_buffering_headers() -> None:
    exchange = drive(call(asgi_app(hello), headers=PROTO_HEADERS))

    assert exchange.status == 200
    assert exchange.headers == {
        "content-type": "application/vnd.ag-ui.event+proto",
        "cache-control": "no-cache, no-store, no-transform",
        "x-accel-buffering": "no",
        "vary": "Accept",
    }
    assert [e.type for e in exchange.proto_events()] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
    ]
    first = exchange.bodies[0]
    assert int.from_bytes(first[:4], "big") < len(first)


def test_a_proto_stream_coalesces_queued_events_into_one_send() -> None:
    async def main() -> Exchange:
        proceed = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("one")
            ctx.say("two")
            await proceed.wait()
            ctx.say("three")

        def on_send(message: Message, _exchange: Exchange) -> None:
            if message["type"] == "http.response.body":
                proceed.set()

        return await call(asgi_app(agent), headers=PROTO_HEADERS, on_send=on_send)

    exchange = drive(main())

    assert [len(decode_proto(body)) for body in exchange.bodies] == [7, 4, 0]
    assert len(exchange.proto_events()) == 11


def test_an_idle_proto_stream_gets_no_keepalive_pings() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("thinking")
        await asyncio.sleep(0.1)
        ctx.say("done")

    exchange = drive(call(asgi_app(agent, keepalive=0.01), headers=PROTO_HEADERS))

    assert PING not in exchange.bodies
    assert [e.type for e in exchange.proto_events()].count("TEXT_MESSAGE_START") == 2


def test_an_event_the_binary_binding_cannot_write_ends_the_stream_with_run_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("before")
        ctx.emit(CustomEvent(name="huge", value=10**400))
        await asyncio.sleep(10)

    exchange = drive(call(asgi_app(agent), headers=PROTO_HEADERS))

    events = [event for body in exchange.bodies for event in decode_proto(body)]
    assert [e.type for e in events] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
    ]
    assert events[-1].model_dump(mode="json")["code"] == "SERIALIZATION_ERROR"
    assert "a CUSTOM event could not be serialized" in caplog.text


def test_protobuf_is_offered_when_installed_and_not_when_turned_off() -> None:
    assert asgi_app(hello).media_types == (SSE, PROTO_MEDIA_TYPE)
    assert asgi_app(hello, protobuf=True).media_types == (SSE, PROTO_MEDIA_TYPE)
    assert asgi_app(hello, protobuf=False).media_types == (SSE,)


def test_protobuf_true_with_a_protobuf_too_old_names_the_one_it_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.protobuf  # noqa: PLC0415 - patched for this test only

    monkeypatch.setattr(google.protobuf, "__version__", "4.25.3")
    monkeypatch.delitem(sys.modules, "agui.proto._codec")

    with pytest.raises(
        UsageError,
        match=re.escape(
            "protobuf=True needs protobuf 5.26.1 or later, and protobuf 4.25.3 is installed: "
            'pip install --upgrade "protobuf>=5.26.1"'
        ),
    ):
        asgi_app(hello, protobuf=True)
    assert asgi_app(hello).media_types == (SSE,)


def test_without_the_extra_protobuf_is_left_out_unless_it_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if protobuf were not installed: the codec is the part of agui.proto that imports it.
    monkeypatch.setitem(sys.modules, "agui.proto._codec", None)

    app = asgi_app(hello)
    with pytest.raises(
        UsageError, match=r'protobuf=True needs .*pip install "agui-server\[proto\]"'
    ):
        asgi_app(hello, protobuf=True)

    assert app.media_types == (SSE,)
    assert drive(call(app, headers=PROTO_HEADERS)).status == 406


def test_a_stream_quiet_for_less_than_keepalive_or_with_none_gets_no_pings() -> None:
    async def agent(ctx: Ctx) -> None:
        await asyncio.sleep(0.05)
        ctx.say("late")

    busy = drive(call(asgi_app(agent)))
    off = drive(call(asgi_app(agent, keepalive=None)))

    assert PING not in busy.bodies
    assert PING not in off.bodies
    assert frame_count(busy.body) == frame_count(off.body) == 5


def test_transformers_come_from_a_factory_fresh_for_each_request() -> None:
    class Numbering:
        def __init__(self) -> None:
            self.seen = 0

        def transform(self, event: Event) -> list[Event]:
            self.seen += 1
            if event.type != EventType.RUN_STARTED:
                return [event]
            return [event, CustomEvent(name="number", value=self.seen)]

    app = asgi_app(hello, transformers=lambda: [Numbering()])
    runs = [drive(call(app)).events() for _ in range(2)]

    assert [[e.value for e in events if isinstance(e, CustomEvent)] for events in runs] == [
        [1],
        [1],
    ]


def test_the_state_type_and_debug_flag_reach_the_run() -> None:
    @dataclasses.dataclass
    class Counter:
        count: int = 0

    async def agent(ctx: RunContext[Counter]) -> None:
        ctx.state.count += 1
        ctx.publish_state()
        message = f"count is {ctx.state.count}"
        raise RuntimeError(message)

    body = json.dumps({"threadId": "t", "runId": "r", "state": {"count": 41}}).encode()
    quiet = drive(call(asgi_app(agent, state=Counter), body=body)).events()
    loud = drive(call(asgi_app(agent, state=Counter, debug=True), body=body)).events()

    assert [e.model_dump(mode="json") for e in quiet if e.type == EventType.STATE_SNAPSHOT] == [
        {"type": "STATE_SNAPSHOT", "snapshot": {"count": 42}}
    ]
    assert quiet[-1].type == loud[-1].type == EventType.RUN_ERROR
    assert "count is 42" not in quiet[-1].model_dump_json()
    assert "RuntimeError: count is 42" in loud[-1].model_dump_json()


def test_an_event_that_cannot_be_serialized_ends_the_stream_with_run_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finished: list[bool] = []

    async def agent(ctx: Ctx) -> None:
        try:
            # Checked when emitted, the payload is changed before the writer serializes it.
            payload: dict[str, JsonValue] = {"fine": True}
            ctx.emit(CustomEvent.model_construct(name="bad", value=payload))  # not copied
            payload["fine"] = cast("JsonValue", object())
            await asyncio.sleep(10)
        finally:
            finished.append(ctx.cancelled)

    exchange = drive(call(asgi_app(agent)))

    assert exchange.sent[-1] == {"type": "http.response.body", "body": b""}
    events = [agui.parse_event(frame) for frame in data_frames(exchange.body)]
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_ERROR]
    assert events[-1].model_dump(mode="json")["code"] == "SERIALIZATION_ERROR"
    assert finished == [True]
    assert "a CUSTOM event could not be serialized" in caplog.text


def test_a_streamed_delta_that_cannot_be_written_ends_the_stream_after_the_frames_before_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        await asyncio.sleep(0)
        # Through the escape hatch: text is checked at emit, a JSON value (but CUSTOM's) is not.
        ctx.emit(TextMessageStartEvent(message_id="m1"))
        ctx.emit(TextMessageContentEvent(message_id="m1", delta="fine"))
        unwritable = TextMessageContentEvent(message_id="m1", delta="x", metadata={"n": "\ud800"})
        ctx.emit(unwritable)  # no UTF-8 for it
        await asyncio.sleep(10)

    exchange = drive(call(asgi_app(agent)))

    events = [agui.parse_event(frame) for frame in data_frames(exchange.body)]
    assert [e.type for e in events] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.RUN_ERROR,
    ]
    assert events[-1].model_dump(mode="json")["code"] == "SERIALIZATION_ERROR"
    assert "a TEXT_MESSAGE_CONTENT event could not be serialized" in caplog.text


# -- disconnects -------------------------------------------------------------------------------


def _parked_agent(log: list[str], parked: asyncio.Event) -> Callable[[Ctx], Awaitable[None]]:
    async def agent(ctx: Ctx) -> None:
        ctx.say("working")
        try:
            parked.set()
            await asyncio.Event().wait()
        finally:
            log.append(f"finally ran, cancelled={ctx.cancelled}")

    return agent


def test_a_disconnect_mid_run_cancels_the_agent_and_tells_the_hook() -> None:
    async def main() -> tuple[Exchange, list[str]]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()

        def on_disconnect(run_input: RunAgentInput) -> None:
            log.append(f"told about {run_input.run_id}")

        def on_send(message: Message, _exchange: Exchange) -> None:
            if b"TEXT_MESSAGE_END" in message.get("body", b""):
                gone.set()

        app = asgi_app(_parked_agent(log, parked), on_disconnect=on_disconnect)
        return await call(app, gone=gone, on_send=on_send), log

    exchange, log = drive(main())

    assert log == ["finally ran, cancelled=True", "told about r"]
    assert b"TEXT_MESSAGE_END" in exchange.body
    assert b"RUN_FINISHED" not in exchange.body
    assert exchange.sent[-1].get("more_body") is True


def test_an_async_disconnect_hook_is_awaited_and_its_failure_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()

        async def on_disconnect(run_input: RunAgentInput) -> None:
            await asyncio.sleep(0)
            log.append("told")
            message = f"hook failed for {run_input.run_id}"
            raise RuntimeError(message)

        app = asgi_app(_parked_agent(log, parked), on_disconnect=on_disconnect)
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told"]
    assert "the on_disconnect hook failed for run r" in caplog.text


def test_a_failed_send_counts_as_a_disconnect() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()

        def fail_after_start(message: Message) -> bool:
            return parked.is_set() and message["type"] == "http.response.body"

        async def agent(ctx: Ctx) -> None:
            parked.set()
            await asyncio.sleep(0)
            try:
                ctx.say("nobody hears this")
                await asyncio.Event().wait()
            finally:
                log.append(f"finally ran, cancelled={ctx.cancelled}")

        app = asgi_app(agent, on_disconnect=lambda _input: log.append("told"))
        await call(app, send_error=fail_after_start)
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told"]


def test_a_send_that_fails_unexpectedly_is_logged_and_ends_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked), on_disconnect=lambda _: log.append("told"))

        def fail_once_parked(message: Message) -> bool:
            return parked.is_set() and message["type"] == "http.response.body"

        async def nudge() -> None:
            await parked.wait()
            await asyncio.sleep(0)

        await asyncio.gather(
            call(app, send_error=fail_once_parked, send_exception=RuntimeError), nudge()
        )
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told"]
    assert "streaming failed; treating the client as gone" in caplog.text


def test_a_receive_that_fails_while_streaming_is_logged_and_ends_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked))
        incoming: list[Message] = [{"type": "http.request", "body": BODY}]

        async def receive() -> Message:
            if incoming:
                return incoming.pop(0)
            await parked.wait()
            message = "the server lost the connection's state"
            raise RuntimeError(message)

        async def send(_message: Message) -> None:
            return None

        scope = {
            "type": "http",
            "method": "POST",
            "headers": [(b"content-type", b"application/json")],
        }
        await app(scope, receive, send)
        return log

    assert drive(main()) == ["finally ran, cancelled=True"]
    assert "watching the client failed; treating it as gone" in caplog.text


def test_a_client_gone_before_the_response_starts_runs_nothing() -> None:
    ran: list[bool] = []

    async def agent(_ctx: Ctx) -> None:
        ran.append(True)

    exchange = drive(call(asgi_app(agent), send_error=lambda _message: True))

    assert exchange.sent == []
    assert ran == []


def test_a_keepalive_that_cannot_be_sent_counts_as_a_disconnect() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked), keepalive=0.01)
        await call(app, send_error=lambda message: message.get("body") == PING)
        return log

    assert drive(main()) == ["finally ran, cancelled=True"]


def test_an_agent_that_ignores_cancellation_is_given_up_on_after_the_grace_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()
        stop = asyncio.Event()

        async def stubborn(_ctx: Ctx) -> None:
            try:
                parked.set()
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                log.append("ignored the cancel")
                await stop.wait()
                log.append("stopped")
                raise

        app = asgi_app(stubborn, cancel_grace=0.02)
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        log.append("request returned")
        stop.set()  # the test stops what it started
        for task in asyncio.all_tasks():
            if task.get_name() == "agui run r":
                await asyncio.wait({task})
        return log

    assert drive(main()) == ["ignored the cancel", "request returned", "stopped"]
    assert "run task 'agui run r' ignored being cancelled" in caplog.text


def test_a_shutdown_that_stops_a_stream_inside_a_frame_cuts_it_rather_than_glue_a_frame_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> Exchange:
        stop = asyncio.Event()
        first_slice = asyncio.Event()

        async def stubborn(ctx: Ctx) -> None:
            ctx.say("x" * (3 * MAX_SEND_BYTES))
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await stop.wait()  # ignores the shutdown for longer than the grace period
                raise

        async def pause(exchange: Exchange) -> None:
            if exchange.bodies and not first_slice.is_set():
                first_slice.set()  # the client read the first slice of the frame, and stopped
                await asyncio.Event().wait()

        exchange = Exchange()
        task = asyncio.create_task(
            post_slowly(asgi_app(stubborn, cancel_grace=0.01), exchange, pause)
        )
        await first_slice.wait()
        task.cancel()  # what uvicorn does past its graceful-shutdown timeout
        await asyncio.wait({task})
        stop.set()  # the test stops what it started
        for run in asyncio.all_tasks():
            if run.get_name() == "agui run r":
                await asyncio.wait({run})
        return exchange

    exchange = drive(main())

    # Half of a frame went out; a RUN_ERROR after it would be read as part of that frame.
    assert [len(body) for body in exchange.bodies] == [MAX_SEND_BYTES]
    assert exchange.sent[-1].get("more_body") is True
    assert "ignored being cancelled (the server is shutting down)" in caplog.text


def test_detach_lets_the_run_finish_without_a_listener() -> None:
    async def main() -> tuple[list[str], list[int]]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()
        resume = asyncio.Event()
        finished = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("before")
            parked.set()
            await resume.wait()
            ctx.say("after")
            log.append(f"finished, cancelled={ctx.cancelled}")
            finished.set()

        app = asgi_app(agent, disconnect="detach", on_disconnect=lambda _input: log.append("told"))
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        counts = [app.detached_runs]
        resume.set()
        await finished.wait()
        for _ in range(100):  # the detached task ends a few loop turns after the run
            if not app.detached_runs:
                break
            await asyncio.sleep(0)
        counts.append(app.detached_runs)
        return log, counts

    log, counts = drive(main())

    assert log == ["told", "finished, cancelled=False"]
    assert counts == [1, 0]


def test_detached_runs_are_cancelled_on_lifespan_shutdown() -> None:
    async def main() -> tuple[list[str], list[Message]]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked), disconnect="detach")
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        assert app.detached_runs == 1
        sent = await lifespan(app)
        log.append(f"detached runs: {app.detached_runs}")
        return log, sent

    log, sent = drive(main())

    assert log == ["finally ran, cancelled=True", "detached runs: 0"]
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_a_run_that_ends_before_the_disconnect_is_noticed_is_not_detached() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        gone = asyncio.Event()

        async def agent(_ctx: Ctx) -> None:
            gone.set()
            await asyncio.sleep(0)

        app = asgi_app(agent, disconnect="detach", on_disconnect=lambda _: log.append("told"))

        def fail_after_start(message: Message) -> bool:
            return bool(message["type"] == "http.response.body")

        await call(app, send_error=fail_after_start, gone=gone)
        log.append(f"detached runs: {app.detached_runs}")
        return log

    assert drive(main()) == ["told", "detached runs: 0"]


# -- other scopes and mounting -----------------------------------------------------------------


async def lifespan(app: AguiApp[Any]) -> list[Message]:
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    await app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    return sent


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


# -- options -----------------------------------------------------------------------------------


def test_the_package_reexports_asgi_app() -> None:
    assert agui.asgi_app is asgi_app


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"transformers": []}, "transformers must be a factory"),
        ({"max_body_bytes": 0}, "max_body_bytes must be a positive whole number of bytes, not 0"),
        ({"max_body_bytes": "1000"}, "max_body_bytes must be a positive whole number of bytes"),
        ({"max_body_bytes": True}, "max_body_bytes must be a positive whole number of bytes"),
        ({"max_buffered_bytes": 1.5}, "max_buffered_bytes must be a positive whole number"),
        ({"keepalive": "15"}, r"keepalive must be a positive number of seconds or None, not '15'"),
        ({"body_timeout": True}, "body_timeout must be a positive number of seconds, not True"),
        ({"cancel_grace": None}, "cancel_grace must be zero or more seconds, not None"),
        ({"debug": "0"}, "debug must be True or False, not '0'"),
        ({"inspector": 1}, "inspector must be True or False, not 1"),
        ({"protobuf": "yes"}, "protobuf must be True or False, or None, not 'yes'"),
        ({"authorize": True}, r"authorize must be a function \(sync or async\), not bool"),
        ({"on_disconnect": 5}, r"on_disconnect must be a function \(sync or async\), not int"),
        ({"protocol_version": "2.0"}, "protocol_version must be 'auto', '1.0' or '0.x', not '2.0'"),
        ({"runs": "memory"}, r"runs must be a run log from agui.runs, MemoryRunLog\(\) or Redis"),
        ({"capabilities": "yes"}, "capabilities must be None, True or False, an AgentCapabilities"),
        (
            {"debug": "no", "keepalive": -1},
            "debug must be True or False, not 'no'; keepalive must be a positive number",
        ),
        ({"keepalive": 0}, "keepalive must be a positive number of seconds or None, not 0"),
        ({"disconnect": "linger"}, "disconnect must be 'cancel' or 'detach', not 'linger'"),
        ({"cancel_grace": -1}, "cancel_grace must be zero or more seconds, not -1"),
        ({"body_timeout": 0}, "body_timeout must be a positive number of seconds, not 0"),
        (
            {"allowed_origins": ["app.example"]},
            "allowed_origins entry 'app.example' is not an origin: write it as a browser sends",
        ),
        (
            {"allowed_origins": ["https://app.example/x", "https://b.example?q", "http://a:x"]},
            (
                r"entry 'https://app.example/x' is not .*entry 'https://b.example\?q' is not .*"
                r"entry 'http://a:x' is not"
            ),
        ),
        ({"allowed_origins": ["https://u@a.example"]}, "'https://u@a.example' is not an origin"),
        ({"allowed_hosts": ["localhost:8000"]}, "allowed_hosts entry 'localhost:8000' is not"),
        ({"allowed_hosts": ["[::1]", ""]}, r"'\[::1\]' is not a host name.*'' is not a host"),
    ],
)
def test_bad_options_are_refused_when_the_app_is_built(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        asgi_app(hello, **options)


def test_something_that_is_not_an_agent_is_refused_as_every_entry_point_refuses_it() -> None:
    with pytest.raises(UsageError, match=r"int is not an agent: it is a int \(42\), which cannot"):
        asgi_app(42)  # type: ignore[arg-type]
    called = hello(cast("Ctx", None))
    with pytest.raises(
        UsageError,
        match=r"is not an agent: it is a coroutine, an agent already called: pass the function "
        r"itself, not a call",
    ):
        asgi_app(called)  # type: ignore[arg-type]
    called.close()


def test_a_state_that_is_not_a_type_is_refused_when_the_app_is_built() -> None:
    with pytest.raises(
        UsageError,
        match=r"the state type must be one the client's state can be read into .*, not a dict "
        r"\(\{'tasks': \[\]\}\); pass the class itself$",
    ):
        asgi_app(hello, state=cast("type[JsonValue]", {"tasks": []}))


def test_head_at_capabilities_answers_their_headers_without_a_body() -> None:
    exchange = drive(call(asgi_app(hello, capabilities=True), method="HEAD", path="/capabilities"))

    assert exchange.status == 200
    assert int(exchange.headers["content-length"]) > 0
    assert exchange.body == b""


def test_an_allowed_origin_reads_the_capabilities_and_why_a_post_there_is_refused() -> None:
    app = asgi_app(hello, allowed_origins=["https://app.example"])
    origin = {**SITE, "origin": "https://app.example"}
    served = drive(call(app, method="GET", path="/agent/capabilities/", headers=origin))
    posted = drive(call(app, path="/agent/capabilities", headers=origin))

    assert served.status == 200
    assert served.json()["humanInTheLoop"] == {"supported": True, "interrupts": True}
    assert served.headers["access-control-allow-origin"] == "https://app.example"
    assert posted.status == 405
    assert posted.headers["access-control-allow-origin"] == "https://app.example"


def test_a_function_agent_declares_no_tools_even_before_the_tool_loop_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "agui.agents.loop", raising=False)

    capabilities = asgi_app(hello).capabilities

    assert capabilities is not None
    assert capabilities.tools is None
    assert "agui.agents.loop" not in sys.modules


def test_a_plain_function_is_refused_when_the_app_is_built_as_run_refuses_it() -> None:
    def greet(ctx: agui.RunContext[object]) -> None:
        ctx.say("Hello!")

    with pytest.raises(
        UsageError, match="greet is not an agent: it is a function that is not async"
    ):
        asgi_app(greet)  # type: ignore[arg-type]
    with pytest.raises(
        UsageError, match="greet is not an agent: it is a function that is not async"
    ):
        asyncio.run(agui.testing.collect(greet, RunAgentInput(thread_id="t", run_id="r")))  # type: ignore[arg-type]


# -- the application's hooks failing --------------------------------------------------------------

ORIGIN = {**SITE, "origin": "https://app.example"}


def assert_hook_failed(exchange: Exchange, hook: str, error: str) -> None:
    assert exchange.status == 500
    assert exchange.json() == {
        "code": "HOOK_FAILED",
        "message": f"the endpoint's {hook} hook raised {error}; "
        "the traceback is on the agui.asgi log",
    }
    assert exchange.headers["access-control-allow-origin"] == "https://app.example"


def test_an_authorize_hook_that_raises_is_a_json_500_naming_it_and_its_error_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def authorize(headers: Mapping[str, str]) -> bool:
        return headers["x-api-key"] == "secret"

    app = asgi_app(hello, authorize=authorize, allowed_origins=["https://app.example"])
    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "authorize", "KeyError")
    assert "x-api-key" not in exchange.body.decode()
    assert exchange.reads == 0
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failed] == [
        "the endpoint's authorize hook raised; answering 500"
    ]
    assert failed[0].exc_info is not None
    assert isinstance(failed[0].exc_info[1], KeyError)


def test_an_async_authorize_hook_that_raises_is_a_json_500() -> None:
    async def authorize(_headers: Mapping[str, str]) -> bool:
        await asyncio.sleep(0)
        message = "the key store is down"
        raise ConnectionError(message)

    app = asgi_app(hello, authorize=authorize, allowed_origins=["https://app.example"])
    exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "authorize", "ConnectionError")
    assert "key store" not in exchange.body.decode()


@pytest.mark.parametrize("raised", [KeyboardInterrupt, SystemExit, asyncio.CancelledError])
@pytest.mark.parametrize("hook", ["authorize", "transformers"])
def test_a_hook_raising_a_base_exception_of_its_own_is_a_json_500_too(
    hook: str, raised: type[BaseException]
) -> None:
    def failing(*_: object) -> Never:
        raise raised

    options: dict[str, Any] = {hook: failing, "allowed_origins": ["https://app.example"]}
    exchange = drive(call(asgi_app(hello, **options), headers=ORIGIN))

    assert_hook_failed(exchange, hook, raised.__qualname__)


def test_a_request_cancelled_while_its_async_authorize_hook_waits_stays_cancelled() -> None:
    entered = asyncio.Event()

    async def authorize(_headers: Mapping[str, str]) -> bool:
        entered.set()
        await asyncio.sleep(30)  # the server shuts down meanwhile
        return True

    app = asgi_app(hello, authorize=authorize)

    async def main() -> bool:
        request = asyncio.ensure_future(call(app))
        await entered.wait()
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
        return request.cancelled()

    assert drive(main()) is True


def test_a_transformer_factory_that_raises_is_a_json_500_and_the_agent_never_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ran.append(ctx.run_id)

    def factory() -> list[Transformer]:
        message = "no chain today"
        raise RuntimeError(message)

    app = asgi_app(agent, transformers=factory, allowed_origins=["https://app.example"])
    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "transformers", "RuntimeError")
    assert ran == []
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        "the endpoint's transformers hook raised; answering 500"
    ]


def test_a_transformer_factory_that_returns_one_transformer_is_a_500_with_the_fix_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chain = FilterToolCalls({"lookup"})
    app = asgi_app(
        hello,
        transformers=lambda: cast("list[Transformer]", chain),
        allowed_origins=["https://app.example"],
    )
    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "transformers", "UsageError")
    logged = caplog.records[-1].exc_info
    assert logged is not None
    assert "got one FilterToolCalls: pass [transformer]" in str(logged[1])


def test_a_capabilities_function_that_raises_or_returns_another_type_is_a_json_500() -> None:
    def failing(_derived: AgentCapabilities) -> AgentCapabilities:
        message = "no name yet"
        raise LookupError(message)

    def wrong(_derived: AgentCapabilities) -> AgentCapabilities:
        return cast("AgentCapabilities", {"transport": {}})

    raised, returned = (
        drive(
            call(
                asgi_app(hello, capabilities=declare, allowed_origins=["https://app.example"]),
                method="GET",
                path="/capabilities",
                headers=ORIGIN,
            )
        )
        for declare in (failing, wrong)
    )

    assert_hook_failed(raised, "capabilities", "LookupError")
    assert_hook_failed(returned, "capabilities", "UsageError")


def test_a_capabilities_function_is_not_called_for_a_request_authorize_refuses() -> None:
    called: list[AgentCapabilities] = []

    def declare(
        derived: AgentCapabilities,
    ) -> AgentCapabilities:
        called.append(derived)
        return derived

    app = asgi_app(hello, capabilities=declare, authorize=lambda _headers: False)
    refused = drive(call(app, method="GET", path="/capabilities"))

    assert refused.status == 401
    assert called == []
