"""Bridges: another adapter's event stream served as an agui agent, by the rules of from_events."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar, cast

import ag_ui.core as foreign
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

import agui.bridges
from agui import AgentError, EventType, RunAgentInput, RunContext, RunOutcome, asgi_app
from agui.bridges import (
    EventBridge,
    EventFactory,
    RawEvents,
    RemoteAgent,
    from_events,
    remote,
)
from agui.bridges._foreign import ForeignReader
from agui.errors import DecodeError, UnknownMemberWarning, UsageError
from agui.events import (
    CustomEvent,
    Event,
    ReasoningMessageContentEvent,
    RunErrorEvent,
    RunFinishedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from agui.fold import fold
from agui.runner import drive
from agui.runs import MemoryRunLog
from agui.testing import assert_valid, collect, serving
from agui.types import CancelledOutcome, InterruptOutcome, SuccessOutcome, TokenUsage
from agui.wire import parse_event
from asgi_calls import Cutting
from bridge_runs import stalled_read
from fake_endpoint import FakeEndpoint, Reply
from fake_endpoint import serving as serving_script
from node_clients import official_client_run
from test_backpressure import CHUNK, CHUNKS, INPUT

E = TypeVar("E")
HIDDEN = "hunter2-do-not-leak"
Wire = dict[str, JsonValue]
RS, RF, RE = EventType.RUN_STARTED, EventType.RUN_FINISHED, EventType.RUN_ERROR
TME = EventType.TEXT_MESSAGE_END


def request(**fields: object) -> RunAgentInput:
    return RunAgentInput.model_validate({"threadId": "t", "runId": "r", **fields})


def started(thread: str = "t", run: str = "r") -> foreign.RunStartedEvent:
    return foreign.RunStartedEvent(thread_id=thread, run_id=run)


def finished(**fields: Any) -> foreign.RunFinishedEvent:
    return foreign.RunFinishedEvent(thread_id="t", run_id="r", **fields)


def scripted(*items: object) -> EventBridge:
    """A bridge over an adapter that yields `items`, after its own RUN_STARTED."""

    async def adapter(_input: foreign.RunAgentInput) -> AsyncIterator[object]:
        yield started()
        for item in items:
            yield item

    return from_events(adapter)


def relayed(
    bridge: EventBridge | RemoteAgent,
    *,
    debug: bool = False,
    given: RunAgentInput | None = None,
) -> list[Event]:
    """Run `bridge` to the end and check the stream: valid, one RUN_STARTED, one terminal."""
    run_input = given if given is not None else request()
    events = asyncio.run(collect(bridge, run_input, debug=debug))
    assert_valid(events, input=run_input)
    assert types_of(events).count(RS) == 1
    assert sum(event.type in (RF, RE) for event in events) == 1
    return events


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def last(events: Sequence[Event], kind: type[E]) -> E:
    event = events[-1]
    assert isinstance(event, kind)
    return event


def strict(bridge: EventBridge) -> EventBridge:
    return from_events(bridge.factory, mode="strict")


TEXT = (
    foreign.TextMessageStartEvent(message_id="m1", role="assistant"),
    foreign.TextMessageContentEvent(message_id="m1", delta="Hello"),
    foreign.TextMessageEndEvent(message_id="m1"),
)


# -- the foreign run's boundaries -------------------------------------------------------------


def test_the_foreign_run_started_is_swallowed_and_agui_s_ids_are_kept() -> None:
    events = relayed(scripted(*TEXT, finished()))
    assert types_of(events) == [RS, "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", TME, RF]
    assert (events[0].thread_id, events[0].run_id) == ("t", "r")  # type: ignore[union-attr]


def test_a_foreign_run_started_with_other_ids_is_logged_and_agui_s_ids_win(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def adapter(_input: foreign.RunAgentInput) -> AsyncIterator[object]:
        yield started(thread="their-thread", run="their-run")
        yield finished()

    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = relayed(from_events(adapter))
    assert types_of(events) == [RS, RF]
    assert "started thread 'their-thread' run 'their-run'" in caplog.text


def test_a_second_run_started_is_dropped_in_repair_and_logged_with_its_rule(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bridge = scripted(*TEXT[:2], started(), *TEXT[2:], finished())
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = relayed(bridge)
    assert types_of(events)[-2:] == [TME, RF]
    assert "breaks rule nested-run-started" in caplog.text


def test_a_second_run_started_fails_a_strict_run_after_closing_what_is_open() -> None:
    events = relayed(strict(scripted(*TEXT[:2], started(), *TEXT[2:], finished())))
    assert types_of(events)[-2:] == [TME, RE]
    assert last(events, RunErrorEvent).code == "PROTOCOL_VIOLATION"


def test_a_foreign_success_keeps_its_pending_calls_result_and_usage() -> None:
    usage = [foreign.TokenUsage(input_tokens=3, output_tokens=5)]
    outcome = foreign.RunFinishedSuccessOutcome(pending_tool_call_ids=["c1"])
    call = (
        foreign.ToolCallStartEvent(tool_call_id="c1", tool_call_name="confirm"),
        foreign.ToolCallEndEvent(tool_call_id="c1"),
    )
    events = relayed(scripted(*call, finished(outcome=outcome, result={"n": 1}, usage=usage)))
    end = last(events, RunFinishedEvent)
    assert end.outcome == SuccessOutcome(pending_tool_call_ids=["c1"])
    assert (end.result, end.usage) == ({"n": 1}, [TokenUsage(input_tokens=3, output_tokens=5)])


def test_a_foreign_interrupt_ends_the_run_with_its_interrupts() -> None:
    asked = foreign.Interrupt(id="approve-1", reason="tool_call", message="Book it?")
    events = relayed(
        scripted(finished(outcome=foreign.RunFinishedInterruptOutcome(interrupts=[asked])))
    )
    outcome = last(events, RunFinishedEvent).outcome
    assert isinstance(outcome, InterruptOutcome)
    assert [(i.id, i.reason, i.message) for i in outcome.interrupts] == [
        ("approve-1", "tool_call", "Book it?")
    ]


def test_a_foreign_cancelled_run_ends_cancelled() -> None:
    events = relayed(scripted(finished(outcome=foreign.RunFinishedCancelledOutcome())))
    assert last(events, RunFinishedEvent).outcome == CancelledOutcome()


def test_events_after_the_foreign_terminal_are_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    late = foreign.CustomEvent(name="late", value=1)
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = relayed(scripted(finished(), late, *TEXT))
    assert types_of(events) == [RS, RF]
    assert caplog.text.count("came after the upstream's terminal event") == 4


def test_a_foreign_run_error_keeps_its_code_and_hides_its_message() -> None:
    failed = foreign.RunErrorEvent(message=f"KeyError: {HIDDEN}", code="EXECUTION_ERROR")
    events = relayed(scripted(*TEXT[:2], failed))
    error = last(events, RunErrorEvent)
    assert (error.code, error.message) == ("EXECUTION_ERROR", "the agent this server relays failed")
    assert HIDDEN not in json.dumps([e.model_dump(mode="json") for e in events])
    assert types_of(events)[-2:] == [TME, RE]  # its open message closed first


def test_events_after_a_foreign_run_error_are_dropped_naming_that_rule(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = relayed(scripted(foreign.RunErrorEvent(message="failed"), *TEXT))
    assert types_of(events) == [RS, RE]
    assert caplog.text.count("(rule event-after-run-error)") == 3


def test_a_foreign_run_error_shows_its_message_in_debug_and_gets_a_code_when_it_had_none() -> None:
    events = relayed(scripted(foreign.RunErrorEvent(message="the model is down")), debug=True)
    error = last(events, RunErrorEvent)
    assert error.code == "UPSTREAM_ERROR"
    assert error.message.endswith("UpstreamError: the model is down")


def test_an_iterator_that_ends_without_a_terminal_is_upstream_truncated_never_success() -> None:
    events = relayed(scripted(*TEXT[:2]))
    assert types_of(events)[-2:] == [TME, RE]
    assert last(events, RunErrorEvent).code == "UPSTREAM_TRUNCATED"


# -- failure: every open block closed, innermost first, then one terminal ---------------------


def test_an_adapter_that_raises_mid_stream_has_every_block_closed_innermost_first() -> None:
    async def adapter(_input: foreign.RunAgentInput) -> AsyncIterator[object]:
        yield started()
        yield foreign.StepStartedEvent(step_name="plan")
        yield foreign.TextMessageStartEvent(message_id="m1", role="assistant")
        yield foreign.ToolCallStartEvent(
            tool_call_id="c1", tool_call_name="f", parent_message_id="m1"
        )
        yield foreign.ReasoningStartEvent(message_id="why")
        raise RuntimeError(HIDDEN)

    events = relayed(from_events(adapter))
    assert types_of(events)[-5:] == [
        EventType.REASONING_END,
        EventType.TOOL_CALL_END,
        TME,
        EventType.STEP_FINISHED,
        RE,
    ]
    error = last(events, RunErrorEvent)
    assert (error.code, HIDDEN in error.message) == ("AGENT_ERROR", False)


def test_a_factory_that_raises_ends_the_run_with_one_generic_run_error() -> None:
    def factory(_input: foreign.RunAgentInput) -> AsyncIterator[object]:
        raise ValueError(HIDDEN)

    events = relayed(from_events(factory))
    assert types_of(events) == [RS, RE]
    assert last(events, RunErrorEvent).message == "the agent failed with an unexpected error"


def test_a_factory_that_returns_no_async_iterator_is_a_usage_error() -> None:
    def factory(_input: foreign.RunAgentInput) -> list[object]:
        return [started()]

    events = relayed(from_events(cast("EventFactory", factory)))
    assert last(events, RunErrorEvent).code == "USAGE_ERROR"


def test_an_async_factory_and_an_iterator_without_aclose_are_read_alike() -> None:
    class Script:
        def __init__(self) -> None:
            self.items = [started(), *TEXT, finished()]

        def __aiter__(self) -> Script:
            return self

        async def __anext__(self) -> object:
            if not self.items:
                raise StopAsyncIteration
            return self.items.pop(0)

    async def factory(_input: foreign.RunAgentInput) -> Script:
        return Script()

    events = relayed(from_events(factory))
    assert types_of(events)[-2:] == [TME, RF]


# -- repair and strict ------------------------------------------------------------------------


def test_an_event_agui_refuses_is_dropped_and_logged_with_its_rule_in_repair(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stray = foreign.TextMessageContentEvent(message_id="nowhere", delta="?")
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = relayed(scripted(*TEXT[:2], stray, *TEXT[2:], finished()))
    assert types_of(events)[-2:] == [TME, RF]
    assert "dropped TEXT_MESSAGE_CONTENT from the upstream of run r" in caplog.text
    assert "breaks rule message-not-open" in caplog.text


def test_an_event_agui_refuses_fails_a_strict_run_with_a_protocol_violation() -> None:
    stray = foreign.TextMessageContentEvent(message_id="nowhere", delta="?")
    events = relayed(strict(scripted(*TEXT[:2], stray, *TEXT[2:], finished())))
    assert types_of(events)[-2:] == [TME, RE]
    assert last(events, RunErrorEvent).code == "PROTOCOL_VIOLATION"


@pytest.mark.parametrize(
    ("item", "code"),
    [
        ({"type": "NOT_AN_EVENT"}, "UNKNOWN_EVENT_TYPE"),
        ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": 5}, "MALFORMED_EVENT"),
        ("Encoding error", "MALFORMED_EVENT"),
    ],
    ids=["unknown-type", "malformed", "not-an-event"],
)
def test_what_cannot_be_read_is_dropped_in_repair_and_fatal_in_strict(
    item: object, code: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        repaired = relayed(scripted(*TEXT, item, finished()))
    assert types_of(repaired)[-1] == RF
    assert f"breaks rule {code}" in caplog.text
    refused = relayed(strict(scripted(*TEXT, item, finished())))
    assert last(refused, RunErrorEvent).code == code


def test_a_foreign_finish_over_open_blocks_is_mended_in_repair_and_refused_in_strict(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bridge = scripted(*TEXT[:2], foreign.StepStartedEvent(step_name="s"), finished())
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        mended = relayed(bridge)
    assert types_of(mended)[-3:] == [EventType.STEP_FINISHED, TME, RF]
    assert "(rule open-blocks-at-run-finished)" in caplog.text
    refused = relayed(strict(bridge))
    assert last(refused, RunErrorEvent).code == "PROTOCOL_VIOLATION"


def test_pending_calls_the_run_never_started_are_dropped_from_a_success_in_repair() -> None:
    outcome = foreign.RunFinishedSuccessOutcome(pending_tool_call_ids=["ghost"])
    events = relayed(scripted(finished(outcome=outcome)))
    assert last(events, RunFinishedEvent).outcome == SuccessOutcome()


def test_a_mended_finish_whose_closing_fails_ends_the_run_with_run_error() -> None:
    class NoEnds:
        def transform(self, event: Event) -> Sequence[Event]:
            if event.type == TME:
                message = "no message ends here"
                raise ValueError(message)
            return [event]

    bridge = scripted(*TEXT[:2], finished())
    events = asyncio.run(collect(bridge, request(), transformers=[NoEnds()]))
    assert types_of(events)[-1] == RE
    assert last(events, RunErrorEvent).code == "AGENT_ERROR"


# -- ids, interleaving, chunks, reasoning, raw ------------------------------------------------


def test_interleaved_parallel_calls_pass_with_their_foreign_ids_verbatim() -> None:
    calls = [
        foreign.ToolCallStartEvent(tool_call_id="call_A", tool_call_name="f"),
        foreign.ToolCallStartEvent(tool_call_id="call_B", tool_call_name="g"),
        foreign.ToolCallArgsEvent(tool_call_id="call_A", delta="{}"),
        foreign.ToolCallArgsEvent(tool_call_id="call_B", delta="{}"),
        foreign.ToolCallEndEvent(tool_call_id="call_B"),
        foreign.ToolCallEndEvent(tool_call_id="call_A"),
    ]
    events = relayed(scripted(*calls, finished()))
    args = [event.tool_call_id for event in events if isinstance(event, ToolCallArgsEvent)]
    assert args == ["call_A", "call_B"]
    assert last(events, RunFinishedEvent).outcome == SuccessOutcome(
        pending_tool_call_ids=["call_A", "call_B"]
    )


def test_chunk_events_pass_as_the_verifier_allows() -> None:
    chunks = [
        foreign.TextMessageChunkEvent(message_id="m1", delta="Hel"),
        foreign.TextMessageChunkEvent(delta="lo"),
    ]
    events = relayed(scripted(*chunks, finished()))
    assert types_of(events) == [RS, "TEXT_MESSAGE_CHUNK", "TEXT_MESSAGE_CHUNK", RF]
    assert [message.model_dump()["content"] for message in fold(events).messages] == ["Hello"]


THINKING: list[Wire] = [
    {"type": "THINKING_START", "title": "pondering"},
    {"type": "THINKING_TEXT_MESSAGE_START"},
    {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "Paris is in France."},
    {"type": "THINKING_TEXT_MESSAGE_END"},
    {"type": "THINKING_END"},
]
REASONING = [
    EventType.REASONING_START,
    EventType.REASONING_MESSAGE_START,
    EventType.REASONING_MESSAGE_CONTENT,
    EventType.REASONING_MESSAGE_END,
    EventType.REASONING_END,
]


def test_retired_thinking_events_become_reasoning_events_under_one_minted_id() -> None:
    events = relayed(scripted(*THINKING, finished()))
    assert types_of(events)[1:-1] == REASONING
    assert {getattr(event, "message_id", None) for event in events[1:-1]} == {"r-thinking-1"}
    content = events[3]
    assert isinstance(content, ReasoningMessageContentEvent)
    assert content.delta == "Paris is in France."


def test_raw_events_and_payloads_are_dropped_by_default_and_kept_on_request() -> None:
    items = (
        foreign.RawEvent(event={"provider": "frame"}, source="openai"),
        foreign.TextMessageStartEvent(message_id="m1", role="assistant", raw_event={"k": 1}),
        *TEXT[1:],
        finished(),
    )
    dropped = relayed(scripted(*items))
    assert types_of(dropped) == [RS, "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", TME, RF]
    assert all(event.raw_event is None for event in dropped)
    kept = relayed(from_events(scripted(*items).factory, raw="keep"))
    assert types_of(kept)[1] == EventType.RAW
    assert kept[2].raw_event == {"k": 1}


Strategies = dict[str, st.SearchStrategy[JsonValue]]


def flat(kind: str, required: Strategies, optional: Strategies) -> st.SearchStrategy[Wire]:
    """Wire dicts of one flat event type, some not valid: agui's reader is the judge."""
    return st.fixed_dictionaries({"type": st.just(kind), **required}, optional=optional)


