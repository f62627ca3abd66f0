"""Agents written in other frameworks or served elsewhere, served as agui agents.

Each bridge returns an ordinary agui agent, so `agui.asgi_app`, `agui serve`, `agui.run` and
`agui.testing.collect` serve it unchanged, and its stream gets what every agui run gets: verified
events, one terminal event on every path, blocks closed before an error, coded errors with no
exception text unless the server runs with `debug`, backpressure, and a cancel that stops the
framework's run.

- `from_events(factory, *, mode="repair", raw="drop")`: the generic bridge, over any AG-UI
  adapter's async iterator of `ag_ui.core` events (extra `bridges`).
- `remote(url, *, headers=None)`: the same bridge fed by `agui.client` from another AG-UI
  endpoint, for agents that live in another process, language or environment (extra `client`).
- `pydantic_ai(agent, *, deps=None)`: a pydantic-ai `Agent` (extra `pydantic-ai`).
- `openai_agents(agent, *, runs=None)`: an OpenAI Agents SDK `Agent` (extra `openai-agents`);
  `stream_as_subagent`, the `on_stream` of its agent tools (`Agent.as_tool`), shows each as a
  subagent.
- `langgraph(graph, *, config=None)`: a compiled LangGraph graph with a checkpointer (extra
  `langgraph`).

No framework, and not `ag_ui`, is imported by `import agui.bridges`: `from_events` imports the
official models when a bridge is built, and the others are imported from their modules on first
use, through the module `__getattr__` below (PEP 562), so a process pays only for what it serves.
The rules the generic bridge applies to a foreign stream are in `agui.bridges._relay` and in the
bridges guide.

Examples:
    >>> import agui.bridges
    >>> agui.bridges.__all__
    ['BridgeMode', 'EventBridge', 'EventFactory', 'RawEvents', 'RemoteAgent', 'foreign_input',
     'from_events', 'langgraph', 'openai_agents', 'pydantic_ai', 'remote', 'stream_as_subagent']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from agui.bridges._bridge import (
    BridgeMode,
    EventBridge,
    EventFactory,
    RawEvents,
    foreign_input,
    from_events,
)

if TYPE_CHECKING:
    from agui.bridges._langgraph import langgraph
    from agui.bridges._openai_agents import openai_agents
    from agui.bridges._openai_subagents import stream_as_subagent
    from agui.bridges._pydantic_ai import pydantic_ai
    from agui.bridges._remote import RemoteAgent, remote

__all__ = [
    "BridgeMode",
    "EventBridge",
    "EventFactory",
    "RawEvents",
    "RemoteAgent",
    "foreign_input",
    "from_events",
    "langgraph",
    "openai_agents",
    "pydantic_ai",
    "remote",
    "stream_as_subagent",
]

# name -> the private module that defines it (and imports its framework, or the client).
_LAZY: dict[str, str] = {
    "RemoteAgent": "agui.bridges._remote",
    "langgraph": "agui.bridges._langgraph",
    "openai_agents": "agui.bridges._openai_agents",
    "pydantic_ai": "agui.bridges._pydantic_ai",
    "remote": "agui.bridges._remote",
    "stream_as_subagent": "agui.bridges._openai_subagents",
}


def __getattr__(name: str) -> object:
    """Import a bridge, and so its framework, on first use, and keep it."""
    try:
        module_name = _LAZY[name]
    except KeyError:
        message = f"module 'agui.bridges' has no attribute {name!r}"
        raise AttributeError(message) from None
    value: object = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
