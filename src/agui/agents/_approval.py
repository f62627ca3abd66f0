"""Tool approvals: the interrupt that asks a human, and the answer that settles it.

A tool marked `requires_approval` is not run when the model calls it: the call is ended and the
run finishes with an `Interrupt` whose id is `APPROVAL_PREFIX` plus the call id, so a server
that keeps no memory between requests recognises it when the answer comes. The next request
carries the history (which holds the call) and a `ResumeEntry`: an approval runs the tool (with
`editedArgs` when given), a decline or a cancel gives an error result; either is sent as
`TOOL_CALL_RESULT` against the original call id. An approval call after the last user message
with neither a result nor a resume entry is still open, and the run ends with the same
interrupt again without acting; one the user moved past is abandoned.

The tool loop (`agui.agents.loop`) asks this module two things: which calls of the history are
waiting for an answer and how to settle them (`settle_approvals`), and how to ask (`interrupt`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeVar

from pydantic import JsonValue

from agui.agents.tools import BackendTool, Toolbox, ToolResult
from agui.agents.turn import emit_warning
from agui.context import RunContext
from agui.errors import InvalidArguments
from agui.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agui.types import Interrupt, InterruptOutcome, JsonObject, ResumeEntry, RunOutcome

__all__ = [
    "APPROVAL_PREFIX",
    "Approval",
    "approval_interrupt_id",
    "fits",
    "interrupt",
    "open_approvals",
    "settle_approvals",
]

S = TypeVar("S")
APPROVAL_PREFIX = "approve-"
"""Interrupt ids for tool approvals are this prefix plus the call id."""

Approval = tuple[ToolCall, BackendTool[..., object]]


def approval_interrupt_id(tool_call_id: str) -> str:
    """The id of the interrupt that asks to approve the call `tool_call_id`.

    Examples:
        >>> approval_interrupt_id("r1-call-1")
        'approve-r1-call-1'
    """
    return APPROVAL_PREFIX + tool_call_id


async def settle_approvals(
    ctx: RunContext[S], toolbox: Toolbox
) -> list[Message] | InterruptOutcome:
    """The history with answered approvals settled, or the interrupt that is still open."""
    history: list[Message] = list(ctx.messages)
    approvals = open_approvals(history, toolbox)
    known = {approval_interrupt_id(call.id) for call, _ in approvals}
    for entry in ctx.resume:
        if entry.interrupt_id not in known:
            message = "ignored a resume entry for no open interrupt"
            emit_warning(ctx, message, id=entry.interrupt_id)
    if any(ctx.resume_for(approval_interrupt_id(call.id)) is None for call, _ in approvals):
        # The protocol forbids acting on an open interrupt the client did not answer.
        return RunOutcome.interrupt(
            [interrupt(call.id, call.function.arguments, tool) for call, tool in approvals]
        )
    for call, backend in approvals:
        history = await _settle(ctx, call, backend, history)
    return history


def open_approvals(history: Sequence[Message], toolbox: Toolbox) -> list[Approval]:
    """The approval calls after the last user message that no tool message answers yet."""
    answered = {message.tool_call_id for message in history if isinstance(message, ToolMessage)}
    last_user = max(
        (index for index, message in enumerate(history) if isinstance(message, UserMessage)),
        default=-1,
    )
    approvals: list[Approval] = []
    for message in history[last_user + 1 :]:
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls or ():
            backend = toolbox.get(call.function.name)
            if backend is not None and backend.requires_approval and call.id not in answered:
                approvals.append((call, backend))
    return approvals


async def _settle(
    ctx: RunContext[S],
    call: ToolCall,
    backend: BackendTool[..., object],
    history: list[Message],
) -> list[Message]:
    entry = ctx.resume_for(approval_interrupt_id(call.id))
    arguments = _approved_arguments(entry)
    if arguments is None:
        verb = "cancelled" if entry is not None and entry.status == "cancelled" else "declined"
        result = ToolResult(f"Error: the user {verb} this call; the tool did not run.", ok=False)
    else:
        if arguments:
            call = call.model_copy(
                update={"function": FunctionCall(name=call.function.name, arguments=arguments)}
            )
        result = await backend.run(call.function.arguments, ctx=ctx, call_id=call.id)
    message_id = ctx.tool_result(call.id, result.content)
    answer = ToolMessage(
        id=message_id,
        tool_call_id=call.id,
        content=result.content,
        error=None if result.ok else result.content,
    )
    return _with_result(history, call, answer)


def fits(backend: BackendTool[..., object], arguments: str) -> bool:
    """Whether the tool accepts `arguments`; ones it refuses go back to the model, not a human."""
    try:
        backend.validate(arguments)
    except InvalidArguments:
        return False
    return True


def interrupt(call_id: str, arguments: str, backend: BackendTool[..., object]) -> Interrupt:
    """The interrupt that asks to run one call, with a schema for the answer (and edits)."""
    try:
        shown: JsonValue = json.loads(arguments or "{}")
    except ValueError:
        shown = arguments
    return Interrupt(
        id=approval_interrupt_id(call_id),
        reason="tool_call",
        tool_call_id=call_id,
        message=f"Allow the tool {backend.name!r} to run with {json.dumps(shown)}?",
        response_schema=_approval_schema(backend),
        metadata={"toolName": backend.name, "arguments": shown},
    )


def _approval_schema(backend: BackendTool[..., object]) -> JsonObject:
    edited: JsonObject = dict(backend.parameters)
    definitions = edited.pop("$defs", None)
    edited["description"] = "Arguments to run the tool with instead (they replace all of them)."
    schema: JsonObject = {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "description": "Whether the tool may run."},
            "editedArgs": edited,
        },
        "required": ["approved"],
    }
    if definitions is not None:
        schema["$defs"] = definitions  # kept at the root, where the `$ref`s point
    return schema


def _approved_arguments(entry: ResumeEntry | None) -> str | None:
    """`None` unless approved; then the edited arguments as JSON text, or "" to keep them."""
    if entry is None or entry.status != "resolved" or not isinstance(entry.payload, dict):
        return None
    if entry.payload.get("approved") is not True:
        return None
    edited = entry.payload.get("editedArgs")
    return json.dumps(edited, separators=(",", ":")) if isinstance(edited, dict) else ""


def _with_result(history: list[Message], call: ToolCall, answer: ToolMessage) -> list[Message]:
    out = list(history)
    position = len(out)
    for index, message in enumerate(history):
        calls = message.tool_calls or [] if isinstance(message, AssistantMessage) else []
        if any(held.id == call.id for held in calls):
            # The model should see the call as it ran, with the arguments a human may have edited.
            edited = [call if held.id == call.id else held for held in calls]
            out[index] = message.model_copy(update={"tool_calls": edited})
            position = index + 1
            while position < len(out) and isinstance(out[position], ToolMessage):
                position += 1
    out.insert(position, answer)
    return out