TEXTS: st.SearchStrategy[JsonValue] = st.text()
FLAT_WIRE = st.one_of(
    flat(
        "TEXT_MESSAGE_CONTENT",
        {"messageId": TEXTS, "delta": TEXTS},
        {"timestamp": st.integers(), "subagentRunId": TEXTS},
    ),
    flat(
        "TOOL_CALL_START",
        {"toolCallId": TEXTS, "toolCallName": TEXTS},
        {"parentMessageId": TEXTS, "metadata": st.just({"k": None})},
    ),
    flat(
        "TEXT_MESSAGE_START",
        {"messageId": TEXTS},
        {"role": st.sampled_from(["assistant", "user", "robot"]), "name": st.none()},
    ),
    flat("STEP_STARTED", {"stepName": TEXTS}, {"rawEvent": st.just({"x": 1}), "stray": st.just(1)}),
)


def read_or_refusal(read: Callable[[], Event | None]) -> object:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownMemberWarning)
            return read()
    except DecodeError as error:
        return type(error)


@settings(max_examples=200, deadline=None)
@given(FLAT_WIRE)
def test_a_flat_event_is_read_as_agui_s_reader_reads_its_wire_form(wire: Wire) -> None:
    reader = ForeignReader("r", keep_raw=True)
    expected = read_or_refusal(lambda: parse_event(wire))
    assert read_or_refusal(lambda: reader.read(wire)) == expected
    try:
        official = foreign_event_type(wire).model_validate(wire)
    except pydantic.ValidationError:
        return  # not an event the official models would build either
    dumped = official.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert read_or_refusal(lambda: reader.read(official)) == read_or_refusal(
        lambda: parse_event(dumped)
    )


