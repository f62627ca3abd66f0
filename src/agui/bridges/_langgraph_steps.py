"""The graph's nodes as agui steps, from what `astream(stream_mode="tasks")` yields.

A node's task starting is `STEP_STARTED` named for the node, its end `STEP_FINISHED`. Nodes in
one step of the graph run at once, so their steps interleave, as AG-UI allows. A node the graph
runs several times at once (a fan-out of `Send`s to it) is one step, from its first task's
start to its last one's end: AG-UI keeps one step of a name open at a time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from pydantic import JsonValue

from agui.context import RunContext
from agui.events import StepFinishedEvent, StepStartedEvent

__all__ = ["NodeSteps", "ended_node"]


def ended_node(task: Mapping[str, object]) -> str | None:
    """The node whose task `task` reports the end of; `None` for a task's start (its `triggers`).

    Examples:
        >>> ended_node({"id": "1", "name": "chat", "result": {}}), ended_node({"triggers": ()})
        ('chat', None)
    """
    return None if "triggers" in task else str(task.get("name"))


class NodeSteps:
    """One run's steps: how many tasks of each node are running now."""

    def __init__(self, ctx: RunContext[JsonValue]) -> None:
        self._ctx = ctx
        self._running: Counter[str] = Counter()

    def take(self, task: Mapping[str, object]) -> None:
        """Start or finish the step of the node whose task started or ended."""
        ended = ended_node(task)
        if ended is None:
            name = str(task.get("name"))
            self._running[name] += 1
            if self._running[name] == 1:
                self._ctx.emit(StepStartedEvent(step_name=name))
        else:
            left = self._running[ended] - 1
            self._running[ended] = max(left, 0)  # an end with no start seen is no step's
            if left == 0:
                self._ctx.emit(StepFinishedEvent(step_name=ended))

    def end(self) -> None:
        """Finish the steps still open: a node the graph interrupted reports no end."""
        for name, running in self._running.items():
            if running:
                self._ctx.emit(StepFinishedEvent(step_name=name))
        self._running.clear()
