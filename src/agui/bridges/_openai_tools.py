"""The client's tools (`RunAgentInput.tools`) as Agents SDK function tools the app runs.

A client tool is one the app runs, in the browser or wherever the client is: the model may call
it like any other, but its result comes in the next run, as a tool message. So its SDK tool runs
nothing: it notes the call as the client's and asks the SDK's run to stop once the turn is over
(`cancel(mode="after_turn")`), so the calls of the same response that are the agent's own still
run and the model is not called again. The call, streamed like any other, is left without a
result, which the driver reports as pending (`pendingToolCallIds`); the next run's history holds
the app's answer, which reaches the model as the call's output.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence

from agents import FunctionTool, Tool
from agents.result import RunResultStreaming
from agents.tool_context import ToolContext
from pydantic import JsonValue

from agui.types import Tool as ClientTool

__all__ = ["ClientCalls"]

_log = logging.getLogger("agui")
_ANY_OBJECT: dict[str, JsonValue] = {"type": "object", "properties": {}}


class ClientCalls:
    """The client's tools for one run, and the calls of them the model made.

    Examples:
        >>> from agui.types import Tool
        >>> calls = ClientCalls()
        >>> [tool.name for tool in calls.tools([Tool(name="confirm", description="Ask")], [])]
        ['confirm']
        >>> calls.made
        set()
    """

    def __init__(self) -> None:
        self._stop: Callable[[], None] = lambda: None
        self.made: set[str] = set()
        """The ids of the calls of client tools: theirs to answer, with no result here."""

    def stopping(self, result: RunResultStreaming) -> None:
        """Stop `result`, the run the tools are offered to, once a turn calls one of them."""
        self._stop = functools.partial(result.cancel, mode="after_turn")

    def tools(self, offered: Sequence[ClientTool], own: Sequence[Tool]) -> list[FunctionTool]:
        """A function tool per client tool; one named as one of the agent's own is left out."""
        names = {tool.name for tool in own}
        tools: list[FunctionTool] = []
        for tool in offered:
            if tool.name in names:
                _log.warning(
                    "the client's tool %r is not offered: the agent has a tool of that name",
                    tool.name,
                )
                continue
            parameters = tool.parameters if isinstance(tool.parameters, dict) else _ANY_OBJECT
            tools.append(
                FunctionTool(
                    name=tool.name,
                    description=tool.description,
                    params_json_schema=dict(parameters),
                    on_invoke_tool=self._leave,
                    strict_json_schema=False,
                )
            )
        return tools

    async def _leave(self, context: ToolContext[object], arguments: str) -> str:
        """Leave the call to the client, and stop the run once this turn is over."""
        del arguments  # streamed already, as the call's TOOL_CALL_ARGS
        self.made.add(context.tool_call_id)
        self._stop()
        return ""  # never shown: the client's answer is the call's result