def foreign_event_type(wire: Wire) -> type[foreign.BaseEvent]:
    name = "".join(word.capitalize() for word in str(wire["type"]).split("_")) + "Event"
    found: type[foreign.BaseEvent] = getattr(foreign, name)
    return found


class Text(str):
    """A `str` subclass: validation copies it to a `str`, so it is never taken on trust."""

    __slots__ = ()


DELTA_CLASSES: list[tuple[type[foreign.BaseEvent], type[Event], str]] = [
    (foreign.TextMessageContentEvent, TextMessageContentEvent, "message_id"),
    (foreign.ToolCallArgsEvent, ToolCallArgsEvent, "tool_call_id"),
    (foreign.ReasoningMessageContentEvent, ReasoningMessageContentEvent, "message_id"),
]
LOOSE: st.SearchStrategy[object] = st.one_of(
    st.text(max_size=5), st.builds(Text, st.text(max_size=5)), st.integers(), st.none()
)


@settings(max_examples=300, deadline=None)
@given(
    classes=st.sampled_from(DELTA_CLASSES),
    ident=LOOSE,
    delta=LOOSE,
    timestamp=st.one_of(st.none(), st.integers(), st.text(max_size=3)),
    subagent=st.one_of(st.none(), st.text(max_size=3)),
)
def test_a_delta_object_is_read_as_agui_s_model_validates_its_values(
    classes: tuple[type[foreign.BaseEvent], type[Event], str],
    ident: object,
    delta: object,
    timestamp: object,
    subagent: object,
) -> None:
    """Objects built without validation too (`model_construct`), any value in any field."""
    official, model, id_field = classes
    values: dict[str, Any] = {
        id_field: ident,
        "delta": delta,
        "timestamp": timestamp,
        "subagent_run_id": subagent,
    }
    item = official.model_construct(**values)
    present = {name: value for name, value in values.items() if value is not None}
    try:
        expected: Event | None = model.model_validate(present)
    except pydantic.ValidationError:
        expected = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dumping a field of the wrong type warns
        read = read_or_refusal(lambda: ForeignReader("r", keep_raw=False).read(item))
    if expected is None:
        assert isinstance(read, type)
        assert issubclass(read, DecodeError)
    else:
        assert isinstance(read, model)
        assert read == expected
        assert read.model_dump_json() == expected.model_dump_json()
        assert {type(value) for value in read.__dict__.values()} <= {str, int, type(None)}


