"""The endpoint behind a real server: uvicorn on 127.0.0.1, real sockets, real clients.

Each test starts uvicorn in a thread on port 0 (the bound port is read from the server's own
sockets), talks to it over the loopback interface, and stops it; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from pydantic import BaseModel, JsonValue

import agui
from agui import Interrupt, RunAgentInput, RunContext, RunOutcome
from agui.agents import ToolLoopAgent, tool
from agui.agents.models import ScriptedModel
from agui.asgi import LOOPBACK_HOSTS, Receive, Scope, Send, asgi_app
from agui.asgi._server import listen, tcp_socket
from agui.capabilities import AgentCapabilities, IdentityCapabilities
from agui.messages import UserMessage
from agui.sse import event_json
from agui.testing import assert_valid, collect, fold, serving
from node_clients import node, run_script

Ctx = RunContext[JsonValue]
App = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]

JS_DIR = Path(__file__).parent / "js"
STARTUP_SECONDS = 10.0
JSON = {"content-type": "application/json"}
REQUEST_SECONDS = 30.0


def data_frames(body: bytes) -> list[bytes]:
    assert b"\r" not in body
    return [
        frame.removeprefix(b"data: ")
        for frame in body.split(b"\n\n")
        if frame.startswith(b"data: ")
    ]


async def weather(ctx: Ctx) -> None:
    ctx.think("The user asks about the weather; the tool knows.")
    await asyncio.sleep(0)
    with ctx.tool_call("get_weather") as call:
        call.args('{"city":')
        await asyncio.sleep(0.001)
        call.args('"Seoul"}')
        call.result_json({"tempC": 21, "sky": "clear"})
    await asyncio.sleep(0.001)
    ctx.say("It is 21 °C and clear in Seoul.")


INPUT = RunAgentInput(
    thread_id="thread-1",
    run_id="run-1",
    messages=[UserMessage(id="user-1", content="Weather in Seoul?")],
)


def test_a_streamed_run_equals_the_same_agent_collected_in_process() -> None:
    async def stream(url: str) -> tuple[list[bytes], httpx.Headers]:
        chunks: list[bytes] = []
        async with (
            httpx.AsyncClient(timeout=REQUEST_SECONDS) as client,
            client.stream(
                "POST",
                url,
                content=INPUT.model_dump_json(),
                headers={"content-type": "application/json", "accept": "text/event-stream"},
            ) as response,
        ):
            assert response.status_code == 200
            chunks.extend([chunk async for chunk in response.aiter_raw()])
            return chunks, response.headers

    with serving(asgi_app(weather)) as url:
        chunks, headers = asyncio.run(stream(url))

    expected = asyncio.run(collect(weather, INPUT))
    frames = data_frames(b"".join(chunks))
    assert [json.loads(frame) for frame in frames] == [
        json.loads(event_json(event)) for event in expected
    ]
    assert_valid([agui.parse_event(frame) for frame in frames])
    assert len(chunks) > 1, "the stream arrived in one piece"
    assert headers["content-type"] == "text/event-stream"
    assert headers["cache-control"] == "no-cache, no-store, no-transform"
    assert headers["x-accel-buffering"] == "no"
    assert headers["transfer-encoding"] == "chunked"


def test_a_refusal_reaches_an_http_client_as_json() -> None:
    async def post(url: str) -> httpx.Response:
        async with httpx.AsyncClient(timeout=REQUEST_SECONDS) as client:
            return await client.post(
                url, content=b'{"threadId": "t"}', headers={"content-type": "application/json"}
            )

    with serving(asgi_app(weather)) as url:
        response = asyncio.run(post(url))

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/json"
    assert response.json()["errors"] == [{"path": "/runId", "message": "Field required"}]


@pytest.mark.ag_ui_validate
def test_the_live_endpoint_passes_ag_ui_validate() -> None:
    from ag_ui_validate.pytest_plugin import validate_agui_endpoint  # noqa: PLC0415 - Python >= 3.11 only

    with serving(asgi_app(weather, keepalive=5.0)) as url:
        report = asyncio.run(validate_agui_endpoint(url, timeout_ms=int(REQUEST_SECONDS * 1000)))

    findings = [(d.rule, d.severity) for d in report.diagnostics]
    # agui leaves the optional timestamp out (AGUI902, informational); nothing else is noted,
    # not even AGUI507, which flags a response that arrived in one buffered chunk.
    assert findings == [("AGUI902", "info")]
    assert (report.summary.errors, report.summary.warnings) == (0, 0)
    assert report.internal_errors == []
    assert report.event_count == 15


class Gathering:
    """An agent whose runs all wait for each other, so they are provably open at once."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.arrived = 0
        self.everyone: asyncio.Event | None = None

    async def run(self, ctx: Ctx) -> None:
        if self.everyone is None:
            self.everyone = asyncio.Event()
        self.arrived += 1
        if self.arrived == self.expected:
            self.everyone.set()
        ctx.say(f"run {ctx.run_id} is waiting")
        await asyncio.wait_for(self.everyone.wait(), REQUEST_SECONDS)
        ctx.say(f"all {self.arrived} runs arrived")


