"""HTTP benchmark: the canonical workload streamed over uvicorn to a client on 127.0.0.1.

One server process (this script with `--serve`, uvicorn, one worker) serves, side by side:

- `/baseline`: a bare Starlette `StreamingResponse` yielding the workload's prebuilt SSE frames,
  one event per yield: the least any Python SSE endpoint can do;
- `/official`: a `StreamingResponse` whose generator builds each `ag_ui.core` event and yields
  `EventEncoder().encode(event)`, one event at a time: how the official SDK is used;
- `/agui`: `agui.asgi_app` with an agent that produces the same run through the handles
  (`ctx.message`, `ctx.tool_call`, `ctx.publish_state`), verified, and coalesced by the endpoint;
  the agent yields to the loop after each message, tool call and state change;
- `/agui-per-event`: the same agent yielding to the loop after every event, so no two events
  can share a send: the worst case for coalescing;
- `/hold`: an agui run that sends its first events and then waits until its client leaves;
- `/_stats`: the server's own CPU time (`resource.getrusage`), RSS and open held runs.

The client (in this process) is a minimal asyncio HTTP/1.1 client that counts frames without
parsing them, so it stays cheaper than the server. Measured:

1. **Server CPU per event**, from `/_stats` before and after each run, one stream at a time, in
   rounds whose contender order rotates; the figure is each contender's CPU per event divided by
   the baseline's in the same round (median and min-max over rounds). Target for `/agui`: <= 0.3x.
2. **End-to-end events per second** of one stream (request sent to last byte), as a ratio to
   `/official` in the same round. Target for `/agui`: >= 5x.
3. **Fairness**: 200 concurrent unpaced runs of `/agui` (and of `/baseline`, for reference);
   time to first event, p50/p95/max.
4. **Memory**: RSS per open stream with 1,000 concurrent held runs of `/hold`.
5. **Keep-alive latency**: sequential small runs on one keep-alive connection to a small agent,
   served three ways in their own processes: as `agui serve` does (a socket bound by
   `agui.asgi._server.listen`, handed to `uvicorn.Server.run`), as `uvicorn.run` does (binding
   its own socket), and with a plain `socket.socket(AF_INET)` handed to uvicorn (how agui bound
   it before `TCP_NODELAY`); p50 and p95 per request, and agui serve's p50 over uvicorn.run's.

Run: `.venv/bin/python bench/bench_http.py [--rounds 7] [--concurrent 200] [--held 1000]`
(`--latency-only` for measure 5 alone)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import platform
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from ag_ui.encoder import EventEncoder
from pydantic import JsonValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Mount, Route
from workload import (
    ARGS_PER_CALL,
    CITIES,
    DELTAS_PER_MESSAGE,
    MESSAGES,
    STATE_DELTAS,
    TOOL_CALLS,
    WORDS,
    arguments,
    fragments,
    official_class,
    wire_dicts,
    workload,
)

import agui
from agui import RunContext
from agui._emit.frames import encode_items
from agui._emit.receiver import run_receiver
from agui.asgi._server import LIMITS, listen
from agui.runner import drive

HOST = "127.0.0.1"
CPU_TARGET = 0.3
THROUGHPUT_TARGET = 5.0
BODY = json.dumps({"threadId": "thread-1", "runId": "run-1", "messages": []}).encode()

# -- the server --------------------------------------------------------------------------------


def workload_agent(*, per_event: bool) -> Callable[[RunContext[JsonValue]], Any]:
    """The canonical run, through the handles: same shape and sizes as `workload.workload()`."""

    async def agent(ctx: RunContext[JsonValue]) -> None:
        async def pause() -> None:
            await asyncio.sleep(0)

        ctx.state = {"status": "", "tasks": [], "owner": "me", "notes": {}, "counter": 0}
        every = MESSAGES // STATE_DELTAS
        for index in range(MESSAGES):
            with ctx.message() as message:
                for delta in range(DELTAS_PER_MESSAGE):
                    message.delta(WORDS[(index + delta) % len(WORDS)])
                    if per_event:
                        await pause()
            await pause()
            if index < TOOL_CALLS:
                city = CITIES[index % len(CITIES)]
                with ctx.tool_call("get_weather", parent_message_id=message.id) as call:
                    for fragment in fragments(arguments(index), ARGS_PER_CALL):
                        call.args(fragment)
                        if per_event:
                            await pause()
                    call.result_json({"city": city, "tempC": 21, "note": None})
                await pause()
            if index % every == every - 1:
                _change_state(ctx.state, index)
                ctx.publish_state()
                await pause()

    return agent


def _change_state(state: Any, index: int) -> None:  # noqa: ANN401 - the run's JSON state
    kind = index % 3
    if kind == 0:
        state["status"] = f"step {index}"
    elif kind == 1:
        state["tasks"].append({"id": index, "done": False})
        state["owner"] = None
    else:
        state["notes"][f"n{index}"] = None
        state["counter"] = index


class Held:
    """Runs that send their first events, then wait for their client to leave."""

    def __init__(self) -> None:
        self.open = 0

    async def run(self, ctx: RunContext[JsonValue]) -> None:
        self.open += 1
        try:
            ctx.say("holding")
            await asyncio.Event().wait()
        finally:
            self.open -= 1


def server_app() -> Starlette:
    specs = workload()
    frames = [
        b"data: " + json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"
        for d in wire_dicts(specs)
    ]
    official_items = [(official_class(kind), fields) for kind, fields in specs]
    held = Held()

    async def baseline_frames() -> AsyncIterator[bytes]:
        for frame in frames:
            yield frame

    async def official_frames() -> AsyncIterator[str]:
        encode = EventEncoder().encode
        for cls, fields in official_items:
            yield encode(cls(**fields))

    async def baseline(_request: Request) -> StreamingResponse:
        return StreamingResponse(baseline_frames(), media_type="text/event-stream")

    async def official(_request: Request) -> StreamingResponse:
        return StreamingResponse(official_frames(), media_type="text/event-stream")

    async def stats(_request: Request) -> JSONResponse:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open("/proc/self/statm") as statm:  # noqa: PTH123, ASYNC230 - tiny, local
            resident_pages = int(statm.read().split()[1])
        return JSONResponse(
            {
                "cpu": usage.ru_utime + usage.ru_stime,
                "rss": resident_pages * os.sysconf("SC_PAGE_SIZE"),
                "held": held.open,
            }
        )

    return Starlette(
        routes=[
            Route("/baseline", baseline, methods=["POST"]),
            Route("/official", official, methods=["POST"]),
            Route("/_stats", stats),
            Mount("/agui-per-event", app=agui.asgi_app(workload_agent(per_event=True))),
            Mount("/agui", app=agui.asgi_app(workload_agent(per_event=False))),
            Mount("/hold", app=agui.asgi_app(held)),
        ]
    )


def serve() -> None:
    config = uvicorn.Config(
        server_app(), host=HOST, port=0, log_level="warning", access_log=False, backlog=4096
    )
    server = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn offers no startup event
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"port {port} http {config.http_protocol_class.__name__}", flush=True)
        await task

    asyncio.run(run())


# -- the client --------------------------------------------------------------------------------


@dataclasses.dataclass
class Stream:
    status: int
    events: int
    first: float
    last: float


async def stream(port: int, path: str, *, hold: asyncio.Event | None = None) -> Stream:
    """POST a run; count frames until the server closes (or, with `hold`, until it is set)."""
    reader, writer = await asyncio.open_connection(HOST, port)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(BODY)}\r\nConnection: close\r\n\r\n"
    ).encode() + BODY
    began = time.perf_counter()
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    first = 0.0
    events = 0
    previous = b""
    while data := await reader.read(1 << 16):
        if not first and b"data: " in data:
            first = time.perf_counter() - began
            if hold is not None:
                await hold.wait()
                break
        # Frames end in a blank line; chunked framing uses CRLF, so it never adds one.
        events += data.count(b"\n\n") + (previous == b"\n" and data[:1] == b"\n")
        previous = data[-1:]
    last = time.perf_counter() - began
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return Stream(status, events, first, last)


async def stats(port: int) -> dict[str, float]:
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"GET /_stats HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
    response = await reader.read()
    writer.close()
    await writer.wait_closed()
    value: dict[str, float] = json.loads(response.split(b"\r\n\r\n", 1)[1])
    return value


# -- measurements ------------------------------------------------------------------------------

CONTENDERS = ("/baseline", "/agui/", "/agui-per-event/", "/official")


async def rounds(port: int, count: int) -> dict[str, list[tuple[float, float, int]]]:
    """Per contender, per round: (server CPU seconds, wall seconds, events)."""
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in CONTENDERS}
    for name in CONTENDERS:  # warm-up
        await stream(port, name)
    for turn in range(count):
        order = CONTENDERS[turn % len(CONTENDERS) :] + CONTENDERS[: turn % len(CONTENDERS)]
        for name in order:
            before = await stats(port)
            result = await stream(port, name)
            after = await stats(port)
            assert result.status == 200
            results[name].append((after["cpu"] - before["cpu"], result.last, result.events))
    return results


async def fairness(port: int, path: str, count: int) -> list[Stream]:
    results = await asyncio.gather(*(stream(port, path) for _ in range(count)))
    assert all(r.status == 200 for r in results)
    return list(results)


async def memory(port: int, count: int) -> tuple[float, float, float, int]:
    """(RSS before, RSS with `count` held, RSS after release, runs still open after release)."""
    warm = asyncio.Event()
    warmers = [asyncio.create_task(stream(port, "/hold/", hold=warm)) for _ in range(50)]
    while (await stats(port))["held"] < 50:  # noqa: ASYNC110 - polling the server process
        await asyncio.sleep(0.05)
    warm.set()
    await asyncio.gather(*warmers)
    await _until_released(port)
    before = (await stats(port))["rss"]
    release = asyncio.Event()
    tasks = [asyncio.create_task(stream(port, "/hold/", hold=release)) for _ in range(count)]
    while (await stats(port))["held"] < count:  # noqa: ASYNC110 - polling the server process
        await asyncio.sleep(0.05)
    during = (await stats(port))["rss"]
    release.set()
    await asyncio.gather(*tasks)
    left = await _until_released(port)
    after = (await stats(port))["rss"]
    return before, during, after, left


async def _until_released(port: int) -> int:
    deadline = time.monotonic() + 30
    held = int((await stats(port))["held"])
    while held and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        held = int((await stats(port))["held"])
    return held


def _line(label: str, values: list[float], unit: str = "x") -> str:
    return (
        f"{label:<48} median {statistics.median(values):7.2f}{unit}"
        f"   (min {min(values):.2f}{unit}, max {max(values):.2f}{unit})"
    )


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def report(results: dict[str, list[tuple[float, float, int]]]) -> tuple[float, float]:
    base = results["/baseline"]
    for name in ("/agui/", "/agui-per-event/", "/official"):
        ratios = [
            (cpu / events) / (base_cpu / base_events)
            for (cpu, _, events), (base_cpu, _, base_events) in zip(
                results[name], base, strict=True
            )
        ]
        print(_line(f"server CPU/event, {name} / baseline", ratios))
    official = results["/official"]
    for name in ("/agui/", "/agui-per-event/", "/baseline"):
        ratios = [
            (events / wall) / (o_events / o_wall)
            for (_, wall, events), (_, o_wall, o_events) in zip(
                results[name], official, strict=True
            )
        ]
        print(_line(f"events/s end to end, {name} / official", ratios))
    for name, values in results.items():
        per_event = [cpu / events * 1e6 for cpu, _, events in values]
        rate = [events / wall for _, wall, events in values]
        print(
            f"  for scale: {name:<16} {values[0][2]:>6} events, server CPU "
            f"{statistics.median(per_event):6.2f} us/event, {statistics.median(rate):9.0f} events/s"
        )
    cpu = statistics.median(
        (c / e) / (bc / be) for (c, _, e), (bc, _, be) in zip(results["/agui/"], base, strict=True)
    )
    speed = statistics.median(
        (e / w) / (oe / ow)
        for (_, w, e), (_, ow, oe) in zip(results["/agui/"], official, strict=True)
    )
    return cpu, speed


# -- where agui's CPU goes, in this process -------------------------------------------------------


async def _produce() -> int:
    """Drive the coalescing agent and take its queue as the endpoint does; no encoding."""
    ctx: RunContext[JsonValue] = RunContext(agui.RunAgentInput(thread_id="t", run_id="r"))
    task = asyncio.ensure_future(drive(workload_agent(per_event=False), ctx))
    count = 0
    async for batch in run_receiver(ctx.receiver).item_batches():
        count += len(batch)
    await task
    return count


async def _produce_and_encode() -> int:
    ctx: RunContext[JsonValue] = RunContext(agui.RunAgentInput(thread_id="t", run_id="r"))
    task = asyncio.ensure_future(drive(workload_agent(per_event=False), ctx))
    count = 0
    async for batch in run_receiver(ctx.receiver).item_batches():
        count += encode_items(batch).count(b"\n\n")
    await task
    return count


async def _endpoint() -> int:
    """The whole ASGI endpoint with a `send` that does nothing: everything but the server."""
    app = agui.asgi_app(workload_agent(per_event=False))
    incoming: list[dict[str, Any]] = [{"type": "http.request", "body": BODY}]
    gone = asyncio.Event()
    frames = 0

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:  # noqa: ANN401 - an ASGI message
        nonlocal frames
        frames += bytes(message.get("body", b"")).count(b"\n\n")

    headers = [(b"content-type", b"application/json")]
    await app({"type": "http", "method": "POST", "headers": headers}, receive, send)
    return frames


def breakdown(count: int) -> None:
    """CPU per event in this process: production, + encoding, + the endpoint; interleaved."""
    stages: dict[str, Callable[[], Any]] = {
        "produce (drive, handles, verifier)": _produce,
        "produce + encode": _produce_and_encode,
        "whole endpoint, null send": _endpoint,
    }
    times: dict[str, list[float]] = {name: [] for name in stages}
    for turn in range(count + 1):
        names = list(stages)
        for name in names[turn % 3 :] + names[: turn % 3]:
            began = time.process_time()
            events = asyncio.run(stages[name]())
            if turn:  # the first turn warms up
                times[name].append((time.process_time() - began) / events * 1e6)
    for name, values in times.items():
        print(_line(f"in process: {name}", values, " us/event"))


# -- keep-alive latency: agui serve's socket against uvicorn's own ----------------------------

LATENCY_WAYS = ("agui serve", "uvicorn.run", "plain socket")


async def _short(ctx: RunContext[JsonValue]) -> None:
    ctx.say("ok")


def serve_latency(way: str) -> None:
    """Serve the short agent the given way and print the port (a `--latency-server` process)."""
    app = agui.asgi_app(_short)
    quiet: dict[str, Any] = {"log_level": "warning", "access_log": False}
    if way == "uvicorn.run":
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            port = probe.getsockname()[1]
        print(f"port {port}", flush=True)
        uvicorn.run(app, host=HOST, port=port, **quiet)
        return
    if way == "agui serve":
        sock = listen(HOST, 0)
    else:
        sock = socket.socket(socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        sock.listen(128)
    print(f"port {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn.Config(app, **quiet, **LIMITS)).run(sockets=[sock])


async def _connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to a server that may still be binding (uvicorn.run prints its port first)."""
    for _ in range(200):
        try:
            return await asyncio.open_connection(HOST, port)
        except OSError:
            await asyncio.sleep(0.05)
    return await asyncio.open_connection(HOST, port)


