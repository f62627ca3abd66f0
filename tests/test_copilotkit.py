"""CopilotKit, the most used AG-UI frontend, in front of agui's live examples.

`tests/js/copilotkit.mjs` runs what an app runs: CopilotKit's runtime (`@copilotkit/runtime`
1.75.0, whose agents are `HttpAgent`s of `@ag-ui/client` 0.0.59) and, connected to it, the
browser half (`CopilotKitCore` of `@copilotkit/core` 1.75.0) with the app's tools, driven
headless. Each test serves the examples on uvicorn (127.0.0.1, port 0), runs one scenario of
the script in a node subprocess, and asserts on what the app ends with and on what agui saw:
each request is recorded with the events agui answered, and a failure prints that exchange.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from examples.task_board import app as board
from examples.travel import app as travel
from pydantic import JsonValue

import agui
from agui.asgi import Receive, Scope, Send
from agui.asgi._admission import Message
from agui.testing import serving
from node_clients import node

JS_DIR = Path(__file__).parent / "js"
SCRIPT = "copilotkit.mjs"
SCENARIO_SECONDS = 90.0
SLOW_SECONDS = 30.0
"""How long the slow agent would stream if nobody stopped it: far past any wait below."""

Json = dict[str, Any]


@dataclasses.dataclass
class Exchange:
    """One request agui was sent and the events it answered."""

    request: Json
    events: list[Json]

    def describe(self) -> str:
        """The exchange in a few lines: what the client sent, what agui answered."""
        # Read both spellings: the Agent Framework's client sends snake_case names.
        sent = {
            "runId": self.request.get("runId", self.request.get("run_id")),
            "resume": self.request.get("resume"),
            "tools": [tool["name"] for tool in self.request.get("tools", [])],
            "messages": [_brief(message) for message in self.request.get("messages", [])],
        }
        answered = [_brief(event) for event in self.events if event["type"] not in _DELTAS]
        return f"sent {json.dumps(sent)}\n  answered {json.dumps(answered)}"


_DELTAS = {
    "TEXT_MESSAGE_CONTENT",
    "TOOL_CALL_ARGS",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_START",
    "REASONING_END",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_END",
    "STEP_STARTED",
    "STEP_FINISHED",
}


def _brief(item: Json) -> Json:
    keep = ("type", "role", "id", "toolCallId", "toolCallName", "outcome", "code")
    brief = {key: item[key] for key in keep if key in item}
    if "tool_call_id" in item:
        brief["toolCallId"] = item["tool_call_id"]
    calls = item.get("toolCalls", item.get("tool_calls"))
    if calls:
        brief["toolCalls"] = [call["id"] for call in calls]
    for key in ("content", "message", "interrupts"):
        if key in item:
            brief[key] = item[key] if key != "content" else str(item[key])[:60]
    return brief


class Recorder:
    """An ASGI app in front of another that records every POST and the SSE events it answered."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        answer = bytearray()

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.body":
                answer.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receiving, sending)
        finally:
            events = [
                json.loads(line.removeprefix(b"data: "))
                for line in bytes(answer).splitlines()
                if line.startswith(b"data: ")
            ]
            self.exchanges.append(Exchange(json.loads(bytes(body) or b"{}"), events))

    def describe(self) -> str:
        """The last two exchanges, numbered: what a failing assertion prints."""
        numbered = list(enumerate(self.exchanges, 1))[-2:]  # the question and its answer
        lines = [f"{n}. {exchange.describe()}" for n, exchange in numbered]
        return "what agui was sent and answered:\n" + "\n".join(lines)


