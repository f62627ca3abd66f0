"""RunContext: the unit-test harness, ids, input accessors, exclusivity and the emit pipeline."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar, cast

import ag_ui.core
import pytest
from pydantic import JsonValue

import agui._emit.verifier
from agui import (
    AgentError,
    EventType,
    ProtocolViolation,
    RunAgentInput,
    RunContext,
    UsageError,
    encode_sse,
    parse_event,
)
from agui._emit.receiver import run_receiver
from agui._emit.record import Kind, Record, materialize
from agui.errors import Cancelled, InvalidInput
from agui.events import (
    BaseEvent,
    CustomEvent,
    Event,
    RawEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import (
    AssistantMessage,
    ContentPart,
    FunctionCall,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
)
from agui.sink import EventReceiver
from agui.testing import assert_valid, collect
from agui.types import Context, ResumeEntry, Tool
from agui.verify import Rule, Verifier

E = TypeVar("E")

ADD_TASK = Tool(name="add_task", description="Add a task to the board")


def new(**fields: object) -> tuple[RunContext[JsonValue], EventReceiver]:
    return RunContext.new(RunAgentInput.model_validate({"threadId": "t", "runId": "r", **fields}))


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def only(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


# -- the harness ------------------------------------------------------------------------------


def test_a_new_context_emits_nothing_by_itself() -> None:
    ctx, events = new()
    assert events.drain() == []
    assert ctx.receiver is events
    assert not ctx.terminated


def test_drain_takes_everything_queued_and_leaves_the_queue_empty() -> None:
    ctx, events = new()
    ctx.say("one")
    ctx.say("two")
    assert len(events.drain()) == 6
    assert events.drain() == []


def test_the_harness_verifier_is_live_and_already_in_a_run() -> None:
    ctx, _ = new()
    assert isinstance(ctx.verifier, Verifier)
    assert ctx.verifier.running
    with pytest.raises(ProtocolViolation, match="No active text message found") as caught:
        ctx.emit(TextMessageContentEvent(message_id="nowhere", delta="x"))
    assert caught.value.rule == Rule.MESSAGE_NOT_OPEN


# -- deterministic ids ------------------------------------------------------------------------


def test_ids_are_numbered_per_run_for_messages_reasoning_results_and_calls() -> None:
    ctx, _ = new()
    assert ctx.say("hi") == "r-msg-1"
    assert ctx.think("hmm") == "r-msg-2"
    with ctx.tool_call("f") as first:
        first.end()
    with ctx.tool_call("g") as second:
        second.end()
    assert (first.id, first.result_message_id) == ("r-call-1", "r-msg-3")
    assert (second.id, second.result_message_id) == ("r-call-2", "r-msg-4")
    with ctx.message() as message:
        pass
    assert message.id == "r-msg-5"


def test_ids_follow_the_run_id() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="run-42"))
    assert ctx.say("hi") == "run-42-msg-1"


def _resumed_history() -> list[Message]:
    """What a client sends back when it resumes with the interrupted run's own run id."""
    calls = [
        ToolCall(id=f"r-call-{n}", function=FunctionCall(name="delete_task", arguments="{}"))
        for n in (5, 2)
    ]
    return [
        UserMessage(id="u1", content="delete 1"),
        AssistantMessage(id="r-msg-3", content="Delete it?", tool_calls=calls),
        ToolMessage(id="r-msg-7", tool_call_id="r-call-5", content=""),
        UserMessage(id="r-msg-x", content="not a number"),
        UserMessage(id="other-msg-9", content="another run's id"),
        UserMessage(id="r-msg-\u00b2", content="a digit int() refuses"),
    ]


def test_a_run_whose_history_holds_its_own_ids_numbers_past_the_highest() -> None:
    ctx, events = new(messages=_resumed_history())

    assert ctx.say("hi") == "r-msg-8"
    with ctx.tool_call("f") as call:
        call.end()
    assert (call.id, call.result_message_id) == ("r-call-6", "r-msg-9")
    assert ctx.think("hmm") == "r-msg-10"
    events.drain()


def test_a_run_numbers_from_one_when_the_history_holds_only_other_runs_ids() -> None:
    call = ToolCall(id="r0-call-1", function=FunctionCall(name="f", arguments="{}"))
    history: list[Message] = [
        UserMessage(id="u1", content="hi"),
        AssistantMessage(id="r0-msg-1", tool_calls=[call]),
    ]
    ctx, _ = new(messages=history)

    assert ctx.say("hi") == "r-msg-1"
    with ctx.tool_call("f") as second:
        second.end()
    assert second.id == "r-call-1"