async def keepalive_latencies(port: int, count: int) -> list[float]:
    """Seconds per request of `count` sequential runs on one keep-alive connection."""
    reader, writer = await _connect(port)
    request = (
        f"POST / HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(BODY)}\r\n\r\n"
    ).encode() + BODY
    times: list[float] = []
    for _ in range(count):
        began = time.perf_counter()
        writer.write(request)
        await reader.readuntil(b"\r\n0\r\n\r\n")  # the end of a chunked body
        times.append(time.perf_counter() - began)
    writer.close()
    await writer.wait_closed()
    return times


def latency(rounds: int, count: int) -> None:
    """Measure 5: each way in its own server process, in rotating order, `rounds` times."""
    results: dict[str, list[float]] = {way: [] for way in LATENCY_WAYS}
    ratios: list[float] = []
    for turn in range(rounds):
        medians: dict[str, float] = {}
        for way in LATENCY_WAYS[turn % 3 :] + LATENCY_WAYS[: turn % 3]:
            server = subprocess.Popen(  # noqa: S603 - this script, with --latency-server
                [sys.executable, __file__, "--latency-server", way],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert server.stdout is not None
                port = int(server.stdout.readline().split()[1])
                times = asyncio.run(keepalive_latencies(port, count))
            finally:
                server.terminate()
                server.wait(timeout=30)
            results[way] += times[1:]  # the first request pays for the connection
            medians[way] = statistics.median(times[1:])
        ratios.append(medians["agui serve"] / medians["uvicorn.run"])
    for way, times in results.items():
        print(
            f"keep-alive latency, {way:<13}: p50 {_percentile(times, 0.5) * 1000:6.2f} ms, "
            f"p95 {_percentile(times, 0.95) * 1000:6.2f} ms ({len(times)} requests)"
        )
    print(_line("keep-alive p50, agui serve / uvicorn.run", ratios))


def _start_server() -> tuple[subprocess.Popen[str], int, str]:
    server = subprocess.Popen(  # noqa: S603 - this script, with --serve
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    words = server.stdout.readline().split()
    assert words[:1] == ["port"], words
    return server, int(words[1]), words[3]


async def measure(args: argparse.Namespace, port: int) -> tuple[float, float]:
    results = await rounds(port, args.rounds)
    cpu, speed = report(results)
    for path in ("/agui/", "/baseline"):
        began = time.perf_counter()
        runs = await fairness(port, path, args.concurrent)
        wall = time.perf_counter() - began
        firsts = [r.first * 1000 for r in runs]
        print(
            f"fairness, {args.concurrent} concurrent {path:<9}: time to first event "
            f"p50 {_percentile(firsts, 0.5):7.1f} ms, p95 {_percentile(firsts, 0.95):7.1f} ms, "
            f"max {max(firsts):7.1f} ms; all done in {wall:5.1f} s, "
            f"{sum(r.events for r in runs) / wall:8.0f} events/s"
        )
    before, during, after, left = await memory(port, args.held)
    print(
        f"memory, {args.held} held agui streams: RSS {before / 2**20:.1f} MiB -> "
        f"{during / 2**20:.1f} MiB ({(during - before) / args.held / 1024:.1f} KiB per open "
        f"stream); {after / 2**20:.1f} MiB after release; {left} runs still open"
    )
    return cpu, speed


def main() -> int:
    parser = argparse.ArgumentParser(description="agui over HTTP vs Starlette and the official SDK")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=7, help="rounds of single streams (7)")
    parser.add_argument("--concurrent", type=int, default=200, help="fairness runs (200)")
    parser.add_argument("--held", type=int, default=1000, help="held streams for memory (1000)")
    parser.add_argument("--requests", type=int, default=200, help="keep-alive requests (200)")
    parser.add_argument("--latency-only", action="store_true", help="only measure 5")
    parser.add_argument("--latency-server", choices=LATENCY_WAYS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    if args.latency_server:
        serve_latency(args.latency_server)
        return 0
    if args.latency_only:
        latency(args.rounds, args.requests)
        return 0
    server, port, kind = _start_server()
    try:
        print(
            f"http workload: {len(workload())} events per run; {args.rounds} rounds; uvicorn "
            f"{uvicorn.__version__} ({kind}), one worker, asyncio loop; Python "
            f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        cpu, speed = asyncio.run(measure(args, port))
    finally:
        server.terminate()
        server.wait(timeout=30)
    breakdown(args.rounds)
    latency(args.rounds, args.requests)
    cpu_verdict = "meets" if cpu <= CPU_TARGET else "MISSES"
    speed_verdict = "meets" if speed >= THROUGHPUT_TARGET else "MISSES"
    print(f"target: agui server CPU/event <= {CPU_TARGET}x baseline: {cpu_verdict} it")
    print(f"target: agui events/s >= {THROUGHPUT_TARGET}x official: {speed_verdict} it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