# -- state -------------------------------------------------------------------------------------


def test_snapshots_become_deltas_where_smaller_against_the_last_published_state() -> None:
    big = "x" * 200
    snapshots = [
        foreign.StateSnapshotEvent(snapshot={"step": 1, "notes": big}),
        foreign.StateSnapshotEvent(snapshot={"step": 2, "notes": big}),
        foreign.StateSnapshotEvent(snapshot={"step": 3}),
    ]
    events = relayed(scripted(*snapshots, finished()))
    state = [event for event in events if isinstance(event, (StateSnapshotEvent, StateDeltaEvent))]
    assert [type(event).__name__ for event in state] == [
        "StateSnapshotEvent",  # the first: the client holds nothing yet
        "StateDeltaEvent",  # one replace, smaller than the whole
        "StateSnapshotEvent",  # {"step": 3} is smaller than a remove and a replace
    ]
    assert fold(events).state == {"step": 3}


def delta(*ops: Wire) -> Wire:
    return {"type": "STATE_DELTA", "delta": list(ops)}


def state_events(events: Sequence[Event]) -> list[StateSnapshotEvent | StateDeltaEvent]:
    return [event for event in events if isinstance(event, (StateSnapshotEvent, StateDeltaEvent))]


def test_a_delta_is_applied_to_the_state_and_one_that_does_not_apply_is_fatal_in_strict_mode() -> (
    None
):
    good = delta({"op": "add", "path": "/n", "value": 1})
    bad = delta({"op": "test", "path": "/n", "value": 2})
    events = relayed(scripted(good, finished()), given=request(state={"a": 0}))
    assert fold(events, state={"a": 0}).state == {"a": 0, "n": 1}
    refused = relayed(strict(scripted(good, bad, finished())), given=request(state={"a": 0}))
    assert last(refused, RunErrorEvent).code == "PATCH_ERROR"


