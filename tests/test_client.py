"""agui.client: the SSE parser, and the HTTP client against a real local server."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import json
import socket
import sys
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    MutableMapping,
    Sequence,
)
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue

import agui
from agui import EventType, ProtocolViolation, RunAgentInput, encode_sse
from agui.client import MAX_FRAME_BYTES, AGUIClient, SSEParser
from agui.errors import (
    DecodeError,
    FrameTooLarge,
    HTTPStatusError,
    MalformedEvent,
    UnknownMemberWarning,
    UsageError,
)
from agui.events import (
    CustomEvent,
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.messages import AssistantMessage, FunctionCall, ToolCall, UserMessage
from agui.runs import MemoryRunLog
from agui.sse import event_json
from agui.testing import serving as serving_in_thread
from agui.verify import Rule
from agui.wire import parse_event
from asgi_calls import Cutting

# -- the SSE parser --------------------------------------------------------------------------

FRAMING_CASES: list[tuple[str, bytes, list[str]]] = [
    ("lf", b"data: a\n\ndata: b\n\n", ["a", "b"]),
    ("crlf", b"data: a\r\n\r\ndata: b\r\n\r\n", ["a", "b"]),
    ("lone-cr", b"data: a\r\rdata: b\r\r", ["a", "b"]),
    ("mixed-endings", b"data: a\r\n\ndata: b\r\r\ndata: c\n\r", ["a", "b", "c"]),
    ("no-space-after-colon", b"data:a\n\n", ["a"]),
    ("only-one-space-removed", b"data:  a\n\n", [" a"]),
    ("colon-in-value", b'data: {"a":"b:c"}\n\n', ['{"a":"b:c"}']),
    ("multi-line-data", b"data: a\ndata: b\ndata:c\n\n", ["a\nb\nc"]),
    ("empty-data-line-inside", b"data: a\ndata:\ndata: b\n\n", ["a\n\nb"]),
    ("bare-data-field", b"data\n\n", [""]),
    ("empty-data-value", b"data:\n\n", [""]),
    ("comments-ignored", b": ping\n\n:\n\ndata: a\n: inside\n\n", ["a"]),
    ("event-id-retry-ignored", b"event: x\nid: 1\nretry: 10\ndata: a\n\n", ["a"]),
    ("block-without-data-ignored", b"event: x\nid: 1\n\n", []),
    ("unknown-field-ignored", b"colour: red\ndata: a\n\n", ["a"]),
    ("field-name-is-exact", b"data : a\nDATA: b\n\n", []),
    ("blank-lines-between-frames", b"\n\n\ndata: a\n\n\n\ndata: b\n\n", ["a", "b"]),
    ("unfinished-frame-held", b"data: a\n\ndata: b\n", ["a"]),
    ("unfinished-line-held", b"data: a\n\ndata: b", ["a"]),
    ("leading-bom-dropped", b"\xef\xbb\xbfdata: a\n\n", ["a"]),
    ("later-bom-kept", b"data: a\n\n\xef\xbb\xbfdata: b\n\n", ["a"]),
    ("utf-8-decoded", "data: héllo 世界\n\n".encode(), ["héllo 世界"]),
    ("invalid-utf-8-replaced", b"data: a\xffb\n\n", ["a\ufffdb"]),
    ("empty-stream", b"", []),
]


@pytest.mark.parametrize(
    ("stream", "frames"),
    [(stream, frames) for _, stream, frames in FRAMING_CASES],
    ids=[name for name, _, _ in FRAMING_CASES],
)
def test_parser_reads_each_framing_case(stream: bytes, frames: list[str]) -> None:
    assert SSEParser().feed(stream) == frames


@pytest.mark.parametrize(
    ("stream", "frames"),
    [(stream, frames) for _, stream, frames in FRAMING_CASES],
    ids=[name for name, _, _ in FRAMING_CASES],
)
def test_parser_reads_each_framing_case_one_byte_at_a_time(
    stream: bytes, frames: list[str]
) -> None:
    parser = SSEParser()
    assert [frame for i in range(len(stream)) for frame in parser.feed(stream[i : i + 1])] == frames


def test_a_cr_at_the_end_of_a_chunk_pairs_with_an_lf_at_the_start_of_the_next() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n") == []  # the LF of the CRLF, not an empty line
    assert parser.feed(b"\r\n") == ["a"]


def test_an_empty_chunk_changes_nothing() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"") == []
    assert parser.feed(b"\n\n") == ["a"]


def test_incomplete_reports_a_partial_line_or_undelivered_data() -> None:
    parser = SSEParser()
    states = [parser.incomplete]
    for chunk in (b"data: a", b"\n", b"\n: comment\n"):
        parser.feed(chunk)
        states.append(parser.incomplete)
    assert states == [False, True, True, False]


def test_parser_reads_back_every_frame_agui_encodes() -> None:
    events: list[Event] = [
        RunStartedEvent(thread_id="t", run_id="r"),
        TextMessageStartEvent(message_id="m"),
        TextMessageContentEvent(message_id="m", delta="line one\nline two\r\n\u2028"),
        TextMessageEndEvent(message_id="m"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    stream = b"".join(encode_sse(event) for event in events)
    assert SSEParser().feed(stream) == [event_json(event).decode() for event in events]


_LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])
_TEXT = st.text(st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]), max_size=12)


def _prefixed(prefix: bytes) -> st.SearchStrategy[bytes]:
    return _TEXT.map(lambda text: prefix + text.encode())


_LINE = st.one_of(
    _prefixed(b"data: "),
    _prefixed(b"data:"),
    _prefixed(b": "),
    st.sampled_from([b"", b"event: x", b"id: 3", b"retry: 5", b"data"]),
)
_STREAMS = st.lists(st.tuples(_LINE, _LINE_ENDS), max_size=30).map(
    lambda lines: b"".join(line + end for line, end in lines)
)


@given(stream=st.one_of(_STREAMS, st.binary(max_size=200)), data=st.data())
def test_any_chunking_of_a_stream_gives_the_same_frames(stream: bytes, data: st.DataObject) -> None:
    whole = SSEParser()
    expected = whole.feed(stream)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    chunked = SSEParser()
    frames: list[str] = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        frames += chunked.feed(stream[start:end])
    assert frames == expected
    assert chunked.incomplete == whole.incomplete


def _frames_or_error(parser: SSEParser, chunks: list[bytes]) -> tuple[list[str], str | None]:
    frames: list[str] = []
    try:
        for chunk in chunks:
            frames += parser.feed(chunk)
    except FrameTooLarge as error:
        return frames, str(error)
    return frames, None


@given(stream=_STREAMS, data=st.data())
def test_where_a_frame_grew_too_large_does_not_depend_on_the_chunking(
    stream: bytes, data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    whole_frames, whole_error = _frames_or_error(SSEParser(max_frame_bytes=12), [stream])
    frames, error = _frames_or_error(SSEParser(max_frame_bytes=12), pieces)
    assert error == whole_error
    if error is None:
        assert frames == whole_frames


def test_a_frame_over_the_limit_raises_frame_too_large() -> None:
    parser = SSEParser(max_frame_bytes=16)
    parser.feed(b"data: 0123\n")
    with pytest.raises(FrameTooLarge, match="grew past 16 bytes without ending") as caught:
        parser.feed(b"data: 0123456789\n")
    assert caught.value.code == "FRAME_TOO_LARGE"
    assert isinstance(caught.value, DecodeError)


def test_a_frame_too_large_names_its_frame_and_the_byte_it_began_at() -> None:
    parser = SSEParser(max_frame_bytes=16)
    parser.feed(b"data: a\n\n: ping\n\ndata: b\r\n\r")
    where = r"\(frame 2 of the stream, from byte 28\); the stream is cut off"
    with pytest.raises(FrameTooLarge, match=where) as caught:
        parser.feed(b"\ndata: 0123456789abcdef")
    assert (caught.value.frame, caught.value.offset, caught.value.source) == (2, 28, None)


def test_a_line_over_the_limit_raises_before_it_ends() -> None:
    parser = SSEParser(max_frame_bytes=16)
    with pytest.raises(FrameTooLarge, match="Raise max_frame_bytes"):
        parser.feed(b": a very long comment that never ends")


def test_the_limit_applies_per_frame_not_per_chunk() -> None:
    parser = SSEParser(max_frame_bytes=16)
    frames = parser.feed(b"data: 0123456\n\n" * 100)
    assert frames == ["0123456"] * 100


def test_the_default_limit_is_the_official_clients_ten_megabytes() -> None:
    assert MAX_FRAME_BYTES == 10 * 1024 * 1024


def test_a_limit_that_is_not_positive_is_refused() -> None:
    with pytest.raises(UsageError, match="max_frame_bytes must be positive, not 0"):
        SSEParser(max_frame_bytes=0)
    with pytest.raises(UsageError, match="max_frame_bytes must be positive, not True"):
        SSEParser(max_frame_bytes=True)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"url": "127.0.0.1:8000/agent"}, "the url must be an http:// or https:// URL"),
        ({"url": "ftp://example.com/agent"}, "the url must be an http:// or https:// URL"),
        ({"url": "http:///agent"}, "the url must be an http:// or https:// URL"),
        ({"timeout": 0}, "timeout must be a positive number of seconds or None, not 0"),
        ({"timeout": "30"}, "timeout must be a positive number of seconds or None, not '30'"),
        ({"reconnects": -1}, "reconnects must be a whole number, 0 or more, not -1"),
        ({"reconnects": True}, "reconnects must be a whole number, 0 or more, not True"),
        ({"reconnect_delay": float("nan")}, "reconnect_delay must be zero or more seconds"),
        (
            {"url": "x", "timeout": -1},
            r"^AGUIClient: the url must be .*; timeout must be a positive number",
        ),
    ],
)
def test_a_client_with_options_it_cannot_use_is_refused_when_it_is_made(
    options: dict[str, Any], problem: str
) -> None:
    given: dict[str, Any] = {"url": "http://127.0.0.1:8000/agent"} | options

    with pytest.raises(UsageError, match=problem):
        AGUIClient(**given)


def test_a_client_takes_https_urls_no_timeout_and_no_reconnects() -> None:
    client = AGUIClient("https://agent.example/agent", timeout=None, reconnects=0)

    assert (client.url, client.timeout, client.reconnects) == (
        "https://agent.example/agent",
        None,
        0,
    )


# -- HTTPStatusError -------------------------------------------------------------------------


def test_http_status_error_reads_an_agui_json_error_body() -> None:
    error = HTTPStatusError(
        422, '{"code":"INVALID_INPUT","message":"bad input"}', url="http://x/agent"
    )
    assert str(error) == "HTTP 422 from http://x/agent: INVALID_INPUT: bad input"
    assert (error.status, error.server_code, error.server_message) == (
        422,
        "INVALID_INPUT",
        "bad input",
    )
    assert error.payload == {"code": "INVALID_INPUT", "message": "bad input"}


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("", "HTTP 502: (empty body)"),
        ("Bad gateway\n", "HTTP 502: Bad gateway"),
        ('{"detail":"nope"}', 'HTTP 502: {"detail":"nope"}'),
        ('{"code":5,"message":"m"}', 'HTTP 502: {"code":5,"message":"m"}'),
        ("x" * 600, "HTTP 502: " + "x" * 500 + "..."),
    ],
    ids=["empty", "text", "json-without-code", "json-with-wrong-types", "long-text"],
)
def test_http_status_error_shows_other_bodies_as_text(body: str, shown: str) -> None:
    error = HTTPStatusError(502, body)
    assert str(error) == shown
    assert error.server_code is None


# -- the client, against a local server ------------------------------------------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

INPUT = RunAgentInput(thread_id="t", run_id="r")

# Prebuilt answers, framed the ways a server other than agui might frame them.
CRLF_STREAM = [
    b": connected\r\n\r\n",
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\r\n\r\n',
    b'data: {"type":"TEXT_MESSAGE_START",\r\ndata: "messageId":"m1","role":"assistant"}\r\n',
    b"\r\n: keep-alive\r\n\r\nevent: message\r\nid: 3\r\n",
    b'data:{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel',
    b'lo"}\r\n\r\ndata: {"type":"TEXT_MESSAGE_END","messageId":"m1"}\r',
    b'\n\r\ndata: {"type":"STATE_SNAPSHOT","snapshot":{"count":1}}\r\n\r\n',
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\r\n\r\n',
]
TRUNCATED_STREAM = [
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
    b'data: {"type":"TEXT_MESSAGE_START","messageId":"m1"}\n\n',
    b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel',
]
UNKNOWN_TYPE_STREAM = [
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
    b'data: {"type":"FUTURE_EVENT","x":1}\n\n',
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r","colour":"red"}\n\n',
]
UNORDERED_STREAM = [
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
    b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}\n\n',
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n',
]
MALFORMED_STREAM = [
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
    b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":5}\n\n',
]
RESULT_FOR_EARLIER_CALL = [
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r2"}\n\n',
    (
        b'data: {"type":"TOOL_CALL_RESULT","messageId":"r2-msg-1","toolCallId":"c1",'
        b'"content":"yes","role":"tool"}\n\n'
    ),
    b'data: {"type":"TEXT_MESSAGE_START","messageId":"r2-msg-2","role":"assistant"}\n\n',
    b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"r2-msg-2","delta":"Booked."}\n\n',
    b'data: {"type":"TEXT_MESSAGE_END","messageId":"r2-msg-2"}\n\n',
    b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r2"}\n\n',
]
RUN_ERROR_STREAM = [
    b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
    b'data: {"type":"RUN_ERROR","message":"the agent failed","code":"AGENT_ERROR"}\n\n',
]
ERROR_422 = b'{"code":"INVALID_INPUT","message":"the run input is invalid: \'/runId\': missing"}'


class Recorder:
    """A raw ASGI app that replays a prebuilt answer per path and records each request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {bytes(k).decode(): bytes(v).decode() for k, v in scope["headers"]}
        path: str = scope["path"]
        self.requests.append((scope["method"], path, headers, body))
        if path == "/invalid":
            await _answer(send, 422, b"application/json", [ERROR_422])
        elif path == "/text-error":
            await _answer(send, 500, b"text/plain", [b"Internal Server Error"])
        elif path == "/moved":
            await send(
                {
                    "type": "http.response.start",
                    "status": 307,
                    "headers": [(b"location", b"/crlf")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
        elif path == "/huge-error":
            await _answer(send, 503, b"text/plain", [b"x" * 50_000] * 3)
        elif path in PROTO_TYPES:
            await _answer(send, 200, PROTO_TYPES[path], [b"\x00\x00"])
        elif path == "/page":
            await _answer(send, 200, b"text/html; charset=utf-8", [b"<html>Sign in</html>"])
        elif path == "/untyped":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"".join(CRLF_STREAM)})
        else:
            await _answer(send, 200, b"text/event-stream", STREAMS[path])


PROTO_TYPES = {
    "/proto": b"application/vnd.ag-ui.event+proto",
    "/proto-with-parameters": b"Application/Vnd.AG-UI.Event+Proto; charset=binary",
}
STREAMS: dict[str, Sequence[bytes]] = {
    "/crlf": CRLF_STREAM,
    "/truncated": TRUNCATED_STREAM,
    "/unknown": UNKNOWN_TYPE_STREAM,
    "/unordered": UNORDERED_STREAM,
    "/malformed": MALFORMED_STREAM,
    "/resume": RESULT_FOR_EARLIER_CALL,
    "/run-error": RUN_ERROR_STREAM,
    "/empty": [],
}


async def _answer(send: Send, status: int, media: bytes, chunks: Sequence[bytes]) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", media)]}
    )
    for chunk in chunks:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await asyncio.sleep(0)
    await send({"type": "http.response.body", "body": b""})