# -- input accessors --------------------------------------------------------------------------


def test_accessors_return_the_input_and_empty_lists_for_absent_fields() -> None:
    ctx, _ = new()
    assert (ctx.thread_id, ctx.run_id) == ("t", "r")
    assert ctx.messages == []
    assert ctx.tools == []
    assert ctx.context == []
    assert ctx.resume == []
    assert ctx.forwarded_props is None
    assert ctx.last_user_text is None


def test_accessors_return_what_the_client_sent() -> None:
    resume = {"interruptId": "i1", "status": "resolved", "payload": {"approved": True}}
    ctx, _ = new(
        tools=[ADD_TASK.model_dump()],
        context=[{"description": "timezone", "value": "Europe/Paris"}],
        forwardedProps={"theme": "dark"},
        resume=[resume],
    )
    assert ctx.tools == [ADD_TASK]
    assert ctx.context == [Context(description="timezone", value="Europe/Paris")]
    assert ctx.forwarded_props == {"theme": "dark"}
    assert ctx.resume_for("i1") == ResumeEntry.model_validate(resume)
    assert ctx.resume_for("i2") is None


def test_resume_for_takes_an_answer_sent_twice_alike_and_refuses_two_that_differ() -> None:
    yes = {"interruptId": "i1", "status": "resolved", "payload": {"approved": True, "n": 1}}
    same = {"interruptId": "i1", "status": "resolved", "payload": {"n": 1, "approved": True}}
    no = {"interruptId": "i2", "status": "resolved", "payload": {"approved": False}}
    gone = {"interruptId": "i2", "status": "cancelled"}
    ctx, _ = new(resume=[yes, same, no, gone])
    assert ctx.resume_for("i1") == ResumeEntry.model_validate(yes)
    with pytest.raises(
        InvalidInput,
        match=r"the run's input answers interrupt 'i2' 2 times, differently; a client sends one "
        r"answer per interrupt in `resume`",
    ) as caught:
        ctx.resume_for("i2")
    assert caught.value.code == "INVALID_INPUT"


def test_a_result_that_is_not_json_is_refused_where_the_agent_sets_it() -> None:
    ctx, _ = new()
    ctx.result = {"city": "Paris", "days": [1, 2]}
    with pytest.raises(
        UsageError, match=r"ctx.result must be a JSON value, but /days/1 is a date; pass dicts"
    ):
        ctx.result = {"city": "Oslo", "days": [1, dt.date(2026, 1, 1)]}
    assert ctx.result == {"city": "Paris", "days": [1, 2]}


def test_a_run_whose_agent_sets_a_result_that_is_not_json_ends_with_a_usage_error() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        ctx.result = float("nan")

    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))
    assert_valid(events)
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert last.code == "USAGE_ERROR"


def test_tool_returns_the_offered_tool_or_none() -> None:
    ctx, _ = new(tools=[ADD_TASK.model_dump()])
    assert ctx.tool("add_task") == ADD_TASK
    assert ctx.tool("delete_everything") is None


def offered(ctx: RunContext[JsonValue], name: str) -> Tool:
    """An agent's own rule: only call tools the client offered."""
    tool = ctx.tool(name)
    if tool is None:
        message = f"the tool {name!r} was not offered by the client"
        raise AgentError(message)
    return tool


def test_an_agent_rule_on_offered_tools_accepts_add_task_and_refuses_delete_everything() -> None:
    ctx, _ = new(tools=[ADD_TASK.model_dump()])
    assert offered(ctx, "add_task").name == "add_task"
    with pytest.raises(AgentError, match="'delete_everything' was not offered"):
        offered(ctx, "delete_everything")


def test_nothing_refuses_a_call_to_a_tool_the_client_did_not_offer() -> None:
    ctx, events = new(tools=[ADD_TASK.model_dump()])
    with ctx.tool_call("delete_everything") as call:
        call.end()
    assert types_of(events.drain()) == [EventType.TOOL_CALL_START, EventType.TOOL_CALL_END]


def _history(*messages: Message) -> list[JsonValue]:
    return [m.model_dump(mode="json") for m in messages]


