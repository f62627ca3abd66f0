"""agui.agents.turn: one model turn's text and reasoning, opened lazily, closed on a switch."""

from __future__ import annotations

from agui import RunAgentInput, RunContext
from agui.agents.turn import WARNING_EVENT, TurnWriter, emit_warning
from agui.events import CustomEvent


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
    assert writer.parent_id == "r-msg-3"


def test_a_warning_is_a_custom_event_with_the_message_and_its_detail() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    writer = TurnWriter(ctx, turn=1)

    emit_warning(ctx, "skipped one", raw="<x>")
    writer.warn("skipped two", count=2)

    assert events.drain() == [
        CustomEvent(name=WARNING_EVENT, value={"message": "skipped one", "raw": "<x>"}),
        CustomEvent(name=WARNING_EVENT, value={"message": "skipped two", "count": 2}),
    ]
