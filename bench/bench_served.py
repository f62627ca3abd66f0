"""Served-path benchmark: an agent's run through `agui.asgi_app`, called as ASGI in process.

What a user's server does per request, without the server: the canonical workload
(`workload.py`, through `bench_core.py`'s constructs) played by an agent through the handles
(`ctx.message()` and 50 deltas, `ctx.tool_call(...)` with 20 argument fragments and a result,
`ctx.publish_state()`), awaiting the loop after each construct as an agent awaiting its model
does, verified, coalesced and framed by the endpoint. The app is called as ASGI with a real
HTTP scope, a `receive` that gives the POST body and then waits for a disconnect that never
comes, and a `send` that keeps the body.

Against it, what peers write: a Starlette app whose route returns a `StreamingResponse` over an
async generator that builds each `ag_ui.core` event of the same run (the very events agui sent,
from snake_case keyword arguments) and yields `EventEncoder().encode(event)`: one send per
event, called the same way. Both bodies are checked frame for frame (the script exits 1 on any
difference).

Both run in one process and one event loop, in rounds whose order alternates; a round's figure
is the ratio of the two requests' times, the report gives the median and min-max over rounds.
Times are the thread's CPU time (`time.thread_time`, everything runs on the loop's thread;
`--clock wall` for `time.perf_counter`).

Run: `.venv/bin/python bench/bench_served.py [--rounds 15] [--clock cpu|wall]`
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pydantic
from ag_ui.encoder import EventEncoder
from bench_core import Built, Unit, change_state, official_inputs, units_of
from pydantic import JsonValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route
from workload import workload

import agui
from agui import RunAgentInput, RunContext

TARGET = 6.0
"""The served path should be at least this many times faster than the official SDK's."""

THREAD, RUN = "thread-1", "run-1"
BODY = json.dumps(
    {
        "threadId": THREAD,
        "runId": RUN,
        "messages": [],
        "state": {"status": "idle", "tasks": [], "owner": "me", "notes": {}, "counter": 0},
    }
).encode()
clock = time.thread_time

Message = dict[str, Any]
App = Callable[..., Awaitable[None]]
"""An ASGI app: `await app(scope, receive, send)`."""


def workload_agent(units: list[Unit]) -> Callable[[RunContext[JsonValue]], Awaitable[None]]:
    """The run through the handles, awaiting the loop after each construct."""

    async def agent(ctx: RunContext[JsonValue]) -> None:
        parent = ""
        for unit in units:
            if unit.kind == "message":
                with ctx.message() as message:
                    for text in unit.texts:
                        message.delta(text)
                parent = message.id
            elif unit.kind == "tool":
                with ctx.tool_call(unit.name, parent_message_id=parent) as call:
                    for fragment in unit.texts:
                        call.args(fragment)
                    call.result(unit.content)
            elif unit.kind == "state":
                state = ctx.state
                assert isinstance(state, dict)
                change_state(state, unit.index)
                ctx.publish_state()
            else:
                continue  # the driver sends RUN_STARTED and RUN_FINISHED
            await asyncio.sleep(0)

    return agent


def official_app(built: Built) -> Starlette:
    """What peers write: `ag_ui.core` models and `EventEncoder` in a `StreamingResponse`."""

    async def frames() -> AsyncIterator[str]:
        encode = EventEncoder().encode
        for cls, fields in built:
            yield encode(cls(**fields))

    async def endpoint(_request: Request) -> StreamingResponse:
        return StreamingResponse(frames(), media_type="text/event-stream")

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])])


def scope() -> dict[str, Any]:
    """A POST of a `RunAgentInput`, as uvicorn would hand it to the app."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"text/event-stream"),
            (b"content-length", str(len(BODY)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def request(app: App) -> tuple[float, bytes]:
    """One request to `app`: its CPU (or wall) time, and the response body."""
    incoming: list[Message] = [{"type": "http.request", "body": BODY, "more_body": False}]
    never = asyncio.Event()
    body: list[bytes] = []

    async def receive() -> Message:
        if incoming:
            return incoming.pop(0)
        await never.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.body":
            body.append(bytes(message.get("body", b"")))
        elif message["type"] == "http.response.start":
            assert message["status"] == 200, message

    began = clock()
    await app(scope(), receive, send)
    took = clock() - began
    return took, b"".join(body)


def frames_of(body: bytes) -> list[bytes]:
    return [frame + b"\n\n" for frame in body.split(b"\n\n")[:-1]]


async def main_async(rounds: int) -> tuple[int, int, list[float], list[float], list[float]]:
    units = units_of(workload())
    events = [
        event
        async for event in agui.run(workload_agent(units), RunAgentInput.model_validate_json(BODY))
    ]
    ours = agui.asgi_app(workload_agent(units))
    theirs = official_app(official_inputs(events))
    _, our_body = await request(ours)
    _, their_body = await request(theirs)
    mine, peers = frames_of(our_body), frames_of(their_body)
    mismatches = abs(len(mine) - len(peers)) + sum(
        a != b for a, b in zip(mine, peers, strict=False)
    )
    ratios: list[float] = []
    agui_times: list[float] = []
    official_times: list[float] = []
    for turn in range(-1, rounds):  # the first round warms up and is dropped
        gc.collect()
        order: list[tuple[str, App]] = [("agui", ours), ("official", theirs)]
        took: dict[str, float] = {}
        for name, app in order if turn % 2 else order[::-1]:
            took[name], _ = await request(app)
        if turn >= 0:
            ratios.append(took["official"] / took["agui"])
            agui_times.append(took["agui"])
            official_times.append(took["official"])
    return len(mine), mismatches, ratios, agui_times, official_times


def main() -> int:
    global clock  # noqa: PLW0603 - chosen once, from the command line
    parser = argparse.ArgumentParser(description="agui.asgi_app vs official SDK in Starlette")
    parser.add_argument("--rounds", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="what is timed")
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    count, mismatches, ratios, ours, theirs = asyncio.run(main_async(args.rounds))
    print(
        f"Python {platform.python_version()}, pydantic {pydantic.VERSION}, {platform.machine()}; "
        f"{args.clock} time"
    )
    print(
        f"served path: {count} events per request, agui.asgi_app vs StreamingResponse + "
        f"EventEncoder, in process; {args.rounds} rounds"
    )
    print(
        f"speedup, official / agui served     median {statistics.median(ratios):5.2f}x"
        f"   (min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
    )
    met = statistics.median(ratios) >= TARGET
    print(f"target: agui >= {TARGET}x faster than official: {'meets it' if met else 'MISSES it'}")
    print(f"byte-identical frames, agui vs official: {count} events, {mismatches} mismatches")
    print(
        "for scale only (machine-dependent), median us/event: "
        f"official {statistics.median(theirs) / count * 1e6:.2f}, "
        f"agui {statistics.median(ours) / count * 1e6:.2f}"
    )
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
