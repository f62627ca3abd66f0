"""The dojo's interrupt page: the agent pauses to let the user pick a meeting time.

The model calls `schedule_meeting {topic, attendee}`; the tool needs a time only the user can
give, so the run ends with an interrupt (`RUN_FINISHED`, outcome `interrupt`) carrying the
topic and the attendee where the page's `useInterrupt` reads them (`metadata.reason`). The page
draws a time picker and resumes with `{chosen_time, chosen_label}`, or `{cancelled: true}`;
the tool then books the meeting (or does not) and the agent says so.

The tool loop's approvals carry `{approved, editedArgs}`; `TimePicker` reads the page's answer
as one (a chosen time approves the call with the time added to its arguments, a cancel
declines it) and puts the payload where the page reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import Field, JsonValue

from agui import ResumeEntry, RunContext, RunOutcome
from agui.agents import ToolLoopAgent, tool
from agui.agents.loop import APPROVAL_PREFIX
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from agui.messages import AssistantMessage, Message
from agui.types import InterruptOutcome
from examples.dojo.models import answered, build_model, last_user_text

S = TypeVar("S")
INSTRUCTIONS = (
    "You schedule meetings. When the user asks for one, call schedule_meeting with its topic "
    "and attendee; the user picks the time. Then confirm the booking in one sentence."
)


@tool(requires_approval=True)
def schedule_meeting(
    topic: Annotated[str, Field(description="What the meeting is about")],
    attendee: Annotated[str, Field(description="Who the meeting is with")] = "",
    time: Annotated[str, Field(description="Left empty: the user picks it")] = "",
) -> str:
    """Schedule a meeting; the user picks its time before it is booked."""
    with_whom = f" with {attendee}" if attendee else ""
    return f"Booked {topic!r}{with_whom} for {time or 'a time to be agreed'}."


class TimePicker:
    """The tool loop, with the interrupt page's question and answers around its approvals.

    Examples:
        >>> TimePicker().agent.toolbox.specs()[0].name
        'schedule_meeting'
    """

    def __init__(self, model: ChatModel | None = None) -> None:
        self.agent = ToolLoopAgent(
            model or build_model(meeting_turn), tools=[schedule_meeting], instructions=INSTRUCTIONS
        )

    async def run(self, ctx: RunContext[S]) -> RunOutcome | None:
        """Read the page's answers as approvals, run the loop, and ask as the page reads."""
        resume = [as_approval(entry, ctx.messages) for entry in ctx.resume]
        ctx.input = ctx.input.model_copy(update={"resume": resume or None})
        outcome = await self.agent.run(ctx)
        if not isinstance(outcome, InterruptOutcome):
            return outcome
        return RunOutcome.interrupt(
            [
                question.model_copy(update={"metadata": _asked(question.metadata)})
                for question in outcome.interrupts
            ]
        )


def _asked(metadata: JsonValue) -> JsonValue:
    """The interrupt's metadata with the meeting where the page reads it."""
    arguments = metadata.get("arguments") if isinstance(metadata, dict) else None
    if not isinstance(arguments, dict) or not isinstance(metadata, dict):
        return metadata
    meeting: JsonValue = {key: arguments.get(key, "") for key in ("topic", "attendee")}
    return {**metadata, "reason": meeting}


def as_approval(entry: ResumeEntry, history: Sequence[Message]) -> ResumeEntry:
    """The page's answer to a meeting's interrupt as the approval the tool loop reads.

    Examples:
        >>> from agui.messages import FunctionCall, ToolCall
        >>> call = ToolCall(id="c1", function=FunctionCall(name="schedule_meeting",
        ...     arguments='{"topic":"Pricing"}'))
        >>> asked = [AssistantMessage(id="a1", tool_calls=[call])]
        >>> picked = {"chosen_time": "2027-01-05T10:00:00Z", "chosen_label": "Tue 10:00"}
        >>> entry = ResumeEntry(interrupt_id="approve-c1", status="resolved", payload=picked)
        >>> as_approval(entry, asked).payload
        {'approved': True, 'editedArgs': {'topic': 'Pricing', 'time': 'Tue 10:00'}}
    """
    payload = entry.payload
    if not isinstance(payload, dict) or "approved" in payload:
        return entry
    if payload.get("cancelled") is True:
        return entry.model_copy(update={"payload": {"approved": False}})
    chosen = payload.get("chosen_label") or payload.get("chosen_time")
    arguments = _arguments(history, entry.interrupt_id.removeprefix(APPROVAL_PREFIX))
    if not isinstance(chosen, str) or arguments is None:
        return entry
    edited: JsonValue = {**arguments, "time": chosen}
    return entry.model_copy(update={"payload": {"approved": True, "editedArgs": edited}})


def _arguments(history: Sequence[Message], call_id: str) -> dict[str, JsonValue] | None:
    for message in history:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                if call.id == call_id:
                    value: JsonValue = json.loads(call.function.arguments or "{}")
                    return value if isinstance(value, dict) else None
    return None


_WITH = re.compile(r"\bwith\s+(.+?)(?:\s+(?:next|this|on|to|about)\b|[.?!]|$)", re.IGNORECASE)
_ABOUT = re.compile(r"\b(?:to|about)\s+(.+?)[.?!]?$", re.IGNORECASE)


def meeting_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted scheduler: ask for the meeting, then say how it went.

    Examples:
        >>> turn = meeting_turn([ChatMessage.user("Schedule a 1:1 with Alice to review Q2 goals.")])
        >>> turn.calls[0].arguments
        {'topic': 'review Q2 goals', 'attendee': 'Alice'}
    """
    result = answered(messages)
    if result is not None:
        if result.is_error:
            return Turn.text("No problem: I did not book anything.")
        return Turn.text(f"All set. {result.content}")
    text = last_user_text(messages).strip()
    attendee = _WITH.search(text)
    topic = _ABOUT.search(text)
    arguments: dict[str, JsonValue] = {
        "topic": topic.group(1) if topic else "a call",
        "attendee": attendee.group(1) if attendee else "",
    }
    return Turn.tool_calls(Call("schedule_meeting", arguments))
