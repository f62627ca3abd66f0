"""Agents built from parts: backend tools, tool-call dispatch, the tool loop and its models.

The run core (`agui.RunContext` and its handles) knows nothing of models or tools; this layer
sits on top of it. `ToolLoopAgent` asks a `ChatModel` (`agui.agents.models`) for a turn, writes
the turn through a dispatcher (`agui.agents.dispatch`: native tool calls, or calls written as
XML in the text), runs the backend tools (`agui.agents.tools`) and asks again.
"""

from __future__ import annotations

from agui.agents.loop import ToolLoopAgent
from agui.agents.tools import BackendTool, Toolbox, tool

__all__ = ["BackendTool", "ToolLoopAgent", "Toolbox", "tool"]