UNAPPLIABLE: list[tuple[list[Wire], JsonValue]] = [
    ([{"op": "replace", "path": "/mood", "value": "glad"}], {"a": 0, "n": 1, "mood": "glad"}),
    (
        [{"op": "add", "path": "/todos/-", "value": "buy milk"}],
        {"a": 0, "n": 1, "todos": ["buy milk"]},
    ),
    (
        [
            {"op": "add", "path": "/plan", "value": [{}]},
            {"op": "add", "path": "/plan/0/steps/0", "value": "x"},
            {"op": "remove", "path": "/z"},
        ],
        {"a": 0, "n": 1, "plan": [{"steps": ["x"]}]},
    ),
    ([{"op": "add", "path": "/a/b/c", "value": 1}], {"a": 0, "n": 1}),
    ([{"op": "test", "path": "/n", "value": 2}], {"a": 0, "n": 1}),
    ([{"op": "move", "from": "/x", "path": "/y"}], {"a": 0, "n": 1}),
]


@pytest.mark.parametrize(
    ("ops", "implied"),
    UNAPPLIABLE,
    ids=[
        "replace-of-a-missing-member",
        "append-to-a-missing-array",
        "add-below-missing-members",
        "add-below-a-number-is-unknown",
        "a-failed-test-is-unknown",
        "a-move-from-nowhere-is-unknown",
    ],
)
def test_a_delta_that_does_not_apply_becomes_a_snapshot_of_the_state_it_implies_or_the_run_s(
    ops: list[Wire], implied: JsonValue, caplog: pytest.LogCaptureFixture
) -> None:
    good = delta({"op": "add", "path": "/n", "value": 1})
    after = delta({"op": "add", "path": "/after", "value": True})
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = relayed(
            scripted(good, delta(*ops), after, finished()), given=request(state={"a": 0})
        )
    published, resync, _ = state_events(events)  # the good delta's, the snapshot, the last
    assert isinstance(published, StateSnapshotEvent)
    assert published.snapshot == {"a": 0, "n": 1}
    assert isinstance(resync, StateSnapshotEvent)
    assert resync.snapshot == implied
    assert fold(events, state={"a": 0}).state == {
        **cast("dict[str, JsonValue]", implied),
        "after": True,
    }
    assert "breaks rule PATCH_ERROR" in caplog.text
    known = implied != {"a": 0, "n": 1}
    assert ("STATE_SNAPSHOT of the state it implies" in caplog.text) is known


def test_a_subagent_s_state_event_passes_as_it_came() -> None:
    items = (
        foreign.SubagentStartedEvent(subagent_run_id="s1", name="helper"),
        foreign.StateSnapshotEvent(snapshot={"mine": True}, subagent_run_id="s1"),
        foreign.SubagentFinishedEvent(subagent_run_id="s1"),
        finished(),
    )
    events = relayed(scripted(*items))
    [snapshot] = [event for event in events if isinstance(event, StateSnapshotEvent)]
    assert (snapshot.snapshot, snapshot.subagent_run_id) == ({"mine": True}, "s1")


