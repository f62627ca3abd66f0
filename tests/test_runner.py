"""The run driver: RUN_STARTED, the agent's events, and exactly one terminal event, always."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import re
import signal
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar, cast

import httpx
import pytest
from pydantic import BaseModel, JsonValue

from agui import (
    PROTOCOL_VERSION,
    Agent,
    AgentError,
    EventType,
    RunAgentInput,
    RunContext,
    RunOutcome,
    TokenUsage,
    asgi_app,
    parse_event,
    run,
)
from agui.errors import PatchError, UnclosedHandleWarning, UsageError
from agui.events import (
    CustomEvent,
    Event,
    RawEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallStartEvent,
)
from agui.runner import agent_problem, check_agent
from agui.runner import drive as drive_run
from agui.testing import assert_valid, collect, serving
from agui.transform import Transformer
from agui.types import (
    CancelledOutcome,
    Interrupt,
    InterruptOutcome,
    SuccessOutcome,
)

E = TypeVar("E")
S = TypeVar("S")
HIDDEN = "hunter2-do-not-leak"
TERMINALS = (EventType.RUN_FINISHED, EventType.RUN_ERROR)
Ctx = RunContext[JsonValue]
AgentFn = Callable[[Ctx], Awaitable[RunOutcome | None]]


class Board(BaseModel):
    tasks: list[str] = []


class Unserializable:
    """A value no JSON serializer knows."""


def request(**fields: object) -> RunAgentInput:
    return RunAgentInput.model_validate({"threadId": "t", "runId": "r", **fields})


def drive(
    agent: AgentFn,
    *,
    debug: bool = False,
    transformers: Sequence[Transformer] = (),
    **fields: object,
) -> list[Event]:
    """Run `agent` to the end and check the stream it produced."""
    events = asyncio.run(collect(agent, request(**fields), transformers=transformers, debug=debug))
    assert_valid(events)
    assert types_of(events).count(EventType.RUN_STARTED) == 1
    assert sum(e.type in TERMINALS for e in events) == 1
    assert events[-1].type in TERMINALS
    return events


LEFT_OPEN = "was still open when its run ended, so the run closed it"


def leaving_open() -> pytest.WarningsRecorder:
    """Expect the driver to report a handle the agent left open."""
    return pytest.warns(UnclosedHandleWarning, match=LEFT_OPEN)


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def only(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def error_of(events: Sequence[Event]) -> RunErrorEvent:
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    return last


def finished(events: Sequence[Event]) -> RunFinishedEvent:
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    return last


def fail() -> None:
    raise ValueError(HIDDEN)


# -- the lifecycle ----------------------------------------------------------------------------


def test_a_run_opens_with_run_started_declaring_protocol_1_0() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("Hello!")

    events = drive(agent, parentRunId="p")
    started = events[0]
    assert isinstance(started, RunStartedEvent)
    assert (started.thread_id, started.run_id, started.parent_run_id) == ("t", "r", "p")
    assert started.protocol_version == PROTOCOL_VERSION == "1.0"
    assert started.model_dump_json().startswith('{"type":"RUN_STARTED","threadId":"t"')
    assert types_of(events) == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
    ]
    done = finished(events)
    assert (done.thread_id, done.run_id) == ("t", "r")
    assert done.outcome == SuccessOutcome()


def test_an_agent_object_with_a_run_method_is_driven_like_a_function() -> None:
    class Greeter:
        async def run(self, ctx: Ctx, /) -> RunOutcome | None:
            ctx.say("hi")
            return RunOutcome.success()

    greeter = Greeter()
    assert isinstance(greeter, Agent)
    events = asyncio.run(collect(greeter, request()))
    assert_valid(events)
    assert types_of(events)[-1] == EventType.RUN_FINISHED


def test_calls_ended_without_result_are_listed_as_pending_on_success() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.tool_call("confirm") as call:
            call.end()
        with ctx.tool_call("lookup") as call:
            call.result("ok")
        with ctx.tool_call("approve"):
            pass

    done = finished(drive(agent))
    assert done.outcome == SuccessOutcome(pending_tool_call_ids=["r-call-1", "r-call-3"])


def test_a_success_with_an_empty_pending_list_is_filled_in() -> None:
    async def agent(ctx: Ctx) -> RunOutcome:
        with ctx.tool_call("confirm") as call:
            call.end()
        return RunOutcome.success(pending_tool_call_ids=[])

    assert finished(drive(agent)).outcome == SuccessOutcome(pending_tool_call_ids=["r-call-1"])


def test_a_success_naming_its_own_pending_calls_is_kept() -> None:
    async def agent(ctx: Ctx) -> RunOutcome:
        with ctx.tool_call("a") as call:
            call.end()
        with ctx.tool_call("b") as call:
            call.end()
        return RunOutcome.success(pending_tool_call_ids=["r-call-2"])

    assert finished(drive(agent)).outcome == SuccessOutcome(pending_tool_call_ids=["r-call-2"])


def test_the_result_and_usage_go_on_run_finished() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.result = {"answer": 42}
        ctx.usage.append(TokenUsage(provider="openai", input_tokens=3))

    done = finished(drive(agent))
    assert done.result == {"answer": 42}
    assert done.usage == [TokenUsage(provider="openai", input_tokens=3)]


def test_an_interrupt_publishes_the_state_first_and_carries_no_result() -> None:
    async def agent(ctx: Ctx) -> RunOutcome:
        ctx.result = "ignored"
        cast("dict[str, JsonValue]", ctx.state)["pending"] = "approval"
        return RunOutcome.interrupt([Interrupt(id="i1", reason="confirmation")])

    events = drive(agent)
    assert types_of(events)[-2:] == [EventType.STATE_SNAPSHOT, EventType.RUN_FINISHED]
    done = finished(events)
    assert done.result is None
    assert done.outcome == InterruptOutcome(interrupts=[Interrupt(id="i1", reason="confirmation")])


def test_a_returned_cancelled_outcome_ends_the_run_cancelled() -> None:
    async def agent(ctx: Ctx) -> RunOutcome:
        ctx.say("stopping")
        return RunOutcome.cancelled()

    assert finished(drive(agent)).outcome == CancelledOutcome()


def test_handles_left_open_on_return_are_closed_before_run_finished() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.step("plan")
        ctx.message().delta("unfinished")

    with leaving_open():
        events = drive(agent)
    assert types_of(events)[-3:] == [
        EventType.TEXT_MESSAGE_END,
        EventType.STEP_FINISHED,
        EventType.RUN_FINISHED,
    ]


def test_an_agent_that_returns_something_else_fails_with_agent_error() -> None:
    async def agent(ctx: Ctx) -> RunOutcome:
        ctx.say("hi")
        return cast("RunOutcome", "done")

    error = error_of(drive(agent))
    assert error.code == "AGENT_ERROR"
    assert "an agent must return RunOutcome.success()" in error.message


# -- terminal events sent by the agent --------------------------------------------------------


def test_an_agent_that_emits_its_own_run_finished_gets_no_second_one() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.emit(RunFinishedEvent(thread_id="t", run_id="r", outcome=CancelledOutcome()))

    events = drive(agent)
    assert types_of(events) == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    assert finished(events).outcome == CancelledOutcome()


def test_an_agent_that_emits_its_own_run_error_gets_no_second_terminal() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.emit(RunErrorEvent(message="mine", code="MINE"))

    events = drive(agent)
    assert types_of(events) == [EventType.RUN_STARTED, EventType.RUN_ERROR]
    assert error_of(events).code == "MINE"


def test_an_agent_that_fails_after_its_own_terminal_event_adds_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.emit(RunFinishedEvent(thread_id="t", run_id="r"))
        fail()

    with caplog.at_level(logging.ERROR, logger="agui"):
        events = drive(agent)
    assert types_of(events) == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    assert "run r failed after its terminal event" in caplog.text


def test_an_agent_that_emits_inside_a_block_after_its_own_run_error_ends_once() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.message():
            ctx.emit(RunErrorEvent(message="mine"))

    events = drive(agent)
    assert types_of(events) == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.RUN_ERROR,
    ]


# -- errors -----------------------------------------------------------------------------------


async def _before_any_event(_ctx: Ctx) -> None:
    fail()


async def _in_message(ctx: Ctx) -> None:
    with ctx.message() as message:
        message.delta("partial")
        fail()


async def _in_reasoning(ctx: Ctx) -> None:
    with ctx.reasoning() as thinking:
        thinking.delta("hmm")
        fail()


async def _in_tool_call(ctx: Ctx) -> None:
    with ctx.tool_call("get_weather") as call:
        call.args('{"city":')
        fail()


async def _in_nested_steps(ctx: Ctx) -> None:
    with ctx.step("outer"), ctx.step("inner"):
        fail()


async def _in_call_in_step(ctx: Ctx) -> None:
    with ctx.step("act"), ctx.tool_call("f"):
        fail()


async def _in_handles_opened_without_with(ctx: Ctx) -> None:
    ctx.step("outer")
    ctx.step("inner")
    ctx.reasoning().delta("thinking")
    fail()


async def _after_a_result(ctx: Ctx) -> None:
    with ctx.tool_call("f") as call:
        call.result("ok")
        fail()


async def _in_publish(ctx: Ctx) -> None:
    with ctx.step("save"), ctx.message():
        cast("dict[str, JsonValue]", ctx.state)["bad"] = cast("JsonValue", Unserializable())
        ctx.publish_state()


RS, RE = EventType.RUN_STARTED, EventType.RUN_ERROR
SS, SF = EventType.STEP_STARTED, EventType.STEP_FINISHED
TMS, TMC, TME = (
    EventType.TEXT_MESSAGE_START,
    EventType.TEXT_MESSAGE_CONTENT,
    EventType.TEXT_MESSAGE_END,
)
TCS, TCA, TCE, TCR = (
    EventType.TOOL_CALL_START,
    EventType.TOOL_CALL_ARGS,
    EventType.TOOL_CALL_END,
    EventType.TOOL_CALL_RESULT,
)
RST, RMS, RMC, RME, REN = (
    EventType.REASONING_START,
    EventType.REASONING_MESSAGE_START,
    EventType.REASONING_MESSAGE_CONTENT,
    EventType.REASONING_MESSAGE_END,
    EventType.REASONING_END,
)
FAILURES: list[tuple[str, AgentFn, list[EventType], str]] = [
    ("before-any-event", _before_any_event, [RS, RE], "AGENT_ERROR"),
    ("in-message", _in_message, [RS, TMS, TMC, TME, RE], "AGENT_ERROR"),
    ("in-reasoning", _in_reasoning, [RS, RST, RMS, RMC, RME, REN, RE], "AGENT_ERROR"),
    ("in-tool-call", _in_tool_call, [RS, TCS, TCA, TCE, RE], "AGENT_ERROR"),
    ("in-nested-steps", _in_nested_steps, [RS, SS, SS, SF, SF, RE], "AGENT_ERROR"),
    ("in-call-in-step", _in_call_in_step, [RS, SS, TCS, TCE, SF, RE], "AGENT_ERROR"),
    (
        "opened-without-with",
        _in_handles_opened_without_with,
        [RS, SS, SS, RST, RMS, RMC, RME, REN, SF, SF, RE],
        "AGENT_ERROR",
    ),
    ("after-a-result", _after_a_result, [RS, TCS, TCE, TCR, RE], "AGENT_ERROR"),
    ("in-publish", _in_publish, [RS, SS, TMS, TME, SF, RE], "STATE_ERROR"),
]


def expecting_unclosed(agent: AgentFn) -> contextlib.AbstractContextManager[object]:
    """The warning for the agent that opens its blocks without `with`, nothing for the others."""
    return leaving_open() if agent is _in_handles_opened_without_with else contextlib.nullcontext()


@pytest.mark.parametrize(
    ("agent", "expected", "code"),
    [case[1:] for case in FAILURES],
    ids=[case[0] for case in FAILURES],
)
def test_an_exception_anywhere_closes_open_blocks_innermost_first_then_one_run_error(
    agent: AgentFn, expected: list[EventType], code: str
) -> None:
    with expecting_unclosed(agent):
        events = drive(agent)
    assert types_of(events) == expected
    assert error_of(events).code == code


@pytest.mark.ag_ui_validate
def test_a_call_failing_mid_arguments_is_still_ended_before_the_run_error() -> None:
    """The call is closed on the error path even though its arguments are partial JSON.

    AG-UI says TOOL_CALL_END means "the arguments are complete", not "valid"; leaving the call
    open would break the handle contract (and RUN_FINISHED after a cancel needs it closed).
    ag-ui-validate reads such an END as an error (AGUI204), and that is its only finding.
    """
    from ag_ui_validate.pytest_plugin import assert_valid_agui  # noqa: PLC0415 - Python >= 3.11 only

    events = drive(_in_tool_call)
    assert_valid(events)
    with pytest.raises(AssertionError, match="1 error-severity finding") as caught:
        assert_valid_agui([json.loads(event.model_dump_json()) for event in events])
    assert "AGUI204" in str(caught.value)


def test_steps_closed_by_the_driver_finish_innermost_first() -> None:
    with leaving_open():
        events = drive(_in_handles_opened_without_with)
    assert [e.step_name for e in only(events, StepFinishedEvent)] == ["inner", "outer"]


@pytest.mark.parametrize(
    "agent", [case[1] for case in FAILURES], ids=[case[0] for case in FAILURES]
)
def test_no_exception_text_reaches_the_client_without_debug(agent: AgentFn) -> None:
    with expecting_unclosed(agent):
        events = drive(agent)
    for event in events:
        assert HIDDEN not in event.model_dump_json()
        assert "Unserializable" not in event.model_dump_json()


@pytest.mark.parametrize(
    "agent",
    [case[1] for case in FAILURES[:-1]],
    ids=[case[0] for case in FAILURES[:-1]],
)
def test_the_exception_text_reaches_the_client_with_debug(agent: AgentFn) -> None:
    with expecting_unclosed(agent):
        error = error_of(drive(agent, debug=True))
    assert error.message == f"the agent failed with an unexpected error: ValueError: {HIDDEN}"


def test_a_state_error_with_debug_carries_the_serializer_message() -> None:
    error = error_of(drive(_in_publish, debug=True))
    assert error.message.startswith("the run state could not be read or published: StateError:")
    assert "Unserializable" in error.message


async def _agent_error(ctx: Ctx) -> None:
    with ctx.message():
        message = "the board is full"
        raise AgentError(message)


async def _usage_error(ctx: Ctx) -> None:
    with ctx.message():
        ctx.say("nested")


async def _protocol_violation(ctx: Ctx) -> None:
    ctx.emit(TextMessageEndEvent(message_id="never-opened"))


async def _invalid_arguments(ctx: Ctx) -> None:
    with ctx.tool_call("f") as call:
        call.args('{"partial":')
        call.parse_args()


async def _patch_error(_ctx: Ctx) -> None:
    message = "a patch did not apply"
    raise PatchError(message)


CODES: list[tuple[str, AgentFn, str, str]] = [
    ("agent-error", _agent_error, "AGENT_ERROR", "the board is full"),
    ("unexpected", _before_any_event, "AGENT_ERROR", "the agent failed with an unexpected error"),
    (
        "usage-error",
        _usage_error,
        "USAGE_ERROR",
        "the agent used the agui SDK in a way it does not allow",
    ),
    (
        "protocol-violation",
        _protocol_violation,
        "PROTOCOL_VIOLATION",
        "the agent broke an AG-UI ordering rule",
    ),
    (
        "invalid-arguments",
        _invalid_arguments,
        "INVALID_ARGUMENTS",
        "a tool call's arguments could not be read",
    ),
    ("state-error", _in_publish, "STATE_ERROR", "the run state could not be read or published"),
    ("patch-error", _patch_error, "PATCH_ERROR", "the run failed"),
]


@pytest.mark.parametrize(
    ("agent", "code", "message"), [case[1:] for case in CODES], ids=[case[0] for case in CODES]
)
def test_each_failure_becomes_run_error_with_a_stable_code_and_message(
    agent: AgentFn, code: str, message: str
) -> None:
    error = error_of(drive(agent))
    assert (error.code, error.message) == (code, message)


def test_run_error_carries_the_usage_reported_so_far() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.usage.append(TokenUsage(output_tokens=7))
        fail()

    assert error_of(drive(agent)).usage == [TokenUsage(output_tokens=7)]


def test_a_state_that_does_not_fit_its_type_fails_right_after_run_started() -> None:
    async def agent(ctx: RunContext[Board]) -> None:
        ctx.say("never")

    events = asyncio.run(collect(agent, request(state={"tasks": "not a list"}), state=Board))
    assert_valid(events)
    assert types_of(events) == [EventType.RUN_STARTED, EventType.RUN_ERROR]
    assert error_of(events).code == "STATE_ERROR"


def test_a_typed_state_is_decoded_for_the_agent() -> None:
    async def agent(ctx: RunContext[Board]) -> None:
        ctx.state.tasks.append("ship it")
        ctx.publish_state()

    events = asyncio.run(collect(agent, request(state={"tasks": ["plan"]}), state=Board))
    assert_valid(events)
    snapshot = only(events, StateSnapshotEvent)[0]
    assert snapshot.snapshot == {"tasks": ["plan", "ship it"]}


def test_a_raw_block_left_open_turns_run_finished_into_a_protocol_violation() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.emit(TextMessageStartEvent(message_id="raw"))

    events = drive(agent)
    assert types_of(events) == [RS, TMS, TME, RE]  # closed before the RUN_ERROR, all the same
    assert error_of(events).code == "PROTOCOL_VIOLATION"


async def _fails_inside_raw_blocks(ctx: Ctx) -> None:
    """Opens a block of every kind through `emit`, interleaved with a handle, then fails."""
    ctx.emit(SubagentStartedEvent(subagent_run_id="sub", name="helper"))
    ctx.emit(StepStartedEvent(step_name="plan"))
    ctx.emit(ToolCallStartEvent(tool_call_id="c1", tool_call_name="find"))
    ctx.emit(TextMessageStartEvent(message_id="m1", subagent_run_id="sub"))
    ctx.emit(ReasoningStartEvent(message_id="think"))
    ctx.emit(ReasoningMessageStartEvent(message_id="think"))
    ctx.emit(ToolCallStartEvent(tool_call_id="c2", tool_call_name="find"))
    ctx.step("handle")  # opened last: closed first
    fail()


RAW_CLOSED_INNERMOST_FIRST = [
    (EventType.STEP_FINISHED, "handle"),
    (EventType.TOOL_CALL_END, "c2"),
    (EventType.REASONING_MESSAGE_END, "think"),
    (EventType.REASONING_END, "think"),
    (EventType.TEXT_MESSAGE_END, "m1"),
    (EventType.TOOL_CALL_END, "c1"),
    (EventType.STEP_FINISHED, "plan"),
    (EventType.SUBAGENT_ERROR, "sub"),
]


def _closed(events: Sequence[Event]) -> list[tuple[str, str]]:
    """The closing events between the last opener and the terminal, each with what it closes."""
    fields = ("step_name", "tool_call_id", "message_id", "subagent_run_id")
    return [
        (e.type, next(str(getattr(e, f)) for f in fields if getattr(e, f, None) is not None))
        for e in events[9:-1]
    ]


def test_a_failure_closes_blocks_opened_through_emit_innermost_first_then_one_run_error() -> None:
    with leaving_open():
        events = drive(_fails_inside_raw_blocks)
    assert _closed(events) == RAW_CLOSED_INNERMOST_FIRST
    assert only(events, TextMessageEndEvent)[0].subagent_run_id == "sub"
    assert error_of(events).code == "AGENT_ERROR"


def test_a_cancelled_run_closes_blocks_opened_through_emit_before_run_finished() -> None:
    async def agent(ctx: Ctx) -> None:
        with contextlib.suppress(ValueError):
            await _fails_inside_raw_blocks(ctx)
        ctx.token.cancel("the client left")
        ctx.check_cancelled()

    with leaving_open():
        events = drive(agent)
    assert _closed(events) == RAW_CLOSED_INNERMOST_FIRST
    assert finished(events).outcome == CancelledOutcome()


def test_a_chunk_stream_left_open_by_a_failure_is_closed_by_the_run_error_alone() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.emit(TextMessageChunkEvent(message_id="m1", delta="partial"))
        fail()

    events = drive(agent)
    assert types_of(events) == [RS, EventType.TEXT_MESSAGE_CHUNK, RE]


def test_blocks_that_cannot_close_on_return_end_the_run_with_run_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.step("outer")
        ctx.emit(StepFinishedEvent(step_name="outer"))
        message = ctx.message()
        ctx.emit(TextMessageEndEvent(message_id=message.id))

    with caplog.at_level(logging.ERROR, logger="agui"), leaving_open():
        events = drive(agent)
    assert types_of(events) == [RS, SS, SF, TMS, TME, RE]
    assert error_of(events).code == "PROTOCOL_VIOLATION"
    assert caplog.text.count("closing a block of run r failed") == 2


def test_a_run_error_goes_out_after_every_block_that_fails_to_close_is_given_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        for n in range(70):
            ctx.step(f"s{n}")
            ctx.emit(StepFinishedEvent(step_name=f"s{n}"))
        fail()

    with caplog.at_level(logging.ERROR, logger="agui"), leaving_open():
        events = drive(agent)
    assert types_of(events)[-1] == EventType.RUN_ERROR
    assert types_of(events).count(EventType.STEP_FINISHED) == 70
    assert caplog.text.count("closing a block of run r failed") == 70


class FailOnTextEnd:
    """A transformer with a bug: it raises on every TEXT_MESSAGE_END."""

    def transform(self, event: Event) -> Sequence[Event]:
        if event.type == EventType.TEXT_MESSAGE_END:
            message = "transformer bug"
            raise RuntimeError(message)
        return (event,)


def test_a_transformer_failing_on_a_closing_event_still_ends_the_run_with_run_error() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("hi")

    events = drive(agent, transformers=[FailOnTextEnd()])
    assert types_of(events) == [RS, TMS, TMC, RE]
    assert error_of(events).code == "AGENT_ERROR"


class FailOnRunStarted:
    """A transformer with a bug: it fails on the run's first event."""

    def transform(self, event: Event) -> Sequence[Event]:
        if event.type == EventType.RUN_STARTED:
            message = "transformer bug"
            raise RuntimeError(message)
        return (event,)


