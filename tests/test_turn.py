"""agui.agents.turn: one model turn's text and reasoning, opened lazily, closed on a switch."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st
from pydantic import JsonValue

from agui import RunAgentInput, RunContext
from agui.agents.turn import WARNING_EVENT, TurnWriter, emit_warning
from agui.events import (
    CustomEvent,
    Event,
    ReasoningEncryptedValueEvent,
    ReasoningMessageContentEvent,
    ReasoningStartEvent,
)
from agui.fold import fold
from agui.messages import AssistantMessage
from agui.sink import EventReceiver


def test_blank_text_and_reasoning_open_nothing() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    writer = TurnWriter(ctx, turn=2)

    writer.text("")
    writer.reasoning("")
    writer.text("\n \n")
    writer.reasoning("  ")
    writer.close()

    assert events.drain() == []
    assert writer.parent_id == "r-turn-2"
    assert writer.call_id(0) == "r-turn-2-call-0"


def test_switching_between_text_and_reasoning_closes_the_open_block() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    writer = TurnWriter(ctx, turn=1)

    writer.text("One.")
    writer.reasoning("hmm")
    writer.text(" Two.")
    writer.close()

    assert [event.type for event in events.drain()] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    assert writer.text_so_far == "One.Two."
    assert writer.parent_id == "r-msg-1"  # the turn's text is one message, whatever interleaves


def test_calls_named_before_any_text_and_text_after_them_share_the_turns_message() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="r", run_id="r"))
    writer = TurnWriter(ctx, turn=2)

    parent = writer.parent_id
    with ctx.tool_call("get_weather", parent_message_id=parent) as call:
        call.end()
    writer.text("Checking.")
    writer.close()

    drained = events.drain()
    assert parent == writer.parent_id == "r-turn-2"
    assert [(e.type, getattr(e, "message_id", None)) for e in drained][2:] == [
        ("TEXT_MESSAGE_START", "r-turn-2"),
        ("TEXT_MESSAGE_CONTENT", "r-turn-2"),
        ("TEXT_MESSAGE_END", "r-turn-2"),
    ]
    [message] = fold(drained).messages
    assert isinstance(message, AssistantMessage)
    assert (message.id, message.content, [c.id for c in message.tool_calls or []]) == (
        "r-turn-2",
        "Checking.",
        ["r-call-1"],
    )


def test_a_warning_is_a_custom_event_with_the_message_and_its_detail() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    writer = TurnWriter(ctx, turn=1)

    emit_warning(ctx, "skipped one", raw="<x>")
    writer.warn("skipped two", count=2)

    assert events.drain() == [
        CustomEvent(name=WARNING_EVENT, value={"message": "skipped one", "raw": "<x>"}),
        CustomEvent(name=WARNING_EVENT, value={"message": "skipped two", "count": 2}),
    ]


def _writer() -> tuple[TurnWriter[JsonValue], EventReceiver]:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    return TurnWriter(ctx, turn=1), events


def _reasoning_text(events: Sequence[Event]) -> str:
    return "".join(e.delta for e in events if isinstance(e, ReasoningMessageContentEvent))


def test_leading_whitespace_and_a_blank_first_reasoning_delta_reach_the_client_as_sent() -> None:
    writer, events = _writer()
    deltas = ["\n\n", " \t", "  The user wants Paris.", "\n", " Then the time.\n\n"]

    for piece in deltas:
        writer.reasoning(piece)
    writer.close()

    sent = events.drain()
    assert _reasoning_text(sent) == "".join(deltas)
    assert sum(isinstance(e, ReasoningStartEvent) for e in sent) == 1


def test_a_blank_reasoning_block_with_a_signature_keeps_both_its_text_and_its_signature() -> None:
    writer, events = _writer()

    writer.text("Checking.")
    writer.reasoning("\n")
    writer.reasoning("  ")
    writer.reasoning_value("sig-blank")
    writer.close()

    sent = events.drain()
    assert _reasoning_text(sent) == "\n  "
    values = [e.encrypted_value for e in sent if isinstance(e, ReasoningEncryptedValueEvent)]
    assert values == ["sig-blank"]
    assert [e.type for e in sent][3:] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]


def test_blank_unsigned_reasoning_ended_by_text_does_not_leak_into_the_next_block() -> None:
    writer, events = _writer()

    writer.reasoning("\n\n")
    writer.text("One.")
    writer.reasoning("Next.")
    writer.close()

    sent = events.drain()
    assert _reasoning_text(sent) == "Next."
    assert writer.text_so_far == "One."


PIECES = st.one_of(st.sampled_from(["", " ", "\n", "\n\n", "\t", "\u00a0", "Paris."]), st.text())


@given(deltas=st.lists(PIECES, max_size=8), signed=st.booleans())
def test_the_reasoning_deltas_sent_join_to_the_reasoning_given(
    deltas: list[str], *, signed: bool
) -> None:
    writer, events = _writer()

    for piece in deltas:
        writer.reasoning(piece)
    if signed:
        writer.reasoning_value("sig")
    writer.close()

    given_text = "".join(deltas)
    sent = events.drain()
    # Only a block that is blank and unsigned opens nothing: nothing in it is shown or signed.
    assert _reasoning_text(sent) == (given_text if signed or given_text.strip() else "")
    assert all(e.delta for e in sent if isinstance(e, ReasoningMessageContentEvent))
    assert sum(isinstance(e, ReasoningStartEvent) for e in sent) == int(
        signed or bool(given_text.strip())
    )
