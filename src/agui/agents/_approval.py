"""Tool approvals: the interrupt that asks a human, and the answer that settles the call once.

A tool marked `requires_approval` is not run when the model calls it: the call is ended and the
run finishes with an `Interrupt` whose id is `APPROVAL_PREFIX` plus the call id, so a server
that keeps no memory between requests recognises it when the answer comes.

Clients answer in different ways. The official client sends a `resume` entry; CopilotKit first
gives every call left without a result a tool message of its own (an empty string, or its
handler's output) and then sends the `resume` entry, keeping the interrupted run's id; a client
that runs tools itself sends only a tool message. So the next request is read, call by call, in
this order (the agent's memory is the history, so each rule reads the history alone):

1. **Settled.** A tool message whose id is `approval_result_id(call id)` is the agent's own
   answer from an earlier request: the call is settled for good. It is never asked again or run
   again, a resume entry for it is ignored with a warning, and every other tool message for the
   call is dropped from what the model reads.
2. **A resume entry** for the interrupt decides when present, whatever tool message the client
   added: an approval runs the tool (with `editedArgs` when given), a decline or a cancel does
   not.
3. **A tool message** from the client answering the call is read as a resume payload would be
   (`{"approved": true}`).
4. **Neither**: the call is still open, and the run ends with the same interrupt again without
   acting. A call the user moved past (it precedes the last user message) is abandoned.

An answer that cannot be read (a payload that is no object, an `approved` that is no boolean, an
`editedArgs` that is no object, a tool's output, resume entries for one interrupt that disagree)
declines: the tool does not run, the run says so with an `agui.warning`, and the
result says why. The answer is sent as `TOOL_CALL_RESULT` against the original call with the id
of rule 1, so the next request finds the call settled and nothing loops.

The tool loop (`agui.agents.loop`) asks this module which calls of the history wait for an
answer and how to settle them (`settle_approvals`), and how to ask (`interrupt`); an agent
written by hand uses `approval_answer`, `approval_settled` and `approval_result_id`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Literal, TypeVar

from pydantic import JsonValue

from agui._protocol.text import read_json
from agui.agents.tools import BackendTool, Toolbox, ToolResult
from agui.agents.turn import emit_warning
from agui.context import RunContext
from agui.errors import InvalidArguments, InvalidInput
from agui.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agui.types import Interrupt, InterruptOutcome, JsonObject, RunOutcome

__all__ = [
    "APPROVAL_PREFIX",
    "Approval",
    "ApprovalAnswer",
    "answer_payload",
    "approval_answer",
    "approval_interrupt_id",
    "approval_result_id",
    "approval_settled",
    "fits",
    "interrupt",
    "open_approvals",
    "settle_approvals",
]

S = TypeVar("S")
APPROVAL_PREFIX = "approve-"
"""Interrupt ids for tool approvals are this prefix plus the call id."""
_RESULT_SUFFIX = "-result"

Approval = tuple[ToolCall, BackendTool[..., object]]
Verdict = Literal["approved", "declined", "cancelled", "unreadable"]


def approval_interrupt_id(tool_call_id: str) -> str:
    """The id of the interrupt that asks to approve the call `tool_call_id`.

    Examples:
        >>> approval_interrupt_id("r1-call-1")
        'approve-r1-call-1'
    """
    return APPROVAL_PREFIX + tool_call_id


def approval_result_id(tool_call_id: str) -> str:
    """The message id of the agent's answer to the approval of `tool_call_id`, which settles it.

    Derived from the call id (unique in the thread), so the next request recognises the call
    as settled from its history alone.

    Examples:
        >>> approval_result_id("r1-call-1")
        'approve-r1-call-1-result'
    """
    return APPROVAL_PREFIX + tool_call_id + _RESULT_SUFFIX


def approval_settled(history: Sequence[Message], tool_call_id: str) -> bool:
    """Whether the history holds the agent's own answer to the approval of `tool_call_id`.

    Examples:
        >>> from agui.messages import ToolMessage
        >>> answer = ToolMessage(id="approve-c1-result", tool_call_id="c1", content="done")
        >>> approval_settled([answer], "c1"), approval_settled([answer], "c2")
        (True, False)
    """
    settled = approval_result_id(tool_call_id)
    return any(isinstance(m, ToolMessage) and m.id == settled for m in history)


@dataclasses.dataclass(frozen=True)
class ApprovalAnswer:
    """The client's answer to one approval, read from a resume entry or a tool message.

    Examples:
        >>> ApprovalAnswer("approved", "resume", '{"hotel":"Savoy"}').approved
        True
        >>> print(ApprovalAnswer("cancelled", "resume").refusal)
        Error: the user cancelled this call; the tool did not run.
    """

    verdict: Verdict
    """`approved`, `declined`, `cancelled`, or `unreadable` (which declines)."""
    source: Literal["resume", "tool message"]
    """Where the answer came from."""
    arguments: str = ""
    """The edited arguments as JSON text, or "" to run the call with its own."""

    @property
    def approved(self) -> bool:
        """Whether the tool may run."""
        return self.verdict == "approved"

    @property
    def refusal(self) -> str:
        """The error result of a call that may not run, saying why."""
        if self.verdict == "unreadable":
            return (
                f"Error: the answer to this call's approval (a {self.source}) could not be read "
                "as one, so the call was declined; the tool did not run."
            )
        return f"Error: the user {self.verdict} this call; the tool did not run."


def approval_answer(ctx: RunContext[S], tool_call_id: str) -> ApprovalAnswer | None:
    """The client's answer to the approval of a call, or `None` while the call is still open.

    The resume entry for the call's interrupt decides when present; otherwise the last tool
    message the client sent for the call is read as the entry's payload would be. Check
    `approval_settled` first: an answer to a settled call is not to be acted on again.

    Examples:
        >>> from agui import RunAgentInput, RunContext, ResumeEntry
        >>> yes = {"approved": True}
        >>> entry = ResumeEntry(interrupt_id="approve-c1", status="resolved", payload=yes)
        >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r", resume=[entry]))
        >>> approval_answer(ctx, "c1")
        ApprovalAnswer(verdict='approved', source='resume', arguments='')
        >>> approval_answer(ctx, "c2") is None
        True
    """
    try:
        entry = ctx.resume_for(approval_interrupt_id(tool_call_id))
    except InvalidInput:  # answered twice, differently: asked again rather than guessed
        return ApprovalAnswer("unreadable", "resume")
    if entry is not None:
        if entry.status == "cancelled":
            return ApprovalAnswer("cancelled", "resume")
        return _read(entry.payload, "resume")
    settled = approval_result_id(tool_call_id)
    answers = [
        m
        for m in ctx.messages
        if isinstance(m, ToolMessage) and m.tool_call_id == tool_call_id and m.id != settled
    ]
    return _read(answer_payload(answers[-1]), "tool message") if answers else None


def answer_payload(message: ToolMessage) -> JsonValue:
    """What a tool message answering a question says: its JSON, else its text as it is.

    Examples:
        >>> answer_payload(ToolMessage(id="m", tool_call_id="c", content='{"approved": true}'))
        {'approved': True}
    """
    content = message.content
    text = (
        content
        if isinstance(content, str)
        else "".join(part.text for part in content if isinstance(part, TextPart))
    )
    try:
        payload: JsonValue = read_json(text)
    except ValueError:
        return text
    return payload


def _read(payload: JsonValue, source: Literal["resume", "tool message"]) -> ApprovalAnswer:
    if not isinstance(payload, dict) or not isinstance(payload.get("approved"), bool):
        return ApprovalAnswer("unreadable", source)
    if payload["approved"] is False:
        return ApprovalAnswer("declined", source)
    edited = payload.get("editedArgs")
    if edited is None:
        return ApprovalAnswer("approved", source)
    if not isinstance(edited, dict):
        # Running the call as written would ignore the change the person asked for.
        return ApprovalAnswer("unreadable", source)
    return ApprovalAnswer("approved", source, json.dumps(edited, separators=(",", ":")))


async def settle_approvals(
    ctx: RunContext[S], toolbox: Toolbox
) -> list[Message] | InterruptOutcome:
    """The history with answered approvals settled, or the interrupt that is still open."""
    history = _without_superseded(ctx.messages)
    approvals = open_approvals(history, toolbox)
    known = {approval_interrupt_id(call.id) for call, _ in approvals}
    for entry in ctx.resume:
        if entry.interrupt_id not in known:
            message = (
                "ignored a resume entry: no open approval has its interrupt id (the call is "
                "settled, was moved past, or its tool is gone); answer only the interrupts "
                "the last run finished with"
            )
            emit_warning(ctx, message, id=entry.interrupt_id)
    answered = [
        (call, backend, answer)
        for call, backend in approvals
        if (answer := approval_answer(ctx, call.id)) is not None
    ]
    if len(answered) < len(approvals):
        # The protocol forbids acting on an open interrupt the client did not answer.
        return RunOutcome.interrupt(
            [interrupt(call.id, call.function.arguments, tool) for call, tool in approvals]
        )
    for call, backend, answer in answered:
        history = await _settle(ctx, call, backend, answer, history)
    return history


def open_approvals(history: Sequence[Message], toolbox: Toolbox) -> list[Approval]:
    """The approval calls after the last user message that the agent has not settled yet."""
    settled = _settled_calls(history)
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
            if backend is not None and backend.requires_approval and call.id not in settled:
                approvals.append((call, backend))
    return approvals


def _settled_calls(history: Sequence[Message]) -> set[str]:
    return {
        m.tool_call_id
        for m in history
        if isinstance(m, ToolMessage) and m.id == approval_result_id(m.tool_call_id)
    }


def _without_superseded(history: Sequence[Message]) -> list[Message]:
    """The history without the client's tool messages for calls the agent's answer settled."""
    settled = _settled_calls(history)
    return [
        m
        for m in history
        if not isinstance(m, ToolMessage)
        or m.tool_call_id not in settled
        or m.id == approval_result_id(m.tool_call_id)
    ]


async def _settle(
    ctx: RunContext[S],
    call: ToolCall,
    backend: BackendTool[..., object],
    answer: ApprovalAnswer,
    history: list[Message],
) -> list[Message]:
    if answer.approved:
        if answer.arguments:
            edited = FunctionCall(name=call.function.name, arguments=answer.arguments)
            call = call.model_copy(update={"function": edited})
        # Stopped when the run is, as the loop's own tools are: cancelled after the tool's
        # work, the result could no longer be sent, and a retry would run the call again.
        run = backend.run(call.function.arguments, ctx=ctx, call_id=call.id)
        result = await ctx.until_cancelled(run)
    else:
        if answer.verdict == "unreadable":
            interrupt_id = approval_interrupt_id(call.id)
            emit_warning(ctx, _unreadable(ctx, interrupt_id, answer.source), id=interrupt_id)
        result = ToolResult(answer.refusal, ok=False)
    message_id = ctx.tool_result(call.id, result.content, message_id=approval_result_id(call.id))
    settled = ToolMessage(
        id=message_id,
        tool_call_id=call.id,
        content=result.content,
        error=None if result.ok else result.content,
    )
    return _with_result(history, call, settled)


def _unreadable(ctx: RunContext[S], interrupt_id: str, source: str) -> str:
    """Why an answer declined its call, and how to send one the agent can act on."""
    try:
        ctx.resume_for(interrupt_id)
    except InvalidInput:
        return (
            "declined a call: its interrupt has resume entries that disagree; an interrupt "
            "takes one answer; send one entry for it"
        )
    return (
        f"declined a call: its approval answer (a {source}) is unreadable; an answer is an "
        'object with a boolean "approved" and, to change the call, an object "editedArgs"; '
        "send one of that shape"
    )


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
        shown: JsonValue = read_json(arguments or "{}")
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


def _with_result(history: list[Message], call: ToolCall, answer: ToolMessage) -> list[Message]:
    # The client's own tool messages for the call give way to the answer that settles it.
    out = [m for m in history if not (isinstance(m, ToolMessage) and m.tool_call_id == call.id)]
    position = len(out)
    for index, message in enumerate(list(out)):
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
