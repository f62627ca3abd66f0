"""agui.testing: collect a run, check a stream, and fold it the way the official client does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

import pytest
from pydantic import JsonValue

from agui import EventType, ProtocolViolation, RunAgentInput, RunContext, RunOutcome, testing
from agui import fold as agui_fold
from agui.errors import UsageError
from agui.events import (
    Event,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
)
from agui.messages import AssistantMessage, FunctionCall, ToolCall
from agui.testing import assert_valid, collect
from agui.verify import Rule


def started(*events: Event) -> list[Event]:
    return [RunStartedEvent(thread_id="t", run_id="r"), *events]


# -- collect ----------------------------------------------------------------------------------


def test_collect_returns_every_event_of_a_run_terminal_included() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> RunOutcome:
        ctx.say("hi")
        return RunOutcome.success()

    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))
    assert [e.type for e in events] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
    ]


def test_collect_passes_debug_through_to_the_driver() -> None:
    async def agent(_ctx: RunContext[JsonValue]) -> None:
        message = "the secret detail"
        raise ValueError(message)

    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r"), debug=True))
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert "the secret detail" in last.message


# -- assert_valid -----------------------------------------------------------------------------


def test_assert_valid_accepts_a_complete_stream() -> None:
    assert_valid(started(RunFinishedEvent(thread_id="t", run_id="r")))


def test_assert_valid_names_the_index_and_rule_of_the_offending_event() -> None:
    stream = started(TextMessageEndEvent(message_id="m"))
    with pytest.raises(ProtocolViolation, match=r"^event 1 \(TEXT_MESSAGE_END\): ") as caught:
        assert_valid(stream)
    assert caught.value.rule == Rule.MESSAGE_NOT_OPEN
    assert caught.value.event == stream[1]
    assert isinstance(caught.value.__cause__, ProtocolViolation)


def test_assert_valid_refuses_a_stream_without_a_terminal_event() -> None:
    with pytest.raises(ProtocolViolation, match=r"^event 1 \(end of stream\): .*still active"):
        assert_valid(started())


def test_assert_valid_refuses_an_empty_stream() -> None:
    with pytest.raises(ProtocolViolation, match=r"^event 0 \(end of stream\): .*no run was"):
        assert_valid([])


def test_assert_valid_lets_an_unexpected_error_through_unchanged() -> None:
    construct: Callable[..., TextMessageStartEvent] = TextMessageStartEvent.model_construct
    broken = construct()
    with pytest.raises(AttributeError, match="message_id"):
        assert_valid(started(broken))


# -- fold -------------------------------------------------------------------------------------


def test_the_kit_offers_the_fold_of_agui_fold() -> None:
    folded = testing.fold(started(TextMessageStartEvent(message_id="m1")))

    assert testing.fold is agui_fold.fold
    assert folded == agui_fold.FoldedRun(
        messages=[AssistantMessage(id="m1", content="")], state={}, outcome=None, error=None
    )


def test_assert_valid_refuses_wire_dicts_naming_the_reader() -> None:
    with pytest.raises(UsageError, match=r"assert_valid\(\) takes agui event models, but event 0"):
        assert_valid(cast("list[Event]", [{"type": "RUN_STARTED"}]))


def test_assert_valid_refuses_one_event_given_for_a_list() -> None:
    with pytest.raises(UsageError, match=r"got one RunStartedEvent: pass \[event\]"):
        assert_valid(cast("list[Event]", RunStartedEvent(thread_id="t", run_id="r")))


def test_assert_valid_refuses_a_whole_sse_body_or_one_wire_dict_naming_parse_event() -> None:
    for given in (b'data: {"type":"RUN_STARTED"}\n\n', {"type": "RUN_STARTED"}):
        shown = type(given).__name__
        with pytest.raises(UsageError, match=rf"got one {shown}: pass \[agui\.parse_event\("):
            assert_valid(cast("list[Event]", given))


def test_assert_valid_refuses_a_wire_dict_for_the_input_naming_parse_input() -> None:
    wire = cast("RunAgentInput", {"threadId": "t", "runId": "r"})
    stream = started(RunFinishedEvent(thread_id="t", run_id="r"))
    with pytest.raises(UsageError, match=r"takes a RunAgentInput, got a dict: .*parse_input"):
        assert_valid(stream, input=wire)


def test_assert_valid_checks_results_against_the_inputs_calls() -> None:
    call = ToolCall(id="c1", function=FunctionCall(name="f", arguments="{}"))
    history = RunAgentInput(
        thread_id="t", run_id="r", messages=[AssistantMessage(id="a1", tool_calls=[call])]
    )
    stream = started(
        ToolCallResultEvent(message_id="t1", tool_call_id="c1", content="ok"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    )
    assert_valid(stream, input=history)
    with pytest.raises(ProtocolViolation, match=r"^event 1 \(TOOL_CALL_RESULT\): "):
        assert_valid(stream)


def test_collect_refuses_a_wire_dict_for_the_input_naming_parse_input() -> None:
    async def hello(ctx: RunContext[JsonValue]) -> None:
        ctx.say("hi")

    wire = cast("RunAgentInput", {"threadId": "t", "runId": "r"})
    with pytest.raises(UsageError, match=r"input is a RunAgentInput, got a dict: .*parse_input"):
        asyncio.run(collect(hello, wire))
