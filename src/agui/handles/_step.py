"""The step handle: `STEP_STARTED` when opened, `STEP_FINISHED` when left; steps nest.

Steps are the one kind of block that nests, so a step can only end once the steps opened
inside it have ended: the pipeline, which holds the open blocks, says which one is.
"""

from __future__ import annotations

from typing import TypeVar

from agui._emit.pipeline import Pipeline
from agui.errors import UsageError
from agui.events import StepFinishedEvent, StepStartedEvent
from agui.handles._handle import Handle, Owner, built

__all__ = ["StepHandle"]

S = TypeVar("S")


class StepHandle(Handle[S]):
    """A named step: `STEP_STARTED` now, `STEP_FINISHED` when left; steps nest.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.step("plan"), ctx.step("search"):
        ...     pass
        >>> [(event.type, event.step_name) for event in events.drain()]
        [('STEP_STARTED', 'plan'), ('STEP_STARTED', 'search'),
         ('STEP_FINISHED', 'search'), ('STEP_FINISHED', 'plan')]
    """

    kind = "step"
    nests = True

    def __init__(self, owner: Owner[S], pipeline: Pipeline[Handle[S]], name: str) -> None:
        super().__init__(owner, pipeline)
        self.name = name
        self._check_unicode(name, "the name given to ctx.step()")
        start = built(StepStartedEvent, "ctx.step()", {"step_name": "name"}, step_name=name)
        if not start.step_name.strip():
            message = (
                f"ctx.step() needs a name, got {name!r}: a client shows the step by it, and "
                "matches its end to it; pass one, e.g. ctx.step('plan')"
            )
            raise UsageError(message)
        self._start(start)

    def describe(self) -> str:
        return f"step '{self.name}'"

    def end(self) -> None:
        """Finish the step now; inner steps must have finished first."""
        self._check_open("end")
        inner = self._pipeline.inner_step(self)
        if inner is not None:
            message = f"cannot end {self.describe()}: {inner.describe()} inside it is open"
            raise UsageError(message)
        self._end_now()

    def _finish(self) -> None:
        self._pipeline.send(StepFinishedEvent(step_name=self.name), forced=True)
        self._closed()
