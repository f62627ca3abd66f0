"""An OpenAI Agents SDK agent served by agui: a front desk that hands off to its booking desk.

Serve it with either of these, from the repository root (with the `openai-agents` extra):

    agui serve examples/bridges/openai_agents_app.py:agent
    uvicorn examples.bridges.openai_agents_app:app

and talk to it with `agui watch http://127.0.0.1:8000/ -m "hotels in Lisbon"`.

The agents are plain Agents SDK agents: a front desk that hands every request off to the
booking desk, which looks hotels up and books one only once the user approves
(`needs_approval=True`). agui serves them with what the SDK has no AG-UI support for at all:
each agent's turn is a step, tool calls stream with their arguments and results, the approval
is an interrupt the app answers in `resume[]` (the paused run is kept per thread in a run log:
this process's here; served with `--runs redis://...`, or `asgi_app(agent, runs=RedisRunLog(...))`,
in the endpoint's, and any worker resumes it),
errors are coded, and a client that leaves cancels the run. The model here is a scripted
stand-in, so the example runs with no key: give the agents any Agents SDK model instead, such
as `"gpt-4.1-mini"`.
"""

from __future__ import annotations

import itertools
from typing import cast

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.testing.model import ModelStepResult

import agui
from agui.bridges import openai_agents

HOTELS = {"lisbon": ["Lumen", "Aurora"], "porto": ["Ribeira"]}
_numbers = itertools.count(1)


@function_tool
def find_hotels(city: str) -> str:
    """The hotels with rooms free in `city`."""
    found = HOTELS.get(city.strip().lower(), [])
    return ", ".join(found) if found else f"no hotels in {city}"


@function_tool(needs_approval=True)
def book(hotel: str) -> str:
    """Book a room at `hotel` (the user approves first)."""
    return f"Booked a room at {hotel}."


def _fields(call: ModelCall) -> list[dict[str, object]]:
    """The call's input items that are plain dicts (the history and the tools' outputs)."""
    given: object = call.input
    items = cast("list[object]", given) if isinstance(given, list) else []
    return [cast("dict[str, object]", item) for item in items if isinstance(item, dict)]


def _reply(call: ModelCall) -> ModelStepResult:
    """A stand-in model: hand off, look up, book, or say what a tool answered."""
    model.enqueue(ModelStep.respond(_reply))  # one step for each next call
    number = next(_numbers)
    if call.handoffs:
        return [function_call("transfer_to_booking_desk", {}, call_id=f"call-{number}")]
    items = _fields(call)
    last = items[-1] if items else {}
    if last.get("type") == "function_call_output" and not str(last["output"]).startswith("{"):
        return [assistant_message(str(last["output"]), item_id=f"msg-{number}")]
    said = [str(item["content"]) for item in items if item.get("role") == "user"]
    text = said[-1].strip() if said else ""
    if text.lower().startswith("book "):
        hotel = text[len("book ") :].strip()
        return [function_call("book", {"hotel": hotel}, call_id=f"call-{number}")]
    city = text.lower().removeprefix("hotels in ").strip()
    return [function_call("find_hotels", {"city": city}, call_id=f"call-{number}")]


model = ScriptedModel([ModelStep.respond(_reply)])
set_tracing_disabled(disabled=True)  # the SDK sends traces to OpenAI; a stand-in has none to send

booking_desk = Agent(name="booking desk", model=model, tools=[find_hotels, book])
front_desk = Agent(name="front desk", model=model, handoffs=[booking_desk])

agent = openai_agents(front_desk)
"""The agui agent: `agui serve` serves it, `agui.run` and `agui.testing.collect` drive it."""

app = agui.asgi_app(agent)
