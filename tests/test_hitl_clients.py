"""Human in the loop with the official TypeScript client, 1.0.0 and 0.0.59, on the live examples.

`tests/js/hitl.mjs` drives `HttpAgent` of `@ag-ui/client` 1.0.0 and of 0.0.59 (the version
CopilotKit's runtime pins, installed as `@ag-ui/client-legacy`) against the task board and the
travel examples, each served by a real uvicorn on 127.0.0.1. Every scenario runs in its own node
process; the test asserts on what the client ends with: its messages (no id twice, no call
overwritten), its state, the outcome and the interrupts left pending after each run, and not
one console warning or error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from examples.task_board import app as board
from examples.travel import app as travel

from agui.agents.loop import approval_result_id
from agui.testing import serving
from node_clients import node

JS_DIR = Path(__file__).parent / "js"
SCENARIO_SECONDS = 60.0
CLIENTS = ["current", "legacy"]

Json = dict[str, Any]


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with serving(board.app) as board_url, serving(travel.app) as travel_url:
        yield {"AGUI_BOARD_URL": board_url, "AGUI_TRAVEL_URL": travel_url}


def _node() -> str:
    return node("@ag-ui/client-legacy", "the human-in-the-loop client tests")


def drive(urls: dict[str, str], client: str, scenario: str) -> Json:
    """Run one scenario of hitl.mjs with one client version; what the client ended with."""
    node = _node()
    with tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        env = {
            **os.environ,
            **urls,
            "AGUI_CLIENT": client,
            "AGUI_SCENARIO": scenario,
            "AGUI_RESULT_FILE": str(result_file),
        }
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [node, "hitl.mjs"],
            cwd=JS_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=SCENARIO_SECONDS,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        result: Json = json.loads(result_file.read_text())
    assert result["error"] is None, result["error"]
    assert [run["error"] for run in result["runs"]] == [None] * len(result["runs"])
    assert result["complaints"] == []
    _assert_unique_ids(result["messages"])
    return result


def _assert_unique_ids(messages: list[Json]) -> None:
    ids = [message["id"] for message in messages]
    assert len(ids) == len(set(ids)), ids
    calls = [call["id"] for message in messages for call in message.get("toolCalls", [])]
    assert len(calls) == len(set(calls)), calls


def _titles(result: Json) -> list[tuple[str, bool]]:
    return [(task["title"], task["done"]) for task in result["state"]["tasks"]]


def _replies(result: Json) -> list[str]:
    return [
        m["content"] for m in result["messages"] if m["role"] == "assistant" and m.get("content")
    ]


def _delete_calls(result: Json) -> list[Json]:
    return [
        call
        for message in result["messages"]
        for call in message.get("toolCalls", [])
        if call["function"]["name"] == "delete_task"
    ]


@pytest.mark.parametrize("client", CLIENTS)
def test_the_travel_assistant_answers_through_the_client(urls: dict[str, str], client: str) -> None:
    result = drive(urls, client, "travel")

    [run] = result["runs"]
    assert run["events"][0] == "RUN_STARTED"
    assert run["events"][-1] == "RUN_FINISHED"
    assert [m["role"] for m in result["messages"]][:1] == ["user"]
    assert "Paris" in _replies(result)[-1]
    assert run["pendingInterrupts"] == []


@pytest.mark.parametrize("client", CLIENTS)
def test_the_board_adds_and_completes_tasks_through_the_apps_tools(
    urls: dict[str, str], client: str
) -> None:
    result = drive(urls, client, "board-add-complete")

    assert _titles(result) == [("buy milk", True), ("call mum", False)]
    assert _replies(result)[-1] == "Marked #1 buy milk as done."
    assert [run["pendingInterrupts"] for run in result["runs"]] == [[], []]


APPROVALS = [
    "approve-plain-resume",
    "approve-same-run-id",
    "approve-same-run-id-and-tool-result",
    "approve-handler-output-then-resume",
]


@pytest.mark.parametrize("scenario", APPROVALS)
@pytest.mark.parametrize("client", CLIENTS)
def test_an_approved_delete_removes_the_task_once_and_leaves_nothing_pending(
    urls: dict[str, str], client: str, scenario: str
) -> None:
    result = drive(urls, client, scenario)

    add, ask, settle, after = result["runs"]
    [question] = ask["pendingInterrupts"]
    assert ask["outcome"]["type"] == "interrupt"
    assert question["id"] == "approve-" + question["toolCallId"]
    assert settle["outcome"] is None or settle["outcome"]["type"] == "success"
    assert settle["pendingInterrupts"] == after["pendingInterrupts"] == []
    assert _titles(result) == [("call mum", False)]
    # One delete call, settled once by the agent's own answer; the next request asks nothing.
    [call] = _delete_calls(result)
    answers = [m["id"] for m in result["messages"] if m.get("toolCallId") == call["id"]]
    assert answers.count(approval_result_id(call["id"])) == 1
    assert set(answers) <= {approval_result_id(call["id"]), "app-tool-1"}
    assert after["outcome"] is None or after["outcome"]["type"] == "success"
    assert _replies(result)[-2:] == ["Deleted #1 buy milk.", "The board: #2 call mum."]
    assert add["pendingInterrupts"] == []


@pytest.mark.parametrize("client", CLIENTS)
def test_a_declined_delete_keeps_the_task_and_is_not_asked_again(
    urls: dict[str, str], client: str
) -> None:
    result = drive(urls, client, "decline")

    _, _, settle, after = result["runs"]
    assert settle["pendingInterrupts"] == after["pendingInterrupts"] == []
    assert _titles(result) == [("buy milk", False), ("call mum", False)]
    assert _replies(result)[-2:] == ["Kept task #1.", "The board: #1 buy milk, #2 call mum."]


def test_the_client_tests_fail_rather_than_skip_without_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def nowhere(_name: str) -> str | None:
        return None

    monkeypatch.setattr(shutil, "which", nowhere)

    with pytest.raises(pytest.fail.Exception, match=r"run `npm ci --prefix tests/js`"):
        _node()