def test_a_transformer_failing_on_run_started_still_leaves_the_stream_one_run_error() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("never sent")

    events = asyncio.run(collect(agent, request(), transformers=[FailOnRunStarted()]))
    assert types_of(events) == [RE]
    assert error_of(events).code == "AGENT_ERROR"
    assert_valid(events)


class DoubleRunError:
    """A transformer with a bug: it sends every RUN_ERROR twice."""

    def transform(self, event: Event) -> Sequence[Event]:
        return (event, event) if isinstance(event, RunErrorEvent) else (event,)


def test_a_run_error_refused_by_the_verifier_never_makes_a_second_terminal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="agui"):
        events = asyncio.run(collect(_before_any_event, request(), transformers=[DoubleRunError()]))
    assert "RUN_ERROR was refused" in caplog.text
    assert types_of(events).count(EventType.RUN_ERROR) == 1


def test_custom_events_pass_through_the_driver_unchanged() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.emit(CustomEvent(name="ping", value=None))

    events = drive(agent)
    assert only(events, CustomEvent) == [CustomEvent(name="ping", value=None)]


def test_run_yields_events_as_an_async_iterator() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("a")
        await asyncio.sleep(0)
        ctx.say("b")

    async def read() -> list[str]:
        return [event.type async for event in run(agent, request())]

    assert asyncio.run(read()).count(EventType.TEXT_MESSAGE_START) == 2