# -- the input, and building a bridge ---------------------------------------------------------


def test_the_factory_gets_the_official_run_agent_input() -> None:
    seen: list[foreign.RunAgentInput] = []

    async def adapter(run_input: foreign.RunAgentInput) -> AsyncIterator[object]:
        seen.append(run_input)
        yield finished()

    body = request(messages=[{"id": "u1", "role": "user", "content": "Hi"}], state={"a": 1})
    relayed(from_events(adapter), given=body)
    [given] = seen
    assert isinstance(given, foreign.RunAgentInput)
    assert (given.thread_id, given.run_id, given.state) == ("t", "r", {"a": 1})
    assert [(m.id, m.role, m.content) for m in given.messages] == [("u1", "user", "Hi")]


@pytest.mark.parametrize(
    ("factory", "options", "problem"),
    [
        (None, {}, "the factory must be callable, not a NoneType"),
        (finished, {"mode": "lenient"}, "mode is 'repair' or 'strict', not 'lenient'"),
        (finished, {"raw": "strip"}, "raw is 'drop' or 'keep', not 'strip'"),
    ],
    ids=["not-callable", "mode", "raw"],
)
def test_a_bridge_built_wrong_is_refused_saying_what_is_wrong(
    factory: object, options: dict[str, str], problem: str
) -> None:
    with pytest.raises(UsageError, match=f"from_events: {problem}"):
        from_events(factory, **options)  # type: ignore[arg-type]


def test_building_a_bridge_without_the_extra_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ag_ui.core", None)
    with pytest.raises(ImportError, match=r'install the bridges extra \(pip install "agui-server'):
        from_events(showcase)


def test_importing_agui_bridges_loads_no_framework_and_not_ag_ui() -> None:
    code = (
        "import sys, agui, agui.bridges; print(sorted(m for m in sys.modules if m.split('.')[0] "
        "in ('ag_ui', 'httpx', 'pydantic_ai', 'agents', 'langgraph', 'langchain_core') "
        "or m == 'agui.client'))"
    )
    loaded = subprocess.run(  # noqa: S603 - this interpreter, on a fixed program
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


# -- cancellation: the iterator closed, its cleanup run, never read again ---------------------


def test_a_client_that_leaves_closes_the_iterator_which_runs_its_cleanup_and_stops() -> None:
    reads: list[int] = []
    cleaned = asyncio.Event()

    async def adapter(_input: foreign.RunAgentInput) -> AsyncIterator[object]:
        try:
            yield started()
            yield TEXT[0]
            for number in range(1000):
                reads.append(number)
                yield foreign.TextMessageContentEvent(message_id="m1", delta=".")
                await asyncio.sleep(0.01)
        finally:
            cleaned.set()

    async def main() -> tuple[list[Event], int]:
        ctx: RunContext[JsonValue] = RunContext(request())
        task = asyncio.ensure_future(drive(from_events(adapter), ctx))
        while len(reads) < 3:  # noqa: ASYNC110 - polling a list the adapter fills
            await asyncio.sleep(0.005)
        ctx.token.cancel("the client left")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.wait_for(cleaned.wait(), 5)
        count = len(reads)
        await asyncio.sleep(0.05)
        assert len(reads) == count  # not read again
        return ctx.receiver.drain(), count

    events, count = asyncio.run(main())
    assert_valid(events)
    assert count < 10
    assert types_of(events)[-2:] == [TME, RF]
    assert last(events, RunFinishedEvent).outcome == CancelledOutcome()


def test_a_client_that_stops_reading_stops_the_bridge_reading_its_adapter() -> None:
    pulled: list[int] = []
    bridge = from_events(lambda run: big_text(run, pulled))

    # Once past the mark, the bridge waits in `ctx.writable()`: nothing moves until a read.
    assert stalled_read(bridge.run, INPUT, pulled) < CHUNKS


async def big_text(run: foreign.RunAgentInput, pulled: list[int]) -> AsyncIterator[object]:
    """An adapter that streams `CHUNKS` deltas of `CHUNK` bytes, noting each one it is asked for."""
    yield foreign.TextMessageStartEvent(message_id="m1", role="assistant")
    for number in range(CHUNKS):
        pulled.append(number)
        yield foreign.TextMessageContentEvent(message_id="m1", delta="x" * CHUNK)
    yield foreign.TextMessageEndEvent(message_id="m1")
    yield foreign.RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id)


# -- end to end: a real uvicorn and the official TypeScript client ----------------------------


