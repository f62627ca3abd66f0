"""Handles: each bracketed construct opens when created and closes when its block is left."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast, get_args

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue
from typing_extensions import TypedDict

from agui import (
    AguiError,
    EventType,
    ProtocolViolation,
    RunAgentInput,
    RunContext,
    ToolCallHandle,
    UsageError,
)
from agui._emit.pipeline import Pipeline
from agui._emit.record import Kind
from agui.errors import InvalidArguments
from agui.events import (
    CustomEvent,
    Event,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunFinishedEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.fold import fold
from agui.handles import Handle, MessageHandle, ReasoningHandle, StepHandle, TextRole
from agui.messages import TextPart
from agui.sink import EventReceiver
from agui.sse import encode_sse
from agui.types import AddOperation

E = TypeVar("E")


class Query(BaseModel):
    city: str


@dataclasses.dataclass
class QueryData:
    city: str
    days: int = 1


class QueryDict(TypedDict):
    city: str


class Board(BaseModel):
    tasks: list[str] = []


class Boom(Exception):
    """A failure in agent code, raised inside a block."""


def new() -> tuple[RunContext[JsonValue], EventReceiver]:
    return RunContext.new(RunAgentInput(thread_id="t", run_id="r"))


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def only(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def boom() -> None:
    message = "the agent failed"
    raise Boom(message)


# -- the acceptance cases ---------------------------------------------------------------------


def test_an_agent_answered_call_sends_start_args_end_result_and_returns_the_result_id() -> None:
    ctx, events = new()
    with ctx.tool_call("get_weather") as call:
        call.args_json({"city": "Seoul"})
        result_id = call.result_json({"tempC": 21})
    assert result_id == "r-msg-1"
    assert types_of(events.drain()) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
    ]


def test_a_client_executed_call_closed_with_end_sends_start_args_end() -> None:
    ctx, events = new()
    with ctx.tool_call("confirm") as call:
        call.args_json({"question": "Ship it?"})
        call.end()
    assert types_of(events.drain()) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
    ]


def test_streamed_args_concatenate_and_parse_only_once_complete() -> None:
    ctx, events = new()
    with ctx.tool_call("get_weather") as call:
        call.args('{"city":')
        with pytest.raises(InvalidArguments, match=r"tool call 'r-call-1' \(get_weather\)"):
            call.parse_args(Query)
        call.args('"Seoul"}')
        assert call.raw_args == '{"city":"Seoul"}'
        assert call.parse_args(Query).city == "Seoul"
        call.end()
    args = only(events.drain(), ToolCallArgsEvent)
    assert [event.delta for event in args] == ['{"city":', '"Seoul"}']


def test_state_published_inside_an_open_call_goes_between_args_and_end() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), state=Board)
    with ctx.tool_call("add_task") as call:
        call.args_json({"task": "ship it"})
        call.state.tasks.append("ship it")
        call.publish_state()
        call.result("added")
    drained = events.drain()
    assert types_of(drained) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.STATE_SNAPSHOT,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
    ]
    assert len(drained) == 5
    assert ctx.state.tasks == ["ship it"]


def test_interleaved_provider_calls_buffered_per_index_go_out_whole_one_after_another() -> None:
    ctx, events = new()
    provider_stream: list[tuple[int, str | None, str]] = [
        (0, "get_weather", '{"city":'),
        (1, "roll_dice", '{"sides":'),
        (0, None, '"Seoul"}'),
        (1, None, "6}"),
    ]
    names: dict[int, str] = {}
    buffers: dict[int, list[str]] = {}
    for index, name, fragment in provider_stream:
        if name is not None:
            names[index] = name
        buffers.setdefault(index, []).append(fragment)
    for index in sorted(buffers):
        with ctx.tool_call(names[index]) as call:
            call.args("".join(buffers[index]))
            call.end()
    drained = events.drain()
    assert len(drained) == 6
    assert drained[0].type == EventType.TOOL_CALL_START
    assert (
        types_of(drained)
        == [
            EventType.TOOL_CALL_START,
            EventType.TOOL_CALL_ARGS,
            EventType.TOOL_CALL_END,
        ]
        * 2
    )
    starts = only(drained, ToolCallStartEvent)
    assert [(s.tool_call_id, s.tool_call_name) for s in starts] == [
        ("r-call-1", "get_weather"),
        ("r-call-2", "roll_dice"),
    ]
    assert [a.delta for a in only(drained, ToolCallArgsEvent)] == [
        '{"city":"Seoul"}',
        '{"sides":6}',
    ]


# -- text messages ----------------------------------------------------------------------------


def test_a_message_block_sends_start_content_end_and_skips_empty_deltas() -> None:
    ctx, events = new()
    with ctx.message() as message:
        message.delta("Hello, ")
        message.delta("")
        message.delta("world")
    drained = events.drain()
    assert types_of(drained) == [
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
    ]
    assert [c.delta for c in only(drained, TextMessageContentEvent)] == ["Hello, ", "world"]
    assert message.closed


@pytest.mark.parametrize("role", get_args(TextRole))
def test_a_message_start_carries_its_role_and_name(role: TextRole) -> None:
    ctx, events = new()
    with ctx.message(role, name="bot") as message:
        assert message.role == role
    start = only(events.drain(), TextMessageStartEvent)[0]
    assert (start.message_id, start.role, start.name) == ("r-msg-1", role, "bot")


def test_say_sends_one_whole_assistant_message_and_returns_its_id() -> None:
    ctx, events = new()
    assert ctx.say("Hi") == "r-msg-1"
    assert ctx.say("again") == "r-msg-2"
    drained = events.drain()
    assert len(drained) == 6
    assert [c.delta for c in only(drained, TextMessageContentEvent)] == ["Hi", "again"]


def test_ending_a_message_early_sends_end_once() -> None:
    ctx, events = new()
    with ctx.message() as message:
        message.delta("Hi")
        message.end()
        assert message.closed
    assert types_of(events.drain()).count(EventType.TEXT_MESSAGE_END) == 1


def test_leaving_a_message_block_by_exception_still_emits_end() -> None:
    ctx, events = new()

    def fail_while_streaming() -> None:
        with ctx.message() as message:
            message.delta("partial")
            boom()

    with pytest.raises(Boom, match="the agent failed"):
        fail_while_streaming()
    assert types_of(events.drain()) == [
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
    ]


def test_a_message_refuses_deltas_after_it_ended() -> None:
    ctx, _ = new()
    with ctx.message() as message:
        message.end()
        with pytest.raises(UsageError, match=r"cannot call delta\(\) on text message 'r-msg-1'"):
            message.delta("late")
        with pytest.raises(UsageError, match=r"cannot call end\(\) on text message 'r-msg-1'"):
            message.end()


# -- reasoning --------------------------------------------------------------------------------


def test_a_reasoning_block_uses_the_1_0_order() -> None:
    ctx, events = new()
    with ctx.reasoning() as thinking:
        thinking.delta("Paris is ")
        thinking.delta("")
        thinking.delta("in France.")
    assert types_of(events.drain()) == [
        EventType.REASONING_START,
        EventType.REASONING_MESSAGE_START,
        EventType.REASONING_MESSAGE_CONTENT,
        EventType.REASONING_MESSAGE_CONTENT,
        EventType.REASONING_MESSAGE_END,
        EventType.REASONING_END,
    ]


def test_think_sends_a_whole_reasoning_block_and_returns_its_id() -> None:
    ctx, events = new()
    assert ctx.think("Hmm.") == "r-msg-1"
    assert len(events.drain()) == 5


def test_a_reasoning_encrypted_value_is_attached_to_the_reasoning_message() -> None:
    ctx, events = new()
    with ctx.reasoning() as thinking:
        thinking.encrypted_value("opaque")
        thinking.end()
        with pytest.raises(UsageError, match=r"encrypted_value\(\) on reasoning block 'r-msg-1'"):
            thinking.encrypted_value("late")
        with pytest.raises(UsageError, match=r"cannot call delta\(\) on reasoning block"):
            thinking.delta("late")
        with pytest.raises(UsageError, match=r"cannot call end\(\) on reasoning block"):
            thinking.end()
    value = only(events.drain(), ReasoningEncryptedValueEvent)[0]
    assert (value.subtype, value.entity_id, value.encrypted_value) == (
        "message",
        "r-msg-1",
        "opaque",
    )


def test_leaving_a_reasoning_block_by_exception_closes_message_then_span() -> None:
    ctx, events = new()
    with pytest.raises(Boom, match="the agent failed"), ctx.reasoning():
        boom()
    assert types_of(events.drain())[-2:] == [
        EventType.REASONING_MESSAGE_END,
        EventType.REASONING_END,
    ]


# -- steps ------------------------------------------------------------------------------------


def test_steps_nest_and_close_innermost_first() -> None:
    ctx, events = new()
    with ctx.step("plan"), ctx.step("search"):
        ctx.say("found it")
    drained = events.drain()
    steps = [
        (event.type, event.step_name)
        for event in drained
        if isinstance(event, (StepStartedEvent, StepFinishedEvent))
    ]
    assert steps == [
        ("STEP_STARTED", "plan"),
        ("STEP_STARTED", "search"),
        ("STEP_FINISHED", "search"),
        ("STEP_FINISHED", "plan"),
    ]


def test_leaving_nested_steps_by_exception_closes_them_innermost_first() -> None:
    ctx, events = new()
    with pytest.raises(Boom, match="the agent failed"), ctx.step("outer"), ctx.step("inner"):
        boom()
    finished = [e.step_name for e in only(events.drain(), StepFinishedEvent)]
    assert finished == ["inner", "outer"]


def test_ending_an_outer_step_while_an_inner_one_is_open_is_refused() -> None:
    ctx, events = new()
    with ctx.step("outer") as outer, ctx.step("inner"):
        with pytest.raises(UsageError, match=r"cannot end step 'outer': step 'inner' inside it"):
            outer.end()
        assert not outer.closed
    assert [e.step_name for e in only(events.drain(), StepFinishedEvent)] == ["inner", "outer"]


def test_a_step_ended_early_refuses_a_second_end() -> None:
    ctx, events = new()
    with ctx.step("plan") as step:
        step.end()
        with pytest.raises(UsageError, match=r"cannot call end\(\) on step 'plan': it has ended"):
            step.end()
    assert types_of(events.drain()) == [EventType.STEP_STARTED, EventType.STEP_FINISHED]


def test_a_message_may_open_inside_a_step() -> None:
    ctx, events = new()
    with ctx.step("answer"), ctx.message() as message:
        message.delta("ok")
    assert types_of(events.drain()) == [
        EventType.STEP_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.STEP_FINISHED,
    ]


# -- tool calls -------------------------------------------------------------------------------


def test_a_tool_call_allocates_its_result_message_id_when_it_opens() -> None:
    ctx, _ = new()
    with ctx.tool_call("get_weather") as call:
        assert (call.id, call.result_message_id, call.name) == (
            "r-call-1",
            "r-msg-1",
            "get_weather",
        )
        call.end()
    assert ctx.say("after") == "r-msg-2"


def test_a_tool_call_takes_a_given_id_and_parent_message() -> None:
    ctx, events = new()
    message_id = ctx.say("Let me check.")
    with ctx.tool_call("get_weather", call_id="call-x", parent_message_id=message_id) as call:
        assert call.id == "call-x"
        call.end()
    start = only(events.drain(), ToolCallStartEvent)[0]
    assert (start.tool_call_id, start.parent_message_id) == ("call-x", "r-msg-1")


def test_leaving_a_tool_call_block_without_end_still_emits_end() -> None:
    ctx, events = new()
    with ctx.tool_call("confirm") as call:
        call.args("{}")
    assert types_of(events.drain())[-1] == EventType.TOOL_CALL_END
    assert call.closed


def test_leaving_a_tool_call_block_by_exception_emits_end_and_no_result() -> None:
    ctx, events = new()

    def fail_inside_the_call() -> None:
        with ctx.tool_call("get_weather") as call:
            call.args('{"city":"Seoul"}')
            boom()

    with pytest.raises(Boom, match="the agent failed"):
        fail_inside_the_call()
    assert types_of(events.drain()) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.TOOL_CALL_END,
    ]


def test_an_empty_args_fragment_sends_nothing() -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        call.args("")
        assert call.raw_args == ""
    assert types_of(events.drain()) == [EventType.TOOL_CALL_START, EventType.TOOL_CALL_END]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"city": "Seoul"}, '{"city":"Seoul"}'),
        (Query(city="Seoul"), '{"city":"Seoul"}'),
        (QueryData(city="Seoul", days=2), '{"city":"Seoul","days":2}'),
        ([1, None, "é"], '[1,null,"é"]'),
    ],
    ids=["dict", "pydantic", "dataclass", "list-with-null"],
)
def test_args_json_sends_a_value_as_one_compact_json_text(value: object, text: str) -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        call.args_json(value)
    assert [a.delta for a in only(events.drain(), ToolCallArgsEvent)] == [text]


def test_args_json_refuses_a_value_that_is_not_json() -> None:
    ctx, _ = new()
    with ctx.tool_call("f") as call:
        with pytest.raises(
            UsageError, match=r"the arguments of tool call 'r-call-1' \(f\) cannot be serialized"
        ):
            call.args_json({"when": object()})
        call.end()


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_args_json_and_result_json_refuse_numbers_json_has_no_value_for(number: float) -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        with pytest.raises(UsageError, match=r"cannot be serialized to JSON: it holds NaN or an"):
            call.args_json({"ratio": [1.5, number], "label": "NaN Infinity"})
        with pytest.raises(UsageError, match=r"the result of tool call 'r-call-1' \(f\) cannot"):
            call.result_json({"ratio": number})
        call.args_json({"label": "NaN Infinity"})  # the words in a string are text
        call.end()
    assert [a.delta for a in only(events.drain(), ToolCallArgsEvent)] == [
        '{"label":"NaN Infinity"}'
    ]


def test_result_json_refuses_a_value_that_is_not_json() -> None:
    ctx, _ = new()
    with ctx.tool_call("f") as call:
        with pytest.raises(UsageError, match=r"the result of tool call 'r-call-1' \(f\) cannot"):
            call.result_json(object())
        assert not call.closed


def test_parse_args_without_a_type_returns_plain_json() -> None:
    ctx, _ = new()
    with ctx.tool_call("f") as call:
        call.args('{"city": "Seoul", "days": [1, 2], "hint": null}')
        assert call.parse_args() == {"city": "Seoul", "days": [1, 2], "hint": None}


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (Query, Query(city="Seoul")),
        (QueryData, QueryData(city="Seoul")),
        (QueryDict, {"city": "Seoul"}),
    ],
    ids=["pydantic", "dataclass", "typeddict"],
)
def test_parse_args_reads_into_a_model_a_dataclass_or_a_typeddict(
    target: type[object], expected: object
) -> None:
    ctx, _ = new()
    with ctx.tool_call("get_weather") as call:
        call.args('{"city":"Seoul"}')
        assert call.parse_args(target) == expected


@pytest.mark.parametrize(
    "raw",
    ['{"city":', "not json", '{"city": NaN}', " {"],
    ids=["partial", "garbage", "nan", "open-brace"],
)
def test_parse_args_names_the_call_while_the_json_is_partial_or_invalid(raw: str) -> None:
    ctx, _ = new()
    with ctx.tool_call("get_weather") as call:
        call.args(raw)
        with pytest.raises(
            InvalidArguments,
            match=r"tool call 'r-call-1' \(get_weather\): the argument text is not complete JSON",
        ) as caught:
            call.parse_args()
    assert (caught.value.tool_call_id, caught.value.tool_name) == ("r-call-1", "get_weather")
    assert caught.value.code == "INVALID_ARGUMENTS"


class Place(BaseModel):
    city: str = "Seoul"


@pytest.mark.parametrize("raw", ["", "  \n"], ids=["none", "whitespace"])
def test_parse_args_reads_no_argument_text_as_a_call_without_arguments(raw: str) -> None:
    ctx, _ = new()
    with ctx.tool_call("get_time") as call:
        call.args(raw)
        assert call.parse_args() == {}
        assert call.parse_args(Place) == Place()
        with pytest.raises(
            InvalidArguments, match=r"do not fit QueryData: '/city': Field required"
        ):
            call.parse_args(QueryData)


def test_parse_args_lists_each_field_that_does_not_fit_the_type() -> None:
    ctx, _ = new()
    with ctx.tool_call("get_weather") as call:
        call.args('{"city": 7, "days": "x"}')
        with pytest.raises(
            InvalidArguments, match=r"do not fit QueryData: '/city': Input should be a valid string"
        ) as caught:
            call.parse_args(QueryData)
    assert [pointer for pointer, _ in caught.value.errors] == ["/city", "/days"]


class Nested(BaseModel):
    x: dict[str, int]


def test_parse_args_escapes_keys_in_the_json_pointers_of_its_problems() -> None:
    """RFC 6901: a '/' in a key is written '~1' and a '~' is written '~0'."""
    ctx, _ = new()
    with ctx.tool_call("f") as call:
        call.args('{"x": {"a/b": "no", "c~d": "no", "e": 1}}')
        with pytest.raises(InvalidArguments, match=r"'/x/a~1b': Input should be a valid integer"):
            call.parse_args(Nested)
    assert [pointer for pointer, _ in caught_errors(call)] == ["/x/a~1b", "/x/c~0d"]


def caught_errors(call: ToolCallHandle[JsonValue]) -> list[tuple[str, str]]:
    try:
        call.parse_args(Nested)
    except InvalidArguments as error:
        return error.errors
    return []


def test_parse_args_still_reads_the_arguments_after_the_call_ended() -> None:
    ctx, _ = new()
    with ctx.tool_call("get_weather") as call:
        call.args('{"city":"Seoul"}')
        call.end()
    assert call.parse_args(Query) == Query(city="Seoul")


def test_a_result_goes_out_with_role_tool_after_end() -> None:
    ctx, events = new()
    with ctx.tool_call("get_weather") as call:
        assert call.result("21C") == "r-msg-1"
    drained = events.drain()
    result = only(drained, ToolCallResultEvent)[0]
    assert (result.message_id, result.tool_call_id, result.content, result.role) == (
        "r-msg-1",
        "r-call-1",
        "21C",
        "tool",
    )
    assert types_of(drained)[-2:] == [EventType.TOOL_CALL_END, EventType.TOOL_CALL_RESULT]


def test_a_result_may_be_a_list_of_content_parts() -> None:
    ctx, events = new()
    with ctx.tool_call("describe") as call:
        call.result([TextPart(text="a cat")])
    result = only(events.drain(), ToolCallResultEvent)[0]
    assert result.content == [TextPart(text="a cat")]


def test_a_tool_call_encrypted_value_is_attached_to_the_call() -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        call.encrypted_value("opaque")
    value = only(events.drain(), ReasoningEncryptedValueEvent)[0]
    assert (value.subtype, value.entity_id) == ("tool-call", "r-call-1")


def test_unordered_events_go_out_through_an_open_call() -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        call.emit(CustomEvent(name="progress", value={"pct": 50}))
    assert types_of(events.drain()) == [
        EventType.TOOL_CALL_START,
        EventType.CUSTOM,
        EventType.TOOL_CALL_END,
    ]


def _ended_call_actions() -> list[tuple[str, Callable[[ToolCallHandle[JsonValue]], object]]]:
    return [
        ("args", lambda call: call.args("{}")),
        ("args", lambda call: call.args_json({})),
        ("end", lambda call: call.end()),
        ("result", lambda call: call.result("late")),
        ("result", lambda call: call.result_json({"late": True})),
        ("encrypted_value", lambda call: call.encrypted_value("x")),
        ("emit", lambda call: call.emit(CustomEvent(name="late", value=None))),
        ("publish_state", lambda call: call.publish_state()),
    ]


@pytest.mark.parametrize("ending", ["end", "result"])
@pytest.mark.parametrize(
    ("action", "act"),
    _ended_call_actions(),
    ids=[
        "args",
        "args_json",
        "end",
        "result",
        "result_json",
        "encrypted_value",
        "emit",
        "publish_state",
    ],
)
def test_every_call_on_an_ended_tool_call_raises_usage_error(
    ending: str, action: str, act: Callable[[ToolCallHandle[JsonValue]], object]
) -> None:
    ctx, events = new()
    with ctx.tool_call("get_weather") as call:
        if ending == "end":
            call.end()
        else:
            call.result("21C")
        sent = len(events.drain())
        with pytest.raises(
            UsageError,
            match=rf"cannot call {action}\(\) on tool call 'r-call-1' \(get_weather\): it has",
        ):
            act(call)
    assert events.drain() == []
    assert sent == (2 if ending == "end" else 3)


# -- state and raw emits through handles -----------------------------------------------------


def test_a_handle_exposes_the_same_state_object_as_the_context() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), state=Board)
    with ctx.message() as message:
        assert message.state is ctx.state
        message.state.tasks.append("x")
        message.publish_state()
        message.delta("done")
    snapshot = only(events.drain(), StateSnapshotEvent)[0]
    assert snapshot.snapshot == {"tasks": ["x"]}


def test_a_closed_message_refuses_emit_and_publish_state() -> None:
    ctx, _ = new()
    with ctx.message() as message:
        message.end()
        with pytest.raises(UsageError, match=r"cannot call emit\(\) on text message 'r-msg-1'"):
            message.emit(CustomEvent(name="x", value=1))
        with pytest.raises(UsageError, match=r"cannot call publish_state\(\) on text message"):
            message.publish_state()


def test_closing_a_closed_handle_again_sends_nothing() -> None:
    ctx, events = new()
    message = ctx.message()
    message.close()
    message.close()
    assert types_of(events.drain()) == [EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END]


def test_the_base_handle_describes_itself_by_kind_and_releases_nothing_it_never_claimed() -> None:
    ctx, _ = new()
    handle: Handle[JsonValue] = Handle(ctx, ctx._pipeline)  # pyright: ignore[reportPrivateUsage]
    assert handle.describe() == "block"
    before = handle.closed
    handle._closed()  # pyright: ignore[reportPrivateUsage]
    assert (before, handle.closed) == (False, True)
    ctx.say("nothing was claimed")


def test_a_tool_call_refused_by_the_verifier_does_not_stay_claimed() -> None:
    ctx, events = new()
    ctx.emit(ToolCallStartEvent(tool_call_id="c1", tool_call_name="raw"))
    with pytest.raises(ProtocolViolation, match="'c1' is already in progress"):
        ctx.tool_call("f", call_id="c1")
    ctx.emit(ToolCallEndEvent(tool_call_id="c1"))
    events.drain()
    with ctx.tool_call("g") as call:
        call.end()
    assert types_of(events.drain()) == [EventType.TOOL_CALL_START, EventType.TOOL_CALL_END]


# -- events built without validation ----------------------------------------------------------
# The handles build the events they generate without running pydantic's validator (trusted
# construction, `WireModel.trusted` and `WireModel.trusted_builder`).
# Such an event must be the very object validation makes, and anything the handles cannot vouch
# for (a str subclass, a role outside the literal, a non-str) must take the validating path.


class Text(str):
    """A str subclass: pydantic stores it as a plain str."""

    __slots__ = ()


def _assert_same_event(built: BaseModel, validated: BaseModel) -> None:
    assert type(built) is type(validated)
    assert built == validated
    assert validated == built
    assert list(built.__dict__.items()) == list(validated.__dict__.items())
    assert all(
        type(value) is type(validated.__dict__[key]) for key, value in built.__dict__.items()
    )
    assert built.model_fields_set == validated.model_fields_set
    assert isinstance(built.model_fields_set, set)
    assert built.__pydantic_extra__ is validated.__pydantic_extra__ is None
    assert built.__pydantic_private__ is validated.__pydantic_private__ is None
    assert repr(built) == repr(validated)
    assert hash(built) == hash(validated)
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump() == validated.model_dump()
    assert pickle.loads(pickle.dumps(built)) == validated  # noqa: S301 - our own bytes
    assert copy.copy(built) == validated
    assert copy.deepcopy(built) == validated
    assert built.model_copy() == validated
    assert built.model_copy(update={"timestamp": 1}) == validated.model_copy(
        update={"timestamp": 1}
    )
    assert type(validated).model_validate(built.model_dump()) == built


TEXT_START = TextMessageStartEvent.trusted_builder("message_id", "role", "name")
TOOL_START = ToolCallStartEvent.trusted_builder(
    "tool_call_id", "tool_call_name", "parent_message_id"
)

BUILT: list[tuple[str, Callable[[], BaseModel], Callable[[], BaseModel]]] = [
    (
        "text-content",
        lambda: TextMessageContentEvent.trusted_builder("message_id", "delta")("m1", "Hi"),
        lambda: TextMessageContentEvent(message_id="m1", delta="Hi"),
    ),
    (
        "tool-args",
        lambda: ToolCallArgsEvent.trusted_builder("tool_call_id", "delta")("c1", "{}"),
        lambda: ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
    ),
    (
        "reasoning-content",
        lambda: ReasoningMessageContentEvent.trusted(message_id="m1", delta="Hmm"),
        lambda: ReasoningMessageContentEvent(message_id="m1", delta="Hmm"),
    ),
    (
        "text-start",
        lambda: TEXT_START("m1", "user", None),
        lambda: TextMessageStartEvent(message_id="m1", role="user", name=None),
    ),
    (
        "text-start-named",
        lambda: TEXT_START("m1", "assistant", "bot"),
        lambda: TextMessageStartEvent(message_id="m1", role="assistant", name="bot"),
    ),
    (
        "text-end",
        lambda: TextMessageEndEvent.trusted_builder("message_id")("m1"),
        lambda: TextMessageEndEvent(message_id="m1"),
    ),
    (
        "tool-start",
        lambda: TOOL_START("c1", "f", None),
        lambda: ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id=None),
    ),
    (
        "tool-start-parented",
        lambda: TOOL_START("c1", "f", "m1"),
        lambda: ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
    ),
    (
        "tool-end",
        lambda: ToolCallEndEvent.trusted(tool_call_id="c1"),
        lambda: ToolCallEndEvent(tool_call_id="c1"),
    ),
    (
        "tool-result",
        lambda: ToolCallResultEvent.trusted_builder(
            "message_id", "tool_call_id", "content", "role"
        )("m2", "c1", "21C", "tool"),
        lambda: ToolCallResultEvent(message_id="m2", tool_call_id="c1", content="21C", role="tool"),
    ),
]


@pytest.mark.parametrize(
    ("built", "validated"), [case[1:] for case in BUILT], ids=[case[0] for case in BUILT]
)
def test_an_event_built_without_validation_is_the_object_validation_makes(
    built: Callable[[], BaseModel], validated: Callable[[], BaseModel]
) -> None:
    _assert_same_event(built(), validated())


def test_a_builder_gives_each_model_a_fresh_dict_and_one_shared_read_only_fields_set() -> None:
    content = TextMessageContentEvent.trusted_builder("message_id", "delta")
    first, second = content("m1", "a"), content("m1", "b")
    assert first.__dict__ is not second.__dict__
    assert first.model_fields_set is second.model_fields_set
    assert first.delta == "a"
    fields = first.model_fields_set
    changes: list[Callable[[], object]] = [
        lambda: fields.add("timestamp"),
        lambda: fields.discard("delta"),
        lambda: fields.update({"timestamp"}),
        fields.clear,
        lambda: fields.__ior__({"timestamp"}),
    ]
    for change in changes:
        with pytest.raises(UsageError, match=r"TextMessageContentEvent .* shared and read-only"):
            change()
    assert sorted(second.model_fields_set) == ["delta", "message_id"]


def _unpickled(event: TextMessageContentEvent) -> TextMessageContentEvent:
    return cast("TextMessageContentEvent", pickle.loads(pickle.dumps(event)))  # noqa: S301


_COPIED_FIELDS: dict[str, Callable[[TextMessageContentEvent], set[str]]] = {
    "model_copy": lambda event: event.model_copy().model_fields_set,
    "copy": lambda event: copy.copy(event).model_fields_set,
    "deepcopy": lambda event: copy.deepcopy(event).model_fields_set,
    "pickle": lambda event: _unpickled(event).model_fields_set,
    "set-copy": lambda event: event.model_fields_set.copy(),
    "set-deepcopy": lambda event: copy.deepcopy(event.model_fields_set),
    "union": lambda event: event.model_fields_set | set(),
}
"""The fields-set of a copy of a built model, made each way a copy can be made."""


@pytest.mark.parametrize("how", list(_COPIED_FIELDS))
def test_a_copy_of_a_built_model_owns_a_plain_fields_set(how: str) -> None:
    built = TextMessageContentEvent.trusted_builder("message_id", "delta")("m1", "a")
    fields = _COPIED_FIELDS[how](built)
    assert type(fields) is set
    assert fields == {"message_id", "delta"}
    fields.add("timestamp")
    assert "timestamp" not in built.model_fields_set


def test_model_copy_with_an_update_extends_the_copys_fields_set_only() -> None:
    built = TextMessageContentEvent.trusted_builder("message_id", "delta")("m1", "a")
    stamped = built.model_copy(update={"timestamp": 7})
    assert stamped.model_fields_set == {"message_id", "delta", "timestamp"}
    assert built.model_fields_set == {"message_id", "delta"}


@pytest.mark.parametrize("names", [(), ("delta", "delta"), ("message_id", "colour")])
def test_a_builder_takes_distinct_field_names_of_its_model(names: tuple[str, ...]) -> None:
    with pytest.raises(
        UsageError, match=r"trusted_builder\(\) of TextMessageContentEvent takes distinct"
    ):
        TextMessageContentEvent.trusted_builder(*names)


def test_the_generic_trusted_constructor_takes_field_names() -> None:
    _assert_same_event(
        StepStartedEvent.trusted(step_name="plan"), StepStartedEvent(step_name="plan")
    )
    first = TextMessageEndEvent.trusted(message_id="m1")
    second = TextMessageEndEvent.trusted(message_id="m1")
    assert first.model_fields_set is not second.model_fields_set
    assert type(first.model_fields_set) is set


@pytest.mark.parametrize("how", ["trusted", "builder"])
def test_a_trusted_model_that_keeps_extra_members_gets_an_empty_dict_of_them(how: str) -> None:
    validated = AddOperation(op="add", path="/a", value=None)
    if how == "trusted":
        built = AddOperation.trusted(op="add", path="/a", value=None)
    else:
        built = AddOperation.trusted_builder("op", "path", "value")("add", "/a", None)
    assert built == validated
    assert built.__pydantic_extra__ == validated.__pydantic_extra__ == {}
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump_json() == validated.model_dump_json()


def test_every_event_a_handle_generates_equals_its_validated_twin() -> None:
    ctx, events = new()
    with ctx.message("user", name="me") as message:
        message.delta("Hi")
    with ctx.reasoning() as thinking:
        thinking.delta("Hmm")
    with ctx.tool_call("f", parent_message_id=message.id) as call:
        call.args("{}")
        call.result("21C")
    twins: list[BaseModel] = [
        TextMessageStartEvent(message_id="r-msg-1", role="user", name="me"),
        TextMessageContentEvent(message_id="r-msg-1", delta="Hi"),
        TextMessageEndEvent(message_id="r-msg-1"),
        ReasoningStartEvent(message_id="r-msg-2"),
        ReasoningMessageStartEvent(message_id="r-msg-2"),
        ReasoningMessageContentEvent(message_id="r-msg-2", delta="Hmm"),
        ReasoningMessageEndEvent(message_id="r-msg-2"),
        ReasoningEndEvent(message_id="r-msg-2"),
        ToolCallStartEvent(
            tool_call_id="r-call-1", tool_call_name="f", parent_message_id="r-msg-1"
        ),
        ToolCallArgsEvent(tool_call_id="r-call-1", delta="{}"),
        ToolCallEndEvent(tool_call_id="r-call-1"),
        ToolCallResultEvent(
            message_id="r-msg-3", tool_call_id="r-call-1", content="21C", role="tool"
        ),
    ]
    sent = events.drain()
    assert len(sent) == len(twins)
    for event, twin in zip(sent, twins, strict=True):
        _assert_same_event(event, twin)


@pytest.mark.parametrize("kind", ["message", "reasoning"])
def test_a_str_subclass_delta_goes_out_as_a_plain_str(kind: str) -> None:
    ctx, events = new()
    with ctx.message() if kind == "message" else ctx.reasoning() as block:
        block.delta(Text("Hi"))
        block.delta(Text(""))
    (content,) = [e for e in events.drain() if e.type.endswith("CONTENT")]
    assert type(getattr(content, "delta", None)) is str
    assert getattr(content, "delta", None) == "Hi"


def test_a_str_subclass_args_fragment_is_buffered_and_sent_as_a_plain_str() -> None:
    ctx, events = new()
    with ctx.tool_call("f") as call:
        call.args(Text('{"a":'))
        call.args(Text(""))
        call.args("1}")
        assert call.parse_args() == {"a": 1}
    (first, _) = only(events.drain(), ToolCallArgsEvent)
    assert type(first.delta) is str


def _text_sender(
    ctx: RunContext[JsonValue], kind: str
) -> tuple[Handle[JsonValue], Callable[[Any], None]]:
    """A block of `kind` and the method that streams its text."""
    if kind == "message":
        message = ctx.message()
        return message, message.delta
    if kind == "reasoning":
        thinking = ctx.reasoning()
        return thinking, thinking.delta
    call = ctx.tool_call("f")
    return call, call.args


@pytest.mark.parametrize("value", [None, 0, 1, b"Hi", ["Hi"]], ids=repr)
@pytest.mark.parametrize("kind", ["message", "reasoning", "tool call"])
def test_a_delta_that_is_not_text_is_refused_with_usage_error(kind: str, value: object) -> None:
    ctx, events = new()
    block, send = _text_sender(ctx, kind)
    with block:
        sent = len(events.drain())
        with pytest.raises(
            UsageError, match=rf"\(\) on (text )?{kind}( block)? '.+ takes text \(a str\), not "
        ):
            send(value)
        assert len(events.drain()) == 0
    assert sent == (2 if kind == "reasoning" else 1)


def test_a_role_outside_the_literal_is_refused_naming_the_roles_a_message_takes() -> None:
    ctx, events = new()
    with pytest.raises(
        UsageError,
        match=r"ctx.message\(\): the role given \(a str\) does not fit: Input should be "
        r"'developer', 'system', 'assistant' or 'user'",
    ):
        ctx.message("tool")  # type: ignore[arg-type]
    assert events.drain() == []
    assert ctx.open_handles == ()
    with ctx.message(Text("user"), name=Text("me")) as message:  # type: ignore[arg-type]
        pass
    start = only(events.drain(), TextMessageStartEvent)[0]
    assert (type(start.role), type(start.name)) == (str, str)
    assert message.closed


def test_a_tool_call_with_a_str_subclass_id_sends_the_plain_str_on_every_event() -> None:
    ctx, events = new()
    with ctx.tool_call(Text("f"), call_id=Text("c1"), parent_message_id=Text("m")) as call:
        call.args("{}")
        call.result([TextPart(text="21C")])
    for event in events.drain():
        assert type(getattr(event, "tool_call_id", "")) is str
    assert isinstance(call.id, Text)


def test_a_tool_call_whose_name_or_id_is_not_text_is_refused_naming_the_argument() -> None:
    ctx, events = new()
    with pytest.raises(
        UsageError,
        match=r"ctx.tool_call\(\): the name given \(an int\) does not fit: Input should be a "
        r"valid string$",
    ):
        ctx.tool_call(1)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"the call_id given \(a list\) does not fit"):
        ctx.tool_call("f", call_id=["c1"])  # type: ignore[arg-type]
    assert events.drain() == []
    assert ctx.open_handles == ()


@pytest.mark.parametrize("name", ["", "  "])
def test_a_tool_call_without_a_name_is_refused_before_anything_is_sent(name: str) -> None:
    ctx, events = new()
    with pytest.raises(
        UsageError,
        match=r"ctx.tool_call\(\) needs the tool's name, got '\s*': the client finds the tool "
        r"to run or render by it",
    ):
        ctx.tool_call(name)
    assert events.drain() == []
    assert ctx.open_handles == ()


@pytest.mark.parametrize("name", ["", "   "])
def test_a_step_without_a_name_is_refused_before_anything_is_sent(name: str) -> None:
    ctx, events = new()
    with pytest.raises(
        UsageError, match=r"ctx.step\(\) needs a name, got '\s*': a client shows the step by it"
    ):
        ctx.step(name)
    assert events.drain() == []
    assert ctx.open_handles == ()


# -- where a handle was opened ------------------------------------------------------------------


def test_a_handle_knows_the_line_of_the_code_that_opened_it() -> None:
    ctx, _ = new()

    def opens() -> list[Handle[JsonValue]]:
        return [ctx.message(), ctx.step("s")]

    first = opens.__code__.co_firstlineno + 1
    message, step = opens()
    assert message.opened_at == step.opened_at == (__file__, first)
    message.close()


def test_a_handle_opened_deep_in_a_long_function_knows_its_line_and_not_the_current_one() -> None:
    ctx, _ = new()

    def opens() -> tuple[Handle[JsonValue], int]:
        total = 0
        for index in range(3):
            total += index
        handle = ctx.tool_call(
            "get_weather",
        )
        return handle, total

    call, _ = opens()
    opened = opens.__code__.co_firstlineno + 4
    assert call.opened_at == (__file__, opened)
    assert call.opened_at == (__file__, opened)  # asked again, after the frame has gone
    call.close()


def test_a_handle_built_in_the_outermost_frame_of_a_program_knows_its_line() -> None:
    script = (
        "from agui import RunAgentInput, RunContext\n"
        "from agui.handles import StepHandle\n"
        "ctx, _ = RunContext.new(RunAgentInput(thread_id='t', run_id='r'))\n"
        "step = StepHandle(ctx, ctx._pipeline, 'plan')\n"
        "print(step.opened_at)\n"
    )
    found = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "('<string>', 4)"


# -- text that is not valid Unicode -------------------------------------------------------------

LONE = "ok \ud800"
"""Text with a lone surrogate: a Python str that UTF-8 cannot encode."""
NOT_UNICODE = r" is not valid Unicode: a lone surrogate \(U\+D800\) at index 3"


def test_a_message_refuses_a_lone_surrogate_naming_itself_and_stays_open() -> None:
    ctx, events = new()
    with ctx.message() as message:
        with pytest.raises(
            UsageError, match=r"the text given to delta\(\) on text message 'r-msg-1'" + NOT_UNICODE
        ):
            message.delta(LONE)
        assert not message.closed
        message.delta("fine")
    assert [c.delta for c in only(events.drain(), TextMessageContentEvent)] == ["fine"]


def test_the_refusal_says_the_rule_and_the_fix() -> None:
    ctx, _ = new()
    with ctx.message() as message, pytest.raises(UsageError, match=r"UTF-8.*errors='replace'"):
        message.delta(LONE)


def test_a_str_subclass_holding_a_lone_surrogate_is_refused_too() -> None:
    class Text(str):
        __slots__ = ()

    ctx, events = new()
    with ctx.message() as message, pytest.raises(UsageError, match=NOT_UNICODE):
        message.delta(Text(LONE))
    assert types_of(events.drain()) == [EventType.TEXT_MESSAGE_START, EventType.TEXT_MESSAGE_END]


def test_non_ascii_text_that_is_valid_unicode_goes_out_as_it_is() -> None:
    ctx, events = new()
    with ctx.message() as message:
        message.delta("héllo 世界 🙂")
    assert [c.delta for c in only(events.drain(), TextMessageContentEvent)] == ["héllo 世界 🙂"]


def test_reasoning_deltas_and_encrypted_values_refuse_a_lone_surrogate() -> None:
    ctx, events = new()
    with ctx.reasoning() as thinking:
        with pytest.raises(
            UsageError,
            match=r"the text given to delta\(\) on reasoning block 'r-msg-1'" + NOT_UNICODE,
        ):
            thinking.delta(LONE)
        with pytest.raises(
            UsageError, match=r"the value given to encrypted_value\(\) on reasoning block"
        ):
            thinking.encrypted_value(LONE)
    assert EventType.REASONING_MESSAGE_CONTENT not in types_of(events.drain())


def test_tool_call_args_results_and_values_refuse_a_lone_surrogate() -> None:
    ctx, events = new()
    with ctx.tool_call("search") as call:
        with pytest.raises(
            UsageError,
            match=r"the text given to args\(\) on tool call 'r-call-1' \(search\) is not",
        ):
            call.args(LONE)
        with pytest.raises(
            UsageError, match=r"the value given to encrypted_value\(\) on tool call"
        ):
            call.encrypted_value(LONE)
        with pytest.raises(
            UsageError, match=r"the result given to tool call 'r-call-1' \(search\) is not"
        ):
            call.result(LONE)
        with pytest.raises(UsageError, match=r"the result given to tool call .*U\+D800"):
            call.result([TextPart(text=LONE)])
        assert not call.closed
        assert call.raw_args == ""
        call.result("done")
    drained = events.drain()
    assert types_of(drained) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
    ]
    assert only(drained, ToolCallResultEvent)[0].content == "done"


def test_a_result_of_valid_content_parts_goes_out() -> None:
    ctx, events = new()
    with ctx.tool_call("search") as call:
        call.result([TextPart(text="héllo")])
    assert only(events.drain(), ToolCallResultEvent)[0].content == [TextPart(text="héllo")]


def test_a_result_that_is_a_dict_is_refused_naming_result_json_and_the_call_stays_open() -> None:
    ctx, events = new()
    with ctx.tool_call("weather") as call:
        with pytest.raises(
            UsageError,
            match=r"result\(\) on tool call 'r-call-1' \(weather\) takes text \(a str\) or a list "
            r"of content parts .*, not dict; send a value as JSON text with result_json\(value\)$",
        ):
            call.result({"tempC": 21})  # type: ignore[arg-type]
        assert not call.closed
        call.result_json({"tempC": 21})
    assert types_of(events.drain()) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
    ]


def test_a_result_whose_content_parts_do_not_fit_is_refused_at_the_part_and_nothing_is_sent() -> (
    None
):
    ctx, events = new()
    with ctx.tool_call("search") as call:
        parts = [TextPart(text="ok"), {"type": "text"}]
        with pytest.raises(
            UsageError,
            match=r"result\(\) on tool call 'r-call-1' \(search\): the content given does not "
            r"fit at /1/text: Field required$",
        ):
            call.result(parts)  # type: ignore[arg-type]
        assert not call.closed
    assert types_of(events.drain()) == [EventType.TOOL_CALL_START, EventType.TOOL_CALL_END]


def test_a_step_name_or_an_encrypted_value_that_is_not_text_is_refused_naming_it() -> None:
    ctx, events = new()
    with pytest.raises(UsageError, match=r"ctx.step\(\): the name given \(an int\) does not fit"):
        ctx.step(3)  # type: ignore[arg-type]
    with ctx.tool_call("f") as call:
        with pytest.raises(
            UsageError,
            match=r"encrypted_value\(\) on tool call 'r-call-1' \(f\): the value given \(an int\)",
        ):
            call.encrypted_value(7)  # type: ignore[arg-type]
        call.end()
    refused = pytest.raises(UsageError, match=r"on reasoning .*: the value given \(a NoneType\)")
    with ctx.reasoning() as reasoning, refused:
        reasoning.encrypted_value(None)  # type: ignore[arg-type]
    assert EventType.REASONING_ENCRYPTED_VALUE not in types_of(events.drain())


Opener = Callable[[RunContext[JsonValue]], object]


def _named_message(ctx: RunContext[JsonValue]) -> object:
    return ctx.message(name=LONE)


def _named_step(ctx: RunContext[JsonValue]) -> object:
    return ctx.step(LONE)


def _named_call(ctx: RunContext[JsonValue]) -> object:
    return ctx.tool_call(LONE)


def _call_with_id(ctx: RunContext[JsonValue]) -> object:
    return ctx.tool_call("t", call_id=LONE)


def _call_with_parent(ctx: RunContext[JsonValue]) -> object:
    return ctx.tool_call("t", parent_message_id=LONE)


@pytest.mark.parametrize(
    ("open_block", "refusal"),
    [
        (_named_message, r"the name given to ctx\.message\(\)"),
        (_named_step, r"the name given to ctx\.step\(\)"),
        (_named_call, r"the name given to ctx\.tool_call\(\)"),
        (_call_with_id, r"the call_id given to ctx\.tool_call\(\)"),
        (_call_with_parent, r"the parent_message_id given to ctx\.tool_call\(\)"),
    ],
)
def test_a_name_or_id_with_a_lone_surrogate_opens_nothing(open_block: Opener, refusal: str) -> None:
    ctx, events = new()
    with pytest.raises(UsageError, match=refusal + NOT_UNICODE):
        open_block(ctx)
    assert events.drain() == []
    with ctx.message():  # nothing was left open
        pass


UNICODE_OR_NOT = st.text(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)))
"""Any text, lone surrogates included (`st.text()` alone never makes one)."""


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(UNICODE_OR_NOT, max_size=5))
def test_every_delta_either_goes_out_whole_or_is_refused_with_nothing_sent(
    texts: list[str],
) -> None:
    ctx, events = new()
    sent: list[str] = []
    with ctx.message() as message:
        for text in texts:
            try:
                text.encode()
            except UnicodeEncodeError:
                with pytest.raises(UsageError, match="is not valid Unicode"):
                    message.delta(text)
            else:
                message.delta(text)
                sent.extend([text] if text else [])
    drained = events.drain()
    assert [c.delta for c in only(drained, TextMessageContentEvent)] == sent
    assert b"".join(encode_sse(event) for event in drained).decode()  # every frame is UTF-8


# A delta the pipeline holds a grant for is queued at once (`agui._emit.pipeline`): every
# program of handle operations, raw emits, direct observations and cancellations must go exactly
# as it goes when every event takes the full way (through a transformer that passes each one on
# unchanged).


class PassOn:
    """A transformer that changes nothing; without `_records_pass`, it sees every event."""

    def transform(self, event: Event) -> list[Event]:
        return [event]


DELTA_OP = st.tuples(st.just("delta"), st.integers(0, 3), st.sampled_from(["x", "é", ""]))
GRANT_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("open"), st.sampled_from(["message", "reasoning", "tool", "step"])),
        DELTA_OP,
        DELTA_OP,
        DELTA_OP,
        st.tuples(st.just("close"), st.integers(0, 3)),
        st.tuples(st.just("emit"), st.sampled_from(["end", "chunk", "custom", "finish"])),
        st.tuples(st.just("observe"), st.sampled_from(["end", "chunk", "custom"])),
        st.tuples(st.just("cancel")),
    ),
    max_size=30,
)


def _raw_event(name: str, target: object) -> Event:
    """A raw event; `end` closes the block `target` holds open, where the handle would."""
    if name == "end" and isinstance(target, ToolCallHandle):
        return ToolCallEndEvent(tool_call_id=target.id)
    if name == "end" and isinstance(target, ReasoningHandle):
        return ReasoningMessageEndEvent(message_id=target.id)
    if name == "end":
        return TextMessageEndEvent(
            message_id=target.id if isinstance(target, MessageHandle) else "m"
        )
    if name == "chunk":
        return TextMessageChunkEvent(message_id="chunked", delta="x")
    if name == "custom":
        return CustomEvent(name="app.tick", value=None)
    return RunFinishedEvent(thread_id="t", run_id="r")


def _grant_step(ctx: RunContext[JsonValue], handles: list[Any], op: tuple[Any, ...]) -> None:
    match op:
        case ("open", kind):
            openers: dict[str, Callable[[], Any]] = {
                "message": ctx.message,
                "reasoning": ctx.reasoning,
                "tool": lambda: ctx.tool_call("f"),
                "step": lambda: ctx.step(f"s{len(handles)}"),
            }
            handles.append(openers[kind]().__enter__())
        case ("delta", index, text) if handles:
            handle = handles[index % len(handles)]
            if isinstance(handle, ToolCallHandle):
                handle.args(text)
            elif not isinstance(handle, StepHandle):
                handle.delta(text)
        case ("close", index) if handles:
            handles.pop(index % len(handles)).__exit__(None, None, None)
        case ("emit" | "observe", name):
            blocks = [h for h in handles if not isinstance(h, StepHandle)]
            event = _raw_event(name, blocks[-1] if blocks else None)
            (ctx.emit if op[0] == "emit" else ctx.verifier.observe)(event)
        case ("cancel",):
            ctx.token.cancel("stop")
        case _:
            pass


def _play_grants(
    ops: list[tuple[Any, ...]], transformers: Sequence[PassOn] = ()
) -> tuple[list[object], list[str], object]:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r"), transformers=transformers
    )
    handles: list[Any] = []
    outcomes: list[object] = []
    for op in ops:
        try:
            _grant_step(ctx, handles, op)
        except AguiError as error:
            outcomes.append((type(error).__name__, str(error)))
        else:
            outcomes.append(None)
    frames = [encode_sse(event).decode() for event in events.drain()]
    verifier = ctx.verifier
    blocks = (verifier.open_messages, verifier.open_tool_calls, verifier.open_reasoning_messages)
    return outcomes, frames, (verifier.running, blocks, verifier.open_chunks)


def _granted_then(*ops: tuple[Any, ...], kind: str = "message") -> list[tuple[Any, ...]]:
    return [("open", kind), ("delta", 0, "x"), *ops, ("delta", 0, "x"), ("close", 0)]


@settings(max_examples=400, deadline=None)
@given(GRANT_OPS)
@example(_granted_then(("cancel",)))
@example(_granted_then(("emit", "end")))
@example(_granted_then(("observe", "end")))
@example(_granted_then(("emit", "chunk")))
@example(_granted_then(("emit", "finish")))
@example(_granted_then(("open", "step"), ("emit", "custom")))
@example(_granted_then(("cancel",), kind="tool"))
@example(_granted_then(("observe", "end"), kind="tool"))
@example(_granted_then(("cancel",), kind="reasoning"))
@example(_granted_then(("observe", "end"), kind="reasoning"))
def test_a_granted_delta_goes_exactly_as_it_goes_the_full_way(
    ops: list[tuple[Any, ...]],
) -> None:
    granted = _play_grants(ops)
    assert granted == _play_grants(ops, [PassOn()])


def test_a_blocks_deltas_after_its_first_skip_the_record_branch_until_something_else_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    branched: list[Kind] = []
    record = Pipeline[Any]._record  # pyright: ignore[reportPrivateUsage]

    def counting(self: Pipeline[Any], kind: Kind, entity_id: str, text: str) -> None:
        branched.append(kind)
        record(self, kind, entity_id, text)

    monkeypatch.setattr(Pipeline, "_record", counting)
    ctx, events = new()
    with ctx.message() as message:
        message.delta("a")
        message.delta("b")
        ctx.emit(CustomEvent(name="app.tick", value=None))  # the verifier moved: no grant
        message.delta("c")
        message.delta("d")

    starts, deltas, end = Kind.TEXT_START, Kind.TEXT_CONTENT, Kind.TEXT_END
    assert branched == [starts, deltas, deltas, end]
    assert [e.delta for e in only(events.drain(), TextMessageContentEvent)] == list("abcd")


def test_a_result_after_the_calls_block_is_refused_pointing_at_ctx_tool_result() -> None:
    ctx, events = new()
    with ctx.tool_call("get_weather") as call:
        call.args("{}")
    with pytest.raises(
        UsageError,
        match=r"it has ended; give the result inside its `with` block, or answer it later with "
        r"ctx\.tool_result\('r-call-1', \.\.\.\)",
    ):
        call.result("sunny")
    ctx.tool_result(call.id, "sunny")
    assert [event.type for event in events.drain()][-2:] == ["TOOL_CALL_END", "TOOL_CALL_RESULT"]


def test_a_message_opened_with_an_id_continues_the_message_the_stream_named() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    ctx.say("Let me check.")
    with ctx.message(message_id="r-msg-1") as message:
        message.delta(" One moment.")

    [folded] = fold(events.drain()).messages
    assert (message.id, folded.id, folded.content) == (
        "r-msg-1",
        "r-msg-1",
        "Let me check. One moment.",
    )


@pytest.mark.parametrize(
    ("given", "refused"),
    [
        ("", r"takes the id of a message as text, not ''; leave it out for a new message"),
        (" ", r"takes the id of a message as text, not ' '"),
        (7, r"takes the id of a message as text, not 7"),
        ("m\ud800", r"the message_id given to ctx.message\(\) .*lone surrogate"),
    ],
)
def test_a_message_id_that_cannot_be_one_is_refused_before_anything_is_sent(
    given: object, refused: str
) -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with pytest.raises(UsageError, match=refused):
        ctx.message(message_id=cast("str", given))
    assert events.drain() == []
