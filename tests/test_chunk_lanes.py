"""agui._protocol.chunk_lanes: chunk events expanded into the events they stand for, by lane."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui._protocol.chunk_lanes import ChunkLanes, Stream, closed_lanes
from agui.errors import ProtocolViolation
from agui.events import (
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    SubagentErrorEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agui.verify import Rule, Verifier


def expand_all(*events: Event) -> list[Event]:
    lanes = ChunkLanes()
    return [each for event in events for each in lanes.expand(event)[0]]


def test_a_first_text_chunk_opens_its_message_as_an_assistant_start() -> None:
    assert expand_all(TextMessageChunkEvent(message_id="m1", name="bot", delta="Hi")) == [
        TextMessageStartEvent(message_id="m1", role="assistant", name="bot"),
        TextMessageContentEvent(message_id="m1", delta="Hi"),
    ]


def test_a_tool_chunk_stream_expands_to_start_args_and_end_at_the_runs_end() -> None:
    assert expand_all(
        ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
        ToolCallChunkEvent(delta="{}"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ) == [
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
        ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
        ToolCallEndEvent(tool_call_id="c1"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]


def test_a_reasoning_chunk_with_only_metadata_expands_to_an_empty_content_carrying_it() -> None:
    assert expand_all(
        ReasoningMessageChunkEvent(message_id="r1"),
        ReasoningMessageChunkEvent(metadata={"k": 1}),
        StateSnapshotEvent(snapshot={}),
    ) == [
        ReasoningMessageStartEvent(message_id="r1"),
        ReasoningMessageContentEvent(message_id="r1", delta="", metadata={"k": 1}),
        ReasoningMessageEndEvent(message_id="r1"),
        StateSnapshotEvent(snapshot={}),
    ]


def test_a_chunk_carrying_only_a_raw_event_expands_to_an_empty_content() -> None:
    expanded = expand_all(
        TextMessageChunkEvent(message_id="m1"), TextMessageChunkEvent(raw_event={"x": 1})
    )
    assert expanded[1] == TextMessageContentEvent(message_id="m1", delta="")


def test_raw_activity_and_subagent_starts_pass_through_without_closing_a_stream() -> None:
    passing: list[Event] = [
        RawEvent(event=1),
        ActivitySnapshotEvent(message_id="a", activity_type="PLAN", content={}),
        SubagentStartedEvent(subagent_run_id="s1", name="n"),
    ]
    expanded = expand_all(
        TextMessageChunkEvent(message_id="m1"), *passing, TextMessageChunkEvent(delta="x")
    )
    assert expanded[1:] == [*passing, TextMessageContentEvent(message_id="m1", delta="x")]


def test_an_explicit_event_closes_its_own_lane_only() -> None:
    expanded = expand_all(
        TextMessageChunkEvent(message_id="m1"),
        TextMessageChunkEvent(message_id="a1", subagent_run_id="s1"),
        CustomEvent(name="c", value=None, subagent_run_id="s1"),
        TextMessageChunkEvent(delta="x"),
    )
    assert expanded[2:] == [
        TextMessageEndEvent(message_id="a1", subagent_run_id="s1"),
        CustomEvent(name="c", value=None, subagent_run_id="s1"),
        TextMessageContentEvent(message_id="m1", delta="x"),
    ]


def test_a_subagents_end_closes_its_lane_and_a_messages_snapshot_closes_every_lane() -> None:
    expanded = expand_all(
        TextMessageChunkEvent(message_id="m1"),
        TextMessageChunkEvent(message_id="a1", subagent_run_id="s1"),
        SubagentErrorEvent(subagent_run_id="s1", message="failed"),
        MessagesSnapshotEvent(messages=[]),
    )
    assert expanded[2:] == [
        TextMessageEndEvent(message_id="a1", subagent_run_id="s1"),
        SubagentErrorEvent(subagent_run_id="s1", message="failed"),
        TextMessageEndEvent(message_id="m1"),
        MessagesSnapshotEvent(messages=[]),
    ]


def test_a_chunk_with_another_id_closes_the_lanes_stream_and_opens_its_own() -> None:
    assert expand_all(
        TextMessageChunkEvent(message_id="m1"), TextMessageChunkEvent(message_id="m2")
    )[1:] == [
        TextMessageEndEvent(message_id="m1"),
        TextMessageStartEvent(message_id="m2", role="assistant"),
    ]


def test_an_id_continues_its_stream_in_whichever_lane_holds_it() -> None:
    lanes = ChunkLanes()
    lanes.expand(TextMessageChunkEvent(message_id="a1", subagent_run_id="s1"))
    assert lanes.expand(TextMessageChunkEvent(message_id="a1", delta="x")) == (
        [TextMessageContentEvent(message_id="a1", delta="x", subagent_run_id="s1")],
        None,
    )


def test_an_untagged_chunk_continues_the_only_lane_open_of_its_kind() -> None:
    lanes = ChunkLanes()
    lanes.expand(ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", subagent_run_id="s1"))
    lanes.expand(TextMessageChunkEvent(message_id="m1"))
    assert lanes.expand(ToolCallChunkEvent(delta="{}"))[0] == [
        ToolCallArgsEvent(tool_call_id="c1", delta="{}", subagent_run_id="s1")
    ]


def test_a_chunk_that_cannot_be_placed_expands_to_nothing_and_says_why() -> None:
    lanes = ChunkLanes()
    assert lanes.expand(ReasoningMessageChunkEvent(delta="x")) == (
        [],
        (
            "no stream is open for this REASONING_MESSAGE_CHUNK to continue, and it carries no "
            "messageId"
        ),
    )
    assert lanes.expand(ToolCallChunkEvent(delta="x"))[1] == (
        "no stream is open for this TOOL_CALL_CHUNK to continue, and it carries no toolCallId"
    )


@pytest.mark.parametrize(
    ("opener", "continuation", "reason"),
    [
        (
            TextMessageChunkEvent(message_id="m1", delta="Hi"),
            TextMessageChunkEvent(message_id="m1", role="user", delta=" x"),
            "this TEXT_MESSAGE_CHUNK sets role 'user', but its stream 'm1' opened with 'assistant'",
        ),
        (
            TextMessageChunkEvent(message_id="m1", name="a", delta="Hi"),
            TextMessageChunkEvent(name="b", delta=" x"),
            "this TEXT_MESSAGE_CHUNK sets name 'b', but its stream 'm1' opened with 'a'",
        ),
        (
            ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", delta="{"),
            ToolCallChunkEvent(tool_call_id="c1", tool_call_name="g", delta="}"),
            "this TOOL_CALL_CHUNK sets toolCallName 'g', but its stream 'c1' opened with 'f'",
        ),
        (
            TextMessageChunkEvent(message_id="m1", delta="Hi"),
            TextMessageChunkEvent(message_id="m1", subagent_run_id="s1", delta=" x"),
            "this TEXT_MESSAGE_CHUNK names subagent 's1', but 'm1' is open for the parent agent",
        ),
    ],
    ids=["role", "name", "tool-name", "subagent"],
)
def test_a_continuation_the_client_refuses_expands_to_nothing_and_says_why(
    opener: Event, continuation: Event, reason: str
) -> None:
    lanes = ChunkLanes()
    lanes.expand(opener)

    assert lanes.expand(continuation) == ([], reason)
    # The stream stays open as it was: the run's end still closes it.
    ends, _ = lanes.expand(RunFinishedEvent(thread_id="t", run_id="r"))
    assert ends[0].type.endswith("_END")


def test_a_continuation_may_repeat_the_role_its_opener_took_by_default() -> None:
    assert expand_all(
        TextMessageChunkEvent(message_id="m1", delta="Hi"),
        TextMessageChunkEvent(role="assistant", delta="!"),
    ) == [
        TextMessageStartEvent(message_id="m1", role="assistant"),
        TextMessageContentEvent(message_id="m1", delta="Hi"),
        TextMessageContentEvent(message_id="m1", delta="!"),
    ]


def test_every_event_type_outside_a_chunk_stream_says_which_lanes_it_closes() -> None:
    lanes: dict[str | None, Stream] = {None: Stream(0, "m1", ("assistant", None))}

    assert closed_lanes(SubagentErrorEvent(subagent_run_id="s1", message="x"), lanes) == []
    assert closed_lanes(ReasoningMessageChunkEvent(message_id="r1"), lanes) == []
    assert closed_lanes(MessagesSnapshotEvent(messages=[]), lanes) == [None]


_TAGS = st.sampled_from([None, None, "s1"])
_DELTAS = st.sampled_from([None, "x"])
_chunks = st.one_of(
    st.builds(
        TextMessageChunkEvent,
        message_id=st.sampled_from([None, None, "m1", "m2"]),
        role=st.sampled_from([None, None, "assistant", "user"]),
        name=st.sampled_from([None, None, "a"]),
        delta=_DELTAS,
        subagent_run_id=_TAGS,
    ),
    st.builds(
        ToolCallChunkEvent,
        tool_call_id=st.sampled_from([None, None, "c1", "c2"]),
        tool_call_name=st.sampled_from([None, "f", "g"]),
        delta=_DELTAS,
        subagent_run_id=_TAGS,
    ),
    st.builds(
        ReasoningMessageChunkEvent,
        message_id=st.sampled_from([None, None, "r1"]),
        delta=_DELTAS,
        subagent_run_id=_TAGS,
    ),
    st.builds(CustomEvent, name=st.just("c"), value=st.none(), subagent_run_id=_TAGS),
    st.builds(RawEvent, event=st.just({})),
    st.builds(StateSnapshotEvent, snapshot=st.just({}), subagent_run_id=_TAGS),
    _TAGS.map(
        lambda tag: ActivitySnapshotEvent(
            message_id="a1", activity_type="progress", content={}, subagent_run_id=tag
        )
    ),
    st.just(SubagentStartedEvent(subagent_run_id="s1", name="helper")),
    st.just(SubagentErrorEvent(subagent_run_id="s1", message="x")),
    st.just(MessagesSnapshotEvent(messages=[])),
)
_PLACEMENT_RULES = {
    Rule.CHUNK_MISSING_ID,
    Rule.CHUNK_MISSING_NAME,
    Rule.CHUNK_CONFLICT,
    Rule.CHUNK_AMBIGUOUS,
}


def unplaceable(violation: ProtocolViolation) -> bool:
    """Whether the verifier refused a chunk for where it lands, not for the ledger's books."""
    misplaced = violation.rule is Rule.SUBAGENT_ATTRIBUTION_MISMATCH and str(violation).startswith(
        "Cannot continue"
    )
    return violation.rule in _PLACEMENT_RULES or misplaced


def open_lanes(lanes: ChunkLanes) -> tuple[tuple[str | None, str, str], ...]:
    kinds = ("TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK")
    held = lanes._lanes.items()  # pyright: ignore[reportPrivateUsage]
    return tuple((lane, kinds[stream.kind], stream.entity_id) for lane, stream in held)


@settings(max_examples=300, deadline=None)
@given(events=st.lists(_chunks, max_size=16))
def test_the_verifier_and_the_fold_expand_any_chunk_stream_alike(events: list[Event]) -> None:
    """Accepted chunks expand to explicit events the verifier accepts; refused ones are dropped."""
    chunked, explicit, lanes = Verifier(), Verifier(), ChunkLanes()
    for event in [RunStartedEvent(thread_id="t", run_id="r"), *events]:
        try:
            chunked.observe(event)
        except ProtocolViolation as violation:
            if unplaceable(violation):
                before = open_lanes(lanes)
                assert lanes.expand(event)[0] == []
                assert open_lanes(lanes) == before
            continue
        expanded, dropped = lanes.expand(event)
        assert dropped is None
        for each in expanded:
            explicit.observe(each)
        assert open_lanes(lanes) == chunked.open_chunks