def test_last_user_text_is_the_latest_user_message() -> None:
    history = _history(
        UserMessage(id="u1", content="first"),
        AssistantMessage(id="a1", content="ok"),
        UserMessage(id="u2", content="second"),
        AssistantMessage(id="a2", content="ok"),
    )
    ctx, _ = new(messages=history)
    assert ctx.last_user_text == "second"
    assert [m.id for m in ctx.messages] == ["u1", "a1", "u2", "a2"]


def test_last_user_text_joins_the_text_parts_and_skips_media() -> None:
    parts: list[ContentPart] = [
        TextPart(text="look at "),
        ImagePart(source=UrlSource(value="https://example.com/a.png")),
        TextPart(text="this"),
    ]
    ctx, _ = new(messages=_history(UserMessage(id="u1", content=parts)))
    assert ctx.last_user_text == "look at this"


def test_last_user_text_is_none_without_a_user_message() -> None:
    ctx, _ = new(messages=_history(SystemMessage(id="s1", content="be brief")))
    assert ctx.last_user_text is None


# -- exclusive blocks -------------------------------------------------------------------------


Opener = Callable[[RunContext[JsonValue]], object]
OPENERS: dict[str, Opener] = {
    "message": lambda ctx: ctx.message(),
    "reasoning": lambda ctx: ctx.reasoning(),
    "tool_call": lambda ctx: ctx.tool_call("f"),
}
OPEN_NAMES = {
    "message": r"text message 'r-msg-1'",
    "reasoning": r"reasoning block 'r-msg-1'",
    "tool_call": r"tool call 'r-call-1' \(f\)",
}
KINDS = {"message": "text message", "reasoning": "reasoning block", "tool_call": "tool call"}
OPENING_EVENTS = {"message": 1, "reasoning": 2, "tool_call": 1}


@pytest.mark.parametrize("first", list(OPENERS), ids=list(OPENERS))
@pytest.mark.parametrize("second", list(OPENERS), ids=list(OPENERS))
def test_opening_a_block_while_another_is_open_raises_usage_error_naming_it(
    first: str, second: str
) -> None:
    ctx, events = new()
    OPENERS[first](ctx)
    sent = len(events.drain())
    with pytest.raises(
        UsageError, match=rf"cannot open a {KINDS[second]}: {OPEN_NAMES[first]} is still open"
    ):
        OPENERS[second](ctx)
    assert events.drain() == []
    assert sent == OPENING_EVENTS[first]


def test_a_block_may_open_once_the_previous_one_has_closed() -> None:
    ctx, events = new()
    with ctx.message():
        pass
    with ctx.tool_call("f"):
        pass
    with ctx.reasoning():
        pass
    assert types_of(events.drain())[-1] == EventType.REASONING_END


def test_say_inside_an_open_message_is_refused() -> None:
    ctx, _ = new()
    with ctx.message(), pytest.raises(UsageError, match="text message 'r-msg-1' is still open"):
        ctx.say("nested")


# -- the emit pipeline ------------------------------------------------------------------------


class DropCustom:
    """A transformer that drops CUSTOM events and doubles nothing else."""

    def transform(self, event: Event) -> Sequence[Event]:
        return () if isinstance(event, CustomEvent) else (event,)


class Tag:
    """A transformer that adds an `X` custom event after every text END."""

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, TextMessageEndEvent):
            return (event, CustomEvent(name="X", value=event.message_id))
        return (event,)


def test_emit_goes_through_the_transformers_before_the_verifier() -> None:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r"), transformers=[DropCustom(), Tag()]
    )
    ctx.emit(CustomEvent(name="dropped", value=None))
    ctx.say("hi")
    drained = events.drain()
    assert types_of(drained) == [
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.CUSTOM,
    ]
    assert only(drained, CustomEvent)[0].value == "r-msg-1"


def test_emit_is_checked_by_the_verifier() -> None:
    ctx, events = new()
    with pytest.raises(ProtocolViolation, match="No active text message") as caught:
        ctx.emit(TextMessageEndEvent(message_id="m9"))
    assert caught.value.rule == Rule.MESSAGE_NOT_OPEN
    assert events.drain() == []


def test_a_custom_value_that_cannot_be_serialized_is_refused_where_it_is_emitted() -> None:
    ctx, events = new()
    with pytest.raises(
        UsageError,
        match=r"cannot emit CUSTOM 'note': its value cannot be serialized as JSON .*surrogates"
        r".*; pass only JSON values, with strings of valid Unicode \(no lone surrogates\)",
    ):
        ctx.emit(CustomEvent(name="note", value={"text": ["ok", "\ud800"]}))
    assert events.drain() == []
    assert ctx.verifier.running


