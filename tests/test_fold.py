"""agui.fold: a stream applied the way the official client applies it (`defaultApplyEvents`)."""

from __future__ import annotations

import dataclasses
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue, TypeAdapter

from agui import RunAgentInput
from agui._protocol.message_thread import Thread
from agui.errors import UsageError
from agui.events import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
    EventType,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningEncryptedValueEvent,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.fold import FoldedRun, FoldedSubagent, fold
from agui.fold._reducer import _STEPS  # pyright: ignore[reportPrivateUsage]
from agui.messages import (
    ActivityMessage,
    AssistantMessage,
    FunctionCall,
    Message,
    ReasoningMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agui.types import (
    AddOperation,
    CancelledOutcome,
    Interrupt,
    InterruptOutcome,
    RemoveOperation,
    ReplaceOperation,
    SubagentSuspendedOutcome,
    SuccessOutcome,
)
from fold_reference import reference_fold

Record = dict[str, JsonValue]
META: Record = {"k": "v"}


def wire(messages: list[Message]) -> list[Record]:
    return [cast("Record", m.model_dump(mode="json")) for m in messages]


def started(*events: Event) -> list[Event]:
    return [RunStartedEvent(thread_id="t", run_id="r"), *events]


def call(call_id: str, name: str, arguments: str = "") -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


# -- fold: text, reasoning, outcome -----------------------------------------------------------


def test_fold_builds_messages_and_reports_the_outcome() -> None:
    folded = fold(
        started(
            TextMessageStartEvent(message_id="m1", role="assistant", name="bot"),
            TextMessageContentEvent(message_id="m1", delta="Hel"),
            TextMessageContentEvent(message_id="m1", delta="lo"),
            TextMessageEndEvent(message_id="m1"),
            RunFinishedEvent(thread_id="t", run_id="r", outcome=SuccessOutcome()),
        )
    )
    assert folded == FoldedRun(
        messages=[AssistantMessage(id="m1", content="Hello", name="bot")],
        state={},
        outcome=SuccessOutcome(),
        error=None,
    )


def test_fold_defaults_the_text_role_to_assistant_and_keeps_other_roles() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            TextMessageStartEvent(message_id="m2", role="user"),
            TextMessageContentEvent(message_id="m2", delta="hi"),
        ]
    )
    assert folded.messages == [
        AssistantMessage(id="m1", content=""),
        UserMessage(id="m2", content="hi"),
    ]


def test_fold_merges_metadata_from_start_content_and_end() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1", metadata={"a": 1}),
            TextMessageContentEvent(message_id="m1", delta="x", metadata={"b": 2}),
            TextMessageEndEvent(message_id="m1", metadata={"a": 3}),
        ]
    )
    assert folded.messages == [AssistantMessage(id="m1", content="x", metadata={"a": 3, "b": 2})]


def test_fold_ignores_content_and_ends_for_unknown_messages() -> None:
    folded = fold(
        [
            TextMessageContentEvent(message_id="nowhere", delta="x"),
            TextMessageEndEvent(message_id="nowhere", metadata=META),
            ReasoningMessageEndEvent(message_id="nowhere"),
        ]
    )
    assert folded.messages == []


def test_fold_warns_of_a_delta_for_a_message_or_call_it_does_not_hold() -> None:
    folded = fold(
        [
            TextMessageContentEvent(message_id="nowhere", delta="x"),
            ReasoningMessageContentEvent(message_id="r9", delta="y"),
            ToolCallArgsEvent(tool_call_id="c9", delta="{}"),
        ]
    )
    assert folded.warnings == (
        "event 0 (TEXT_MESSAGE_CONTENT): no message has the id 'nowhere', so the delta is left out",
        "event 1 (REASONING_MESSAGE_CONTENT): no message has the id 'r9', so the delta is left out",
        "event 2 (TOOL_CALL_ARGS): no tool call has the id 'c9', so the delta is left out",
    )


