"""The endpoint behind a real server: uvicorn on 127.0.0.1, real sockets, real clients.

Each test starts uvicorn in a thread on port 0 (the bound port is read from the server's own
sockets), talks to it over the loopback interface, and stops it; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from ag_ui_validate.pytest_plugin import validate_agui_endpoint
from pydantic import JsonValue

import agui
from agui import Interrupt, RunAgentInput, RunContext, RunOutcome
from agui.asgi import asgi_app
from agui.messages import UserMessage
from agui.sse import event_json
from agui.testing import assert_valid, collect, fold, serving

Ctx = RunContext[JsonValue]
App = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]

JS_DIR = Path(__file__).parent / "js"
STARTUP_SECONDS = 10.0
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
            return await client.post(url, content=b'{"threadId": "t"}')

    with serving(asgi_app(weather)) as url:
        response = asyncio.run(post(url))

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/json"
    assert response.json()["errors"] == [{"path": "/runId", "message": "Field required"}]


def test_the_live_endpoint_passes_ag_ui_validate() -> None:
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
        response = await client.post(url, content=body)
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
    node = shutil.which("node")
    if node is None or not (JS_DIR / "node_modules" / "@ag-ui" / "client").is_dir():
        pytest.fail(
            "the TypeScript client test needs node (>= 20) and tests/js/node_modules: "
            "run `npm ci --prefix tests/js`"
        )
    return node


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

    with tempfile.TemporaryDirectory() as scratch, serving(asgi_app(recording)) as url:
        result_file = Path(scratch) / "result.json"
        env = {
            **os.environ,
            "AGUI_URL": url,
            "AGUI_RESULT_FILE": str(result_file),
            "AGUI_TRANSPORT": transport,
        }
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [node, "--test", "client.test.mjs"],
            cwd=JS_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        client: dict[str, Any] = json.loads(result_file.read_text())

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