def test_two_hundred_concurrent_streams_all_complete_with_valid_streams() -> None:
    count = 200
    gathering = Gathering(count)

    async def one(client: httpx.AsyncClient, url: str, index: int) -> list[agui.Event]:
        body = RunAgentInput(thread_id="t", run_id=f"run-{index}").model_dump_json()
        response = await client.post(url, content=body, headers=JSON)
        assert response.status_code == 200
        return [agui.parse_event(frame) for frame in data_frames(response.content)]

    async def everyone(url: str) -> list[list[agui.Event]]:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        async with httpx.AsyncClient(timeout=REQUEST_SECONDS, limits=limits) as client:
            return await asyncio.gather(*(one(client, url, index) for index in range(count)))

    with serving(asgi_app(gathering)) as url:
        streams = asyncio.run(everyone(url))

    assert len(streams) == count
    for index, events in enumerate(streams):
        assert_valid(events)
        folded = fold(events)
        assert folded.outcome is not None
        assert folded.outcome.type == "success"
        assert [m.content for m in folded.messages] == [
            f"run run-{index} is waiting",
            f"all {count} runs arrived",
        ]


# -- the official TypeScript client ------------------------------------------------------------


async def showcase(ctx: Ctx) -> RunOutcome:
    """Text, reasoning, a streamed tool call with its result, a client-executed call, state."""
    ctx.think("The user wants the weather, then a booking I must confirm.")
    await asyncio.sleep(0)
    with ctx.message() as message:
        message.delta("Let me check ")
        await asyncio.sleep(0)
        message.delta("the weather.")
    ctx.state = {"city": "Seoul", "plan": "look up the weather, then book a hotel", "steps": []}
    ctx.publish_state()
    with ctx.tool_call("get_weather", parent_message_id=message.id) as call:
        call.args('{"city":')
        await asyncio.sleep(0)
        call.args('"Seoul"}')
        call.result_json({"tempC": 21})
    cast("dict[str, list[str]]", ctx.state)["steps"].append("weather")
    ctx.publish_state()
    if ctx.tool("confirm_booking") is not None:
        with ctx.tool_call("confirm_booking") as booking:
            booking.args_json({"hotel": "Lotte"})
            booking.end()
    question = Interrupt(id="approve-1", reason="confirmation", message="Book the Lotte?")
    return RunOutcome.interrupt([question])


def _node() -> str:
    return node("@ag-ui/client", "the TypeScript client tests")