# -- handles left open -------------------------------------------------------------------------


def test_a_handle_left_open_is_reported_at_the_line_that_opened_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.tool_call("get_weather").args("{}")

    opened = [agent.__code__.co_firstlineno + 1]

    with caplog.at_level(logging.WARNING, logger="agui"), leaving_open() as caught:
        events = drive(agent)
    assert types_of(events)[-2:] == [EventType.TOOL_CALL_END, EventType.RUN_FINISHED]
    assert finished(events).outcome == SuccessOutcome(pending_tool_call_ids=["r-call-1"])
    (warning,) = caught.list
    assert (warning.filename, warning.lineno) == (__file__, opened[0])
    assert str(warning.message).startswith("tool call 'r-call-1' (get_weather) was still open")
    assert f"(opened at {__file__}:{opened[0]})" in caplog.text


def test_a_handle_left_open_when_the_agent_fails_or_is_cancelled_is_reported_too() -> None:
    async def failing(ctx: Ctx) -> None:
        ctx.message()
        fail()

    async def cancelled(ctx: Ctx) -> None:
        ctx.reasoning()
        ctx.token.cancel()

    with leaving_open():
        assert error_of(drive(failing)).code == "AGENT_ERROR"
    with leaving_open():
        assert finished(drive(cancelled)).outcome == CancelledOutcome()


