"""Stream transformers: FilterToolCalls, ToolResultToState, and how they chain."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Iterator, Sequence
from typing import cast

import pytest
from pydantic import BaseModel, JsonValue

from agui import EventType, RunAgentInput, RunContext
from agui.agents import ToolLoopAgent, tool
from agui.agents.dispatch import NativeDispatcher
from agui.agents.models import Call, ScriptedModel, Turn
from agui.errors import AgentError, InvalidArguments, ProtocolViolation, UsageError
from agui.events import (
    CustomEvent,
    Event,
    ReasoningEncryptedValueEvent,
    RunErrorEvent,
    RunFinishedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import TextPart
from agui.sink import EventReceiver
from agui.testing import assert_valid, collect, fold
from agui.transform import (
    FilterToolCalls,
    ToolArgsToState,
    ToolResultToState,
    Transformer,
    apply_transformers,
)
from agui.types import AddOperation
from agui.verify import Rule


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def new(*transformers: Transformer) -> tuple[RunContext[JsonValue], EventReceiver]:
    return RunContext.new(RunAgentInput(thread_id="t", run_id="r"), transformers=transformers)


class Double:
    def transform(self, event: Event) -> Sequence[Event]:
        return (event, event)


class DropAll:
    def __init__(self) -> None:
        self.seen = 0

    def transform(self, event: Event) -> Sequence[Event]:
        self.seen += 1
        assert event.type
        return ()


# -- apply_transformers -----------------------------------------------------------------------


def test_transformers_run_in_order_each_on_the_previous_output() -> None:
    event = CustomEvent(name="x", value=1)
    assert apply_transformers([Double(), Double()], event) == [event] * 4
    assert apply_transformers([], event) == [event]


def test_a_transformer_that_drops_everything_stops_the_chain() -> None:
    after = DropAll()
    assert apply_transformers([DropAll(), after], CustomEvent(name="x", value=1)) == []
    assert after.seen == 0


# -- FilterToolCalls --------------------------------------------------------------------------


def test_filter_tool_calls_drops_whole_calls_by_name() -> None:
    ctx, events = new(FilterToolCalls({"secret"}))
    with ctx.tool_call("secret") as call:
        call.args('{"x":1}')
        call.encrypted_value("opaque")
        call.result("hidden")
    with ctx.tool_call("public") as call:
        call.args("{}")
        call.encrypted_value("visible")
        call.result("shown")
    kept = events.drain()
    assert types_of(kept) == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_ARGS,
        EventType.REASONING_ENCRYPTED_VALUE,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_RESULT,
    ]
    assert {getattr(e, "tool_call_id", None) for e in kept} - {None} == {"r-call-2"}


def test_filter_tool_calls_drops_chunked_calls_by_their_first_chunk() -> None:
    ctx, events = new(FilterToolCalls({"secret"}))
    ctx.emit(ToolCallChunkEvent(tool_call_id="c1", tool_call_name="secret", delta='{"a":'))
    ctx.emit(ToolCallChunkEvent(tool_call_id="c1", delta="1}"))
    ctx.emit(ToolCallChunkEvent(tool_call_id="c2", tool_call_name="public", delta="{}"))
    kept = events.drain()
    assert [(e.tool_call_id, e.delta) for e in kept if isinstance(e, ToolCallChunkEvent)] == [
        ("c2", "{}")
    ]


def test_filter_tool_calls_passes_id_less_chunks_and_other_events() -> None:
    transformer = FilterToolCalls({"secret"})
    chunk = ToolCallChunkEvent(delta="more")
    message = TextMessageStartEvent(message_id="m1")
    value = ReasoningEncryptedValueEvent(subtype="message", entity_id="m1", encrypted_value="x")
    assert transformer.transform(chunk) == (chunk,)
    assert transformer.transform(message) == (message,)
    assert transformer.transform(value) == (value,)


def test_filter_tool_calls_forgets_a_dropped_id_reused_by_a_kept_call() -> None:
    transformer = FilterToolCalls({"secret"})
    assert (
        transformer.transform(ToolCallStartEvent(tool_call_id="c1", tool_call_name="secret")) == ()
    )
    assert transformer.transform(ToolCallEndEvent(tool_call_id="c1")) == ()
    reused = ToolCallStartEvent(tool_call_id="c1", tool_call_name="public")
    assert transformer.transform(reused) == (reused,)
    args = ToolCallArgsEvent(tool_call_id="c1", delta="{}")
    assert transformer.transform(args) == (args,)


def test_a_filtered_call_is_not_listed_as_pending() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        with ctx.tool_call("secret") as call:
            call.end()
        with ctx.tool_call("confirm") as call:
            call.end()

    events = asyncio.run(
        collect(
            agent,
            RunAgentInput(thread_id="t", run_id="r"),
            transformers=[FilterToolCalls(["secret"])],
        )
    )
    assert_valid(events)
    assert fold(events).outcome is not None
    last = events[-1]
    assert last.type == EventType.RUN_FINISHED
    assert last.model_dump(mode="json")["outcome"] == {
        "type": "success",
        "pendingToolCallIds": ["r-call-2"],
    }


# -- ToolResultToState ------------------------------------------------------------------------


def test_a_json_result_becomes_a_state_snapshot_after_the_result() -> None:
    ctx, events = new(ToolResultToState("board"))
    with ctx.tool_call("board") as call:
        call.result_json({"tasks": ["ship it"]})
    drained = events.drain()
    assert types_of(drained)[-2:] == [EventType.TOOL_CALL_RESULT, EventType.STATE_SNAPSHOT]
    snapshot = drained[-1]
    assert isinstance(snapshot, StateSnapshotEvent)
    assert snapshot.snapshot == {"tasks": ["ship it"]}


def test_replacing_sends_the_state_instead_of_the_result() -> None:
    ctx, events = new(ToolResultToState("board", replacing=True))
    with ctx.tool_call("board") as call:
        call.result_json({"tasks": []})
    assert types_of(events.drain())[-2:] == [EventType.TOOL_CALL_END, EventType.STATE_SNAPSHOT]


def test_a_json_patch_result_becomes_a_state_delta_in_delta_mode() -> None:
    ctx, events = new(ToolResultToState("edit", delta=True))
    with ctx.tool_call("edit") as call:
        call.result_json([{"op": "add", "path": "/n", "value": 1}])
    last = events.drain()[-1]
    assert isinstance(last, StateDeltaEvent)
    assert last.delta == [AddOperation(path="/n", value=1)]


@pytest.mark.parametrize(
    ("delta", "content"),
    [
        (False, "not json"),
        (True, "not json"),
        (True, '{"not": "a patch"}'),
        (True, '[{"op": "jump"}]'),
        (False, '{"n": NaN}'),
    ],
    ids=["text-snapshot", "text-delta", "object-delta", "bad-op-delta", "nan-snapshot"],
)
def test_a_result_that_is_not_usable_state_passes_through_untouched(
    *, delta: bool, content: str
) -> None:
    ctx, events = new(ToolResultToState("board", delta=delta, replacing=True))
    with ctx.tool_call("board") as call:
        call.result(content)
    drained = events.drain()
    assert types_of(drained)[-1] == EventType.TOOL_CALL_RESULT
    assert EventType.STATE_SNAPSHOT not in types_of(drained)


def test_results_of_other_tools_and_content_parts_pass_through() -> None:
    ctx, events = new(ToolResultToState("board"))
    with ctx.tool_call("other") as call:
        call.result_json({"tasks": []})
    with ctx.tool_call("board") as call:
        call.result([TextPart(text='{"tasks": []}')])
    assert EventType.STATE_SNAPSHOT not in types_of(events.drain())


def test_a_chunked_call_of_the_tool_is_turned_into_state_too() -> None:
    transformer = ToolResultToState("board")
    transformer.transform(ToolCallChunkEvent(tool_call_id="c1", tool_call_name="board"))
    transformer.transform(ToolCallChunkEvent(tool_call_id="c2", tool_call_name="other"))
    result = ToolCallResultEvent(message_id="m1", tool_call_id="c1", content='{"n": 1}')
    out = transformer.transform(result)
    assert types_of(out) == [EventType.TOOL_CALL_RESULT, EventType.STATE_SNAPSHOT]
    assert transformer.transform(result) == (result,)
    other = ToolCallResultEvent(message_id="m2", tool_call_id="c2", content='{"n": 2}')
    assert transformer.transform(other) == (other,)


def test_tool_result_to_state_keeps_the_run_state_baseline_in_step() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        with ctx.tool_call("board") as call:
            call.result_json({"tasks": ["a"], "owner": "tool"})
        ctx.state = {"tasks": ["a"], "owner": "agent"}
        ctx.publish_state()

    events = asyncio.run(
        collect(
            agent,
            RunAgentInput(thread_id="t", run_id="r"),
            transformers=[ToolResultToState("board")],
        )
    )
    assert_valid(events)
    assert fold(events).state == {"tasks": ["a"], "owner": "agent"}


# -- a transformer's misuse -------------------------------------------------------------------


class Returns:
    """A transformer with a bug: it returns `value` for every event, not a list of events."""

    def __init__(self, value: object) -> None:
        self.value = value

    def transform(self, event: Event) -> Sequence[Event]:
        assert event.type
        return cast("Sequence[Event]", self.value)


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (None, "None"),
        ({"type": "CUSTOM"}, "a dict"),
        ("CUSTOM", "a str"),
        (CustomEvent(name="x", value=1), "a CustomEvent"),
    ],
    ids=["none", "dict", "str", "lone-event"],
)
def test_a_transformer_returning_no_list_of_events_is_refused_by_name(
    value: object, what: str
) -> None:
    ctx, events = new(Returns(value))
    with pytest.raises(UsageError, match=f"transformer Returns returned {what} for CUSTOM; "):
        ctx.emit(CustomEvent(name="x", value=1))
    assert events.drain() == []


def test_a_transformer_returning_something_that_is_no_event_is_refused_by_name() -> None:
    ctx, _ = new(Returns([{"type": "CUSTOM", "name": "x"}]))
    with pytest.raises(UsageError, match=r"transformer Returns, given CUSTOM: cannot emit a dict"):
        ctx.emit(CustomEvent(name="x", value=1))


class PassOn:
    def transform(self, event: Event) -> Sequence[Event]:
        return [event]


class Retarget:
    """Points every text delta at a message no one opened: a buggy rewrite."""

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, TextMessageContentEvent):
            return [event.model_copy(update={"message_id": "elsewhere"})]
        return [event]


def test_a_refusal_of_a_transformers_output_names_the_chain_and_what_was_emitted() -> None:
    ctx, events = new(PassOn(), Retarget())
    with (
        ctx.message() as message,
        pytest.raises(
            ProtocolViolation,
            match=r"\(this event is one the run's transformers \(PassOn, Retarget\) returned "
            r"for TEXT_MESSAGE_CONTENT; check what they return\)$",
        ) as caught,
    ):
        message.delta("Hi")
    assert caught.value.rule is Rule.MESSAGE_NOT_OPEN
    assert isinstance(caught.value.event, TextMessageContentEvent)
    assert caught.value.event.message_id == "elsewhere"
    assert types_of(events.drain()) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_END"]


def test_a_transformers_output_with_a_lone_surrogate_is_refused_naming_the_chain() -> None:
    ctx, events = new(Returns([CustomEvent(name="\ud800", value=1)]))
    with pytest.raises(UsageError, match=r"returned for CUSTOM; check what they return\)$"):
        ctx.emit(CustomEvent(name="x", value=1))
    assert events.drain() == []


def test_a_refusal_of_an_event_a_transformer_passed_on_unchanged_is_the_agents_own() -> None:
    ctx, _ = new(PassOn())
    with pytest.raises(ProtocolViolation) as caught:
        ctx.emit(TextMessageContentEvent(message_id="m9", delta="x"))
    assert "transformers" not in str(caught.value)


class Yields:
    def transform(self, event: Event) -> Iterator[Event]:
        yield event


def test_a_generator_transformer_chains_with_others() -> None:
    event = CustomEvent(name="x", value=1)
    chain = cast("list[Transformer]", [Yields(), Double(), Yields()])
    assert apply_transformers(chain, event) == [event, event]


class DropEnds:
    def transform(self, event: Event) -> Sequence[Event]:
        return () if isinstance(event, (RunFinishedEvent, RunErrorEvent)) else (event,)


def test_a_transformer_dropping_the_runs_end_still_leaves_one_terminal_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        ctx.say("hi")

    run_input = RunAgentInput(thread_id="t", run_id="r")
    with caplog.at_level(logging.ERROR, logger="agui"):
        events = asyncio.run(collect(agent, run_input, transformers=[DropEnds()], debug=True))
    assert_valid(events)
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert last.code == "USAGE_ERROR"
    assert "transformer DropEnds dropped RUN_FINISHED" in last.message
    assert "transformer DropEnds dropped RUN_ERROR, sent as it came" in caplog.text


async def failing(_ctx: RunContext[JsonValue]) -> None:
    message = "the search backend is down"
    raise AgentError(message)


class FailOnRunError:
    """A transformer with a bug: it reads a member RUN_ERROR does not have."""

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, RunErrorEvent):
            return (event.model_copy(update={"message": getattr(event, "thread_id")}),)  # noqa: B009
        return (event,)


def test_a_transformer_failing_on_run_error_lets_it_out_as_it_came(
    caplog: pytest.LogCaptureFixture,
) -> None:
    run_input = RunAgentInput(thread_id="t", run_id="r")
    with caplog.at_level(logging.ERROR, logger="agui"):
        events = asyncio.run(collect(failing, run_input, transformers=[FailOnRunError()]))
    assert types_of(events) == [EventType.RUN_STARTED, EventType.RUN_ERROR]
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert last.message == "the search backend is down"
    assert "transformer FailOnRunError failed on RUN_ERROR, sent as it came" in caplog.text


class Redact:
    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, RunErrorEvent):
            return (event.model_copy(update={"message": "something went wrong"}),)
        return (event,)


def test_a_transformer_may_rewrite_run_error() -> None:
    run_input = RunAgentInput(thread_id="t", run_id="r")
    events = asyncio.run(collect(failing, run_input, transformers=[Redact()]))
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert last.message == "something went wrong"
    assert types_of(events).count(EventType.RUN_ERROR) == 1


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        (
            FilterToolCalls({"lookup"}),
            r"takes a list of transformers, got one FilterToolCalls: pass \[",
        ),
        ([FilterToolCalls], r"transformer 0 is the class FilterToolCalls, not an instance of it"),
        ([FilterToolCalls({"x"}), object()], r"transformer 1 \(object\) has no transform\(event\)"),
        (3, r"takes a list of transformers, got int"),
        ("FilterToolCalls", r"takes a list of transformers, got str"),
    ],
    ids=["one transformer", "a class", "no transform method", "a number", "a string"],
)
def test_transformers_given_wrongly_are_refused_when_the_run_is_built(
    given: object, problem: str
) -> None:
    with pytest.raises(UsageError, match=problem):
        RunContext.new(
            RunAgentInput(thread_id="t", run_id="r"),
            transformers=cast("Sequence[Transformer]", given),
        )


# -- ToolArgsToState -----------------------------------------------------------------------------


class _Doc(BaseModel):
    document: str = ""


class _Recipe(BaseModel):
    title: str = ""
    notes: dict[str, str] = {}


class _Kitchen(BaseModel):
    recipe: _Recipe = _Recipe()


@tool
def write_document(ctx: RunContext[_Doc], document: str) -> str:
    """Write the document."""
    ctx.state.document = document
    ctx.publish_state()
    return "written"


def _writer(arguments: str) -> ScriptedModel:
    return ScriptedModel([Turn.tool_calls(Call("write_document", arguments)), Turn.text("Done.")])


def _write(arguments: str) -> list[Event]:
    # Streamed calls reach the client (and the transformer) fragment by fragment.
    streamed = NativeDispatcher(stream_tool_calls=True)
    agent = ToolLoopAgent(_writer(arguments), tools=[write_document], dispatcher=streamed)
    given = RunAgentInput(thread_id="t", run_id="r", state={"document": "draft"})
    predict = ToolArgsToState("write_document", "document", state=_Doc)
    return asyncio.run(collect(agent, given, state=_Doc, transformers=[predict]))


def test_the_document_grows_in_state_while_the_arguments_stream() -> None:
    story = "Once upon a time a dragon named Atlantis guarded the bay."
    events = _write(json.dumps({"document": story}))

    assert_valid(events)
    grown = [
        cast("str", cast("AddOperation", e.delta[0]).value)
        for e in events
        if isinstance(e, StateDeltaEvent) and e.delta[0].path == "/document"
    ]
    assert len(grown) > 3
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(grown))
    assert grown[-1] == story
    kinds = [e.type for e in events]
    assert kinds.index("STATE_DELTA") < kinds.index("TOOL_CALL_END")  # during the call
    assert fold(events).state == {"document": story}


def test_only_the_named_tool_and_argument_are_published_once_per_change() -> None:
    predict = ToolArgsToState("write", "document", "/doc")
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), transformers=[predict])
    with ctx.tool_call("other") as call:
        call.args('{"document": "no"}')
    with ctx.tool_call("write") as call:
        for piece in ('{"title": "T", ', '"document": "Hi', '"', ', "n": 1}'):
            call.args(piece)
    with ctx.tool_call("write") as call:
        call.args("[1, 2]")

    deltas = [e for e in events.drain() if isinstance(e, StateDeltaEvent)]
    assert [d.model_dump(by_alias=True, exclude_none=True)["delta"] for d in deltas] == [
        [{"op": "add", "path": "/doc", "value": "Hi"}]
    ]


def test_a_state_key_may_be_a_pointer_into_nested_state_and_mapping_members() -> None:
    ToolArgsToState("t", "title", "/recipe/title", state=_Kitchen)
    ToolArgsToState("t", "note", "/recipe/notes/salt", state=_Kitchen)


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("body", r"state key '/body' is not in the state type: '/' has no member 'body'"),
        ("/document/x", r"'/document' has no member 'x' \(its members: none\)"),
    ],
    ids=["unknown-key", "below-a-string"],
)
def test_a_state_key_the_state_type_lacks_is_refused_where_the_transformer_is_built(
    key: str, shown: str
) -> None:
    with pytest.raises(UsageError, match=shown):
        ToolArgsToState("write_document", "document", key, state=_Doc)


def test_a_state_type_that_is_no_type_is_refused() -> None:
    with pytest.raises(UsageError, match="the state type must be one"):
        ToolArgsToState("write_document", "document", state={"document": ""})


def test_arguments_that_never_become_json_end_the_run_with_one_invalid_arguments_error() -> None:
    events = _write('{"document": "Once upon a time"} and more')

    assert_valid(events)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "INVALID_ARGUMENTS"
    assert [e.type for e in events].count("RUN_ERROR") == 1
    assert "RUN_FINISHED" not in [e.type for e in events]


def test_text_that_is_not_json_publishes_nothing_and_fails_where_the_call_ends() -> None:
    predict = ToolArgsToState("write", "document")
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), transformers=[predict])

    refused = r"tool call 'r-call-1' \(write\) ended without becoming JSON"
    with pytest.raises(InvalidArguments, match=refused), ctx.tool_call("write") as call:  # noqa: PT012 - ends in it
        call.args("document: once")
        call.end()

    # Leaving the block closed the call: no state, and one END.
    assert [event.type for event in events.drain()] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
