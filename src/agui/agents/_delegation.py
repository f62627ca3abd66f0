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
answered through a tool result; its invocation ends suspended, and the model is told so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from pydantic import Field

from agui._text import json_text
from agui.agents.tools import BackendTool
from agui.context import RunContext
from agui.handles import RunsIn
from agui.types import RunOutcome

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
        done = await handle.run(agent)
        if done.error is not None:
            return f"Error: the {name} failed ({done.error})"
        if done.suspended:
            return f"The {name} stopped to wait for an answer from the user."
        result = done.result
        if result is None:
            return f"The {name} gave no answer."
        return result if isinstance(result, str) else json_text(result)

    return BackendTool(delegate, name=tool_name or f"ask_{name}", description=description)