def test_a_handle_that_cannot_close_after_the_agents_own_terminal_event_is_not_reported() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.message()
        ctx.emit(RunErrorEvent(message="mine"))

    with warnings.catch_warnings():
        warnings.simplefilter("error", UnclosedHandleWarning)
        events = drive(agent)
    assert types_of(events) == [RS, TMS, RE]


# -- what is not an agent ------------------------------------------------------------------------


def _plain(ctx: Ctx) -> None:
    ctx.say("hi")


async def _streams(ctx: Ctx) -> AsyncIterator[str]:
    yield ctx.input.run_id


async def _no_argument() -> None:
    return None


class PlainRun:
    def run(self, ctx: Ctx) -> None:
        ctx.say("hi")


class StreamingRun:
    async def run(self, ctx: Ctx) -> AsyncIterator[str]:
        yield ctx.input.run_id


class WideRun:
    async def run(self, ctx: Ctx, extra: str) -> None:
        ctx.say(extra)


class AsyncCall:
    async def __call__(self, ctx: Ctx) -> None:
        ctx.say("hi")


class AsyncCallPlainRun(AsyncCall):
    def run(self, ctx: Ctx) -> None:
        ctx.say("hi")


NOT_AGENTS: list[tuple[str, object, str]] = [
    ("plain-function", _plain, "_plain is not an agent: it is a function that is not async"),
    (
        "async-generator",
        _streams,
        (
            "_streams is not an agent: it is an async generator function (it yields): an agent "
            "sends its events through the run context, ctx.emit(event) where it would yield event"
        ),
    ),
    (
        "no-argument",
        _no_argument,
        "_no_argument is not an agent: it does not take exactly one argument (the run context)",
    ),
    ("plain-run-method", PlainRun(), "PlainRun is not an agent: its run method is not async"),
    (
        "async-generator-run-method",
        StreamingRun(),
        "StreamingRun is not an agent: its run method is an async generator function (it yields)",
    ),
    (
        "wide-run-method",
        WideRun(),
        "WideRun is not an agent: its run method does not take exactly one argument",
    ),
    (
        "async-call-but-plain-run",
        AsyncCallPlainRun(),
        "AsyncCallPlainRun is not an agent: its run method is not async",
    ),
    ("a-class", AsyncCall, "AsyncCall is not an agent: it is the class AsyncCall; use an instance"),
    ("not-callable", 42, "int is not an agent: it is a int (42), which cannot be called"),
]