@pytest.mark.parametrize(
    ("transport", "content_type"),
    [("sse", "text/event-stream"), ("proto", "application/vnd.ag-ui.event+proto")],
)
def test_the_official_typescript_client_runs_cleanly_and_ends_where_fold_does(
    transport: str, content_type: str
) -> None:
    """The same run over SSE and over the protobuf binding: both end where `fold` does."""
    node = _node()
    received: list[RunAgentInput] = []

    async def recording(ctx: Ctx) -> RunOutcome:
        received.append(ctx.input)
        return await showcase(ctx)

    with serving(asgi_app(recording)) as url:
        env = {"AGUI_URL": url, "AGUI_TRANSPORT": transport}
        client = run_script(node, ["--test", "client.test.mjs"], env)

    [sent] = received
    assert client["contentTypes"] == [content_type]
    events = asyncio.run(collect(showcase, sent))
    expected = fold(events, messages=sent.messages, state=sent.state)
    assert [json.loads(event_json(e))["type"] for e in events] == client["events"]
    assert {
        "REASONING_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
    } <= set(client["events"])
    assert client["state"] == expected.state
    # The client's messages are our wire shape exactly: nothing needs normalizing (absent
    # optional fields are absent on both sides, ids are deterministic, no timestamps are sent).
    assert client["messages"] == [
        m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in expected.messages
    ]
    assert client["newMessageIds"] == [m.id for m in expected.messages[len(sent.messages) :]]
    assert client["pendingInterrupts"] == [
        {"id": "approve-1", "reason": "confirmation", "message": "Book the Lotte?"}
    ]
    assert client["outcome"] == "interrupt"


def test_the_typescript_client_test_fails_rather_than_skips_without_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def nowhere(_name: str) -> str | None:
        return None

    monkeypatch.setattr(shutil, "which", nowhere)

    with pytest.raises(pytest.fail.Exception, match=r"run `npm ci --prefix tests/js`"):
        _node()


# -- hardening, against a real uvicorn ---------------------------------------------------------


def exchange_raw(url: str, request: bytes, *, seconds: float = REQUEST_SECONDS) -> bytes:
    """Send raw bytes to the server, then read until it closes the connection."""
    port = urlsplit(url).port
    assert port is not None
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def head_and_body(answer: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in lines)}
    return status, headers, body


def test_every_socket_agui_binds_and_accepts_has_tcp_nodelay() -> None:
    with listen("127.0.0.1", 0) as listening:
        port = listening.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)), listening.accept()[0] as accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert listening.proto == socket.IPPROTO_TCP
    with tcp_socket("::1") as six:
        assert six.family == socket.AF_INET6
        assert six.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_listening_on_a_port_in_use_fails_and_leaves_no_socket_open() -> None:
    with listen("127.0.0.1", 0) as taken:
        port = taken.getsockname()[1]
        before = len(list(Path("/proc/self/fd").iterdir()))
        with pytest.raises(OSError, match="Address already in use"):
            listen("127.0.0.1", port)
        assert len(list(Path("/proc/self/fd").iterdir())) == before


def test_serving_a_server_that_never_starts_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    def waits(self: uvicorn.Server, sockets: list[socket.socket] | None = None) -> None:
        del sockets
        while not self.should_exit:  # bounded: serving sets it on the way out
            time.sleep(0.01)

    monkeypatch.setattr(uvicorn.Server, "run", waits)

    with (
        pytest.raises(TimeoutError, match=r"the server did not start within 0\.5 s"),
        serving(asgi_app(weather), timeout=0.5),
    ):
        pass  # pragma: no cover - serving raises before the block


@pytest.mark.parametrize(
    ("app", "said"),
    [
        ("no_such_module:app", r": uvicorn exited with status 3; its log says why"),
        (None, r"; uvicorn's log says why"),
        ("raises", r": OSError: no sockets today"),
    ],
    ids=["an app uvicorn cannot load", "a server that returns", "a server that raises"],
)
def test_serving_a_server_that_stops_before_it_starts_says_so_at_once(
    monkeypatch: pytest.MonkeyPatch, app: str | None, said: str
) -> None:
    def returns(_self: uvicorn.Server, sockets: list[socket.socket] | None = None) -> None:
        del sockets

    def raises(_self: uvicorn.Server, sockets: list[socket.socket] | None = None) -> None:
        del sockets
        message = "no sockets today"
        raise OSError(message)

    if app in (None, "raises"):
        monkeypatch.setattr(uvicorn.Server, "run", returns if app is None else raises)
        app = None
    started = time.monotonic()

    with (
        pytest.raises(TimeoutError, match="the server stopped before it started" + said),
        serving(cast("Any", app or asgi_app(weather)), timeout=10.0),
    ):
        pass  # pragma: no cover - serving raises before the block
    assert time.monotonic() - started < 5.0