@dataclasses.dataclass
class Slow:
    """An agent that streams until it is stopped, and what it saw of being stopped."""

    started_runs: list[str] = dataclasses.field(default_factory=list[str])
    cancelled_runs: list[str] = dataclasses.field(default_factory=list[str])
    disconnected_runs: list[str] = dataclasses.field(default_factory=list[str])

    async def agent(self, ctx: agui.RunContext[JsonValue]) -> None:
        """Say a word, then wait as a slow model would; note the cancellation when it comes."""
        self.started_runs.append(ctx.run_id)
        try:
            with ctx.message() as message:
                message.delta("Working")
                await ctx.until_cancelled(asyncio.sleep(SLOW_SECONDS))
                message.delta(" done.")
        finally:
            if ctx.cancelled:
                self.cancelled_runs.append(ctx.run_id)

    def on_disconnect(self, run: agui.RunAgentInput) -> None:
        """The endpoint's hook: the client left before the stream ended."""
        self.disconnected_runs.append(run.run_id)


@dataclasses.dataclass
class Servers:
    """The examples on uvicorn, each behind its recorder, and the slow agent."""

    board: Recorder
    travel: Recorder
    slow: Slow
    urls: dict[str, str]


@pytest.fixture
def servers() -> Generator[Servers, None, None]:
    recorded_board, recorded_travel, slow = Recorder(board.app), Recorder(travel.app), Slow()
    slow_app = agui.asgi_app(slow.agent, on_disconnect=slow.on_disconnect)
    with (
        serving(recorded_board) as board_url,
        serving(recorded_travel) as travel_url,
        serving(slow_app) as slow_url,
    ):
        urls = {
            "AGUI_BOARD_URL": board_url,
            "AGUI_TRAVEL_URL": travel_url,
            "AGUI_SLOW_URL": slow_url,
        }
        yield Servers(recorded_board, recorded_travel, slow, urls)


def _node() -> str:
    return node("@copilotkit/runtime", "the CopilotKit tests")


def run_scenario(servers: Servers, scenario: str) -> Json:
    """Run one scenario of the script against the servers; what the app ends with."""
    node = _node()
    with tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        env = {
            **os.environ,
            **servers.urls,
            "AGUI_SCENARIO": scenario,
            "AGUI_RESULT_FILE": str(result_file),
            # CopilotKit's runtime reports usage to its vendor unless told not to; loopback only.
            "COPILOTKIT_TELEMETRY_DISABLED": "true",
            "DO_NOT_TRACK": "1",
        }
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [node, SCRIPT],
            cwd=JS_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=SCENARIO_SECONDS,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        return cast("Json", json.loads(result_file.read_text()))


def assert_clean(result: Mapping[str, Any], recorder: Recorder) -> None:
    """No error CopilotKit reported, no client warning, no message id twice."""
    assert result["errors"] == [], recorder.describe()
    assert result["complaints"] == [], recorder.describe()
    assert result["duplicateMessageIds"] == [], recorder.describe()


def texts(result: Mapping[str, Any]) -> list[str]:
    """What the assistant said, message by message."""
    return [m["content"] for m in result["messages"] if m["role"] == "assistant" and m["content"]]


def tasks(result: Mapping[str, Any]) -> list[Json]:
    """The board the app holds."""
    return cast("list[Json]", result["state"].get("tasks", []))


# -- the runtime's /info ---------------------------------------------------------------------


def test_copilotkits_info_lists_the_capabilities_each_agui_example_serves(
    servers: Servers,
) -> None:
    result = run_scenario(servers, "info")

    assert result["status"] == 200
    agents = result["info"]["agents"]
    for name, variable in (("task_board", "AGUI_BOARD_URL"), ("travel", "AGUI_TRAVEL_URL")):
        served = httpx.get(servers.urls[variable] + "capabilities", timeout=10).json()
        assert agents[name]["capabilities"] == served
    assert [tool["name"] for tool in agents["travel"]["capabilities"]["tools"]["items"]] == [
        "get_weather",
        "search_restaurants",
    ]
    board_schema = agents["task_board"]["capabilities"]["custom"]["stateSchema"]
    assert board_schema == board.Board.model_json_schema()
    assert agents["task_board"]["capabilities"]["humanInTheLoop"] == {
        "supported": True,
        "interrupts": True,
    }


# -- answers and app tools -------------------------------------------------------------------