def test_fold_joins_a_hundred_thousand_deltas_of_any_text_in_order() -> None:
    pieces = (["", "é", "👋", "a\u0000b", "語", " "] * 16_667)[:100_000]
    events: list[Event] = [
        TextMessageStartEvent(message_id="m1"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
        ReasoningMessageStartEvent(message_id="r1"),
    ]
    for index, piece in enumerate(pieces):
        events.append(TextMessageContentEvent(message_id="m1", delta=piece))
        if index % 100 < 6:  # the other two grow between the text's deltas
            events.append(ToolCallArgsEvent(tool_call_id="c1", delta=piece))
            events.append(ReasoningMessageContentEvent(message_id="r1", delta=piece))
    between = "".join(piece for index, piece in enumerate(pieces) if index % 100 < 6)
    assert fold(events).messages == [
        AssistantMessage(id="m1", content="".join(pieces), tool_calls=[call("c1", "f", between)]),
        ReasoningMessage(id="r1", content=between),
    ]


def test_fold_grows_text_across_snapshots_as_the_client_does() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            TextMessageContentEvent(message_id="m1", delta="lost "),
            ReasoningMessageStartEvent(message_id="r1"),
            ReasoningMessageContentEvent(message_id="r1", delta="kept "),
            TextMessageStartEvent(message_id="m2"),
            TextMessageContentEvent(message_id="m2", delta="dropped with m2"),
            MessagesSnapshotEvent(
                messages=[
                    AssistantMessage(id="m1", content="From "),
                    AssistantMessage(id="m3", content="new"),
                ]
            ),
            TextMessageContentEvent(message_id="m1", delta="the snapshot"),
            ReasoningMessageContentEvent(message_id="r1", delta="through it"),
            TextMessageContentEvent(message_id="m3", delta=" text"),
            ActivitySnapshotEvent(message_id="m3", activity_type="PLAN", content={}),
            TextMessageContentEvent(message_id="m3", delta="dropped on an activity"),
        ]
    )
    assert folded.messages == [
        AssistantMessage(id="m1", content="From the snapshot"),
        ReasoningMessage(id="r1", content="kept through it"),
        ActivityMessage(id="m3", activity_type="PLAN", content={}),
    ]
    assert folded.warnings == ()


def test_fold_builds_reasoning_messages() -> None:
    folded = fold(
        [
            ReasoningMessageStartEvent(message_id="r1"),
            ReasoningMessageContentEvent(message_id="r1", delta="hmm"),
            ReasoningMessageEndEvent(message_id="r1"),
        ]
    )
    assert folded.messages == [ReasoningMessage(id="r1", content="hmm")]


def test_fold_expands_text_and_reasoning_chunks() -> None:
    folded = fold(
        [
            TextMessageChunkEvent(delta="no id, no stream: left out"),
            TextMessageChunkEvent(message_id="m1", role="user", delta="Hi"),
            TextMessageChunkEvent(message_id="m1", delta=" there"),
            TextMessageChunkEvent(message_id="m1"),
            ReasoningMessageChunkEvent(message_id="r1", delta="hmm"),
            ReasoningMessageChunkEvent(delta=", right"),
        ]
    )
    assert folded.messages == [
        UserMessage(id="m1", content="Hi there"),
        ReasoningMessage(id="r1", content="hmm, right"),
    ]
    assert folded.warnings == (
        (
            "event 0 (TEXT_MESSAGE_CHUNK): no stream is open for this TEXT_MESSAGE_CHUNK to "
            "continue, and it carries no messageId; the client refuses it, and the fold leaves "
            "it out"
        ),
    )


def test_fold_continues_the_open_chunk_stream_with_chunks_that_carry_no_id() -> None:
    folded = fold(
        started(
            TextMessageChunkEvent(message_id="m1", delta="Chunks "),
            TextMessageChunkEvent(delta="expand."),
            ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
            ToolCallChunkEvent(delta='{"a":'),
            RawEvent(event={"beat": 1}),
            ToolCallChunkEvent(delta="1}"),
        )
    )
    assert folded.messages == [
        AssistantMessage(id="m1", content="Chunks expand.", tool_calls=[call("c1", "f", '{"a":1}')])
    ]
    assert folded.warnings == ()


def test_fold_leaves_out_a_chunk_after_an_explicit_event_closed_its_stream() -> None:
    folded = fold(
        started(
            TextMessageChunkEvent(message_id="m1", delta="Hi"),
            CustomEvent(name="c", value=None),
            TextMessageChunkEvent(delta=" lost"),
        )
    )
    assert folded.messages == [AssistantMessage(id="m1", content="Hi")]
    assert folded.warnings[0].startswith("event 3 (TEXT_MESSAGE_CHUNK): no stream is open")


def test_fold_leaves_out_a_first_tool_chunk_without_a_name_and_says_so() -> None:
    folded = fold(started(ToolCallChunkEvent(tool_call_id="c1", delta="{}")))
    assert folded.messages == []
    assert folded.warnings == (
        (
            "event 1 (TOOL_CALL_CHUNK): the first TOOL_CALL_CHUNK of a call carries its "
            "toolCallName; this one does not; the client refuses it, and the fold leaves it out"
        ),
    )


def test_fold_continues_a_subagents_chunks_in_its_own_lane() -> None:
    folded = fold(
        started(
            SubagentStartedEvent(subagent_run_id="s1", name="helper"),
            SubagentStartedEvent(subagent_run_id="s2", name="other"),
            TextMessageChunkEvent(message_id="m1", delta="parent ", subagent_run_id=None),
            TextMessageChunkEvent(message_id="a1", delta="one ", subagent_run_id="s1"),
            TextMessageChunkEvent(message_id="b1", delta="two ", subagent_run_id="s2"),
            TextMessageChunkEvent(delta="again", subagent_run_id="s1"),
            TextMessageChunkEvent(delta="too"),
            TextMessageChunkEvent(message_id="b1", delta="!"),
        )
    )
    assert [(m.id, m.content) for m in folded.messages] == [
        ("m1", "parent too"),
        ("a1", "one again"),
        ("b1", "two !"),
    ]
    assert folded.warnings == ()


