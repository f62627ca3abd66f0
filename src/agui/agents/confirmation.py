"""Asking the user to confirm a change: a client tool call the run leaves pending, then its answer.

Predictive state updates end this way: the agent streams a document into state while a tool's
arguments stream (`agui.transform.ToolArgsToState`), then asks the user to keep or drop it. The
question is a call to a tool the app registered (CopilotKit's `useHumanInTheLoop`, named
`confirm_changes` by convention): `ask_confirmation` streams it with no result, so the run
finishes with it in `pendingToolCallIds`. The app answers with a tool message in the next
request; `confirmation` reads it. The answer is a JSON object whose `accepted`, `approved` or
`confirmed` member is a boolean (CopilotKit's dojo sends `{"accepted": true}`, agui's approval
contract `{"approved": true}`); anything else rejects, with an `agui.warning` saying what to
send. Only an answer after the last user message counts: once the user has moved on, an old
confirmation is not acted on again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TypeVar

from pydantic import JsonValue

from agui.agents._approval import answer_payload
from agui.agents.turn import emit_warning
from agui.context import RunContext
from agui.messages import AssistantMessage, ToolMessage, UserMessage

__all__ = ["CONFIRM_CHANGES", "Confirmation", "ask_confirmation", "confirmation"]

S = TypeVar("S")

CONFIRM_CHANGES = "confirm_changes"
"""The name CopilotKit's examples and the AG-UI dojo give the confirmation tool."""

_VERDICTS = ("accepted", "approved", "confirmed")


@dataclasses.dataclass(frozen=True)
class Confirmation:
    """The user's answer to a confirmation call: which call, and whether the change is kept.

    Examples:
        >>> Confirmation("r1-call-2", accepted=True).accepted
        True
    """

    call_id: str
    accepted: bool


def ask_confirmation(
    ctx: RunContext[S],
    *,
    name: str = CONFIRM_CHANGES,
    arguments: Mapping[str, JsonValue] | None = None,
) -> str:
    """Stream a call to the app's confirmation tool and leave it to the app; returns its id.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> ask_confirmation(ctx), ctx.pending_tool_call_ids
        ('r-call-1', ['r-call-1'])
        >>> [event.type for event in events.drain()]
        ['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END']
    """
    with ctx.tool_call(name) as call:
        call.args_json(dict(arguments or {}))
        call.end()
    return call.id


def confirmation(ctx: RunContext[S], *, name: str = CONFIRM_CHANGES) -> Confirmation | None:
    """The app's answer to the latest call of `name`, or `None` when the request holds none.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> from agui.messages import AssistantMessage, FunctionCall, ToolCall, ToolMessage
        >>> call = ToolCall(id="c1", function=FunctionCall(name="confirm_changes", arguments="{}"))
        >>> history = [
        ...     AssistantMessage(id="a1", tool_calls=[call]),
        ...     ToolMessage(id="t1", tool_call_id="c1", content='{"accepted": true}'),
        ... ]
        >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r", messages=history))
        >>> confirmation(ctx)
        Confirmation(call_id='c1', accepted=True)
    """
    asked = {
        call.id
        for message in ctx.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
        if call.function.name == name
    }
    for message in reversed(ctx.messages):
        if isinstance(message, UserMessage):
            return None
        if isinstance(message, ToolMessage) and message.tool_call_id in asked:
            return Confirmation(message.tool_call_id, accepted=_verdict(ctx, message, name))
    return None


def _verdict(ctx: RunContext[S], answer: ToolMessage, name: str) -> bool:
    payload = answer_payload(answer)
    if isinstance(payload, dict):
        found = [payload[key] for key in _VERDICTS if key in payload]
        if len(found) == 1 and isinstance(found[0], bool):
            return found[0]
    message = (
        f"the answer to {name} call {answer.tool_call_id!r} is not one agui can read, so the "
        f"change counts as rejected: {str(payload)[:80]!r}; answer with a JSON object holding one "
        'boolean of "accepted", "approved" or "confirmed", such as {"accepted": true}'
    )
    emit_warning(ctx, message, tool_call_id=answer.tool_call_id)
    return False