@contextlib.asynccontextmanager
async def serving(app: Recorder) -> AsyncGenerator[str, None]:
    """Serve `app` with uvicorn on 127.0.0.1 on a free port; yield the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(
        app, http="h11", ws="none", lifespan="off", log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(1000):  # at most ten seconds; uvicorn offers no event to wait on
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        if not server.started:
            if task.done():
                task.result()  # raises what stopped the server from starting
            pytest.fail("uvicorn did not start within ten seconds")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def against_server(test: Callable[[str, Recorder], Awaitable[None]]) -> Recorder:
    """Run `test(base_url, app)` against a fresh recorder app served for the test."""
    app = Recorder()

    async def main() -> None:
        async with serving(app) as base:
            await test(base, app)

    asyncio.run(main())
    return app


def test_the_client_posts_the_input_as_the_official_client_does() -> None:
    sent = RunAgentInput(
        thread_id="t",
        run_id="r",
        state={"count": 0},
        messages=[UserMessage(id="u1", content="Hi")],
    )

    async def test(base: str, _app: Recorder) -> None:
        client = AGUIClient(
            base + "/crlf",
            headers={"Authorization": "Bearer s3cret", "Accept": "application/json"},
        )
        await client.run(sent)

    app = against_server(test)
    [(method, path, headers, body)] = app.requests
    assert (method, path) == ("POST", "/crlf")
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "text/event-stream"
    assert headers["authorization"] == "Bearer s3cret"
    assert json.loads(body) == {
        "threadId": "t",
        "runId": "r",
        "state": {"count": 0},
        "messages": [{"id": "u1", "role": "user", "content": "Hi"}],
        "protocolVersion": "1.0",
    }


@pytest.mark.parametrize(("given", "posted"), [(None, "1.0"), ("1.1", "1.1")])
def test_the_client_declares_protocol_1_0_unless_the_input_gives_a_version(
    given: str | None, posted: str
) -> None:
    sent = RunAgentInput(thread_id="t", run_id="r", protocol_version=given)

    async def test(base: str, _app: Recorder) -> None:
        await AGUIClient(base + "/crlf").run(sent)

    [(_, _, _, body)] = against_server(test).requests
    assert json.loads(body)["protocolVersion"] == posted
    assert sent.protocol_version == given


def test_agui_s_own_client_gets_the_1_0_stream_from_an_auto_endpoint() -> None:
    async def agent(ctx: agui.RunContext[JsonValue]) -> None:
        with ctx.subagent("researcher") as sub:
            sub.say("Found it.")

    with serving_in_thread(agui.asgi_app(agent)) as url:
        events = asyncio.run(AGUIClient(url).run(RunAgentInput(thread_id="t", run_id="r")))

    assert [e.type for e in events if e.type.startswith("SUBAGENT_")] == [
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
    ]


def test_the_client_reads_crlf_framing_comments_and_multi_line_data() -> None:
    events: list[Event] = []

    async def test(base: str, _app: Recorder) -> None:
        events.extend(await AGUIClient(base + "/crlf").run(INPUT))

    against_server(test)
    assert [event.type for event in events] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.STATE_SNAPSHOT,
        EventType.RUN_FINISHED,
    ]
    assert events[1] == TextMessageStartEvent(message_id="m1", role="assistant")
    assert events[2] == TextMessageContentEvent(message_id="m1", delta="Hello")


def test_a_307_redirect_is_followed_with_the_same_post() -> None:
    async def test(base: str, app: Recorder) -> None:
        events = await AGUIClient(base + "/moved").run(INPUT)
        assert events[-1].type == "RUN_FINISHED"
        assert [(method, path) for method, path, _, _ in app.requests] == [
            ("POST", "/moved"),
            ("POST", "/crlf"),
        ]
        assert app.requests[1][3] == app.requests[0][3]

    against_server(test)


def test_the_client_yields_events_as_an_async_iterator() -> None:
    types: list[str] = []

    async def test(base: str, _app: Recorder) -> None:
        async with AGUIClient(base + "/crlf") as client:
            types.extend([event.type async for event in client.stream(INPUT)])

    against_server(test)
    assert types[0] == "RUN_STARTED"
    assert types[-1] == "RUN_FINISHED"


def test_fold_applies_the_stream_on_top_of_the_input() -> None:
    sent = RunAgentInput(thread_id="t", run_id="r", messages=[UserMessage(id="u1", content="Hi")])

    async def test(base: str, _app: Recorder) -> None:
        folded = await AGUIClient(base + "/crlf").fold(sent)
        assert [(m.role, m.content) for m in folded.messages] == [
            ("user", "Hi"),
            ("assistant", "Hello"),
        ]
        assert folded.state == {"count": 1}
        assert folded.outcome is None
        assert folded.error is None

    against_server(test)


def test_a_run_error_is_an_event_not_an_exception() -> None:
    async def test(base: str, _app: Recorder) -> None:
        folded = await AGUIClient(base + "/run-error").fold(INPUT)
        assert folded.error is not None
        assert (folded.error.code, folded.error.message) == ("AGENT_ERROR", "the agent failed")

    against_server(test)


def test_a_422_raises_http_status_error_with_the_json_body() -> None:
    async def test(base: str, _app: Recorder) -> None:
        client = AGUIClient(base + "/invalid")
        with pytest.raises(
            HTTPStatusError, match=r"HTTP 422 from .*/invalid: INVALID_INPUT: "
        ) as e:
            await client.run(INPUT)
        assert e.value.status == 422
        assert e.value.server_code == "INVALID_INPUT"
        assert e.value.server_message == "the run input is invalid: '/runId': missing"
        assert e.value.code == "HTTP_STATUS_ERROR"

    against_server(test)


def test_a_non_json_error_body_is_shown_as_text() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(HTTPStatusError, match=r"HTTP 500 from .*: Internal Server Error"):
            await AGUIClient(base + "/text-error").run(INPUT)

    against_server(test)


def test_only_the_first_64_kib_of_an_error_body_are_read() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(HTTPStatusError, match=r"HTTP 503 from .*: x{500}\.\.\.$") as caught:
            await AGUIClient(base + "/huge-error").run(INPUT)
        assert caught.value.body == "x" * 64 * 1024

    against_server(test)


def test_a_stream_without_a_terminal_event_raises_truncated() -> None:
    received: list[str] = []

    async def read(stream: AsyncIterator[Event]) -> None:
        async for event in stream:
            received.append(event.type)  # noqa: PERF401 - keeps what arrived before the error

    async def test(base: str, _app: Recorder) -> None:
        stream = AGUIClient(base + "/truncated").stream(INPUT)
        with pytest.raises(ProtocolViolation, match="ended without a terminal event") as caught:
            await read(stream)
        assert caught.value.rule is Rule.TRUNCATED
        assert "run 'r' is still active; the last frame was cut off (2 frames read)" in str(
            caught.value
        )

    against_server(test)
    assert received == ["RUN_STARTED", "TEXT_MESSAGE_START"]


@pytest.mark.parametrize("verify", [True, False], ids=["verified", "unverified"])
def test_an_empty_stream_is_truncated_even_unverified(verify: bool) -> None:  # noqa: FBT001
    async def test(base: str, _app: Recorder) -> None:
        client = AGUIClient(base + "/empty", verify=verify)
        with pytest.raises(ProtocolViolation, match="no run was started"):
            await client.run(INPUT)

    against_server(test)


def test_an_unknown_event_type_is_skipped_with_a_warning() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.warns(UnknownMemberWarning) as caught:
            events = await AGUIClient(base + "/unknown").run(INPUT)
        assert [event.type for event in events] == ["RUN_STARTED", "RUN_FINISHED"]
        messages = sorted(str(warning.message) for warning in caught)
        assert messages[0].startswith("Dropped frame 1 from http://")
        assert "unknown event type 'FUTURE_EVENT'" in messages[0]
        assert messages[1] == "Removed unrecognised material at '/colour' on RUN_FINISHED"

    against_server(test)


def test_a_decode_hook_reads_each_frame_and_may_drop_one() -> None:
    read: list[str] = []

    def decode(data: str) -> Event | None:
        read.append(data)
        wire = json.loads(data)
        if wire["type"] == "FUTURE_EVENT":
            return CustomEvent(name="future", value=wire["x"])
        if wire["type"] == "RUN_FINISHED":
            wire.pop("colour")
        return None if wire["type"] == "RUN_STARTED" else parse_event(wire)

    async def test(base: str, _app: Recorder) -> None:
        client = AGUIClient(base + "/unknown", verify=False)
        events = [event async for event in client.stream(INPUT, decode=decode)]
        assert [event.type for event in events] == ["CUSTOM", "RUN_FINISHED"]
        assert events[0] == CustomEvent(name="future", value=1)

    against_server(test)
    assert len(read) == len(UNKNOWN_TYPE_STREAM)


def test_a_decode_hook_s_refusal_is_named_at_its_frame() -> None:
    def decode(data: str) -> Event | None:
        if "FUTURE_EVENT" in data:
            refusal = "no thanks"
            raise MalformedEvent(refusal, path="/type")
        return parse_event(data)

    async def test(base: str, _app: Recorder) -> None:
        client = AGUIClient(base + "/unknown")
        with pytest.raises(MalformedEvent, match=r"frame 1 from http://.*: no thanks"):
            [event async for event in client.stream(INPUT, decode=decode)]

    against_server(test)


def test_an_ordering_violation_is_named_at_its_frame() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(ProtocolViolation, match=r"frame 1 \(TEXT_MESSAGE_CONTENT\)") as caught:
            await AGUIClient(base + "/unordered").run(INPUT)
        assert caught.value.rule is Rule.MESSAGE_NOT_OPEN

    against_server(test)


def test_verify_false_lets_an_unordered_stream_through() -> None:
    async def test(base: str, _app: Recorder) -> None:
        events = await AGUIClient(base + "/unordered", verify=False).run(INPUT)
        assert [event.type for event in events] == [
            "RUN_STARTED",
            "TEXT_MESSAGE_CONTENT",
            "RUN_FINISHED",
        ]

    against_server(test)


def test_a_result_may_answer_a_call_from_the_input_history() -> None:
    call = ToolCall(id="c1", function=FunctionCall(name="confirm", arguments="{}"))
    sent = RunAgentInput(
        thread_id="t",
        run_id="r2",
        messages=[AssistantMessage(id="r1-msg-1", tool_calls=[call])],
    )

    async def test(base: str, _app: Recorder) -> None:
        folded = await AGUIClient(base + "/resume").fold(sent)
        assert [(m.role, m.id) for m in folded.messages] == [
            ("assistant", "r1-msg-1"),
            ("tool", "r2-msg-1"),
            ("assistant", "r2-msg-2"),
        ]

    against_server(test)


def test_a_malformed_event_is_fatal_and_names_its_frame() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(MalformedEvent, match=r"frame 1 from .* field '/delta'") as caught:
            await AGUIClient(base + "/malformed").run(INPUT)
        assert caught.value.path == "/delta"

    against_server(test)


def test_a_frame_over_the_clients_limit_raises_naming_where_it_is() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(
            FrameTooLarge,
            match=r"^the stream from http://.*/crlf: an SSE frame grew past 40 bytes .*"
            r"\(frame 0 of the stream, from byte 15\); the stream is cut off",
        ):
            await AGUIClient(base + "/crlf", max_frame_bytes=40).run(INPUT)

    against_server(test)


@pytest.mark.parametrize("path", list(PROTO_TYPES))
def test_a_protobuf_answer_is_refused_clearly_whatever_its_parameters(path: str) -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(DecodeError, match="protobuf binding"):
            await AGUIClient(base + path).run(INPUT)

    against_server(test)


def test_an_answer_that_is_not_an_event_stream_names_the_type_it_has() -> None:
    async def test(base: str, _app: Recorder) -> None:
        with pytest.raises(
            DecodeError,
            match=r"/page answered HTTP 200 with text/html; charset=utf-8, not an event stream: "
            r"an AG-UI endpoint answers a run with text/event-stream",
        ) as caught:
            await AGUIClient(base + "/page").run(INPUT)
        assert not isinstance(caught.value, ProtocolViolation)

    against_server(test)


def test_an_answer_without_a_content_type_is_read_as_a_stream() -> None:
    async def test(base: str, _app: Recorder) -> None:
        events = await AGUIClient(base + "/untyped").run(INPUT)
        assert events[-1].type == "RUN_FINISHED"

    against_server(test)


def test_stopping_early_closes_the_stream() -> None:
    async def test(base: str, _app: Recorder) -> None:
        client = AGUIClient(base + "/crlf")
        async with contextlib.aclosing(client.stream(INPUT)) as stream:
            first = await anext(stream)
        assert first.type == "RUN_STARTED"

    against_server(test)


def test_one_client_serves_many_runs_and_closes_its_pool() -> None:
    async def test(base: str, app: Recorder) -> None:
        async with AGUIClient(base + "/crlf") as client:
            await client.run(INPUT)
            await client.run(INPUT)
            assert len(app.requests) == 2
        await client.aclose()  # closing twice is harmless

    against_server(test)


def test_a_given_http_client_is_used_and_left_open() -> None:
    async def test(base: str, app: Recorder) -> None:
        async with httpx.AsyncClient(headers={"x-trace": "42"}) as http:
            async with AGUIClient(base + "/crlf", http_client=http) as client:
                await client.run(INPUT)
            assert not http.is_closed
        assert app.requests[0][2]["x-trace"] == "42"

    against_server(test)


def test_a_connection_failure_is_httpx_own_error() -> None:
    async def main() -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        sock.close()  # nothing listens there now
        with pytest.raises(httpx.ConnectError):
            await AGUIClient(f"http://127.0.0.1:{port}/").run(INPUT)

    asyncio.run(main())


def test_without_httpx_the_client_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(ImportError, match=r'pip install "agui-server\[client\]"'):
        AGUIClient("http://127.0.0.1/")
    assert SSEParser().feed(b"data: a\n\n") == ["a"]  # the parser needs nothing


# -- resuming a durable run ------------------------------------------------------------------


async def ticking(ctx: agui.RunContext[Any]) -> None:
    for number in range(30):
        ctx.emit(CustomEvent(name="tick", value=number))
        await asyncio.sleep(0.01)


RESUMED = RunAgentInput(thread_id="t-resume", run_id="r-resume")


def test_a_stream_cut_mid_run_is_resumed_and_read_as_one_run() -> None:
    app = Cutting(agui.asgi_app(ticking, runs=MemoryRunLog()), {"POST": 3})

    with serving_in_thread(app) as url:
        resumed = asyncio.run(AGUIClient(url, reconnect_delay=0.01).run(RESUMED))
        stored = httpx.get(url + "runs/r-resume/events", timeout=30).content
        whole = [agui.parse_event(data) for data in SSEParser().feed(stored)]

    assert [e.type for e in resumed] == [e.type for e in whole]
    assert [e.value for e in resumed if isinstance(e, CustomEvent)] == list(range(30))
    post, get = app.requests[:2]
    assert post == ("POST", "/", None)
    assert get[:2] == ("GET", "/runs/r-resume/events")
    assert get[2] is not None
    assert int(get[2]) >= 2


def test_an_agui_endpoint_with_a_query_string_resumes_a_run_whose_id_needs_quoting() -> None:
    app = Cutting(agui.asgi_app(ticking, runs=MemoryRunLog()), {"POST": 3})
    run = RunAgentInput(thread_id="t-quoted", run_id="r a?b")

    with serving_in_thread(app) as url:
        resumed = asyncio.run(AGUIClient(url + "?key=1", reconnect_delay=0.01).run(run))

    assert [e.value for e in resumed if isinstance(e, CustomEvent)] == list(range(30))
    assert app.requests[1][:2] == ("GET", "/runs/r a?b/events")


def test_resuming_gives_up_after_its_tries_in_a_row_bring_nothing() -> None:
    app = Cutting(agui.asgi_app(ticking, runs=MemoryRunLog()), {"POST": 2, "GET": 0})

    async def main(url: str) -> None:
        await AGUIClient(url, reconnects=2, reconnect_delay=0.01).run(RESUMED)

    with (
        serving_in_thread(app) as url,
        pytest.raises(
            ProtocolViolation,
            match=r"run 'r-resume' is still active \(\d+ frames read\); resuming it failed 2 "
            r"times in a row: RemoteProtocolError: ",
        ) as caught,
    ):
        asyncio.run(main(url))

    assert [method for method, _, _ in app.requests] == ["POST", "GET", "GET"]
    assert caught.value.rule is Rule.TRUNCATED
    assert isinstance(caught.value.__cause__, httpx.RemoteProtocolError)


def test_a_cut_stream_without_ids_is_not_resumed_and_is_truncated_from_the_broken_read() -> None:
    app = Cutting(agui.asgi_app(ticking), {"POST": 2})

    with (
        serving_in_thread(app) as url,
        pytest.raises(
            ProtocolViolation,
            match=r"run 'r-resume' is still active \(\d+ frames read\); the connection broke: "
            r"RemoteProtocolError: peer closed connection without sending complete message body",
        ) as caught,
    ):
        asyncio.run(AGUIClient(url).run(RESUMED))

    assert [method for method, _, _ in app.requests] == ["POST"]
    assert caught.value.rule is Rule.TRUNCATED
    assert isinstance(caught.value.__cause__, httpx.RemoteProtocolError)


STARTED_WITH_ID = b'id: 1\ndata: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
FINISHED_WITH_ID = b'id: 2\ndata: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n'


def test_a_stream_that_ends_early_with_ids_is_resumed_and_a_lost_run_is_truncated() -> None:
    seen: list[str | None] = []

    async def app(scope: MutableMapping[str, Any], _receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope["headers"])
        seen.append(headers.get(b"last-event-id", b"-").decode())
        known = scope["path"] == "/ok/runs/r/events"
        if scope["method"] == "GET" and not known:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b'{"code":"RUN_NOT_FOUND"}'})
            return
        sse = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": sse})
        body = FINISHED_WITH_ID if known else STARTED_WITH_ID
        await send({"type": "http.response.body", "body": body})

    run = RunAgentInput(thread_id="t", run_id="r")
    with serving_in_thread(app) as url:
        events = asyncio.run(AGUIClient(url + "ok", reconnect_delay=0).run(run))
        with pytest.raises(
            ProtocolViolation,
            match=r"The stream from .*/gone ended without a terminal event: run 'r' is still "
            r"active \(1 frames read\); resuming it failed: HTTP 404 from .*/gone/runs/r/events",
        ) as caught:
            asyncio.run(AGUIClient(url + "gone", reconnect_delay=0).run(run))

    assert [e.type for e in events] == ["RUN_STARTED", "RUN_FINISHED"]
    assert seen == ["-", "1", "-", "1"]
    assert caught.value.rule is Rule.TRUNCATED
    assert isinstance(caught.value.__cause__, HTTPStatusError)
    assert caught.value.__cause__.status == 404


def test_a_resume_answered_with_something_other_than_a_stream_is_named_in_the_truncation() -> None:
    async def app(scope: MutableMapping[str, Any], _receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        resumed = scope["method"] == "GET"
        media = b"text/html" if resumed else b"text/event-stream"
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", media)]}
        )
        await send(
            {"type": "http.response.body", "body": b"<html>" if resumed else STARTED_WITH_ID}
        )

    with (
        serving_in_thread(app) as url,
        pytest.raises(
            ProtocolViolation,
            match=r"resuming it failed: the server at .* answered HTTP 200 with text/html",
        ) as caught,
    ):
        asyncio.run(AGUIClient(url, reconnect_delay=0).run(INPUT))

    assert caught.value.rule is Rule.TRUNCATED
    assert isinstance(caught.value.__cause__, DecodeError)


def test_the_resume_url_keeps_the_query_string_and_quotes_the_run_id_as_one_segment() -> None:
    asked: list[tuple[str, bytes, bytes]] = []
    run_id = "r/1 é?"
    started = STARTED_WITH_ID.replace(b'"runId":"r"', b'"runId":"r/1 \xc3\xa9?"')
    finished = FINISHED_WITH_ID.replace(b'"runId":"r"', b'"runId":"r/1 \xc3\xa9?"')

    async def app(scope: MutableMapping[str, Any], _receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        asked.append((scope["method"], scope["raw_path"], scope["query_string"]))
        sse = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": sse})
        body = finished if scope["method"] == "GET" else started
        await send({"type": "http.response.body", "body": body})

    run = RunAgentInput(thread_id="t", run_id=run_id)
    with serving_in_thread(app) as url:
        events = asyncio.run(AGUIClient(url + "agent/?key=a%2Fb", reconnect_delay=0).run(run))

    assert [e.type for e in events] == ["RUN_STARTED", "RUN_FINISHED"]
    assert asked == [
        ("POST", b"/agent/", b"key=a%2Fb"),
        ("GET", b"/agent/runs/r%2F1%20%C3%A9%3F/events", b"key=a%2Fb"),
    ]


def test_the_parser_keeps_the_id_of_the_last_frame_it_gave() -> None:
    parser = SSEParser(last_event_id="4")
    assert parser.last_event_id == "4"

    parser.feed(b"id: 5\ndata: a\n\nid: 6\n\nid: bad\0\ndata: b\n\n")

    assert parser.last_event_id == "6"


# -- broken, stalled and absent servers, on a raw loopback socket ------------------------------


class Act(enum.Enum):
    """What a raw answer does besides sending bytes."""

    HOLD = "send nothing more until the test ends, as a stalled server does"
    STOP_LISTENING = "refuse every later connection, as a server that went down does"


RawAnswer = Sequence["bytes | Act"]


class RawServer:
    """A loopback HTTP/1.1 server that answers its n-th request with the parts of `answers[n]`.

    The answers are bytes no ASGI server sends on purpose: a body shorter than its length, a
    stall after the head. A request past the last answer has its connection closed unanswered.
    """

    def __init__(self, answers: Sequence[RawAnswer]) -> None:
        self.answers = answers
        self.requests: list[tuple[float, str]] = []  # when each came, and its request line
        self.released = asyncio.Event()
        self.handlers: set[asyncio.Task[Any]] = set()
        self.server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/agent"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.handlers.add(task)
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            # read the body whole: a socket closed with unread bytes resets the connection
            await asyncio.wait_for(reader.readexactly(length), 10)
            self.requests.append((time.monotonic(), head.split(b"\r\n")[0].decode()))
            index = len(self.requests) - 1
            await self.act(self.answers[index] if index < len(self.answers) else (), writer)
        finally:
            writer.close()

    async def act(self, answer: RawAnswer, writer: asyncio.StreamWriter) -> None:
        for part in answer:
            if part is Act.HOLD:
                await asyncio.wait_for(self.released.wait(), 10)
            elif part is Act.STOP_LISTENING:
                assert self.server is not None
                self.server.close()
            else:
                assert isinstance(part, bytes)
                writer.write(part)
                await writer.drain()


@contextlib.asynccontextmanager
async def raw_server(*answers: RawAnswer) -> AsyncGenerator[RawServer, None]:
    """Serve `answers` on 127.0.0.1 on a free port; on the way out, end every connection."""
    raw = RawServer(answers)
    raw.server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
    try:
        yield raw
    finally:
        raw.released.set()
        raw.server.close()
        await asyncio.wait_for(raw.server.wait_closed(), 10)
        await asyncio.wait_for(asyncio.gather(*raw.handlers, return_exceptions=True), 10)


def sse_head(length: int | None = None) -> bytes:
    """The head of a 200 event stream; without a length, the body runs to the close."""
    sized = b"" if length is None else b"content-length: %d\r\n" % length
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        + sized
        + b"connection: close\r\n\r\n"
    )


STARTED = b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'


def within_ten_seconds(main: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(main(), 10)

    asyncio.run(bounded())


def test_a_body_shorter_than_its_length_is_truncated_from_the_broken_read() -> None:
    async def main() -> None:
        async with raw_server([sse_head(len(STARTED) + 50), STARTED]) as raw:
            with pytest.raises(
                ProtocolViolation,
                match=r"run 'r' is still active \(1 frames read\); the connection broke: "
                r"RemoteProtocolError: peer closed connection without sending complete message "
                r"body \(received 57 bytes, expected 107\)\. A truncated run has no outcome",
            ) as caught:
                await AGUIClient(raw.url).run(INPUT)
        assert caught.value.rule is Rule.TRUNCATED
        assert isinstance(caught.value.__cause__, httpx.RemoteProtocolError)

    within_ten_seconds(main)


def test_a_resume_that_gets_no_answer_is_tried_again() -> None:
    async def main() -> None:
        async with raw_server(
            [sse_head(len(STARTED_WITH_ID) + 50), STARTED_WITH_ID],
            [],  # the connection closes before an answer: the server is restarting
            [sse_head(len(FINISHED_WITH_ID)), FINISHED_WITH_ID],
        ) as raw:
            events = await AGUIClient(raw.url, reconnect_delay=0).run(INPUT)
        assert [event.type for event in events] == ["RUN_STARTED", "RUN_FINISHED"]
        assert [line for _, line in raw.requests] == [
            "POST /agent HTTP/1.1",
            "GET /agent/runs/r/events HTTP/1.1",
            "GET /agent/runs/r/events HTTP/1.1",
        ]

    within_ten_seconds(main)


def test_a_resume_refused_every_time_is_truncated_after_its_tries_from_the_last_error() -> None:
    async def main() -> None:
        gone: RawAnswer = [Act.STOP_LISTENING, sse_head(len(STARTED_WITH_ID) + 50), STARTED_WITH_ID]
        async with raw_server(gone) as raw:
            with pytest.raises(
                ProtocolViolation,
                match=r"run 'r' is still active \(1 frames read\); resuming it failed 2 times "
                r"in a row: ConnectError: ",
            ) as caught:
                await AGUIClient(raw.url, reconnects=2, reconnect_delay=0).run(INPUT)
        assert caught.value.rule is Rule.TRUNCATED
        assert isinstance(caught.value.__cause__, httpx.ConnectError)

    within_ten_seconds(main)


def test_a_resumed_stream_that_ends_with_nothing_new_is_named_in_the_truncation() -> None:
    async def main() -> None:
        async with raw_server(
            [sse_head(len(STARTED_WITH_ID) + 50), STARTED_WITH_ID], [sse_head(0)]
        ) as raw:
            with pytest.raises(
                ProtocolViolation,
                match=r"/agent/runs/r/events ended without a terminal event: run 'r' is still "
                r"active \(1 frames read\); resuming it failed: the resumed stream brought no "
                r"new frame\. ",
            ) as caught:
                await AGUIClient(raw.url, reconnects=1, reconnect_delay=0).run(INPUT)
        assert caught.value.__cause__ is None
        assert len(raw.requests) == 2

    within_ten_seconds(main)


def test_each_resume_in_a_row_waits_reconnect_delay_longer_starting_with_the_first() -> None:
    delay = 0.1
    nothing_new = [sse_head(10)]  # a resumed stream that breaks before a frame

    async def main() -> None:
        async with raw_server(
            [sse_head(len(STARTED_WITH_ID) + 50), STARTED_WITH_ID], *[nothing_new] * 3
        ) as raw:
            with pytest.raises(ProtocolViolation, match="resuming it failed 3 times in a row"):
                await AGUIClient(raw.url, reconnect_delay=delay).run(INPUT)
        came = [when for when, _ in raw.requests]
        gaps = [later - earlier for earlier, later in itertools.pairwise(came)]
        # lower bounds only: each request comes after the break before it, and the wait
        assert len(gaps) == 3
        for tries, gap in enumerate(gaps, start=1):
            assert gap >= delay * tries - 0.005

    within_ten_seconds(main)


@pytest.mark.parametrize(
    ("answer", "stalled"),
    [
        ([Act.HOLD], r"^The request to http://127\.0\.0\.1:\d+/agent got no answer"),
        ([sse_head(), Act.HOLD], r"^The stream from http://.*/agent sent nothing more before "),
        (
            [sse_head(), STARTED, Act.HOLD],
            r"^The stream from http://.*/agent sent nothing more after frame 0 \(RUN_STARTED\)",
        ),
    ],
    ids=["before-the-answer", "before-the-first-frame", "after-a-frame"],
)
def test_a_stalled_server_times_out_naming_where_and_the_timeout_to_raise(
    answer: RawAnswer, stalled: str
) -> None:
    async def main() -> None:
        async with raw_server(answer) as raw:
            with pytest.raises(
                httpx.ReadTimeout,
                match=stalled + r".* within the client's timeout \(ReadTimeout\)\. If the server "
                r"can be silent that long, raise AGUIClient's timeout \(timeout=0\.2 now; None "
                r"waits forever\)",
            ) as caught:
                await AGUIClient(raw.url, timeout=0.2).run(INPUT)
        assert isinstance(caught.value.__cause__, httpx.ReadTimeout)

    within_ten_seconds(main)


def test_a_stall_under_a_given_http_client_names_that_clients_timeout() -> None:
    async def main() -> None:
        async with raw_server([Act.HOLD]) as raw, httpx.AsyncClient(timeout=0.2) as http:
            with pytest.raises(
                httpx.ReadTimeout,
                match=r"raise the timeout of the httpx\.AsyncClient passed as http_client",
            ):
                await AGUIClient(raw.url, http_client=http).run(INPUT)

    within_ten_seconds(main)


UNAVAILABLE = (
    b'data: {"type":"RUN_ERROR","message":"the run log cannot be reached, so this stream ends '
    b'here; resume it later","code":"RUN_LOG_UNAVAILABLE"}\n\n'
)
"""The frame a durable endpoint ends a reader's stream with when its run log cannot be read."""


