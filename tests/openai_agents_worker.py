"""A worker process of the OpenAI Agents bridge's tests: a desk that books once approved.

Run as `python openai_agents_worker.py REDIS_URL LEASE`, it serves the bridge over an Agents SDK
agent with uvicorn on a free port of 127.0.0.1, on a `RedisRunLog` (where the bridge keeps its
paused runs too: the log the endpoint serves it from), prints `port N` once listening, and runs
until stopped: one worker of several, so an approval asked on one is answered on another.
`Bearer alice-token` is Alice; the tool says which process booked, and the scripted model
repeats what the tool said.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Mapping
from typing import cast

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.testing.model import ModelStepResult

import agui
from agui.bridges import openai_agents
from agui.runs import RedisRunLog
from durable_worker import serve


@function_tool(needs_approval=True)
def book(hotel: str) -> str:
    """Book a room at `hotel` (the user approves first)."""
    return f"booked {hotel} in process {os.getpid()}"


def reply(call: ModelCall) -> ModelStepResult:
    """Ask to book; once the tool answered, say what it said."""
    model.enqueue(ModelStep.respond(reply))
    sent: object = call.input
    given = cast("list[object]", sent) if isinstance(sent, list) else []
    last = cast("dict[str, object]", given[-1]) if given and isinstance(given[-1], dict) else {}
    if last.get("type") == "function_call_output":
        return [assistant_message(str(last.get("output")), item_id=f"msg-{uuid.uuid4().hex}")]
    return [function_call("book", {"hotel": "Lumen"}, call_id=f"call-{uuid.uuid4().hex}")]


model = ScriptedModel([ModelStep.respond(reply)])


def authorize(headers: Mapping[str, str]) -> str | bool:
    return "alice" if headers.get("authorization") == "Bearer alice-token" else False


def main() -> None:
    set_tracing_disabled(disabled=True)
    url, lease = sys.argv[1], float(sys.argv[2])
    log = RedisRunLog(url, lease=lease)
    agent = openai_agents(Agent(name="desk", model=model, tools=[book]))
    serve(agui.asgi_app(agent, runs=log, authorize=authorize))


if __name__ == "__main__":
    main()