async def showcase(run_input: foreign.RunAgentInput) -> AsyncIterator[object]:
    """An adapter's stream, hand-written: the kinds of event a framework's adapter yields."""
    yield foreign.RunStartedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)
    yield foreign.StateSnapshotEvent(snapshot={"city": "Seoul", "notes": "n" * 100})
    yield foreign.TextMessageStartEvent(message_id="a1", role="assistant")
    yield foreign.TextMessageContentEvent(message_id="a1", delta="Checking the weather.")
    yield foreign.ToolCallStartEvent(
        tool_call_id="call_w", tool_call_name="weather", parent_message_id="a1"
    )
    yield foreign.ToolCallArgsEvent(tool_call_id="call_w", delta='{"city":"Seoul"}')
    yield foreign.TextMessageEndEvent(message_id="a1")
    yield foreign.ToolCallEndEvent(tool_call_id="call_w")
    yield foreign.ToolCallResultEvent(
        message_id="t1", tool_call_id="call_w", content='{"tempC":21}'
    )
    yield foreign.StateSnapshotEvent(snapshot={"city": "Seoul", "notes": "n" * 100, "tempC": 21})
    yield {"type": "THINKING_START"}
    yield {"type": "THINKING_TEXT_MESSAGE_START"}
    yield {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "21 is mild."}
    yield {"type": "THINKING_TEXT_MESSAGE_END"}
    yield {"type": "THINKING_END"}
    yield foreign.TextMessageChunkEvent(message_id="a2", delta="It is 21°C in Seoul.")
    yield foreign.RawEvent(event={"provider": "frame"})
    yield foreign.RunFinishedEvent(thread_id=run_input.thread_id, run_id=run_input.run_id)


def test_the_official_typescript_client_runs_a_bridged_stream_cleanly() -> None:
    received: list[RunAgentInput] = []
    bridge = from_events(showcase)

    async def recording(ctx: RunContext[JsonValue]) -> None:
        received.append(ctx.input)
        await bridge.run(ctx)

    with serving(asgi_app(recording)) as url:
        client = official_client_run(url)

    [sent] = received
    expected = fold(asyncio.run(collect(bridge, sent)), messages=sent.messages, state=sent.state)
    assert client["state"] == expected.state
    assert [m["id"] for m in client["messages"]] == [m.id for m in expected.messages]
    assert "STATE_DELTA" in client["events"]
    assert "RAW" not in client["events"]
    assert client["outcome"] == "success"


# -- remote: another AG-UI endpoint, relayed -------------------------------------------------


async def upstream_agent(ctx: RunContext[JsonValue]) -> RunOutcome:
    """The far side: an agui agent with a message, a call left to the client, and state."""
    ctx.state = {"city": "Seoul", "notes": "n" * 100}
    ctx.publish_state()
    with ctx.message() as message:
        message.delta("Checking.")
    with ctx.tool_call("confirm") as call:
        call.args_json({"city": "Seoul"})
        call.end()
    ctx.state = {"city": "Seoul", "notes": "n" * 100, "asked": True}
    ctx.publish_state()
    return RunOutcome.success()


def test_remote_relays_another_agui_endpoint_over_real_http() -> None:
    body = request(messages=[{"id": "u1", "role": "user", "content": "Hi"}])
    with serving(asgi_app(upstream_agent)) as url:
        events = relayed(remote(url), given=body)
    there = asyncio.run(collect(upstream_agent, body))
    assert types_of(events) == types_of(there)
    assert fold(events, messages=body.messages) == fold(there, messages=body.messages)
    assert last(events, RunFinishedEvent).outcome == SuccessOutcome(
        pending_tool_call_ids=["r-call-1"]
    )


def test_remote_keeps_the_upstream_code_but_not_its_message_in_run_error() -> None:
    async def failing(_ctx: RunContext[JsonValue]) -> None:
        raise AgentError(HIDDEN)  # an agui upstream sends an AgentError's text to its client

    with serving(asgi_app(failing)) as url:
        events = relayed(remote(url))
    error = last(events, RunErrorEvent)
    assert (error.code, error.message) == ("AGENT_ERROR", "the agent this server relays failed")


def sse(*wire: Wire) -> bytes:
    return b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in wire)


UPSTREAM_START: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
UPSTREAM_TEXT: list[Wire] = [
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hel"},
]


def scripted_upstream(*replies: Reply) -> list[Event]:
    """Relay a run from a scripted endpoint on a real uvicorn (a misbehaving upstream)."""

    async def main() -> list[Event]:
        async with serving_script(FakeEndpoint(replies)) as url:
            return await collect(remote(url), request())

    events = asyncio.run(main())
    assert_valid(events)
    return events


def test_remote_turns_a_stream_cut_short_into_upstream_truncated() -> None:
    events = scripted_upstream(Reply(pieces=[sse(UPSTREAM_START, *UPSTREAM_TEXT)]))
    assert types_of(events)[-2:] == [TME, RE]
    assert last(events, RunErrorEvent).code == "UPSTREAM_TRUNCATED"


def test_remote_answers_an_upstream_500_with_a_run_error_that_hides_its_body() -> None:
    events = scripted_upstream(
        Reply(status=500, pieces=[HIDDEN.encode()], content_type=b"text/plain")
    )
    assert types_of(events) == [RS, RE]
    error = last(events, RunErrorEvent)
    assert (error.code, HIDDEN in error.message) == ("HTTP_STATUS_ERROR", False)


def test_remote_hides_a_secret_in_a_scripted_upstream_run_error() -> None:
    failed: Wire = {"type": "RUN_ERROR", "message": f"Traceback: {HIDDEN}", "code": "EXECUTION"}
    events = scripted_upstream(Reply(pieces=[sse(UPSTREAM_START, *UPSTREAM_TEXT, failed)]))
    assert types_of(events)[-2:] == [TME, RE]
    assert last(events, RunErrorEvent).code == "EXECUTION"
    assert HIDDEN not in json.dumps([e.model_dump(mode="json") for e in events])