def test_a_durable_endpoints_resume_later_frame_is_a_break_and_the_run_is_resumed() -> None:
    async def main() -> None:
        async with raw_server(
            [sse_head(), STARTED_WITH_ID + UNAVAILABLE],
            [sse_head(), FINISHED_WITH_ID],
        ) as raw:
            events = await AGUIClient(raw.url, reconnect_delay=0).run(INPUT)
        assert [event.type for event in events] == ["RUN_STARTED", "RUN_FINISHED"]
        assert raw.requests[1][1] == "GET /agent/runs/r/events HTTP/1.1"

    within_ten_seconds(main)


def test_a_run_log_that_stays_unavailable_truncates_the_run_naming_it() -> None:
    async def main() -> None:
        answer: RawAnswer = [sse_head(), STARTED_WITH_ID + UNAVAILABLE]
        later: RawAnswer = [sse_head(), UNAVAILABLE]
        async with raw_server(answer, later, later) as raw:
            with pytest.raises(
                ProtocolViolation,
                match=r"resuming it failed 2 times in a row: RunLogError: the run log cannot be "
                r"reached, so this stream ends here",
            ):
                await AGUIClient(raw.url, reconnects=2, reconnect_delay=0).run(INPUT)
        assert len(raw.requests) == 3

    within_ten_seconds(main)


