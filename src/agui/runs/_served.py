"""The run log a durable endpoint serves the current run from, for what an agent keeps per thread.

An agent that keeps a value for a thread between its runs (a bridge's paused framework run,
`RunLog.keep_blob`) must keep it where the endpoint's runs live, in the space of the thread's
owner, so that whichever worker serves the thread's next run finds it. The endpoint knows both,
and the agent runs in a task the endpoint starts: so the endpoint starts the run's task inside
`serving(log, owner)`, which sets a context variable the task copies, and the agent reads it
with `served()`. A run not served by a durable endpoint (no run log, `agui.run`, a test's
`collect`) reads `None`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Generator
from contextvars import ContextVar

from agui.runs._log import RunLog

__all__ = ["Served", "served", "serving"]


@dataclasses.dataclass(frozen=True)
class Served:
    """The log a run is served from, and the owner whose space its thread is in.

    Examples:
        >>> from agui.runs import MemoryRunLog
        >>> Served(MemoryRunLog(), "alice").owner
        'alice'
    """

    log: RunLog
    owner: str


_SERVED: ContextVar[Served | None] = ContextVar("agui_served", default=None)


@contextlib.contextmanager
def serving(log: RunLog, owner: str) -> Generator[None, None, None]:
    """Serve the tasks started within the block from `log`, in `owner`'s space.

    Examples:
        >>> from agui.runs import MemoryRunLog
        >>> with serving(MemoryRunLog(), "alice"):
        ...     served().owner
        'alice'
        >>> served() is None
        True
    """
    token = _SERVED.set(Served(log, owner))
    try:
        yield
    finally:
        _SERVED.reset(token)


def served() -> Served | None:
    """The log and owner the current run is served with; `None` without a durable endpoint."""
    return _SERVED.get()
