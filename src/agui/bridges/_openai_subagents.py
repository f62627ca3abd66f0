"""Agents used as tools (`Agent.as_tool`), shown as subagents: every event of theirs attributed.

An agent tool runs its agent in a run of its own, whose events never reach the outer stream:
the SDK hands them to the tool's `on_stream` callback only. `stream_as_subagent` is that
callback. Under the bridge, the first event of a call opens a subagent of the run
(`ctx.subagent(agent name)`: `SUBAGENT_STARTED`), its events map onto the subagent's own run
context as the outer run's do onto the run's (`AgentStream`: its messages, reasoning, tool calls
and results, a step per agent), and the call's output, when the outer stream brings it, finishes
the subagent with that output as its result, before the call's `TOOL_CALL_RESULT`; a run that
fails first ends each subagent still open with `SUBAGENT_ERROR`.

The callback finds the run it belongs to through a context variable the bridge sets while it
starts the SDK's run: the SDK runs the agent, its tools and their callbacks in tasks started
from there, which copy the context. Outside the bridge, the callback does nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from contextvars import ContextVar

from agents import AgentToolStreamEvent
from agents.items import RunItem
from pydantic import JsonValue

from agui.bridges._openai_responses import AgentStream, call_output
from agui.context import RunContext
from agui.handles import SubagentHandle

__all__ = ["Subagents", "stream_as_subagent"]


class Subagents:
    """The subagents of one run, one per agent tool's call, open until the call's output.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with Subagents(ctx).current():
        ...     _RUN.get() is not None
        True
    """

    def __init__(self, ctx: RunContext[JsonValue]) -> None:
        self._ctx = ctx
        self._open: dict[str, tuple[SubagentHandle[JsonValue, RunContext[JsonValue]], AgentStream]]
        self._open = {}

    @contextlib.contextmanager
    def current(self) -> Generator[None, None, None]:
        """Make these the subagents `stream_as_subagent` reaches, within the block."""
        token = _RUN.set(self)
        try:
            yield
        finally:
            _RUN.reset(token)

    def take(self, event: AgentToolStreamEvent) -> None:
        """Map one event of an agent tool's run onto its call's subagent, opened on the first."""
        call = event["tool_call"]
        key = "" if call is None else call.call_id
        lane = self._open.get(key)
        if lane is None:
            handle = self._ctx.subagent(event["agent"].name)
            lane = self._open[key] = (handle, AgentStream(handle.context))
        lane[1].take(event["event"])

    def finish(self, item: RunItem) -> None:
        """End the subagent of the call `item` is the output of, if it has one."""
        found = call_output(item)
        lane = None if found is None else self._open.pop(found[0], None)
        if found is not None and lane is not None:
            handle, stream = lane
            stream.next_step(None)
            handle.finish(result=found[1])

    def fail(self, error: BaseException) -> None:
        """End each subagent still open with `SUBAGENT_ERROR`: the run failed with `error`."""
        for handle, _ in self._open.values():
            handle.__exit__(type(error), error, error.__traceback__)
        self._open.clear()


_RUN: ContextVar[Subagents | None] = ContextVar("agui_openai_subagents", default=None)


def stream_as_subagent(event: AgentToolStreamEvent) -> None:
    """Show an agent tool's run as a subagent of the bridge's run: pass it as its `on_stream`.

    Examples:
        >>> import asyncio
        >>> from agents import Agent
        >>> from agents.testing import ScriptedModel, assistant_message, function_call
        >>> from agui import RunAgentInput
        >>> from agui.bridges import openai_agents
        >>> from agui.testing import collect
        >>> scout = Agent(name="scout", model=ScriptedModel([[assistant_message("Lisbon.")]]))
        >>> lead = Agent(
        ...     name="lead",
        ...     model=ScriptedModel([[function_call("scout", {"input": "Where?"}, call_id="c1")],
        ...                          [assistant_message("Lisbon it is.")]]),
        ...     tools=[scout.as_tool("scout", "Finds a city.", on_stream=stream_as_subagent)],
        ... )
        >>> given = RunAgentInput(thread_id="t", run_id="r")
        >>> events = asyncio.run(collect(openai_agents(lead), given))
        >>> [e.type for e in events if e.type.startswith("SUBAGENT")]
        ['SUBAGENT_STARTED', 'SUBAGENT_FINISHED']
    """
    run = _RUN.get()
    if run is not None:
        run.take(event)