def test_fold_leaves_out_an_untagged_chunk_that_two_subagent_lanes_could_continue() -> None:
    folded = fold(
        started(
            TextMessageChunkEvent(message_id="a1", delta="one", subagent_run_id="s1"),
            TextMessageChunkEvent(message_id="b1", delta="two", subagent_run_id="s2"),
            TextMessageChunkEvent(delta="whose?"),
            SubagentFinishedEvent(subagent_run_id="s2"),
            TextMessageChunkEvent(delta=" mine"),
        )
    )
    assert [(m.id, m.content) for m in folded.messages] == [("a1", "one mine"), ("b1", "two")]
    assert folded.warnings == (
        (
            "event 3 (TEXT_MESSAGE_CHUNK): this TEXT_MESSAGE_CHUNK carries neither an id nor a "
            "subagentRunId, and 2 lanes have one open; attribute it to its subagent; the client "
            "refuses it, and the fold leaves it out"
        ),
    )


def test_fold_a_chunk_of_another_kind_or_id_closes_the_lanes_open_stream() -> None:
    folded = fold(
        started(
            TextMessageChunkEvent(message_id="m1", delta="a"),
            ReasoningMessageChunkEvent(message_id="r1", delta="b"),
            TextMessageChunkEvent(delta="c"),
        )
    )
    assert [(m.id, m.content) for m in folded.messages] == [("m1", "a"), ("r1", "b")]
    assert len(folded.warnings) == 1


@pytest.mark.parametrize(
    ("terminal", "outcome", "error"),
    [
        (RunFinishedEvent(thread_id="t", run_id="r"), None, None),
        (
            RunFinishedEvent(thread_id="t", run_id="r", outcome=CancelledOutcome()),
            CancelledOutcome(),
            None,
        ),
        (
            RunFinishedEvent(
                thread_id="t",
                run_id="r",
                outcome=InterruptOutcome(interrupts=[Interrupt(id="i", reason="r")]),
            ),
            InterruptOutcome(interrupts=[Interrupt(id="i", reason="r")]),
            None,
        ),
        (RunErrorEvent(message="boom"), None, RunErrorEvent(message="boom")),
    ],
    ids=["no-outcome", "cancelled", "interrupt", "error"],
)
def test_fold_reports_how_the_run_ended(
    terminal: Event, outcome: object, error: RunErrorEvent | None
) -> None:
    folded = fold(started(terminal))
    assert (folded.outcome, folded.error) == (outcome, error)


def test_fold_reports_the_last_runs_outcome_and_error_only() -> None:
    recovered = fold(
        [
            RunStartedEvent(thread_id="t", run_id="r1"),
            RunErrorEvent(message="boom"),
            RunStartedEvent(thread_id="t", run_id="r2"),
            RunFinishedEvent(thread_id="t", run_id="r2", outcome=SuccessOutcome()),
        ]
    )
    assert (recovered.outcome, recovered.error) == (SuccessOutcome(), None)
    interrupted = InterruptOutcome(interrupts=[Interrupt(id="i", reason="r")])
    failed = fold(
        [
            RunStartedEvent(thread_id="t", run_id="r1"),
            RunFinishedEvent(thread_id="t", run_id="r1", outcome=interrupted),
            RunStartedEvent(thread_id="t", run_id="r2"),
            RunErrorEvent(message="boom"),
        ]
    )
    assert (failed.outcome, failed.error) == (None, RunErrorEvent(message="boom"))


def test_fold_a_late_error_after_a_finished_run_keeps_both() -> None:
    folded = fold(
        started(
            RunFinishedEvent(thread_id="t", run_id="r", outcome=SuccessOutcome()),
            RunErrorEvent(message="late"),
        )
    )
    assert (folded.outcome, folded.error) == (SuccessOutcome(), RunErrorEvent(message="late"))


def test_fold_leaves_text_out_of_a_message_of_content_parts_and_says_so() -> None:
    held: list[Message] = [UserMessage(id="u", content=[TextPart(text="hi")])]
    folded = fold(
        started(
            TextMessageStartEvent(message_id="u"),
            TextMessageContentEvent(message_id="u", delta="more"),
            TextMessageEndEvent(message_id="u"),
        ),
        messages=held,
    )
    assert folded.messages == held
    assert folded.warnings == (
        (
            "event 2 (TEXT_MESSAGE_CONTENT): message 'u' holds content parts, not text, so the "
            "delta is left out; send a new message's id for new text"
        ),
    )


def test_fold_ignores_hook_only_events() -> None:
    folded = fold(started(StepStartedEvent(step_name="s"), CustomEvent(name="c", value=None)))
    assert (folded.messages, folded.state) == ([], {})