@pytest.mark.parametrize(
    ("agent", "message"), [case[1:] for case in NOT_AGENTS], ids=[case[0] for case in NOT_AGENTS]
)
def test_what_is_not_an_agent_is_refused_up_front_saying_what_it_is_and_the_fix(
    agent: object, message: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(message)) as caught:
        check_agent(agent)
    assert "an agent is an async function taking the run context" in str(caught.value)


def test_an_agent_whose_signature_cannot_be_read_is_given_the_benefit_of_the_doubt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable(_function: object) -> inspect.Signature:
        message = "no signature found"
        raise ValueError(message)

    monkeypatch.setattr("agui.runner._agent.inspect.signature", unreadable)

    async def no_argument() -> None:  # judged afresh: a verdict is kept per agent
        return None

    assert agent_problem(WideRun()) is None
    assert agent_problem(no_argument) is None


def test_an_agent_checked_on_every_run_has_its_signature_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[object] = []
    signature = inspect.signature

    def counted(function: Callable[..., object]) -> inspect.Signature:
        reads.append(function)
        return signature(function)

    monkeypatch.setattr("agui.runner._agent.inspect.signature", counted)

    async def agent(ctx: Ctx) -> None:
        ctx.say("hi")

    for _ in range(3):
        check_agent(agent)
        assert finished(drive(cast("AgentFn", agent))).outcome == SuccessOutcome()
    assert reads == [agent]
    for _ in range(2):  # an int cannot be weakly referred to: judged again, the same way
        with pytest.raises(UsageError, match="it is a int \\(42\\), which cannot be called"):
            check_agent(42)


