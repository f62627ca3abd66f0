"""Delegation as a tool: a supervisor's model hands a question to another agent.

A multi-agent app is often one model that decides who should answer: a supervisor with a
researcher, a coder, a critic. `subagent_tool` makes any agui agent (a `ToolLoopAgent` with its
own model, tools and instructions included) a backend tool the supervisor's tool loop offers:
the model calls it with a task, the agent runs as a subagent inside that call (its
`SUBAGENT_STARTED` names the call as its `parentToolCallId`, and every event it sends carries
its `subagentRunId`), and its answer is the call's result, which the supervisor's model reads.

A failing subagent does not fail the supervisor's run: its invocation ends with
`SUBAGENT_ERROR`, and the model reads that the delegation failed (with the error's code,
never its text), as it reads any tool's failure. A subagent that stops on interrupts cannot be
answered: the task it was given is all it sees, never a resume. So a call it stopped on is
answered with an error result in its invocation (left open, it would read to the client as one
for the client to run), the app is warned (`agui.warning`), and the supervisor's model reads
what the subagent could not do, so it can tell the user or find another way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar, cast

from pydantic import Field

from agui._protocol.text import json_text
from agui.agents.tools import BackendTool
from agui.agents.turn import emit_warning
from agui.context import RunContext
from agui.handles import RunsIn
from agui.types import Interrupt, InterruptOutcome, RunOutcome

__all__ = ["subagent_tool"]

S = TypeVar("S")

SubagentAgent = Callable[[RunContext[S]], Awaitable[RunOutcome | None]] | RunsIn[RunContext[S]]
"""What `subagent_tool` runs: an `async def agent(ctx)` or an object with an async `run(ctx)`."""


def subagent_tool(
    agent: SubagentAgent[S],
    *,
    name: str,
    description: str,
    tool_name: str | None = None,
) -> BackendTool[..., Awaitable[str]]:
    """A backend tool that runs `agent` as the subagent `name` on the task the model gives.

    The tool is called `tool_name` (by default `ask_<name>`) and `description` tells the model
    what the subagent is good for (it is also the `SUBAGENT_STARTED` description).

    Examples:
        >>> from agui.agents.models import ScriptedModel, Turn
        >>> from agui.agents import ToolLoopAgent
        >>> researcher = ToolLoopAgent(ScriptedModel([Turn.text("Paris.")]))
        >>> ask = subagent_tool(researcher, name="researcher", description="Finds facts.")
        >>> ask.spec.name, sorted(ask.spec.parameters["properties"])
        ('ask_researcher', ['task'])
    """

    async def delegate(
        ctx: RunContext[S],
        task: Annotated[str, Field(description="The question or task, in full")],
    ) -> str:
        handle = ctx.subagent(name, description=description, task=task, contain=True)
        stopped: list[Interrupt] = []
        done = await handle.run(_unsuspended(agent, stopped))
        if done.error is not None:
            return f"Error: the {name} failed ({done.error})"
        if stopped:
            return _stopped_text(name, stopped)
        result = done.result
        if result is None:
            return f"The {name} gave no answer."
        return result if isinstance(result, str) else json_text(result)

    return BackendTool(delegate, name=tool_name or f"ask_{name}", description=description)


def _unsuspended(agent: SubagentAgent[S], stopped: list[Interrupt]) -> SubagentAgent[S]:
    """`agent`, whose interrupts, which nobody can answer here, end it instead of suspending it.

    Each call an interrupt names gets an error result, so the invocation leaves no call open.
    """
    method = getattr(agent, "run", None)
    runs = cast("_Run[S]", method if callable(method) else agent)

    async def run(ctx: RunContext[S]) -> None:
        outcome = await runs(ctx)
        if not isinstance(outcome, InterruptOutcome):
            return
        stopped.extend(outcome.interrupts)
        for interrupt in outcome.interrupts:
            emit_warning(ctx, _UNANSWERABLE, interrupt=interrupt.id)
            call = interrupt.tool_call_id
            if call is not None and call in ctx.pending_tool_call_ids:
                ctx.tool_result(call, _NOT_RUN)

    return run


_Run = Callable[[RunContext[S]], Awaitable[RunOutcome | None]]
_UNANSWERABLE = (
    "a delegated subagent stopped on an interrupt nobody can answer inside its task; it was "
    "ended instead"
)


_NOT_RUN = (
    "Error: this call needs the user's answer (an approval), which cannot be asked for inside a "
    "delegated task; it did not run"
)


def _stopped_text(name: str, stopped: list[Interrupt]) -> str:
    """What the supervisor's model reads of a subagent that stopped on interrupts."""
    asked = "; ".join(interrupt.message or interrupt.reason for interrupt in stopped)
    return (
        f"The {name} could not finish: it needed the user's answer ({asked}), which it cannot "
        "ask for inside a delegated task, so that step did not run. Tell the user, or do it "
        "another way."
    )