def test_fold_starts_from_the_given_messages_and_state() -> None:
    held = [UserMessage(id="u1", content="hi")]
    folded = fold([TextMessageStartEvent(message_id="m1")], messages=held, state={"n": 1})
    assert [m.id for m in folded.messages] == ["u1", "m1"]
    assert folded.state == {"n": 1}


def test_fold_appends_run_input_messages_whose_ids_are_unknown() -> None:
    given = RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[UserMessage(id="u1", content="new text"), UserMessage(id="u2", content="b")],
    )
    folded = fold(
        [RunStartedEvent(thread_id="t", run_id="r", input=given)],
        messages=[UserMessage(id="u1", content="held")],
    )
    assert folded.messages == [
        UserMessage(id="u1", content="held"),
        UserMessage(id="u2", content="b"),
    ]


def test_fold_keeps_the_subagent_run_id_of_a_text_message() -> None:
    folded = fold([TextMessageStartEvent(message_id="m1", subagent_run_id="sub-1")])
    assert folded.messages == [AssistantMessage(id="m1", content="", subagent_run_id="sub-1")]


def test_fold_keeps_the_subagent_run_id_of_a_tool_result() -> None:
    folded = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
            ToolCallResultEvent(
                message_id="t1", tool_call_id="c1", content="ok", subagent_run_id="sub-1"
            ),
        ]
    )
    assert folded.messages[-1] == ToolMessage(
        id="t1", tool_call_id="c1", content="ok", subagent_run_id="sub-1"
    )


def test_fold_gives_a_new_call_owner_the_subagent_of_its_call_but_keeps_a_known_one() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", subagent_run_id="sub-1"),
            ToolCallStartEvent(
                tool_call_id="c2", tool_call_name="g", parent_message_id="m1", subagent_run_id="s2"
            ),
        ]
    )
    assert [(m.id, m.subagent_run_id) for m in folded.messages] == [("m1", None), ("c1", "sub-1")]


def test_fold_lists_the_subagents_and_how_each_ended() -> None:
    folded = fold(
        started(
            SubagentStartedEvent(subagent_run_id="s1", name="researcher"),
            SubagentStartedEvent(subagent_run_id="s2", name="critic", parent_subagent_run_id="s1"),
            SubagentFinishedEvent(subagent_run_id="s2", result={"ok": True}),
            SubagentStartedEvent(subagent_run_id="s3", name="booker"),
            SubagentFinishedEvent(
                subagent_run_id="s3", outcome=SubagentSuspendedOutcome(interrupt_ids=["i1"])
            ),
            SubagentErrorEvent(subagent_run_id="s1", message="it failed", code="AGENT_ERROR"),
            SubagentStartedEvent(subagent_run_id="s4", name="slow"),
            SubagentFinishedEvent(subagent_run_id="unknown"),
            SubagentErrorEvent(subagent_run_id="unknown", message="no such"),
        )
    )
    assert folded.subagents == (
        FoldedSubagent("s1", "researcher", status="failed", error="it failed"),
        FoldedSubagent("s2", "critic", parent="s1", status="finished", result={"ok": True}),
        FoldedSubagent("s3", "booker", status="suspended"),
        FoldedSubagent("s4", "slow"),
    )


# -- fold: tool calls -------------------------------------------------------------------------


def test_fold_attaches_a_call_to_its_parent_assistant_message() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            TextMessageContentEvent(message_id="m1", delta="Let me check."),
            TextMessageEndEvent(message_id="m1"),
            ToolCallStartEvent(
                tool_call_id="c1", tool_call_name="get_weather", parent_message_id="m1"
            ),
            ToolCallArgsEvent(tool_call_id="c1", delta='{"city":'),
            ToolCallArgsEvent(tool_call_id="c1", delta='"Seoul"}'),
            ToolCallEndEvent(tool_call_id="c1", metadata=META),
        ]
    )
    calls = [
        ToolCall(
            id="c1",
            function=FunctionCall(name="get_weather", arguments='{"city":"Seoul"}'),
            metadata=META,
        )
    ]
    assert folded.messages == [AssistantMessage(id="m1", content="Let me check.", tool_calls=calls)]


def test_fold_makes_a_new_assistant_message_keyed_by_the_call_id_without_a_parent() -> None:
    folded = fold([ToolCallStartEvent(tool_call_id="c1", tool_call_name="f")])
    assert folded.messages == [AssistantMessage(id="c1", tool_calls=[call("c1", "f")])]


def test_fold_makes_an_assistant_message_with_an_unknown_parent_id() -> None:
    folded = fold(
        [ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="p")]
    )
    assert folded.messages == [AssistantMessage(id="p", tool_calls=[call("c1", "f")])]


def test_fold_does_not_attach_a_call_to_a_non_assistant_parent() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="u1", role="user"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="u1"),
        ]
    )
    assert folded.messages == [
        UserMessage(id="u1", content=""),
        AssistantMessage(id="c1", tool_calls=[call("c1", "f")]),
    ]