async def _own_nodelay(scope: Scope, receive: Receive, send: Send) -> None:
    """Answers a request with the TCP_NODELAY of the very connection it arrived on."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    client = tuple(scope["client"])
    # While the request is being answered its connection is open: found by its peer's address.
    [sock] = [
        thing.get_extra_info("socket")
        for thing in gc.get_objects()
        if isinstance(thing, asyncio.Transport)
        and not thing.is_closing()
        and tuple(thing.get_extra_info("peername") or ())[:2] == client
    ]
    flag = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": str(flag).encode()})


def test_the_connections_uvicorn_accepts_under_serving_have_tcp_nodelay() -> None:
    """Nagle against delayed ACK stalls each keep-alive request ~40 ms without the option."""
    with serving(_own_nodelay) as url, httpx.Client(timeout=REQUEST_SECONDS) as client:
        flags = [client.get(url).text for _ in range(2)]  # the second reuses the connection

    assert flags[0] != "0"
    assert flags == [flags[0]] * 2


@pytest.mark.parametrize(
    "request_bytes",
    [
        (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"thr\r\n'
        ),
        (
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"threadId": '
        ),
    ],
    ids=["a chunked body that never ends", "a short body then silence"],
)
def test_a_stalled_body_gets_408_and_its_connection_is_closed(request_bytes: bytes) -> None:
    ran: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ran.append(ctx.run_id)

    with serving(asgi_app(agent, body_timeout=0.3)) as url:
        status, headers, body = head_and_body(exchange_raw(url, request_bytes))

    assert status == "HTTP/1.1 408 Request Timeout"
    assert headers["connection"] == "close"
    assert json.loads(body)["code"] == "BODY_TIMEOUT"
    assert ran == []


def test_a_body_that_arrived_while_another_run_blocked_the_loop_is_read_not_timed_out() -> None:
    async def agent(ctx: Ctx) -> None:
        if ctx.run_id == "blocks":
            time.sleep(1.0)  # noqa: ASYNC251 - an agent blocking the loop, past the body timeout
        ctx.say("done")

    body = RunAgentInput(thread_id="t", run_id="late").model_dump_json(by_alias=True).encode()
    head = (
        b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    with serving(asgi_app(agent, body_timeout=0.5)) as url:
        port = urlsplit(url).port
        assert port is not None
        with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_SECONDS) as late:
            late.sendall(head + body[:10])  # its body timer starts
            blocking = threading.Thread(
                target=httpx.post,
                args=(url,),
                kwargs={"json": {"threadId": "t", "runId": "blocks"}, "timeout": REQUEST_SECONDS},
            )
            blocking.start()
            time.sleep(0.3)  # the loop is blocked now; the rest arrives within the timeout
            late.sendall(body[10:])
            answer = b""
            while chunk := late.recv(65536):
                answer += chunk
            blocking.join(REQUEST_SECONDS)

    status, _, _ = head_and_body(answer)
    assert status == "HTTP/1.1 200 OK"
    assert b'"type":"RUN_FINISHED"' in answer


def test_a_cross_site_post_a_browser_sends_without_preflight_runs_nothing() -> None:
    ran: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ran.append(ctx.run_id)

    with serving(asgi_app(agent)) as url, httpx.Client(timeout=REQUEST_SECONDS) as client:
        simple = client.post(
            url, content=INPUT.model_dump_json(), headers={"origin": "https://evil.example"}
        )
        untyped = client.post(url, content=INPUT.model_dump_json())
        form = client.post(url, content=b"a=1", headers={"content-type": "text/plain"})

    assert (simple.status_code, simple.json()["code"]) == (403, "ORIGIN_NOT_ALLOWED")
    assert (untyped.status_code, untyped.json()["code"]) == (415, "UNSUPPORTED_MEDIA_TYPE")
    assert form.status_code == 415
    assert ran == []


def test_an_allowed_origin_gets_its_preflight_and_a_stream_it_may_read() -> None:
    page = "https://app.example"
    with (
        serving(asgi_app(weather, allowed_origins=[page])) as url,
        httpx.Client(timeout=REQUEST_SECONDS) as client,
    ):
        preflight = client.options(
            url,
            headers={
                "origin": page,
                "access-control-request-method": "POST",
                "access-control-request-headers": "content-type",
            },
        )
        run = client.post(url, content=INPUT.model_dump_json(), headers={**JSON, "origin": page})

    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == page
    assert preflight.headers["access-control-allow-methods"] == "GET, HEAD, POST"
    assert preflight.headers["access-control-allow-headers"] == "content-type"
    assert run.status_code == 200
    assert run.headers["access-control-allow-origin"] == page
    assert_valid([agui.parse_event(frame) for frame in data_frames(run.content)])


def test_a_rebound_host_name_is_refused_by_a_loopback_server() -> None:
    app = asgi_app(weather, allowed_hosts=LOOPBACK_HOSTS, inspector=True)
    with serving(app) as url, httpx.Client(timeout=REQUEST_SECONDS) as client:
        rebound = client.post(
            url, content=INPUT.model_dump_json(), headers={**JSON, "host": "evil.example"}
        )
        page = client.get(url, headers={"host": "evil.example:8000"})
        own = client.post(url, content=INPUT.model_dump_json(), headers=JSON)

    assert (rebound.status_code, rebound.json()["code"]) == (403, "HOST_NOT_ALLOWED")
    assert page.status_code == 403
    assert own.status_code == 200


TOKEN = "s3cret"  # noqa: S105 - the documented example's token


def authorize(headers: Mapping[str, str]) -> bool:
    """The hook of docs/guides/http.md, "Authorization": it compares bytes, not text."""
    sent = headers.get("authorization", "").encode("latin-1")
    return hmac.compare_digest(sent, f"Bearer {TOKEN}".encode())


@pytest.mark.parametrize(
    ("authorization", "status"),
    [(b"Bearer s3cret", 200), (b"Bearer s\xc3\xa9cret", 403), (b"Bearer \xff", 403), (None, 401)],
)
def test_the_documented_authorize_hook_refuses_any_header_and_never_answers_500(
    authorization: bytes | None, status: int
) -> None:
    headers: dict[bytes, bytes] = {b"content-type": b"application/json"}
    if authorization is not None:
        headers[b"authorization"] = authorization
    with (
        serving(asgi_app(weather, authorize=authorize)) as url,
        httpx.Client(timeout=REQUEST_SECONDS) as client,
    ):
        response = client.post(url, content=INPUT.model_dump_json(), headers=headers)

    assert response.status_code == status


def test_a_422_for_thousands_of_invalid_messages_is_smaller_than_the_request() -> None:
    messages = [{"role": "user", "id": f"m{index}"} for index in range(20_000)]
    body = json.dumps({"threadId": "t", "runId": "r", "messages": messages}).encode()
    with (
        serving(asgi_app(weather, max_body_bytes=len(body))) as url,
        httpx.Client(timeout=REQUEST_SECONDS * 2) as client,
    ):
        response = client.post(url, content=body, headers=JSON)

    assert response.status_code == 422
    answer = response.json()
    assert answer["omitted"] + len(answer["errors"]) == 20_000
    assert len({error["path"] for error in answer["errors"]}) == len(answer["errors"])
    assert len(response.content) < len(body) // 100


# -- `agui serve`, as started from a shell -----------------------------------------------------

AGUI = Path(sys.executable).parent / "agui"
HELLO = Path(__file__).parent.parent / "examples" / "hello.py"


def announced_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("agui: serving on "), line
    return line.removeprefix("agui: serving on ").strip()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_agui_serve_on_loopback_answers_only_loopback_host_names(host: str) -> None:
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", f"{HELLO}:agent", "--host", host, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = announced_url(process)
        with httpx.Client(timeout=REQUEST_SECONDS) as client:
            body = INPUT.model_dump_json()
            rebound = client.post(url, content=body, headers={**JSON, "host": "evil.example"})
            own = client.post(url, content=body, headers={**JSON, "host": "localhost"})
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=REQUEST_SECONDS)
        assert process.stdout is not None
        process.stdout.close()

    assert (rebound.status_code, rebound.json()["code"]) == (403, "HOST_NOT_ALLOWED")
    assert own.status_code == 200


def test_agui_serve_states_its_limits_in_its_help() -> None:
    completed = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=REQUEST_SECONDS,
        check=True,
    )
    text = " ".join(completed.stdout.split())

    assert "line and headers at most 16 KiB" in text
    assert "body at most 1 MiB, arriving whole within 10 s" in text
    assert "idle keep-alive connection is closed after 5 s" in text
    assert "whose Host is localhost, 127.0.0.1, ::1" in text


# The capabilities route, as CopilotKit's runtime reaches it: a GET next to the endpoint.


class Board(BaseModel):
    tasks: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def test_a_tool_loop_with_state_serves_its_tools_schema_and_transport_at_capabilities() -> None:
    agent = ToolLoopAgent(ScriptedModel([]), tools=[get_weather])
    with serving(asgi_app(agent, state=Board, protobuf=True)) as url:
        response = httpx.get(f"{url}/agent/capabilities", timeout=REQUEST_SECONDS)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    served = response.json()
    assert served["transport"] == {"streaming": True, "httpBinary": True}
    assert served["humanInTheLoop"] == {"supported": True, "interrupts": True}
    assert served["state"] == {"snapshots": True, "deltas": True}
    assert served["custom"]["stateSchema"]["properties"]["tasks"]["type"] == "array"
    assert served["tools"]["supported"] is True
    assert served["tools"]["clientProvided"] is True
    assert [item["name"] for item in served["tools"]["items"]] == ["get_weather"]
    assert "null" not in response.text


def test_capabilities_given_on_asgi_app_replace_or_extend_the_derived_ones() -> None:
    given = AgentCapabilities(identity=IdentityCapabilities(name="travel"))

    def extend(derived: AgentCapabilities) -> AgentCapabilities:
        return derived.model_copy(update={"identity": IdentityCapabilities(name="board")})

    with serving(asgi_app(weather, capabilities=given)) as url:
        replaced = httpx.get(f"{url}/capabilities", timeout=REQUEST_SECONDS).json()
    with serving(asgi_app(weather, capabilities=extend, protobuf=False)) as url:
        extended = httpx.get(f"{url}/capabilities", timeout=REQUEST_SECONDS).json()
    assert replaced == {"identity": {"name": "travel"}}
    assert extended == {
        "identity": {"name": "board"},
        "transport": {"streaming": True},
        "humanInTheLoop": {"supported": True, "interrupts": True},
    }


def test_the_capabilities_route_answers_get_only_and_goes_through_authorize() -> None:
    def authorize(headers: Mapping[str, str]) -> bool:
        return hmac.compare_digest(headers.get("authorization", ""), "Bearer secret")

    with serving(asgi_app(weather, authorize=authorize)) as url:
        anonymous = httpx.get(f"{url}/capabilities", timeout=REQUEST_SECONDS)
        wrong = httpx.get(
            f"{url}/capabilities", headers={"authorization": "Bearer no"}, timeout=REQUEST_SECONDS
        )
        allowed = httpx.get(
            f"{url}/capabilities",
            headers={"authorization": "Bearer secret"},
            timeout=REQUEST_SECONDS,
        )
        posted = httpx.post(
            f"{url}/capabilities",
            headers={"authorization": "Bearer secret"},
            json={},
            timeout=REQUEST_SECONDS,
        )
    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "UNAUTHORIZED")
    assert (wrong.status_code, wrong.json()["code"]) == (403, "FORBIDDEN")
    assert allowed.status_code == 200
    assert allowed.json()["transport"]["streaming"] is True
    assert (posted.status_code, posted.json()["code"]) == (405, "METHOD_NOT_ALLOWED")
    assert posted.headers["allow"] == "GET, HEAD"


def test_an_endpoint_without_capabilities_answers_404_json_there_and_still_runs() -> None:
    with serving(asgi_app(weather, capabilities=False)) as url:
        missing = httpx.get(f"{url}/agent/capabilities", timeout=REQUEST_SECONDS)
        run = httpx.post(f"{url}/agent", content=INPUT.model_dump_json(), headers=JSON)
    assert missing.status_code == 404
    assert missing.json()["code"] == "NOT_FOUND"
    assert "capabilities=False" in missing.json()["message"]
    assert run.status_code == 200