def test_a_raw_event_that_cannot_be_serialized_is_refused_where_it_is_emitted() -> None:
    ctx, events = new()
    with pytest.raises(UsageError, match="cannot emit RAW: its event cannot be serialized"):
        ctx.emit(RawEvent(event="\udfff", source="provider"))
    assert events.drain() == []


class Surrogate:
    """A transformer whose CUSTOM output holds a lone surrogate."""

    def transform(self, event: Event) -> Sequence[Event]:
        return (event, CustomEvent(name="echo", value="\ud800"))


def test_a_transformers_unserializable_output_is_refused_after_the_outputs_before_it() -> None:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r"), transformers=[Surrogate()]
    )
    with pytest.raises(UsageError, match="cannot emit CUSTOM 'echo'"):
        ctx.emit(CustomEvent(name="fine", value="text"))
    assert types_of(events.drain()) == [EventType.CUSTOM]


def test_serializable_custom_and_raw_payloads_pass() -> None:
    ctx, events = new()
    ctx.emit(CustomEvent(name="note", value={"text": "caf\u00e9 \U0001f600"}))
    ctx.emit(RawEvent(event=[1, None, "x"]))
    assert types_of(events.drain()) == [EventType.CUSTOM, EventType.RAW]


def test_emitting_a_dict_is_refused_naming_parse_event_and_nothing_is_queued() -> None:
    ctx, events = new()
    wire = {"type": "CUSTOM", "name": "note", "value": 1}
    with pytest.raises(
        UsageError,
        match=r"cannot emit a dict: agui emits its own event models \(agui.events\), whose JSON "
        r"is the AG-UI wire form; read a dict of the wire form with agui.parse_event\(value\)",
    ):
        ctx.emit(cast("Event", wire))
    assert events.drain() == []
    ctx.emit(parse_event(wire))
    assert types_of(events.drain()) == [EventType.CUSTOM]


def test_an_official_sdk_event_is_refused_with_a_conversion_that_gives_the_wire_form() -> None:
    ctx, events = new()
    official = ag_ui.core.TextMessageStartEvent(message_id="m1", role="assistant")
    with pytest.raises(
        UsageError, match=r"cannot emit ag_ui\.[\w.]+\.TextMessageStartEvent"
    ) as caught:
        ctx.emit(cast("Event", official))
    assert events.drain() == []
    hint = "agui.parse_event(event.model_dump(mode='json', by_alias=True, exclude_none=True))"
    assert hint in str(caught.value)

    ctx.emit(parse_event(official.model_dump(mode="json", by_alias=True, exclude_none=True)))
    assert [encode_sse(event) for event in events.drain()] == [
        b'data: {"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}\n\n'
    ]


def test_emitting_what_is_no_event_at_all_is_refused_naming_an_event_to_build() -> None:
    ctx, events = new()
    with pytest.raises(
        UsageError, match=r"cannot emit a str: .*; build one, such as agui.events.CustomEvent"
    ):
        ctx.emit(cast("Event", "hello"))
    assert events.drain() == []


class Note(CustomEvent, frozen=True):
    """An application's own kind of CUSTOM event."""


def test_a_subclass_of_an_agui_event_is_emitted_in_the_wire_form() -> None:
    ctx, events = new()
    ctx.emit(Note(name="note", value=1))
    assert [encode_sse(event) for event in events.drain()] == [
        b'data: {"type":"CUSTOM","name":"note","value":1}\n\n'
    ]


class Reminder(BaseEvent, frozen=True):
    """An event type of an application's own, built on agui's envelope."""

    type: str = "REMINDER"
    text: str = ""


def test_an_event_type_agui_does_not_define_is_refused_pointing_at_custom_events() -> None:
    ctx, events = new()
    for made in (Reminder(text="water the plants"), BaseEvent(type="TEXT_MESSAGE_START")):
        with pytest.raises(
            UsageError,
            match=rf"cannot emit [\w.]*\.{type(made).__name__}: it is none of the event types "
            r"AG-UI defines; an event of the app's own kind is a CUSTOM one: "
            r"agui\.events\.CustomEvent\(name=\.\.\.\)$",
        ):
            ctx.emit(cast("Event", made))
    assert events.drain() == []