def test_collect_and_run_refuse_a_state_that_is_not_a_type_before_any_event() -> None:
    said: list[str] = []

    async def agent(ctx: RunContext[object]) -> None:
        said.append(ctx.input.run_id)

    not_a_type = cast("type[object]", {"tasks": []})
    with pytest.raises(UsageError, match="the state type must be one the client's state can be"):
        asyncio.run(collect(agent, request(), state=not_a_type))

    async def read() -> list[Event]:
        return [event async for event in run(agent, request(), state=not_a_type)]

    with pytest.raises(UsageError, match=r"not a dict \(\{'tasks': \[\]\}\); pass the class"):
        asyncio.run(read())
    assert said == []


def test_collect_and_run_refuse_a_plain_function_before_anything_runs() -> None:
    said: list[str] = []

    def plain(ctx: Ctx) -> None:
        said.append("ran")
        ctx.say("hi")

    agent = cast("AgentFn", plain)
    with pytest.raises(UsageError, match="plain is not an agent: it is a function that is not"):
        asyncio.run(collect(agent, request()))

    async def read() -> list[Event]:
        return [event async for event in run(agent, request())]

    with pytest.raises(UsageError, match="it is a function that is not async"):
        asyncio.run(read())
    assert said == []


def test_drive_refuses_a_plain_function_and_still_closes_the_receiver() -> None:
    ctx: Ctx = RunContext(request())
    with pytest.raises(UsageError, match="it is a function that is not async"):
        asyncio.run(drive_run(cast("AgentFn", _plain), ctx))
    assert ctx.receiver.closed
    assert ctx.receiver.drain() == []


