"""What the bridge tests share: async tests run to completion, and the reading of a stream."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine

from typing_extensions import ParamSpec

from agui import Event
from agui.events import RunErrorEvent, RunFinishedEvent

P = ParamSpec("P")


def synced(test: Callable[P, Coroutine[object, object, None]]) -> Callable[P, None]:
    """The async test `test` as a plain one, run in a loop of its own."""

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def types(events: list[Event]) -> list[str]:
    """The stream's event types, in order."""
    return [event.type for event in events]


def terminal(events: list[Event]) -> RunFinishedEvent | RunErrorEvent:
    """The stream's last event, which must be its terminal one."""
    last = events[-1]
    assert isinstance(last, RunFinishedEvent | RunErrorEvent)
    return last