def test_fold_a_repeated_start_renames_the_call_and_keeps_its_arguments() -> None:
    folded = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
            ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="g", metadata=META),
        ]
    )
    renamed = ToolCall(id="c1", function=FunctionCall(name="g", arguments="{}"), metadata=META)
    assert folded.messages == [AssistantMessage(id="c1", tool_calls=[renamed])]


def test_fold_ignores_args_and_ends_for_unknown_calls() -> None:
    folded = fold(
        [
            ToolCallArgsEvent(tool_call_id="nowhere", delta="{}"),
            ToolCallEndEvent(tool_call_id="nowhere"),
        ]
    )
    assert folded.messages == []


def test_fold_expands_tool_call_chunks() -> None:
    folded = fold(
        [
            ToolCallChunkEvent(delta="no id: ignored"),
            ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", delta='{"a":'),
            ToolCallChunkEvent(tool_call_id="c1", delta="1}"),
            ToolCallChunkEvent(tool_call_id="c1"),
            ToolCallChunkEvent(tool_call_id="orphan", delta="no name: ignored"),
        ]
    )
    assert folded.messages == [AssistantMessage(id="c1", tool_calls=[call("c1", "f", '{"a":1}')])]


def test_fold_inserts_results_after_the_owner_and_its_earlier_results() -> None:
    folded = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="a1"),
            ToolCallEndEvent(tool_call_id="c1"),
            ToolCallStartEvent(tool_call_id="c2", tool_call_name="g", parent_message_id="a1"),
            ToolCallEndEvent(tool_call_id="c2"),
            TextMessageStartEvent(message_id="m2"),
            ToolCallResultEvent(message_id="t1", tool_call_id="c1", content="one"),
            ToolCallResultEvent(
                message_id="t2", tool_call_id="c2", content=[TextPart(text="two")], metadata=META
            ),
            ToolCallResultEvent(message_id="t3", tool_call_id="unknown", content="three"),
        ]
    )
    assert [m.id for m in folded.messages] == ["a1", "t1", "t2", "m2", "t3"]
    assert folded.messages[2] == ToolMessage(
        id="t2", tool_call_id="c2", content=[TextPart(text="two")], metadata=META
    )


def test_fold_sets_encrypted_values_on_calls_and_messages_only() -> None:
    def value(subtype: str, entity: str) -> ReasoningEncryptedValueEvent:
        return ReasoningEncryptedValueEvent.model_validate(
            {"subtype": subtype, "entityId": entity, "encryptedValue": f"enc-{entity}"}
        )

    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
            ActivitySnapshotEvent(message_id="p1", activity_type="PLAN", content={}),
            value("tool-call", "c1"),
            value("message", "m1"),
            value("message", "p1"),
            value("message", "nowhere"),
            value("tool-call", "nowhere"),
        ]
    )
    assistant, activity = folded.messages
    assert isinstance(assistant, AssistantMessage)
    assert assistant.encrypted_value == "enc-m1"
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].encrypted_value == "enc-c1"
    assert activity == ActivityMessage(id="p1", activity_type="PLAN", content={})


# -- fold: what it takes --------------------------------------------------------------------


def test_fold_refuses_wire_dicts_and_names_the_reader() -> None:
    with pytest.raises(UsageError, match=r"event 1 is a dict: read a wire dict with agui\.parse"):
        fold(cast("list[Event]", [RunStartedEvent(thread_id="t", run_id="r"), {"type": "RAW"}]))


@pytest.mark.parametrize(("given", "named"), [(None, "None"), (3, "a int")])
def test_fold_refuses_what_is_no_list_at_all(given: object, named: str) -> None:
    with pytest.raises(UsageError, match=rf"fold\(\) takes a list of events, got {named}$"):
        fold(cast("list[Event]", given))


@pytest.mark.parametrize(
    "given",
    [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, '{"type":"RAW"}', b'{"type":"RAW"}'],
    ids=["dict", "str", "bytes"],
)
def test_fold_refuses_one_events_json_given_for_a_list_naming_parse_event(given: object) -> None:
    shown = type(given).__name__
    with pytest.raises(UsageError, match=rf"got one {shown}: pass \[agui\.parse_event\(\.\.\.\), "):
        fold(cast("list[Event]", given))


def test_fold_refuses_one_event_given_for_a_list() -> None:
    one = RunStartedEvent(thread_id="t", run_id="r")
    with pytest.raises(UsageError, match=r"got one RunStartedEvent: pass \[event\]"):
        fold(cast("list[Event]", one))


