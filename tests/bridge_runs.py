"""What the bridge tests share: async tests run to completion, and the reading of a stream."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine

import httpx
from pydantic import JsonValue
from typing_extensions import ParamSpec

from agui import CancellationToken, Event, RunAgentInput, asgi_app, parse_event, run
from agui.client import AGUIClient
from agui.client._parser import SSEParser
from agui.events import RunErrorEvent, RunFinishedEvent
from agui.runner import AgentLike
from agui.runs import MemoryRunLog
from agui.testing import assert_valid, serving

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


def assert_coded_error(events: list[Event], code: str, message: str) -> None:
    """The stream is valid and ends with a `RUN_ERROR` of exactly this code and message."""
    assert_valid(events)
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert (error.code, error.message) == (code, message)


async def cancelled_after(
    agent: AgentLike[JsonValue], given: RunAgentInput, count: int
) -> list[Event]:
    """The events of a run cancelled by its token once `count` events went out."""
    token = CancellationToken()
    events: list[Event] = []

    async def reader() -> None:
        async for event in run(agent, given, token=token):
            events.append(event)  # noqa: PERF401 - read while the run goes on

    task = asyncio.ensure_future(reader())
    while len(events) < count:  # noqa: ASYNC110 - the run emits no event to wait on
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)  # the framework is inside its model call
    token.cancel("stop")
    await asyncio.wait_for(task, 5)
    assert_valid(events)
    assert terminal(events).model_dump(by_alias=True)["outcome"] == {"type": "cancelled"}
    return events


async def live_and_replayed(
    agent: AgentLike[JsonValue], given: RunAgentInput
) -> tuple[list[Event], list[Event]]:
    """A run served with a durable log, as its client read it and as the log replays it."""
    app = asgi_app(agent, runs=MemoryRunLog())
    with serving(app) as url:
        async with AGUIClient(url) as client:
            live = await client.run(given)
        async with httpx.AsyncClient(timeout=30) as http:
            stored = (await http.get(f"{url}runs/{given.run_id}/events")).content
    return live, [parse_event(data) for data in SSEParser().feed(stored)]
