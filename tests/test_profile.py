"""The legacy-peer profile: a pre-1.0 client gets a stream it accepts, a 1.0 client the 1.0 one."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Literal, cast

import httpx
import pytest
from examples.supervisor import app as supervisor
from pydantic import JsonValue

from agui import RunAgentInput, RunContext
from agui._emit.receiver import run_receiver
from agui._emit.record import Kind, Record, materialize
from agui.asgi import asgi_app
from agui.asgi._profile import LegacyProfile, is_legacy, profiled
from agui.events import (
    CustomEvent,
    Event,
    RunFinishedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageContentEvent,
    ToolCallResultEvent,
)
from agui.messages import ImagePart, TextPart, UrlSource
from agui.testing import fold, serving
from agui.transform import FilterToolCalls
from agui.types import CancelledOutcome, SuccessOutcome
from node_clients import node, run_script

Ctx = RunContext[JsonValue]
JS_DIR = Path(__file__).parent / "js"
REQUEST_SECONDS = 30.0
QUESTION = "Who leads Project Atlas?"


# -- the transformer ---------------------------------------------------------------------------


def test_the_profile_drops_subagent_events_and_strips_attribution() -> None:
    profile = LegacyProfile()

    assert profile.transform(SubagentStartedEvent(subagent_run_id="s1", name="a")) == []
    assert profile.transform(SubagentFinishedEvent(subagent_run_id="s1")) == []
    assert profile.transform(SubagentErrorEvent(subagent_run_id="s1", message="x")) == []
    [text] = profile.transform(
        TextMessageContentEvent(message_id="m", delta="hi", subagent_run_id="s1")
    )
    assert text.model_dump(by_alias=True, exclude_none=True) == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "m",
        "delta": "hi",
    }


def test_the_profile_passes_everything_else_through_as_it_is() -> None:
    plain: list[Event] = [
        TextMessageContentEvent(message_id="m", delta="hi"),
        CustomEvent(name="x", value=None),
        RunFinishedEvent(thread_id="t", run_id="r", outcome=SuccessOutcome()),
        ToolCallResultEvent(message_id="m2", tool_call_id="c", content="ok"),
    ]

    for event in plain:
        assert LegacyProfile().transform(event) == [event]
        assert LegacyProfile().transform(event)[0] is event


def test_a_cancelled_run_becomes_a_success_that_says_it_was_cancelled() -> None:
    stopped = RunFinishedEvent(
        thread_id="t", run_id="r", outcome=CancelledOutcome(), metadata={"k": "v"}
    )

    [finished] = LegacyProfile().transform(stopped)

    assert finished.model_dump(by_alias=True, exclude_none=True) == {
        "type": "RUN_FINISHED",
        "metadata": {"k": "v", "outcome": "cancelled"},
        "threadId": "t",
        "runId": "r",
    }


def test_a_success_leaving_calls_to_the_client_ends_without_their_ids() -> None:
    # @ag-ui/client 0.0.59 (CopilotKit's runtime) reads a success as {"type": "success"} only.
    pending = RunFinishedEvent(
        thread_id="t", run_id="r", outcome=SuccessOutcome(pending_tool_call_ids=["c1"])
    )
    plain = RunFinishedEvent(thread_id="t", run_id="r", outcome=SuccessOutcome())

    [finished] = LegacyProfile().transform(pending)

    assert finished.model_dump(by_alias=True, exclude_none=True) == {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "success"},
    }
    assert LegacyProfile().transform(plain) == [plain]


def test_a_result_of_parts_is_flattened_to_its_text_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    parts = ToolCallResultEvent(
        message_id="m",
        tool_call_id="c1",
        content=[
            TextPart(text="Paris"),
            ImagePart(source=UrlSource(value="https://example.com/p.png")),
            TextPart(text="France"),
        ],
        subagent_run_id="s1",
    )

    with caplog.at_level(logging.WARNING, logger="agui"):
        [flat] = LegacyProfile().transform(parts)

    assert flat.model_dump(by_alias=True, exclude_none=True) == {
        "type": "TOOL_CALL_RESULT",
        "messageId": "m",
        "toolCallId": "c1",
        "content": "Paris\nFrance",
    }
    assert "tool call c1 is made of content parts" in caplog.text
    assert "(left out: image)" in caplog.text


def test_a_subagents_state_stripped_of_its_id_still_moves_the_baseline_once() -> None:
    notes: list[JsonValue] = ["a long note about Project Aurora and its launch"] * 3
    start: dict[str, JsonValue] = {"notes": notes}
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r", state=start), transformers=[LegacyProfile()]
    )

    with ctx.subagent("researcher") as sub:
        for note in ("one", "two", "three"):
            cast("list[JsonValue]", cast("dict[str, JsonValue]", sub.state)["notes"]).append(note)
            sub.publish_state()
    sent = events.drain()

    assert [e.type for e in sent] == ["STATE_SNAPSHOT", "STATE_DELTA", "STATE_DELTA"]
    assert fold(sent).state == ctx.state


# -- the fast path ------------------------------------------------------------------------------


class Unmarked(LegacyProfile):
    """The profile as a transformer that does not say it passes records: every event its model."""

    _records_pass = False


def profiled_run(profile: LegacyProfile) -> tuple[list[Event | Record], list[Event]]:
    """A run's own blocks, a subagent's, a result of parts and a stop, through `profile`.

    Returns what the queue holds, records and events as they wait, and the same drained.
    """
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), transformers=[profile])
    with ctx.message() as message:
        message.delta("Hello, ")
        message.delta("world")
    with ctx.reasoning() as reasoning:
        reasoning.delta("hmm")
    with ctx.tool_call("lookup") as call:
        call.args('{"q": ')
        call.args('"atlas"}')
        call.result([TextPart(text="Ada"), ImagePart(source=UrlSource(value="https://e.x/a.png"))])
    with ctx.subagent("researcher") as sub, sub.message() as said:
        said.delta("found it")
    ctx.say("Done.")
    ctx.emit(RunFinishedEvent(thread_id="t", run_id="r", outcome=CancelledOutcome()))
    items = run_receiver(events).items()
    return items, [item if not isinstance(item, tuple) else materialize(item) for item in items]


def test_a_profiled_runs_own_deltas_starts_and_ends_keep_the_record_path() -> None:
    items, _ = profiled_run(LegacyProfile())

    assert {item[0] for item in items if type(item) is tuple} == {
        Kind.TEXT_START,
        Kind.TEXT_CONTENT,
        Kind.TEXT_END,
        Kind.REASONING_CONTENT,
        Kind.TOOL_ARGS,
        Kind.TOOL_END,
    }
    assert (Kind.TEXT_CONTENT, "r-msg-1", "world") in items


def test_the_record_path_sends_what_the_profiles_full_path_sends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agui")
    _, fast = profiled_run(LegacyProfile())
    full_items, full = profiled_run(Unmarked())

    assert not any(type(item) is tuple for item in full_items)
    assert fast == full
    assert not any(e.type.startswith("SUBAGENT_") for e in fast)
    assert all(getattr(e, "subagent_run_id", None) is None for e in fast)
    assert [e.metadata for e in fast if isinstance(e, RunFinishedEvent)] == [
        {"outcome": "cancelled"}
    ]
    assert [e.content for e in fast if isinstance(e, ToolCallResultEvent)] == ["Ada"]


def test_a_transformer_without_the_marker_beside_the_profile_turns_the_record_path_off() -> None:
    seen: list[str] = []

    class Spy:
        def transform(self, event: Event) -> list[Event]:
            seen.append(event.type)
            return [event]

    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r"), transformers=[Spy(), LegacyProfile()]
    )
    ctx.say("Hi")

    assert not any(type(item) is tuple for item in run_receiver(events).items())
    assert seen == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


def test_a_request_without_a_protocol_version_is_a_legacy_peers_unless_forced() -> None:
    old = RunAgentInput(thread_id="t", run_id="r")
    new = old.model_copy(update={"protocol_version": "1.0"})

    assert [is_legacy(i, "auto") for i in (old, new)] == [True, False]
    assert [is_legacy(i, "0.x") for i in (old, new)] == [True, True]
    assert [is_legacy(i, "1.0") for i in (old, new)] == [False, False]


def test_the_chain_ends_with_the_profile_only_under_a_legacy_request() -> None:
    chain = profiled(lambda: [FilterToolCalls({"secret"})])

    assert [type(t).__name__ for t in chain(legacy=False)] == ["FilterToolCalls"]
    assert [type(t).__name__ for t in chain(legacy=True)] == ["FilterToolCalls", "LegacyProfile"]


# -- through the endpoint ----------------------------------------------------------------------


async def showcase(ctx: Ctx) -> None:
    """What each request asks for: the supervisor, a run stopped on purpose, a result of parts."""
    text = ctx.last_user_text or ""
    if text.startswith("stop"):
        with ctx.subagent("researcher") as sub:
            sub.say("Starting.")
        ctx.say("Stopping here.")
        ctx.token.cancel("the user pressed stop")
        return
    if text.startswith("parts"):
        with ctx.subagent("painter") as painter, painter.tool_call("draw") as call:
            call.args_json({"what": "tower"})
            call.result(
                [
                    TextPart(text="A tower."),
                    ImagePart(source=UrlSource(value="https://example.com/t.png")),
                ]
            )
        return
    if text.startswith("steps"):
        with ctx.step("plan"), ctx.subagent("researcher") as sub, sub.step("plan"):
            sub.say("Planning too.")
        return
    await supervisor.agent.run(ctx)


def frames(url: str, *, version: str | None, text: str = QUESTION) -> list[dict[str, Any]]:
    body: dict[str, Any] = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u1", "role": "user", "content": text}],
    }
    if version is not None:
        body["protocolVersion"] = version
    answer = httpx.post(url, json=body, timeout=REQUEST_SECONDS)
    answer.raise_for_status()
    return [json.loads(line[6:]) for line in answer.text.split("\n\n") if line.startswith("data: ")]


def kinds(stream: list[dict[str, Any]]) -> set[str]:
    return {frame["type"] for frame in stream}


def test_the_endpoint_downgrades_the_stream_of_a_request_without_a_protocol_version() -> None:
    with serving(asgi_app(showcase)) as url:
        legacy = frames(url, version=None)
        current = frames(url, version="1.0")

    assert {"SUBAGENT_STARTED", "SUBAGENT_FINISHED"} <= kinds(current)
    assert any("subagentRunId" in frame for frame in current)
    assert not any(kind.startswith("SUBAGENT_") for kind in kinds(legacy))
    assert not any("subagentRunId" in frame for frame in legacy)
    strip = {"SUBAGENT_STARTED", "SUBAGENT_FINISHED"}
    assert [f["type"] for f in legacy] == [f["type"] for f in current if f["type"] not in strip]
    assert legacy[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize("setting", ["1.0", "0.x"])
def test_the_protocol_version_setting_forces_a_profile(setting: Literal["1.0", "0.x"]) -> None:
    with serving(asgi_app(showcase, protocol_version=setting)) as url:
        streams = [frames(url, version=version) for version in (None, "1.0")]

    for stream in streams:
        assert ("SUBAGENT_STARTED" in kinds(stream)) is (setting == "1.0")


def test_the_verifier_checks_the_downgraded_stream_against_its_own_rules() -> None:
    # A parent's step and a subagent's step of one name are two steps in 1.0; stripped of their
    # owners, they are one step opened twice, which a pre-1.0 client refuses.
    with serving(asgi_app(showcase)) as url:
        current = frames(url, version="1.0", text="steps")
        legacy = frames(url, version=None, text="steps")

    assert current[-1]["type"] == "RUN_FINISHED"
    assert (legacy[-1]["type"], legacy[-1]["code"]) == ("RUN_ERROR", "PROTOCOL_VIOLATION")


def test_a_stopped_run_ends_as_cancelled_in_1_0_and_as_a_marked_success_before() -> None:
    with serving(asgi_app(showcase)) as url:
        current = frames(url, version="1.0", text="stop")
        legacy = frames(url, version=None, text="stop")

    assert current[-1]["outcome"] == {"type": "cancelled"}
    assert "outcome" not in legacy[-1]
    assert legacy[-1]["metadata"] == {"outcome": "cancelled"}


# -- the official TypeScript clients -----------------------------------------------------------


def _node() -> str:
    return node("@ag-ui/client-legacy", "the TypeScript client tests")


def run_client(client: str, url: str, *messages: str) -> dict[str, Any]:
    env = {"AGUI_URL": url, "AGUI_CLIENT": client, "AGUI_MESSAGES": json.dumps(list(messages))}
    return run_script(_node(), ["subagents.mjs"], env)


def test_the_1_0_client_runs_the_supervisor_and_keeps_the_researchers_messages_attributed() -> None:
    with serving(supervisor.app) as url:
        client = run_client("current", url, supervisor.QUESTION)

    [run] = client["runs"]
    assert (run["error"], run["failed"], client["complaints"]) == (None, None, [])
    assert ["SUBAGENT_STARTED", None] in [[t, None] for t, _ in run["events"]]
    owners = {(m["role"], m.get("subagentRunId")) for m in client["messages"]}
    assert {("assistant", "run-1-sub-1"), ("tool", "run-1-sub-1"), ("assistant", None)} <= owners
    assert "14 March 2027" in client["messages"][-1]["content"]


def test_the_legacy_client_runs_the_supervisor_a_stopped_run_and_a_result_of_parts() -> None:
    with serving(asgi_app(showcase)) as url:
        client = run_client("legacy", url, supervisor.QUESTION, "stop, please", "parts, please")

    answer, stopped, parts = client["runs"]
    for run in client["runs"]:
        assert (run["error"], run["failed"]) == (None, None)
        assert not any(kind.startswith("SUBAGENT_") or owner for kind, owner in run["events"])
    assert client["complaints"] == []
    assert answer["events"][-1][0] == stopped["events"][-1][0] == "RUN_FINISHED"
    assert stopped["metadata"] == {"outcome": "cancelled"}
    assert parts["events"][-1][0] == "RUN_FINISHED"
    messages = client["messages"]
    assert not any("subagentRunId" in m for m in messages)
    assert any(
        "14 March 2027" in str(m.get("content")) for m in messages if m["role"] == "assistant"
    )
    assert {"role": "tool", "content": "A tower."}.items() <= next(
        m for m in messages if m["role"] == "tool" and m["content"] == "A tower."
    ).items()


def test_the_client_tests_fail_rather_than_skip_without_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def nowhere(_name: str) -> str | None:
        return None

    monkeypatch.setattr(shutil, "which", nowhere)

    with pytest.raises(pytest.fail.Exception, match=r"npm ci --prefix tests/js"):
        _node()


# -- CopilotKit --------------------------------------------------------------------------------


def test_copilotkits_runtime_shows_the_supervisors_answer() -> None:
    """CopilotKit's runtime (HttpAgent 0.0.59 inside) runs the supervisor like any agent.

    The harness of `tests/test_copilotkit.py` asks its agent named "travel" a question; here
    that agent is the supervisor, whose researcher finds nothing on it in its notes.
    """
    node = _node()
    with serving(supervisor.app) as url, tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        env = {
            **os.environ,
            "AGUI_SCENARIO": "travel",
            "AGUI_TRAVEL_URL": url,
            "AGUI_RESULT_FILE": str(result_file),
            "COPILOTKIT_TELEMETRY_DISABLED": "true",
            "DO_NOT_TRACK": "1",
        }
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [node, "copilotkit.mjs"],
            cwd=JS_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        result: dict[str, Any] = json.loads(result_file.read_text())

    assert (result["errors"], result["complaints"], result["duplicateMessageIds"]) == ([], [], [])
    said = [m["content"] for m in result["messages"] if m["role"] == "assistant" and m["content"]]
    assert said[-1] == ("Here is what my researcher found: My notes say nothing about that, sorry.")
    assert not any("subagentRunId" in m for m in result["messages"])