def test_fold_refuses_held_messages_that_are_not_message_models() -> None:
    given = cast("list[Message]", [{"id": "u1", "role": "user", "content": "hi"}])
    with pytest.raises(UsageError, match=r"message 0 is a dict: build it from agui\.messages"):
        fold([], messages=given)


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        ({"tags": {1, 2}}, "/tags is a set"),
        ({"a": [1, (2, 3)]}, "/a/1 is a tuple"),
        ({"a/b": {1: "x"}}, "/a~1b has the key 1, which is not text"),
        (b"raw", "the root is a bytes"),
        ({"n": [float("inf")]}, "/n/0 is NaN or an infinity, which JSON has no value for"),
    ],
)
def test_fold_refuses_a_state_that_is_not_json_and_names_where(state: object, problem: str) -> None:
    with pytest.raises(
        UsageError, match=f"takes a JSON value, what a client holds, but {problem};"
    ):
        fold([], state=cast("JsonValue", state))


# -- fold: state ------------------------------------------------------------------------------


def test_fold_applies_snapshots_and_deltas_and_keeps_the_state_when_a_patch_fails() -> None:
    folded = fold(
        [
            StateSnapshotEvent(snapshot={"n": 1, "tasks": []}),
            StateDeltaEvent(delta=[AddOperation(path="/tasks/-", value="a")]),
            StateDeltaEvent(delta=[RemoveOperation(path="/missing")]),
            StateDeltaEvent(delta=[ReplaceOperation(path="/n", value=2)]),
        ]
    )
    assert folded.state == {"n": 2, "tasks": ["a"]}
    (warning,) = folded.warnings
    assert warning.startswith(
        "event 2 (STATE_DELTA): the state patch does not apply, so the state is kept: operation 0"
    )


def test_fold_accepts_a_null_snapshot() -> None:
    assert fold([StateSnapshotEvent(snapshot=None)]).state is None


# -- fold: messages snapshot ------------------------------------------------------------------


def test_fold_reconciles_a_messages_snapshot_in_place() -> None:
    held: list[Message] = [
        UserMessage(id="u1", content="old"),
        AssistantMessage(id="a1", content="dropped"),
        ReasoningMessage(id="r1", content="kept: no reasoning in the snapshot"),
        ActivityMessage(id="p1", activity_type="PLAN", content={}),
        UserMessage(id="u2", content="old too"),
    ]
    snapshot = MessagesSnapshotEvent(
        messages=[
            UserMessage(id="new", content="appended"),
            UserMessage(id="u2", content="replaced"),
            ActivityMessage(id="p2", activity_type="PLAN", content={"x": 1}),
            UserMessage(id="u1", content="replaced in place"),
        ],
        metadata=META,
    )
    folded = fold([snapshot], messages=held)
    assert [m.id for m in folded.messages] == ["u1", "r1", "u2", "new", "p2"]
    assert folded.messages[0] == UserMessage(id="u1", content="replaced in place")


# -- fold: activity ---------------------------------------------------------------------------


def test_fold_creates_replaces_and_patches_activity_messages() -> None:
    folded = fold(
        [
            ActivitySnapshotEvent(message_id="p1", activity_type="PLAN", content={"steps": []}),
            ActivitySnapshotEvent(
                message_id="p1", activity_type="PLAN", content={"steps": ["x"]}, replace=False
            ),
            ActivityDeltaEvent(
                message_id="p1",
                activity_type="PLAN2",
                patch=[AddOperation(path="/steps/-", value="a")],
                metadata=META,
            ),
            ActivityDeltaEvent(
                message_id="p1",
                activity_type="PLAN3",
                patch=[RemoveOperation(path="/missing")],
            ),
            ActivityDeltaEvent(message_id="nowhere", activity_type="PLAN", patch=[]),
        ]
    )
    assert folded.messages == [
        ActivityMessage(id="p1", activity_type="PLAN2", content={"steps": ["a"]}, metadata=META)
    ]
    (warning,) = folded.warnings
    assert warning.startswith(
        "event 3 (ACTIVITY_DELTA): the patch of activity message 'p1' does not apply, so its "
        "content is kept: operation 0"
    )


def test_fold_a_replacing_activity_snapshot_replaces_content_and_keeps_metadata() -> None:
    folded = fold(
        [
            ActivitySnapshotEvent(
                message_id="p1", activity_type="PLAN", content={"v": 1}, metadata=META
            ),
            ActivitySnapshotEvent(message_id="p1", activity_type="SEARCH", content={"v": 2}),
        ]
    )
    assert folded.messages == [
        ActivityMessage(id="p1", activity_type="SEARCH", content={"v": 2}, metadata=META)
    ]


def test_fold_an_activity_snapshot_replaces_a_text_message_of_the_same_id() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            ActivitySnapshotEvent(message_id="m1", activity_type="PLAN", content={}, replace=True),
            TextMessageContentEvent(message_id="m1", delta="ignored on an activity"),
            ActivityDeltaEvent(message_id="m2", activity_type="PLAN", patch=[]),
        ]
    )
    assert folded.messages == [ActivityMessage(id="m1", activity_type="PLAN", content={})]