class Untyped:
    """A transformer that answers every event with a dict of its wire form."""

    def transform(self, event: Event) -> Sequence[Event]:
        return (event, cast("Event", {"type": "CUSTOM", "name": "echo", "value": None}))


def test_a_transformers_output_that_holds_a_non_event_is_refused_whole_naming_it() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), transformers=[Untyped()])
    with pytest.raises(UsageError, match="transformer Untyped, given CUSTOM: cannot emit a dict"):
        ctx.emit(CustomEvent(name="fine", value="text"))
    assert events.drain() == []


def test_emitting_after_a_terminal_event_raises_usage_error() -> None:
    ctx, events = new()
    ctx.emit(RunFinishedEvent(thread_id="t", run_id="r"))
    assert ctx.terminated
    with pytest.raises(UsageError, match="cannot emit TEXT_MESSAGE_START: the run has already"):
        ctx.say("late")
    assert types_of(events.drain()) == [EventType.RUN_FINISHED]


# -- tool results and pending calls -----------------------------------------------------------


def _earlier_call() -> list[JsonValue]:
    call = ToolCall(id="old-call", function=FunctionCall(name="confirm", arguments="{}"))
    return _history(
        AssistantMessage(id="a0", tool_calls=[call]),
        AssistantMessage(id="a1", content="no calls here"),
    )


def test_tool_result_answers_a_call_from_the_run_input() -> None:
    ctx, events = new(messages=_earlier_call())
    assert ctx.tool_result("old-call", "yes") == "r-msg-1"
    assert ctx.tool_result("old-call", "again", message_id="mine") == "mine"
    results = only(events.drain(), ToolCallResultEvent)
    assert [(r.message_id, r.tool_call_id, r.role) for r in results] == [
        ("r-msg-1", "old-call", "tool"),
        ("mine", "old-call", "tool"),
    ]


def test_a_tool_result_given_a_value_or_a_bad_id_is_refused_saying_how_to_send_it() -> None:
    ctx, events = new(messages=_earlier_call())
    with pytest.raises(
        UsageError,
        match=r"ctx.tool_result\(\) takes text \(a str\) or a list of content parts .*, not "
        r"dict; send a value as JSON text with json.dumps\(value\)$",
    ):
        ctx.tool_result("old-call", {"answer": 42})  # type: ignore[arg-type]
    with pytest.raises(
        UsageError, match=r"ctx.tool_result\(\): the tool_call_id given \(an int\) does not fit"
    ):
        ctx.tool_result(7, "yes")  # type: ignore[arg-type]
    assert events.drain() == []


def test_tool_result_for_an_unknown_call_is_a_protocol_violation() -> None:
    ctx, _ = new()
    with pytest.raises(ProtocolViolation, match="'never-started': no such call was started"):
        ctx.tool_result("never-started", "x")
    with pytest.raises(ProtocolViolation, match="A result answers a tool call") as caught:
        ctx.tool_result("never-started", "x")
    assert caught.value.rule == Rule.TOOL_RESULT_UNKNOWN_CALL


def test_pending_tool_call_ids_lists_calls_without_a_result_in_call_order() -> None:
    ctx, _ = new(messages=_earlier_call())
    for name in ("a", "b", "c"):
        with ctx.tool_call(name) as call:
            if name == "b":
                call.result("done")
            else:
                call.end()
    assert ctx.pending_tool_call_ids == ["r-call-1", "r-call-3"]


# -- closing what is open ---------------------------------------------------------------------


def test_close_open_handles_closes_innermost_first() -> None:
    ctx, events = new()
    ctx.step("outer")
    ctx.step("inner")
    ctx.message().delta("partial")
    events.drain()
    ctx.close_open_handles()
    assert types_of(events.drain()) == [
        EventType.TEXT_MESSAGE_END,
        EventType.STEP_FINISHED,
        EventType.STEP_FINISHED,
    ]
    ctx.close_open_handles()
    assert events.drain() == []