def test_remote_repairs_or_refuses_what_the_upstream_sends_wrong(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stray: Wire = {"type": "TOOL_CALL_ARGS", "toolCallId": "nowhere", "delta": "{}"}
    end: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    stream = sse(UPSTREAM_START, stray, end)
    with caplog.at_level(logging.WARNING, logger="agui.bridges"):
        events = scripted_upstream(Reply(pieces=[stream]))
    assert types_of(events) == [RS, RF]
    assert "breaks rule tool-call-not-open" in caplog.text

    async def main() -> list[Event]:
        async with serving_script(FakeEndpoint([Reply(pieces=[stream])])) as url:
            return await collect(remote(url, mode="strict"), request())

    assert last(asyncio.run(main()), RunErrorEvent).code == "PROTOCOL_VIOLATION"


def test_remote_drops_raw_material_by_default_and_keeps_it_on_request() -> None:
    raw: Wire = {"type": "RAW", "event": {"provider": "frame"}}
    custom: Wire = {"type": "CUSTOM", "name": "n", "value": 1, "rawEvent": {"k": 1}}
    end: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    stream = sse(UPSTREAM_START, raw, custom, end)

    async def main(raw: RawEvents) -> list[Event]:
        async with serving_script(FakeEndpoint([Reply(pieces=[stream])])) as url:
            return await collect(remote(url, raw=raw), request())

    dropped = asyncio.run(main("drop"))
    assert types_of(dropped) == [RS, EventType.CUSTOM, RF]
    assert dropped[1].raw_event is None
    kept = asyncio.run(main("keep"))
    assert types_of(kept) == [RS, EventType.RAW, EventType.CUSTOM, RF]
    assert kept[2].raw_event == {"k": 1}


def test_remote_reads_an_older_far_side_s_thinking_events_as_reasoning() -> None:
    future: Wire = {"type": "FUTURE_EVENT", "x": 1}
    end: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    stream = sse(UPSTREAM_START, *THINKING, future, *UPSTREAM_TEXT, end)
    with pytest.warns(UnknownMemberWarning, match="FUTURE_EVENT"):  # still skipped
        events = scripted_upstream(Reply(pieces=[stream]))
    assert types_of(events)[1:6] == REASONING
    assert {getattr(event, "message_id", None) for event in events[1:6]} == {"r-thinking-1"}
    content = events[3]
    assert isinstance(content, ReasoningMessageContentEvent)
    assert content.delta == "Paris is in France."


def test_a_far_side_that_cannot_be_asked_to_cancel_is_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = remote("http://127.0.0.1:1/agent")
    with caplog.at_level(logging.INFO, logger="agui.bridges"):
        asyncio.run(agent._cancel("r"))  # pyright: ignore[reportPrivateUsage]
    assert "run r: the far side was not asked to cancel it" in caplog.text


def test_remote_resumes_a_durable_upstream_by_last_event_id_after_a_cut() -> None:
    async def ticking(ctx: RunContext[JsonValue]) -> None:
        for number in range(20):
            ctx.emit(CustomEvent(name="tick", value=number))
            await asyncio.sleep(0.005)

    cut = Cutting(asgi_app(ticking, runs=MemoryRunLog()), {"POST": 3})
    with serving(cut) as url:
        events = relayed(remote(url))
    assert [event.value for event in events if isinstance(event, CustomEvent)] == list(range(20))
    assert [(method, seen is not None) for method, _, seen in cut.requests] == [
        ("POST", False),
        ("GET", True),
    ]


def test_remote_cancels_the_far_run_when_our_client_leaves() -> None:
    far_started, far_stopped = threading.Event(), threading.Event()

    async def waiting(ctx: RunContext[JsonValue]) -> None:
        try:
            with ctx.message() as message:
                message.delta("working")
                far_started.set()
                await asyncio.sleep(60)
        finally:
            far_stopped.set()

    async def main(url: str) -> list[Event]:
        ctx: RunContext[JsonValue] = RunContext(request())
        task = asyncio.ensure_future(drive(remote(url), ctx))
        while not far_started.is_set():  # noqa: ASYNC110 - the far side runs in another thread
            await asyncio.sleep(0.01)
        ctx.token.cancel("the client left")
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return ctx.receiver.drain()

    for runs in (None, MemoryRunLog()):  # a durable far side is asked to cancel, too
        far_started.clear()
        far_stopped.clear()
        with serving(asgi_app(waiting, runs=runs)) as url:
            events = asyncio.run(main(url))
            assert far_stopped.wait(5)
        assert types_of(events)[-1] == RF
        assert last(events, RunFinishedEvent).outcome == CancelledOutcome()


def test_remote_is_loaded_on_demand_and_refuses_a_bad_mode() -> None:
    with pytest.raises(UsageError, match="remote: mode is 'repair' or 'strict'"):
        remote("http://127.0.0.1:1/agent", mode="lenient")  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match=r"module 'agui\.bridges' has no attribute 'nothing'"):
        _ = agui.bridges.nothing