def test_fold_an_activity_snapshot_over_a_message_with_calls_leaves_an_activity_alone() -> None:
    folded = fold(
        [
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="a1"),
            ActivitySnapshotEvent(message_id="a1", activity_type="PLAN", content={"n": 1}),
            ActivitySnapshotEvent(message_id="u1", activity_type="PLAN", content={}, metadata=META),
            ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
            ToolCallResultEvent(message_id="t1", tool_call_id="c1", content="done"),
        ],
        messages=[UserMessage(id="u1", content="hi", name="ann", metadata={"old": 1})],
    )
    assert folded.messages == [
        ActivityMessage(id="u1", activity_type="PLAN", content={}, metadata=META),
        ActivityMessage(id="a1", activity_type="PLAN", content={"n": 1}),
        ToolMessage(id="t1", tool_call_id="c1", content="done"),
    ]
    assert folded.warnings == (
        "event 3 (TOOL_CALL_ARGS): no tool call has the id 'c1', so the delta is left out",
    )


@pytest.mark.parametrize(("root", "kind"), [([1], "an array"), ("s", "a string"), (None, "null")])
def test_fold_keeps_an_activitys_content_when_a_patch_would_make_it_no_object(
    root: JsonValue, kind: str
) -> None:
    folded = fold(
        [
            ActivitySnapshotEvent(message_id="p1", activity_type="PLAN", content={"n": 1}),
            ActivityDeltaEvent(
                message_id="p1",
                activity_type="SEARCH",
                patch=[ReplaceOperation(path="", value=root)],
            ),
        ]
    )
    assert folded.messages == [ActivityMessage(id="p1", activity_type="PLAN", content={"n": 1})]
    (warning,) = folded.warnings
    assert warning == (
        "event 1 (ACTIVITY_DELTA): the patch of activity message 'p1' does not apply, so its "
        f"content is kept: it leaves {kind}, and an activity's content is an object"
    )


def test_fold_an_activity_delta_on_a_text_message_changes_nothing() -> None:
    folded = fold(
        [
            TextMessageStartEvent(message_id="m1"),
            ActivityDeltaEvent(
                message_id="m1", activity_type="PLAN", patch=[AddOperation(path="/a", value=1)]
            ),
        ]
    )
    assert folded.messages == [AssistantMessage(id="m1", content="")]
    assert folded.warnings == (
        "event 1 (ACTIVITY_DELTA): message 'm1' is not an activity; delta left out",
    )


def test_fold_an_activity_delta_for_no_message_is_skipped_without_a_warning() -> None:
    """As the client: a delta before any snapshot of its message is skipped, and it says nothing."""
    delta = ActivityDeltaEvent(
        message_id="p9", activity_type="PLAN", patch=[AddOperation(path="/a", value=1)]
    )
    folded = fold([delta])
    assert (folded.messages, folded.warnings) == ([], ())


def test_fold_a_text_start_reusing_an_activity_id_is_dropped() -> None:
    folded = fold(
        [
            ActivitySnapshotEvent(message_id="p1", activity_type="PLAN", content={}),
            TextMessageStartEvent(message_id="p1", metadata=META),
        ]
    )
    assert folded.messages == [ActivityMessage(id="p1", activity_type="PLAN", content={})]


def test_fold_a_repeated_id_means_the_first_message_in_order_even_one_inserted_before() -> None:
    held: list[Message] = [
        AssistantMessage(id="a1", tool_calls=[call("c1", "f")]),
        UserMessage(id="u1", content="hi"),
    ]
    events: list[Event] = [
        ToolCallResultEvent(message_id="u1", tool_call_id="c1", content="r"),
        ToolCallResultEvent(message_id="a1", tool_call_id="c1", content="s"),
        TextMessageContentEvent(message_id="u1", delta="!"),
        TextMessageContentEvent(message_id="a1", delta="?"),
    ]
    expected: list[Message] = [
        AssistantMessage(id="a1", content="?", tool_calls=[call("c1", "f")]),
        ToolMessage(id="u1", tool_call_id="c1", content="r!"),
        ToolMessage(id="a1", tool_call_id="c1", content="s"),
        UserMessage(id="u1", content="hi"),
    ]
    assert fold(events, messages=held).messages == expected
    assert reference_fold(events, messages=held)[0] == wire(expected)


# -- fold: the indexed reducer folds as the scanning one did ----------------------------------

# Small id pools, shared between messages and calls, so streams reuse, repeat and collide ids.
message_ids = st.sampled_from(["m1", "m2", "c1", "r1"])
call_ids = st.sampled_from(["c1", "c2", "c3"])
maybe_ids = st.none() | message_ids
texts = st.sampled_from(["a", "bc", "{}"])
metas = st.none() | st.just(META)
subagents = st.none() | st.just("sub-1")


