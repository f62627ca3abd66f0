"""Agents built from parts: backend tools, tool-call dispatch, the tool loop and its models.

The run core (`agui.RunContext` and its handles) knows nothing of models or tools; this layer
sits on top of it, and nothing below the HTTP layer imports it. `ToolLoopAgent`
(`agui.agents.loop`) asks a `ChatModel` (`agui.agents.models`) for a turn, reads the turn through
a dispatcher (`agui.agents.dispatch`: native tool calls, or calls written as XML in the text)
that streams its text and reasoning with a turn writer (`agui.agents.turn`), runs the backend
tools (`agui.agents.tools`) and asks again. Tools marked `requires_approval` interrupt the run
instead, and the next request's answer settles them.

Examples:
    >>> from agui.agents import tool
    >>> @tool
    ... def get_time(city: str) -> str:
    ...     '''The local time in a city.'''
    ...     return "12:00"
    >>> get_time.spec.name
    'get_time'
"""

from __future__ import annotations

from agui.agents._delegation import subagent_tool
from agui.agents.loop import ToolLoopAgent
from agui.agents.tools import BackendTool, Toolbox, tool

__all__ = ["BackendTool", "ToolLoopAgent", "Toolbox", "subagent_tool", "tool"]
