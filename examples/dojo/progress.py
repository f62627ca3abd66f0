"""The dojo's agentic generative UI page: a plan whose steps turn completed as the agent works.

The page renders the state's `steps: [{description, status: "pending" | "completed"}]` as a
progress card. The agent's `generate_task_steps` tool publishes the plan with every step pending
(a `STATE_SNAPSHOT`), then marks the steps completed one at a time, each change a small
`STATE_DELTA` sent while the tool's call is open; then the agent says it is done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from agui import RunContext
from agui.agents import ToolLoopAgent, tool
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from examples.dojo.frontend import plan_steps
from examples.dojo.models import answered, build_model, last_user_text

STEP_SECONDS = 0.05
"""How long each step of the plan takes."""
INSTRUCTIONS = (
    "You carry out plans. For any task call generate_task_steps once with 5 to 10 short "
    "imperative steps; it works through them and shows the progress. Then say in one sentence "
    "that the task is done."
)


class Step(BaseModel):
    """One step of the plan, as the progress card reads it."""

    description: str
    status: Literal["pending", "completed"] = "pending"


class Plan(BaseModel):
    """The page's state: the plan's steps."""

    steps: list[Step] = Field(default_factory=list[Step])


@tool
async def generate_task_steps(ctx: RunContext[Plan], steps: list[Step]) -> str:
    """Work through the steps of a plan, showing each one completed as it is done."""
    ctx.state.steps = [Step(description=step.description) for step in steps]
    ctx.publish_state()
    for step in ctx.state.steps:
        await asyncio.sleep(STEP_SECONDS)
        step.status = "completed"
        ctx.publish_state()
    return f"All {len(steps)} steps are completed."


def progress_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted worker: a plan for the task, then a sentence once it is done.

    Examples:
        >>> turn = progress_turn([ChatMessage.user("Go to Mars")])
        >>> turn.calls[0].arguments["steps"][0]
        {'description': 'Research Go to Mars', 'status': 'pending'}
    """
    if answered(messages) is not None:
        return Turn.text("Done: every step is completed.")
    task = last_user_text(messages).strip().rstrip(".!?") or "the task"
    steps: list[JsonValue] = [
        {"description": step, "status": "pending"} for step in plan_steps(task)
    ]
    return Turn.tool_calls(Call("generate_task_steps", {"steps": steps}))


def agentic_generative_ui(model: ChatModel | None = None) -> ToolLoopAgent:
    """The agentic generative UI route's agent.

    Examples:
        >>> [spec.name for spec in agentic_generative_ui().toolbox.specs()]
        ['generate_task_steps']
    """
    return ToolLoopAgent(
        model or build_model(progress_turn), tools=[generate_task_steps], instructions=INSTRUCTIONS
    )
