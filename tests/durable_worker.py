"""The agent of the durable-run tests, and a worker process that serves it on a Redis log.

`counter` emits `count` CUSTOM ticks, `delay` seconds apart (both from `forwardedProps`), then
publishes its state and says "done": a run long enough to leave, resume, cancel and kill.

Run as a program, `python durable_worker.py REDIS_URL LEASE`, it serves `counter` with uvicorn on
a free port of 127.0.0.1 with a `RedisRunLog`, prints `port N` once listening, and runs until it
is stopped: one worker of several sharing one Redis.
"""

from __future__ import annotations

import asyncio
import sys

import uvicorn
from pydantic import JsonValue

import agui
from agui import RunContext
from agui.asgi import AguiApp
from agui.asgi._server import LIMITS, listen
from agui.events import CustomEvent, StateSnapshotEvent
from agui.runs import RedisRunLog


async def counter(ctx: RunContext[JsonValue]) -> None:
    props = ctx.input.forwarded_props
    settings = props if isinstance(props, dict) else {}
    count = int(str(settings.get("count", 20)))
    delay = float(str(settings.get("delay", 0.01)))
    for number in range(count):
        ctx.emit(CustomEvent(name="tick", value=number))
        await asyncio.sleep(delay)
    ctx.emit(StateSnapshotEvent(snapshot={"ticks": count, "runId": ctx.run_id}))
    ctx.say(f"done after {count}")


def main() -> None:
    url, lease = sys.argv[1], float(sys.argv[2])
    serve(agui.asgi_app(counter, runs=RedisRunLog(url, lease=lease)))


def serve(app: AguiApp[JsonValue]) -> None:
    """Serve `app` on a free port of 127.0.0.1, say which, and run until stopped."""
    sock = listen("127.0.0.1", 0)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2, **LIMITS)
    print(f"port {sock.getsockname()[1]}", flush=True)  # noqa: T201
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