def model(cls: type[BaseModel], **fields: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    # Keyword arguments go through the constructor (hypothesis would read the models' aliases).
    return st.fixed_dictionaries(fields).map(lambda given: cls(**given))


def tool_message(message_id: str, call_id: str, content: str) -> ToolMessage:
    return ToolMessage(id=message_id, tool_call_id=call_id, content=content)


held_messages = st.lists(
    st.one_of(
        model(UserMessage, id=message_ids, content=texts),
        model(
            AssistantMessage,
            id=message_ids,
            content=texts,
            tool_calls=st.lists(st.builds(call, call_ids, texts), max_size=2),
        ),
        st.builds(tool_message, message_ids, call_ids, texts),
    ),
    max_size=4,
)
any_events = st.lists(
    st.one_of(
        model(TextMessageStartEvent, message_id=message_ids, metadata=metas),
        model(TextMessageContentEvent, message_id=message_ids, delta=texts),
        model(TextMessageEndEvent, message_id=message_ids, metadata=metas),
        model(TextMessageChunkEvent, message_id=maybe_ids, delta=st.none() | texts),
        model(ReasoningMessageStartEvent, message_id=message_ids),
        model(ReasoningMessageContentEvent, message_id=message_ids, delta=texts),
        model(ReasoningMessageChunkEvent, message_id=maybe_ids, delta=st.none() | texts),
        model(
            ToolCallStartEvent,
            tool_call_id=call_ids,
            tool_call_name=texts,
            parent_message_id=maybe_ids,
            subagent_run_id=subagents,
            metadata=metas,
        ),
        model(ToolCallArgsEvent, tool_call_id=call_ids, delta=texts),
        model(ToolCallEndEvent, tool_call_id=call_ids, metadata=metas),
        model(
            ToolCallChunkEvent,
            tool_call_id=st.none() | call_ids,
            tool_call_name=st.none() | texts,
            parent_message_id=maybe_ids,
            delta=st.none() | texts,
        ),
        model(ToolCallResultEvent, message_id=message_ids, tool_call_id=call_ids, content=texts),
        model(
            ActivitySnapshotEvent,
            message_id=message_ids,
            activity_type=st.just("PLAN"),
            content=st.just({"n": 1}),
            replace=st.none() | st.booleans(),
        ),
        model(
            ActivityDeltaEvent,
            message_id=message_ids,
            activity_type=st.just("PLAN"),
            patch=st.just([ReplaceOperation(path="/n", value=2)]),
        ),
        model(
            ReasoningEncryptedValueEvent,
            subtype=st.sampled_from(["tool-call", "message"]),
            entity_id=message_ids | call_ids,
            encrypted_value=texts,
        ),
        model(MessagesSnapshotEvent, messages=held_messages),
        model(
            RunStartedEvent,
            thread_id=st.just("t"),
            run_id=st.just("r"),
            input=model(
                RunAgentInput, thread_id=st.just("t"), run_id=st.just("r"), messages=held_messages
            ),
        ),
    ),
    max_size=24,
)
_MESSAGE_LIST: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


@settings(max_examples=400, deadline=None)
@given(held=held_messages, events=any_events)
def test_fold_gives_the_messages_the_scanning_fold_gives_for_any_stream(
    held: list[Message], events: list[Event]
) -> None:
    records, state, subagents = reference_fold(events, messages=held)
    expected = _MESSAGE_LIST.validate_python(records)  # every stream folds into valid messages
    folded = fold(events, messages=held)
    assert dataclasses.replace(folded, warnings=()) == FoldedRun(
        expected, state, None, None, subagents
    )


def test_a_thread_puts_each_result_after_its_message_and_the_results_already_there() -> None:
    thread = Thread([{"id": "a1", "role": "assistant"}, {"id": "a2", "role": "assistant"}])
    first, second = thread.node("a1"), thread.node("a2")
    assert first is not None
    assert second is not None
    thread.insert_result(first, {"id": "t1", "role": "tool"})
    thread.insert_result(second, {"id": "t2", "role": "tool"})
    thread.insert_result(first, {"id": "t3", "role": "tool"})
    thread.append({"id": "u1", "role": "user"})
    thread.insert_result(second, {"id": "t4", "role": "tool"})
    thread.insert_result(first, {"id": "t5", "role": "tool"})

    assert [record["id"] for record in thread.records()] == [
        "a1", "t1", "t3", "t5", "a2", "t2", "t4", "u1",
    ]  # fmt: skip


def test_every_event_type_has_a_step_in_the_fold_or_is_one_a_client_holds_nothing_of() -> None:
    ignored = {kind for kind, step in _STEPS.items() if step is None}

    assert set(_STEPS) == {member.value for member in EventType}
    assert ignored == {
        "RAW",
        "CUSTOM",
        "STEP_STARTED",
        "STEP_FINISHED",
        "REASONING_START",
        "REASONING_END",
        "TEXT_MESSAGE_CHUNK",
        "TOOL_CALL_CHUNK",
        "REASONING_MESSAGE_CHUNK",
    }