def test_a_resume_later_frame_in_a_stream_without_ids_ends_the_run_as_sent() -> None:
    async def main() -> None:
        started = b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
        async with raw_server([sse_head(), started + UNAVAILABLE]) as raw:
            events = await AGUIClient(raw.url, reconnect_delay=0).run(INPUT)
        assert [event.type for event in events] == ["RUN_STARTED", "RUN_ERROR"]
        assert len(raw.requests) == 1

    within_ten_seconds(main)


def test_a_busy_or_restarting_server_answering_a_resume_is_asked_again() -> None:
    async def main() -> None:
        busy = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nretry-after: 1\r\n\r\n"
        async with raw_server(
            [sse_head(len(STARTED_WITH_ID)), STARTED_WITH_ID],
            [busy],
            [sse_head(), FINISHED_WITH_ID],
        ) as raw:
            events = await AGUIClient(raw.url, reconnect_delay=0).run(INPUT)
        assert [event.type for event in events] == ["RUN_STARTED", "RUN_FINISHED"]
        assert len(raw.requests) == 3

    within_ten_seconds(main)


def test_a_run_input_holding_a_lone_surrogate_is_refused_before_anything_is_sent() -> None:
    async def main() -> None:
        async with raw_server() as raw:
            given = RunAgentInput(thread_id="t", run_id="r\ud800")
            with pytest.raises(UsageError, match=r"cannot send this RunAgentInput as JSON .*"):
                await AGUIClient(raw.url).run(given)
        assert raw.requests == []

    within_ten_seconds(main)
