"""The tool loop on a real model: a local Qwen2.5-Coder served by llama.cpp, native and XML.

These tests are marked `llm` and left out of the default run (pyproject's `addopts` deselects
them); `scripts/llm-lane` sets the model up and runs them with `-m llm`. The server is the
OpenAI-compatible one of the folder `AGUI_LLM_DIR` names (by default `../shared/llm` from the
repository root: `setup.sh` installs it, `serve.sh PORT` runs it); a session fixture starts it on
a free loopback port, waits until it is healthy and stops it. When the folder is absent the tests
fail, in one line, saying so: a check that did not run must not look like one that passed.

A model's wording changes with its version and its sampling, so the tests assert behaviour, never
text: the right tools called with a sensible argument, a stream the verifier accepts, an answer
that uses what the tools returned, and no call for a question no tool answers. Sampling is greedy
(`temperature: 0`) and replies are capped, so a run is repeatable and its time bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from examples.travel.app import INSTRUCTIONS, QUESTION, get_weather, search_restaurants

from agui import RunAgentInput
from agui.agents import ToolLoopAgent
from agui.agents.models import OpenAIModel
from agui.events import Event, ToolCallArgsEvent, ToolCallResultEvent, ToolCallStartEvent
from agui.messages import AssistantMessage, UserMessage
from agui.testing import assert_valid, collect, fold

pytestmark = pytest.mark.llm

ROOT = Path(__file__).resolve().parents[1]
LLM_DIR = Path(os.environ.get("AGUI_LLM_DIR") or ROOT.parent / "shared" / "llm")
"""Where the model server's scripts are: `AGUI_LLM_DIR`, or `../shared/llm` from the root."""

HEALTHY_WITHIN = 180.0
REPLY_TOKENS = 256
READ_TIMEOUT = 300.0

Mode = Literal["native", "xml"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
            return True
    except OSError:  # refused, or 503 (an HTTPError) while the model loads
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="session")
def llm_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not (LLM_DIR / "serve.sh").exists():
        pytest.fail(
            f"the local model server is missing: {LLM_DIR} has no serve.sh; point AGUI_LLM_DIR "
            "at the folder that holds setup.sh and serve.sh",
            pytrace=False,
        )
    setup = [LLM_DIR / "setup.sh"]
    subprocess.run(setup, check=True, stdout=subprocess.DEVNULL)  # noqa: S603 - the folder's own script
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llm") / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(  # noqa: S603 - the folder's own script
            [LLM_DIR / "serve.sh", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + HEALTHY_WITHIN
            while not _healthy(port):
                if server.poll() is not None:
                    pytest.fail(f"the model server exited with {server.returncode}; see {log_path}")
                if time.monotonic() > deadline:
                    pytest.fail(f"the model server was not healthy in {HEALTHY_WITHIN:.0f} s")
                time.sleep(0.5)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            _stop(server)


def _ask(base_url: str, mode: Mode, question: str) -> list[Event]:
    model = OpenAIModel(
        "local",
        base_url=base_url,
        extra_body={"temperature": 0, "max_tokens": REPLY_TOKENS},
        timeout=READ_TIMEOUT,
        max_retries=0,
    )
    agent = ToolLoopAgent(
        model,
        tools=[get_weather, search_restaurants],
        instructions=INSTRUCTIONS,
        dispatcher=mode,
        max_turns=4,
    )
    run_input = RunAgentInput(
        thread_id="t", run_id="r", messages=[UserMessage(id="u1", content=question)]
    )
    return asyncio.run(collect(agent, run_input))


def _calls(events: list[Event]) -> dict[str, dict[str, object]]:
    """Each tool called, by name, with the arguments it got."""
    names = {e.tool_call_id: e.tool_call_name for e in events if isinstance(e, ToolCallStartEvent)}
    arguments: dict[str, str] = {}
    for event in events:
        if isinstance(event, ToolCallArgsEvent):
            arguments[event.tool_call_id] = arguments.get(event.tool_call_id, "") + event.delta
    return {names[call_id]: json.loads(text or "{}") for call_id, text in arguments.items()}


def _answer(events: list[Event]) -> str:
    messages = fold(events).messages
    assistant = [m for m in messages if isinstance(m, AssistantMessage) and m.content]
    assert assistant, "the model gave no answer"
    return str(assistant[-1].content)


def _temperature(events: list[Event]) -> int:
    """The temperature `get_weather` returned in this run."""
    for event in events:
        content = event.content if isinstance(event, ToolCallResultEvent) else None
        if isinstance(content, str) and '"temperature_c"' in content:
            value: int = json.loads(content)["temperature_c"]
            return value
    pytest.fail("no get_weather result in the stream")


@pytest.mark.parametrize("mode", ["native", "xml"])
def test_the_travel_question_calls_both_tools_and_answers_from_their_results(
    llm_base_url: str, mode: Mode
) -> None:
    events = _ask(llm_base_url, mode, QUESTION)

    assert_valid(events)
    calls = _calls(events)
    assert set(calls) == {"get_weather", "search_restaurants"}
    assert "paris" in str(calls["get_weather"].get("location", "")).lower()
    assert "paris" in str(calls["search_restaurants"].get("location", "")).lower()
    assert str(_temperature(events)) in _answer(events)


@pytest.mark.parametrize("mode", ["native", "xml"])
def test_a_question_no_tool_answers_gets_an_answer_without_a_call(
    llm_base_url: str, mode: Mode
) -> None:
    events = _ask(llm_base_url, mode, "Thanks, that is all for now. Goodbye!")

    assert_valid(events)
    assert _calls(events) == {}
    assert _answer(events).strip()