def test_an_object_with_an_async_call_method_is_an_agent() -> None:
    check_agent(AsyncCall())
    events = drive(cast("AgentFn", AsyncCall()))
    assert finished(events).outcome == SuccessOutcome()


# -- what is not an Exception -----------------------------------------------------------------


class Doomed(BaseException):
    """A BaseException of the agent's own, which is not an Exception either."""


def _raising(error: BaseException) -> AgentFn:
    async def agent(ctx: Ctx) -> None:
        with ctx.step("act"), ctx.message() as message:
            message.delta("partial")
            raise error

    return agent


EXITS: list[tuple[str, BaseException, str, str]] = [
    ("system-exit", SystemExit(HIDDEN), "AGENT_EXIT", "the agent tried to exit"),
    ("generator-exit", GeneratorExit(HIDDEN), "AGENT_EXIT", "the agent tried to exit"),
    ("base-exception", Doomed(HIDDEN), "AGENT_EXIT", "the agent tried to exit"),
    (
        "keyboard-interrupt",
        KeyboardInterrupt(HIDDEN),
        "AGENT_INTERRUPTED",
        "the agent raised KeyboardInterrupt",
    ),
]


@pytest.mark.parametrize(
    ("error", "code", "message"), [case[1:] for case in EXITS], ids=[case[0] for case in EXITS]
)
def test_a_base_exception_from_the_agent_ends_only_its_run_after_closing_its_blocks(
    error: BaseException, code: str, message: str
) -> None:
    events = drive(_raising(error))
    assert types_of(events) == [RS, SS, TMS, TMC, TME, SF, RE]
    assert (error_of(events).code, error_of(events).message) == (
        code,
        f"{message}, which ends only its run",
    )
    assert all(HIDDEN not in event.model_dump_json() for event in events)


@pytest.mark.parametrize("error", [case[1] for case in EXITS], ids=[case[0] for case in EXITS])
def test_a_base_exception_is_logged_with_the_fix(
    error: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="agui"):
        drive(_raising(error))
    assert f"agent code raised {type(error).__name__}, which ends only the run" in caplog.text
    assert "raising agui.AgentError" in caplog.text


def test_a_base_exception_with_debug_carries_its_type_and_text() -> None:
    error = error_of(drive(_raising(SystemExit(3)), debug=True))
    assert error.message == "the agent tried to exit, which ends only its run: SystemExit: 3"


def test_a_cancelled_task_still_ends_the_run_cancelled_and_raises() -> None:
    async def main() -> list[Event]:
        ctx: Ctx = RunContext(request())
        started = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            with ctx.message() as message:
                message.delta("working")
                started.set()
                await asyncio.sleep(60)

        task = asyncio.ensure_future(drive_run(agent, ctx))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return ctx.receiver.drain()

    events = asyncio.run(main())
    assert_valid(events)
    assert types_of(events) == [RS, TMS, TMC, TME, EventType.RUN_FINISHED]
    assert finished(events).outcome == CancelledOutcome()


def test_a_cancelled_error_of_the_agents_own_ends_the_run_cancelled_and_goes_no_further() -> None:
    async def agent(ctx: Ctx) -> None:
        elsewhere = asyncio.ensure_future(asyncio.sleep(60))
        with ctx.message() as message:
            message.delta("waiting on a task someone else cancels")
            asyncio.get_running_loop().call_soon(elsewhere.cancel)
            await elsewhere

    async def main() -> list[Event]:
        events = await collect(agent, request())  # returns: its caller was not cancelled
        await asyncio.sleep(0)
        return events

    if sys.version_info < (3, 11):
        # Python 3.10 cannot tell this CancelledError from the task's own, and lets it go on.
        with pytest.raises(asyncio.CancelledError):
            asyncio.run(main())
        return
    events = asyncio.run(main())
    assert_valid(events)
    assert types_of(events) == [RS, TMS, TMC, TME, EventType.RUN_FINISHED]
    assert finished(events).outcome == CancelledOutcome()


# -- nothing of the agent's values or texts without debug --------------------------------------


def test_a_returned_value_that_is_not_an_outcome_is_named_by_its_type_only() -> None:
    async def agent(_ctx: Ctx) -> RunOutcome:
        return cast("RunOutcome", {"password": HIDDEN})

    error = error_of(drive(agent, debug=True))
    assert error.message == (
        "an agent must return RunOutcome.success(), .interrupt() or .cancelled(), or None; "
        "it returned a dict"
    )


class Unprintable(Exception):
    """An exception whose text cannot be read."""

    def __str__(self) -> str:
        raise RuntimeError(HIDDEN)


class UnprintableAgentError(AgentError):
    def __str__(self) -> str:
        raise RuntimeError(HIDDEN)


@pytest.mark.parametrize("debug", [False, True])
def test_an_exception_whose_text_cannot_be_read_still_ends_the_run_with_its_type(
    debug: bool,  # noqa: FBT001 - a parameter
) -> None:
    async def agent(_ctx: Ctx) -> None:
        raise Unprintable

    error = error_of(drive(agent, debug=debug))
    suffix = ": Unprintable" if debug else ""
    assert error.message == f"the agent failed with an unexpected error{suffix}"


