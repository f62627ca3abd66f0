"""Reading the request body: type, length, encoding, JSON, the run input, timeouts, logging."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable

import pytest
from pydantic import JsonValue

from agui import RunAgentInput
from agui.asgi import asgi_app
from agui.asgi._admission import MAX_LISTED_PROBLEMS, Message
from agui.events import (
    EventType,
)
from asgi_calls import BODY, JSON_HEADERS, Ctx, Exchange, call, drive, hello


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
