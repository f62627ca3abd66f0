"""Agents written in other frameworks, served as agui agents.

Each bridge takes a framework's agent and returns an ordinary agui agent, so `agui.asgi_app`,
`agui serve`, `agui.run` and `agui.testing.collect` serve it unchanged, and its stream gets what
every agui run gets: verified events, one terminal event on every path, blocks closed before an
error, coded errors with no exception text unless the server runs with `debug`, backpressure,
and a cancel that stops the framework's run.

- `pydantic_ai(agent, *, deps=None)`: a pydantic-ai `Agent` (extra `pydantic-ai`).
- `openai_agents(agent, *, states=None)`: an OpenAI Agents SDK `Agent` (extra `openai-agents`).

No framework is imported by `import agui.bridges`: each bridge is imported from its module on
first use, through the module `__getattr__` below (PEP 562), so a process pays only for the
framework it serves.

Examples:
    >>> import agui.bridges
    >>> agui.bridges.__all__
    ['openai_agents', 'pydantic_ai']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agui.bridges._openai_agents import openai_agents
    from agui.bridges._pydantic_ai import pydantic_ai

__all__ = ["openai_agents", "pydantic_ai"]

# name -> the private module that defines it (and imports its framework).
_LAZY: dict[str, str] = {
    "openai_agents": "agui.bridges._openai_agents",
    "pydantic_ai": "agui.bridges._pydantic_ai",
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
