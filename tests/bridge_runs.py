"""What the bridge tests share: async tests run to completion, and the reading of a stream."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine

import httpx
from pydantic import JsonValue
from typing_extensions import ParamSpec

from agui import (
    CancellationToken,
    Event,
    RunAgentInput,
    RunContext,
    RunOutcome,
    asgi_app,
    parse_event,
    run,
)
from agui.asgi._writer import MAX_SEND_BYTES
from agui.client import AGUIClient
from agui.client._parser import SSEParser
from agui.events import RunErrorEvent, RunFinishedEvent
from agui.runner import AgentLike
from agui.runs import MemoryRunLog
from agui.sink import HIGH_WATER
from agui.testing import assert_valid, serving
from test_backpressure import CHUNK, CHUNKS, read_events, wait_for
from uvicorn_server import silent_client

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


def stalled_read(
    bridge: Callable[[RunContext[JsonValue]], Awaitable[RunOutcome | None]],
    run_input: RunAgentInput,
    pulled: list[int],
    *,
    upstream_ahead: bool = False,
) -> int:
    """Serve `bridge` to a client that reads nothing until the run's queue reaches its mark.

    `pulled` is where the upstream (an adapter, a model) notes each of its `CHUNKS` chunks of
    `CHUNK` bytes as it gives it. With `upstream_ahead`, the client also waits for the upstream
    to give them all (a framework that reads its model into a queue of its own). Then the client
    reads the whole stream. Asserts that the queue held at its mark and that every chunk
    arrived; returns how many chunks the upstream had given when the queue reached its mark.
    """
    contexts: list[RunContext[JsonValue]] = []

    async def agent(ctx: RunContext[JsonValue]) -> RunOutcome | None:
        contexts.append(ctx)
        return await bridge(ctx)

    with serving(asgi_app(agent)) as url, silent_client(url, run_input) as sock:
        wait_for(lambda: bool(contexts), "the run to start")
        receiver = contexts[0].receiver
        wait_for(lambda: receiver.queued_bytes >= HIGH_WATER, "the queue to reach its mark")
        read = len(pulled)
        if upstream_ahead:
            wait_for(lambda: len(pulled) == CHUNKS, "the upstream to give its last chunk")
        held = receiver.queued_bytes
        events = read_events(sock)

    assert held <= HIGH_WATER + CHUNK + MAX_SEND_BYTES
    assert sum(event["type"] == "TEXT_MESSAGE_CONTENT" for event in events) == CHUNKS
    assert events[-1]["type"] == "RUN_FINISHED"
    return read