def test_close_open_closes_the_handles_then_what_emit_opened_innermost_first() -> None:
    ctx, events = new()
    ctx.emit(StepStartedEvent(step_name="outer"))
    ctx.step("handled")
    ctx.emit(ToolCallStartEvent(tool_call_id="c1", tool_call_name="find"))
    ctx.emit(ReasoningStartEvent(message_id="why"))
    ctx.message().delta("partial")
    events.drain()
    ctx.token.cancel()  # the closing events go out all the same
    assert ctx.close_open() == []
    assert [(e.type, getattr(e, "step_name", None)) for e in events.drain()] == [
        (EventType.TEXT_MESSAGE_END, None),
        (EventType.STEP_FINISHED, "handled"),
        (EventType.REASONING_END, None),
        (EventType.TOOL_CALL_END, None),
        (EventType.STEP_FINISHED, "outer"),
    ]
    assert ctx.verifier.open_blocks == ()
    assert ctx.close_open() == []
    assert events.drain() == []


def test_close_open_returns_a_closing_event_a_transformer_refused_and_closes_the_rest() -> None:
    class RefuseStepEnds:
        def transform(self, event: Event) -> Sequence[Event]:
            if event.type == EventType.STEP_FINISHED:
                message = "no step ends here"
                raise ValueError(message)
            return [event]

    request = RunAgentInput(thread_id="t", run_id="r")
    ctx, events = RunContext.new(request, transformers=[RefuseStepEnds()])
    ctx.emit(ToolCallStartEvent(tool_call_id="c1", tool_call_name="find"))
    ctx.emit(StepStartedEvent(step_name="plan"))
    events.drain()
    failures = ctx.close_open()
    assert [str(failure) for failure in failures] == ["no step ends here"]
    assert types_of(events.drain()) == [EventType.TOOL_CALL_END]


def test_a_close_that_fails_while_an_error_propagates_is_logged_and_released(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ctx, events = new()

    def end_behind_its_back_then_fail() -> None:
        with ctx.message() as message:
            ctx.emit(TextMessageEndEvent(message_id=message.id))
            reason = "the original error"
            raise KeyError(reason)

    with (
        caplog.at_level(logging.ERROR, logger="agui"),
        pytest.raises(KeyError, match="the original error"),
    ):
        end_behind_its_back_then_fail()
    assert "closing text message 'r-msg-1' failed while an error propagated" in caplog.text
    assert types_of(events.drain()) == [EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END]
    with ctx.message():
        pass


# -- state before it is decoded ---------------------------------------------------------------


def test_the_state_is_not_available_before_the_run_decodes_it() -> None:
    ctx: RunContext[JsonValue] = RunContext(RunAgentInput(thread_id="t", run_id="r"), started=True)
    with pytest.raises(UsageError, match="the run state is not ready yet"):
        _ = ctx.state
    with pytest.raises(UsageError, match="the run state is not ready yet"):
        ctx.publish_state()
    with pytest.raises(UsageError, match="the run state is not ready yet"):
        ctx.state = {}
    ctx.emit(StateSnapshotEvent(snapshot={"a": 1}))
    ctx.init_state()
    assert ctx.state == {}


def test_decoding_the_state_again_keeps_the_live_value() -> None:
    ctx, _ = new(state={"n": 1})
    ctx.state = {"n": 2}
    ctx.init_state()
    assert ctx.state == {"n": 2}


def test_the_state_can_be_replaced_whole() -> None:
    ctx, events = new(state={"a": 1})
    ctx.state = {"b": 2}
    ctx.publish_state()
    assert only(events.drain(), StateSnapshotEvent)[0].snapshot == {"b": 2}


# -- streamed deltas wait in the queue as records when nothing needs their model ---------------


def test_a_handles_deltas_wait_as_records_and_drain_as_their_events() -> None:
    ctx, events = new()
    with ctx.message() as message:
        message.delta("Hi")
    items = run_receiver(events).items()
    assert items[1] == (Kind.TEXT_CONTENT, "r-msg-1", "Hi")
    ctx.say("again")
    assert only(events.drain(), TextMessageContentEvent) == [
        TextMessageContentEvent(message_id="r-msg-2", delta="again")
    ]


def test_with_a_transformer_every_delta_is_an_event_the_transformer_sees() -> None:
    seen: list[str] = []

    class Spy:
        def transform(self, event: Event) -> list[Event]:
            seen.append(event.type)
            return [event]

    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), transformers=[Spy()])
    ctx.say("Hi")
    assert not any(type(item) is tuple for item in run_receiver(events).items())
    assert seen == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


def test_a_delta_after_cancellation_raises_cancelled_and_queues_nothing() -> None:
    ctx, events = new()
    message = ctx.message()
    ctx.token.cancel("stop")
    with pytest.raises(Cancelled, match="stop"):
        message.delta("late")
    assert (Kind.TEXT_CONTENT, "r-msg-1", "late") not in run_receiver(events).items()