def test_a_travel_question_gets_its_tools_results_and_an_answer(servers: Servers) -> None:
    result = run_scenario(servers, "travel")

    assert_clean(result, servers.travel)
    assert [call["name"] for call in result["calls"]] == ["get_weather", "search_restaurants"]
    assert all(len(result["results"][call["id"]]) == 1 for call in result["calls"])
    [answer] = texts(result)
    assert answer.startswith("In Paris it is ")
    assert "Italian restaurants worth a visit: " in answer
    assert result["pendingInterrupts"] == []


def test_the_task_board_adds_and_completes_tasks_through_the_apps_tools(
    servers: Servers,
) -> None:
    result = run_scenario(servers, "board")

    assert_clean(result, servers.board)
    assert tasks(result) == [
        {"id": 1, "title": "buy milk", "done": False},
        {"id": 2, "title": "call mum", "done": True},
    ]
    assert texts(result) == ["Added #1 buy milk, #2 call mum.", "Marked #2 call mum as done."]
    offered = [tool["name"] for tool in servers.board.exchanges[0].request["tools"]]
    assert offered == list(board.BOARD_TOOLS)
    # The app's tools are answered by the agent: CopilotKit adds no result of its own.
    assert all(len(answers) == 1 for answers in result["results"].values())


# -- approvals -------------------------------------------------------------------------------

APPROVALS = {
    "approve-resume": "useInterrupt().resolve(): the resume entry, with the interrupted run id",
    "approve-tool-result": "the same, after a tool message answering the call",
    "approve-handler": "a delete_task handler's output as the tool message, then the resume",
}


@pytest.mark.parametrize("scenario", list(APPROVALS))
def test_an_approved_delete_removes_the_task_and_leaves_nothing_pending(
    servers: Servers, scenario: str
) -> None:
    result = run_scenario(servers, scenario)

    assert_clean(result, servers.board)
    asked = result["asked"]
    assert [i["reason"] for i in asked["pendingInterrupts"]] == ["tool_call"]
    interrupted = [o["runId"] for o in result["outcomes"] if o["outcome"] == "interrupt"]
    assert result["sent"]["runId"] == interrupted[0]  # what useInterrupt sends
    assert tasks(result) == [{"id": 2, "title": "call mum", "done": False}], (
        servers.board.describe()
    )
    assert result["pendingInterrupts"] == [], servers.board.describe()
    assert texts(result)[-1] == "Deleted #1 buy milk.", servers.board.describe()
    last = servers.board.exchanges[-1].events[-1]
    assert last["type"] == "RUN_FINISHED", servers.board.describe()
    assert last.get("outcome", {"type": "success"}) == {"type": "success"}, servers.board.describe()
    if scenario == "approve-handler":
        assert result["handled"] == [{"id": 1}]


def test_a_declined_delete_keeps_the_task_and_leaves_nothing_pending(servers: Servers) -> None:
    result = run_scenario(servers, "decline")

    assert_clean(result, servers.board)
    assert result["sent"]["resume"][0]["payload"] == {"approved": False}
    assert [task["title"] for task in tasks(result)] == ["buy milk", "call mum"], (
        servers.board.describe()
    )
    assert result["pendingInterrupts"] == [], servers.board.describe()
    assert texts(result)[-1] == "Kept task #1.", servers.board.describe()


# -- stopping --------------------------------------------------------------------------------


def test_stopping_a_run_in_copilotkit_cancels_the_agui_run_on_the_server(
    servers: Servers,
) -> None:
    result = run_scenario(servers, "stop")

    assert result["stopped"] is True
    assert texts(result) == ["Working"]
    slow = servers.slow
    deadline = time.monotonic() + SLOW_SECONDS / 3
    while not slow.disconnected_runs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(slow.started_runs) == 1
    assert slow.cancelled_runs == slow.started_runs
    assert slow.disconnected_runs == slow.started_runs


def test_the_copilotkit_tests_fail_rather_than_skip_without_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def nowhere(_name: str) -> str | None:
        return None

    monkeypatch.setattr(shutil, "which", nowhere)

    with pytest.raises(pytest.fail.Exception, match=r"run `npm ci --prefix tests/js`"):
        _node()