def test_an_agent_error_whose_text_cannot_be_read_sends_its_type_name() -> None:
    async def agent(_ctx: Ctx) -> None:
        raise UnprintableAgentError

    error = error_of(drive(agent))
    assert (error.code, error.message) == ("AGENT_ERROR", "UnprintableAgentError")


def test_a_lone_surrogate_in_an_errors_text_is_escaped_so_the_run_error_serializes() -> None:
    async def agent(_ctx: Ctx) -> None:
        message = "bad \ud800 text"
        raise AgentError(message)

    async def debugged(_ctx: Ctx) -> None:
        message = "bad \udfff text"
        raise ValueError(message)

    assert error_of(drive(agent)).message == "bad \\ud800 text"
    error = error_of(drive(debugged, debug=True))
    assert error.message.endswith("ValueError: bad \\udfff text")
    error.model_dump_json()  # serializes


# -- payloads the transport could not write ----------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [CustomEvent(name="note", value={"text": "\ud800"}), RawEvent(event=["\udc00"])],
    ids=["custom", "raw"],
)
def test_an_unserializable_payload_is_refused_at_emit_and_open_blocks_close_first(
    event: Event,
) -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.step("act"), ctx.message() as message:
            message.delta("partial")
            ctx.emit(event)

    events = drive(agent, debug=True)
    assert types_of(events) == [RS, SS, TMS, TMC, TME, SF, RE]
    assert error_of(events).code == "USAGE_ERROR"
    assert f"cannot emit {event.type}" in error_of(events).message


# -- on a real server -------------------------------------------------------------------------

REQUEST_SECONDS = 20.0
RAISED: dict[str, type[BaseException]] = {
    "exit": SystemExit,
    "interrupt": KeyboardInterrupt,
    "generator-exit": GeneratorExit,
}


async def _raise_as_asked(ctx: Ctx) -> None:
    """Raise what the request's forwardedProps names; say hello when it names nothing."""
    with ctx.message() as message:
        message.delta("partial")
        asked = ctx.forwarded_props
        if isinstance(asked, str):
            raise RAISED[asked]
    ctx.say("hello")


def _post(url: str, asked: str | None) -> list[Event]:
    body = request(forwardedProps=asked).model_dump_json(by_alias=True, exclude_none=True)
    response = httpx.post(
        url, content=body, headers={"content-type": "application/json"}, timeout=REQUEST_SECONDS
    )
    assert response.status_code == 200
    frames = response.text.split("\n\n")
    return [parse_event(frame.removeprefix("data: ")) for frame in frames if frame]


def test_a_served_agent_raising_base_exceptions_ends_each_run_and_the_server_lives() -> None:
    with serving(asgi_app(_raise_as_asked)) as url:
        runs = {asked: _post(url, asked) for asked in RAISED}
        healthy = _post(url, None)
    for asked, events in runs.items():
        assert_valid(events)
        assert types_of(events) == [RS, TMS, TMC, TME, RE], asked
    assert error_of(runs["exit"]).code == "AGENT_EXIT"
    assert error_of(runs["interrupt"]).code == "AGENT_INTERRUPTED"
    assert error_of(runs["generator-exit"]).code == "AGENT_EXIT"
    assert finished(healthy).outcome == SuccessOutcome()


AGUI = Path(sys.executable).parent / "agui"


def test_agui_serve_survives_an_agents_system_exit_and_still_stops_on_sigint(
    tmp_path: Path,
) -> None:
    target = tmp_path / "raising.py"
    target.write_text(
        "async def agent(ctx):\n"
        "    if ctx.forwarded_props == 'exit':\n"
        "        raise SystemExit(1)\n"
        "    if ctx.forwarded_props == 'interrupt':\n"
        "        raise KeyboardInterrupt\n"
        "    ctx.say('hello')\n"
    )
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", f"{target}:agent", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("agui: serving on "), line
        url = line.removeprefix("agui: serving on ").strip()
        exited = _post(url, "exit")
        interrupted = _post(url, "interrupt")
        healthy = _post(url, None)
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGINT)  # a real Ctrl-C reaches the server, not an agent
        status = process.wait(timeout=REQUEST_SECONDS)
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()
        errors = process.stderr.read()
        process.stderr.close()
    assert status == 0, errors
    assert [error_of(exited).code, error_of(interrupted).code] == [
        "AGENT_EXIT",
        "AGENT_INTERRUPTED",
    ]
    assert finished(healthy).outcome == SuccessOutcome()


class ExitOnFinish:
    """A transformer that raises SystemExit on the run's RUN_FINISHED."""

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, RunFinishedEvent):
            raise SystemExit(1)
        return (event,)


def test_a_transformer_raising_system_exit_on_run_finished_ends_the_run_with_run_error() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("done")

    async def cancelled(ctx: Ctx) -> None:
        ctx.token.cancel()

    for each in (agent, cancelled):
        events = drive(each, transformers=[ExitOnFinish()])
        assert error_of(events).code == "AGENT_EXIT"