def test_a_delta_after_the_run_ended_is_refused_with_a_usage_error() -> None:
    ctx, _ = new()
    message = ctx.message()
    ctx.emit(RunErrorEvent(message="gone"))
    with pytest.raises(UsageError, match="the run has already ended"):
        message.delta("late")


def test_a_delta_while_a_chunk_stream_is_open_is_checked_as_an_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verifier checks the delta's event model; accepted, it waits as its record."""
    checked: list[Event] = []

    def building(record: Record) -> Event:
        event = materialize(record)
        checked.append(event)
        return event

    monkeypatch.setattr(agui._emit.verifier, "materialize", building)
    ctx, events = new()
    with ctx.tool_call("f") as call:
        ctx.emit(TextMessageChunkEvent(message_id="m9", delta="x"))
        call.args("{}")
        call.end()
    assert ToolCallArgsEvent(tool_call_id="r-call-1", delta="{}") in checked
    assert (Kind.TOOL_ARGS, "r-call-1", "{}") in run_receiver(events).items()


def test_a_handles_end_waits_as_a_record_and_drains_as_its_event() -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        call.end()
    assert run_receiver(events).items()[-1] == (Kind.TOOL_END, "r-call-1", "")
    ctx.say("x")
    assert events.drain()[-1] == TextMessageEndEvent(message_id="r-msg-2")


def test_a_block_closed_after_cancellation_still_sends_its_end() -> None:
    ctx, events = new()
    message = ctx.message()
    ctx.token.cancel("stop")
    message.close()
    assert run_receiver(events).items()[-1] == TextMessageEndEvent(message_id="r-msg-1")


def test_a_messages_start_waits_as_a_record_unless_it_has_a_name() -> None:
    ctx, events = new()
    with ctx.message(role="user"):
        pass
    with ctx.message(name="ann"):
        pass
    items = run_receiver(events).items()
    assert items[0] == (Kind.TEXT_START, "r-msg-1", "user")
    assert items[2] == TextMessageStartEvent(message_id="r-msg-2", role="assistant", name="ann")


def test_a_context_refuses_a_wire_dict_for_its_input_naming_parse_input() -> None:
    wire = cast("RunAgentInput", {"threadId": "t", "runId": "r"})
    with pytest.raises(UsageError, match=r"a run's input is a RunAgentInput, got a dict: read"):
        RunContext.new(wire)


def _in_another_thread(action: Callable[[], object]) -> BaseException | None:
    caught: list[BaseException] = []

    def target() -> None:
        try:
            action()
        except BaseException as error:  # noqa: BLE001 - handed back to the test's thread
            caught.append(error)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join(timeout=10)
    return caught[0] if caught else None


def test_emitting_from_another_thread_is_refused_and_sends_nothing() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    with ctx.message() as message:
        refused = _in_another_thread(lambda: message.delta("from a worker"))
        message.delta("from the run's thread")
    said = _in_another_thread(lambda: ctx.say("hi"))
    custom = _in_another_thread(lambda: ctx.emit(CustomEvent(name="ping", value=None)))

    assert isinstance(refused, UsageError)
    assert "cannot emit TEXT_MESSAGE_CONTENT from another thread" in str(refused)
    assert isinstance(said, UsageError)
    assert "cannot emit TEXT_MESSAGE_START from another thread" in str(said)
    assert isinstance(custom, UsageError)
    assert "cannot emit CUSTOM from another thread" in str(custom)
    assert [getattr(e, "delta", None) for e in events.drain()] == [
        None,
        "from the run's thread",
        None,
    ]


@pytest.mark.parametrize("send", ["say", "think"])
@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        (None, "ctx.{send}() takes text (a str), not NoneType"),
        (b"Hi", "ctx.{send}() takes text (a str), not bytes"),
        (
            "ok \ud800",
            "the text given to ctx.{send}() is not valid Unicode: a lone surrogate (U+D800)",
        ),
    ],
)
def test_say_and_think_refuse_what_is_not_text_before_anything_is_sent(
    send: str, text: object, refusal: str
) -> None:
    ctx, events = new()

    with pytest.raises(UsageError, match=re.escape(refusal.format(send=send))):
        getattr(ctx, send)(text)

    assert events.drain() == []
    assert ctx.say("Hi") == "r-msg-1"
