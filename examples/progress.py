"""A background task reported as it runs: one activity message the agent keeps up to date.

The agent builds a report in three steps. The app sees one `background-task` activity message
(the shape the AG-UI dojo's background-agents page renders: task id, tool name, status,
arguments, result, elapsed time, plus the steps): its snapshot when the task starts, then one
small JSON Patch per finished step and one for the result. Serve it with:

    agui serve examples/progress.py:agent

and watch it with `agui watch http://127.0.0.1:8000/ -m "Build the Q3 report" --raw`.
"""

from __future__ import annotations

import asyncio
import time
from typing import cast

from pydantic import JsonValue

import agui

STEPS = ("Collect the sales figures", "Compute the totals", "Draw the chart")
STEP_SECONDS = 0.3
"""How long each step pretends to work."""


async def agent(ctx: agui.RunContext[object]) -> None:
    """Run the report task, publishing its progress after every step."""
    started = time.monotonic()
    task = ctx.activity(
        "background-task",
        {
            "taskId": f"{ctx.run_id}-report",
            "toolName": "build_report",
            "status": "running",
            "args": {"quarter": "Q3"},
            "steps": [{"title": title, "status": "pending"} for title in STEPS],
            "result": None,
            "elapsedMs": 0,
        },
    )
    # The activity keeps its own copy of the content: change that one, then publish.
    for step in cast("list[dict[str, JsonValue]]", task.content["steps"]):
        await asyncio.sleep(STEP_SECONDS)
        step["status"] = "completed"
        task.content["elapsedMs"] = round((time.monotonic() - started) * 1000)
        task.publish()
    task.content.update(status="completed", result={"total": 1250, "chart": "q3.png"})
    task.publish()
    ctx.say("The Q3 report is ready: 1,250 units sold.")


app = agui.asgi_app(agent)
