"""Text that is not valid Unicode is refused where it is emitted, in any event's text field.

A lone surrogate (U+D800 to U+DFFF, unpaired) cannot be encoded as UTF-8. The handles refuse it
in their text, and a CUSTOM value or RAW event is checked to serialize; an event given to
`ctx.emit` (or a tool result) is checked the same way, so the agent's `UsageError` ends the run
with its blocks closed first, rather than the transport ending the stream with them open.
"""

from __future__ import annotations

import asyncio

import pytest
from pydantic import JsonValue

from agui import RunAgentInput, RunContext
from agui.errors import UsageError
from agui.events import TextMessageContentEvent, ToolCallResultEvent
from agui.messages import ImagePart, TextPart, UrlSource
from agui.testing import collect
from agui.types import ToolResultContent

Ctx = RunContext[JsonValue]
INPUT = RunAgentInput(thread_id="t", run_id="r")


def test_a_tool_result_with_a_lone_surrogate_is_refused_at_emit_and_nothing_is_queued() -> None:
    ctx, events = RunContext.new(INPUT)
    with ctx.tool_call("look") as call:
        call.end()
    events.drain()

    result = ToolCallResultEvent(message_id="m1", tool_call_id=call.id, content="ok \ud800")
    with pytest.raises(UsageError, match=r"TOOL_CALL_RESULT: its content is not valid Unicode"):
        ctx.emit(result)

    assert events.drain() == []


def test_a_text_part_of_a_tool_result_is_checked_and_other_parts_are_not_text() -> None:
    ctx, events = RunContext.new(INPUT)
    with ctx.tool_call("look") as call:
        call.end()
    image = ImagePart(source=UrlSource(value="https://example.com/a.png"))
    parts: ToolResultContent = [image, TextPart(text="caf\u00e9"), TextPart(text="\udfff")]

    with pytest.raises(UsageError, match=r"surrogate, U\+DFFF at index 0"):
        ctx.tool_result(call.id, parts)
    valid: ToolResultContent = [image, TextPart(text="caf\u00e9")]
    ctx.tool_result(call.id, valid)  # valid text that is not ASCII passes

    assert [event.type for event in events.drain()][-1] == "TOOL_CALL_RESULT"


def test_an_emitted_delta_with_a_lone_surrogate_ends_the_run_with_its_message_closed() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.message() as message:
            message.delta("Hello")
            ctx.emit(TextMessageContentEvent(message_id=message.id, delta="\ud83d"))

    events = asyncio.run(collect(agent, INPUT))

    assert [event.type for event in events][-3:] == [
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]
    assert getattr(events[-1], "code", None) == "USAGE_ERROR"
