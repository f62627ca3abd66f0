"""A pydantic-ai agent served by agui: a shopping list kept in the app's state.

Serve it with either of these, from the repository root (Python 3.11 or later, with the
`pydantic-ai` extra):

    agui serve examples/bridges/pydantic_ai_app.py:agent
    uvicorn examples.bridges.pydantic_ai_app:app

and talk to it with `agui watch http://127.0.0.1:8000/ -m "add milk"`.

The agent is plain pydantic-ai: a `StateDeps` state, one tool that changes it, and one that asks
the user first (`requires_approval=True`). agui adds what pydantic-ai's own adapter does not
have: each change reaches the app as a `STATE_DELTA`, the approval is an interrupt the app
answers in `resume[]`, errors are coded and never show a tool's exception text, and a client
that leaves stops the model. The model here is a scripted stand-in, so the example runs with no
key: swap `SCRIPTED` for any pydantic-ai model, such as `"openai:gpt-4o-mini"`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.ui import StateDeps

import agui
from agui.bridges import pydantic_ai


class ShoppingList(BaseModel):
    """The app's state: what to buy."""

    items: list[str] = []


async def scripted(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """A stand-in model: "add X" calls `add_item`, "clear" calls `clear_list`."""
    del info
    last = messages[-1].parts[-1] if isinstance(messages[-1], ModelRequest) else None
    if isinstance(last, ToolReturnPart):
        yield str(last.content)
        return
    text = last.content if isinstance(last, UserPromptPart) else ""
    command = text.strip().lower() if isinstance(text, str) else ""
    if command.startswith("add "):
        item = command.removeprefix("add ").strip()
        yield {0: DeltaToolCall(name="add_item", json_args=f'{{"item": "{item}"}}')}
    elif command == "clear":
        yield {0: DeltaToolCall(name="clear_list", json_args="{}")}
    else:
        yield "Say 'add <item>' or 'clear'."


SCRIPTED = FunctionModel(stream_function=scripted, model_name="scripted")

shopper = Agent(SCRIPTED, deps_type=StateDeps[ShoppingList])


@shopper.tool
def add_item(ctx: RunContext[StateDeps[ShoppingList]], item: str) -> str:
    """Put `item` on the shopping list."""
    ctx.deps.state.items.append(item)
    return f"Added {item}; the list has {len(ctx.deps.state.items)} items."


@shopper.tool(requires_approval=True)
def clear_list(ctx: RunContext[StateDeps[ShoppingList]]) -> str:
    """Empty the shopping list (the user approves first)."""
    ctx.deps.state.items.clear()
    return "Cleared the list."


agent = pydantic_ai(shopper, deps=StateDeps(ShoppingList()))
"""The agui agent: `agui serve` serves it, `agui.run` and `agui.testing.collect` drive it."""

app = agui.asgi_app(agent)
