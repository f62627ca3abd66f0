"""Streaming benchmark: many concurrent token streams over a real uvicorn, as users serve them.

A served agent streams tokens: many runs at once, each emitting a delta every few tens of
milliseconds. Three servers stream the same runs, each a real uvicorn (uvloop, httptools, one
worker) in its own process, started fresh for every measurement:

- `floor`: a bare ASGI app that writes each SSE frame as bytes (pre-encoded JSON with the
  delta's text spliced in), one `send` per delta: the least any ASGI SDK can do on this server;
- `peer`: what peers write: a Starlette `StreamingResponse` over an async generator that builds
  each `ag_ui.core` event and yields `EventEncoder().encode(event)`;
- `agui`: `agui.asgi_app` (its defaults: keep-alive pings on, the verifier on) with an agent that
  opens a message and emits its deltas through the handle, as a token-streaming agent does.

Each run is `RUN_STARTED`, `TEXT_MESSAGE_START`, `--deltas` `TEXT_MESSAGE_CONTENT` events with
`await asyncio.sleep(--interval)` between two of them, `TEXT_MESSAGE_END`, `RUN_FINISHED`. A
delta's text is the server's `time.time_ns()` when it was emitted; the client reads it when the
frame arrives (same box, same clock), which gives the emit-to-arrival latency.

The client is this process: raw asyncio streams on uvloop, one connection per run, opened
evenly over `--ramp` seconds so the runs' deltas are spread over the interval rather than all
due on the same turn. It checks every run is whole (status 200, every delta, `RUN_FINISHED`
last). Measured per server and per C concurrent runs:

- **server CPU per delta**: the server process's utime + stime (`/proc/PID/stat`) over the whole
  configuration (connections, requests, runs, closes), divided by C x deltas;
- **memory per open stream**: the server's RSS (`/proc/PID/status`) when the most streams were
  open before the first one ended (sampled every 100 ms), less its RSS when idle after a
  warm-up, divided by the streams then open (all C, unless the server is saturated: the
  per-configuration line shows how many; no figure when under a quarter of C were);
- **latency**: emit-to-arrival p50 and p99 over every delta of the configuration.

A round measures every server at every C, the servers' order rotating; the report gives each
figure's median and min-max over rounds, and the ratios agui / floor and agui / peer computed
within each round. `--also NAME=DIR` adds another agui server run from the package sources in
`DIR` (a checkout's `src`), to compare two trees in the same run.

Run: `.venv/bin/python bench/bench_streams.py [--rounds 3] [--concurrency 200,1000,2000]`
(`--profile cpu|memory --servers agui --concurrency 1000` profiles one server: bench/README.md)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import gc
import json
import math
import os
import platform
import pstats
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
import uvloop
from ag_ui.core import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from ag_ui.encoder import EventEncoder
from pydantic import JsonValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

import agui
from agui import RunContext

HOST = "127.0.0.1"
THREAD, RUN, MESSAGE = "thread-1", "run-1", "run-1-msg-1"
SERVERS = ("floor", "peer", "agui")
STAMP = re.compile(rb'"delta":"(\d+)"')
FINISHED = b'"type":"RUN_FINISHED"'
TICK = os.sysconf("SC_CLK_TCK")
WARM_RUNS, WARM_DELTAS = 20, 5
CONFIG_TIMEOUT = 120.0

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def request_body(deltas: int, interval: float) -> bytes:
    """A `RunAgentInput`; the run's plan rides in `forwardedProps`, which every server reads."""
    plan: dict[str, JsonValue] = {"deltas": deltas, "interval": interval}
    run: dict[str, JsonValue] = {"threadId": THREAD, "runId": RUN, "forwardedProps": plan}
    return json.dumps(run).encode()


def plan_of(props: JsonValue) -> tuple[int, float]:
    assert isinstance(props, dict)
    deltas, interval = props["deltas"], props["interval"]
    assert isinstance(deltas, int)
    assert isinstance(interval, float)
    return deltas, interval


# -- the servers (each in its own process) -----------------------------------------------------


def _frame(event: dict[str, str]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


_FLOOR_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
_FLOOR_OPEN = _frame({"type": "RUN_STARTED", "threadId": THREAD, "runId": RUN}) + _frame(
    {"type": "TEXT_MESSAGE_START", "messageId": MESSAGE, "role": "assistant"}
)
_FLOOR_DELTA = _frame(
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": MESSAGE, "delta": "STAMP"}
).split(b"STAMP")
_FLOOR_CLOSE = _frame({"type": "TEXT_MESSAGE_END", "messageId": MESSAGE}) + _frame(
    {"type": "RUN_FINISHED", "threadId": THREAD, "runId": RUN}
)


async def floor_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The floor: SSE frames written as bytes, one `send` per delta."""
    if scope["type"] != "http":
        return
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    deltas, interval = plan_of(json.loads(body)["forwardedProps"])
    await send({"type": "http.response.start", "status": 200, "headers": _FLOOR_HEADERS})
    await send({"type": "http.response.body", "body": _FLOOR_OPEN, "more_body": True})
    head, tail = _FLOOR_DELTA
    for index in range(deltas):
        if index:
            await asyncio.sleep(interval)
        frame = head + str(time.time_ns()).encode() + tail
        await send({"type": "http.response.body", "body": frame, "more_body": True})
    await send({"type": "http.response.body", "body": _FLOOR_CLOSE})


async def _peer_frames(deltas: int, interval: float) -> AsyncIterator[str]:
    encode = EventEncoder().encode
    yield encode(RunStartedEvent(thread_id=THREAD, run_id=RUN))
    yield encode(TextMessageStartEvent(message_id=MESSAGE, role="assistant"))
    for index in range(deltas):
        if index:
            await asyncio.sleep(interval)
        yield encode(TextMessageContentEvent(message_id=MESSAGE, delta=str(time.time_ns())))
    yield encode(TextMessageEndEvent(message_id=MESSAGE))
    yield encode(RunFinishedEvent(thread_id=THREAD, run_id=RUN))


def peer_app() -> Starlette:
    """What peers write: `ag_ui.core` models and `EventEncoder` in a `StreamingResponse`."""

    async def endpoint(request: Request) -> StreamingResponse:
        deltas, interval = plan_of((await request.json())["forwardedProps"])
        return StreamingResponse(_peer_frames(deltas, interval), media_type="text/event-stream")

    return Starlette(routes=[Route("/", endpoint, methods=["POST"])])


async def token_agent(ctx: RunContext[JsonValue]) -> None:
    """An agent streaming tokens: one message, a delta, then a pause, as a model's stream."""
    deltas, interval = plan_of(ctx.input.forwarded_props)
    with ctx.message() as message:
        for index in range(deltas):
            if index:
                await asyncio.sleep(interval)
            message.delta(str(time.time_ns()))


def server_app(name: str) -> Any:  # noqa: ANN401 - three kinds of ASGI app
    if name == "floor":
        return floor_app
    if name == "peer":
        return peer_app()
    return agui.asgi_app(token_agent)


def serve(name: str, profile: str | None) -> None:
    """Serve `name` on a free port (printed first), until SIGTERM; `profile` as `--profile`."""
    config = uvicorn.Config(
        server_app(name),
        host=HOST,
        port=0,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
        backlog=8192,
    )
    server = uvicorn.Server(config)
    # uvicorn raises the SIGTERM it caught again once it has shut down; this handler lets the
    # process go on to print its profile.
    signal.signal(signal.SIGTERM, _ignore)
    profiler = cProfile.Profile() if profile == "cpu" else None

    collector = GcClock()
    gc.callbacks.append(collector.observe)

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:  # noqa: ASYNC110 - uvicorn offers no startup event
            await asyncio.sleep(0.01)
        asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, collector.report)
        if profile == "memory":
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, MemoryReport())
        elif profiler is not None:
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, profiler.enable)
        print(server.servers[0].sockets[0].getsockname()[1], flush=True)
        await task

    uvloop.run(run())
    if profiler is not None:
        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(35)
        stats.sort_stats("cumulative").print_stats(35)


def _ignore(_signal: int, _frame: object) -> None:
    pass


class GcClock:
    """The time the server spends in the garbage collector, and its collections per generation.

    Each SIGUSR2 prints the totals so far as one line on stdout, which `measure` reads before
    and after a configuration.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self.longest = 0.0
        self._began = 0.0

    def observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        pause = time.perf_counter() - self._began
        self.seconds += pause
        self.longest = max(self.longest, pause)
        self.collections[info["generation"]] += 1

    def report(self) -> None:
        """Print the totals, and the longest pause since the last report."""
        print(self.seconds, *self.collections, self.longest, flush=True)
        self.longest = 0.0


class MemoryReport:
    """What the open streams hold: allocation sites and objects by type, from a mark on.

    The first SIGUSR1 marks (tracemalloc starts, objects are counted), the second reports what
    was allocated and is still held since, per open stream, on stderr.
    """

    def __init__(self) -> None:
        self.before: Counter[str] = Counter()

    def __call__(self) -> None:
        if not tracemalloc.is_tracing():
            self.before = _objects()
            tracemalloc.start()
            return
        snapshot = tracemalloc.take_snapshot()
        tracemalloc.stop()
        total = sum(stat.size for stat in snapshot.statistics("filename"))
        print(f"held since the mark: {total / 1024:.0f} KiB", file=sys.stderr)
        for stat in snapshot.statistics("filename")[:12]:
            print(f"{stat.size / 1024:9.1f} KiB {stat.count:7d}  {stat.traceback}", file=sys.stderr)
        for stat in _sites(snapshot)[:70]:
            print(f"{stat.size / 1024:9.1f} KiB {stat.count:7d}  {stat.traceback}", file=sys.stderr)
        grown = _objects() - self.before
        print(grown.most_common(40), file=sys.stderr, flush=True)


def _sites(snapshot: tracemalloc.Snapshot) -> list[tracemalloc.Statistic]:
    """The lines of agui and of asyncio that hold memory: what a stream adds to uvicorn's."""
    return [
        stat
        for stat in snapshot.statistics("lineno")
        if any(part in str(stat.traceback) for part in ("/agui/", "/asyncio/"))
    ]


def _objects() -> Counter[str]:
    return Counter(type(thing).__qualname__ for thing in gc.get_objects())


# -- the client --------------------------------------------------------------------------------


@dataclasses.dataclass
class Open:
    """The configuration's streams: how many are open (a delta arrived) and how many ended."""

    opened: int = 0
    ended: int = 0


@dataclasses.dataclass
class Stream:
    status: int
    deltas: int
    finished: bool
    latencies: list[int]


class Reader(asyncio.Protocol):
    """One run's connection: its deltas' emit stamps read at arrival, until the server closes.

    A protocol rather than a stream reader: each read costs one callback, no task wake-up, so
    the client stays cheaper than the servers it measures.
    """

    def __init__(self, counts: Open) -> None:
        self.counts = counts
        self.latencies: list[int] = []
        self.head = b""
        self.rest = b""
        self.last = b""
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        now = time.time_ns()
        self.rest += data
        cut = self.rest.rfind(b"\n\n") + 2
        if cut < 2:
            return
        frames, self.rest = self.rest[:cut], self.rest[cut:]
        if not self.head:
            self.head, frames = frames.split(b"\r\n\r\n", 1)
        latencies = self.latencies
        if stamps := STAMP.findall(frames):
            if not latencies:
                self.counts.opened += 1
            latencies += [now - int(stamp) for stamp in stamps]
        self.last = frames

    def connection_lost(self, exc: Exception | None) -> None:
        del exc  # a run is whole or not by what arrived
        self.counts.ended += 1
        if not self.closed.done():
            self.closed.set_result(None)


async def stream(port: int, body: bytes, counts: Open) -> Stream:
    """POST one run and read it whole; what arrived."""
    loop = asyncio.get_running_loop()
    transport, reader = await loop.create_connection(lambda: Reader(counts), HOST, port)
    transport.write(
        f"POST / HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )
    await reader.closed
    transport.close()
    last = reader.last
    finished = FINISHED in last[last.rfind(b"data: ") :]
    status = int(reader.head.split(b" ", 2)[1]) if reader.head else 0
    return Stream(status, len(reader.latencies), finished, reader.latencies)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:  # noqa: PTH123 - a /proc read
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:  # noqa: PTH123 - a /proc read
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError


@dataclasses.dataclass
class Figures:
    """One server at one C in one round."""

    cpu_us: float
    rss_kib: float
    p50_ms: float
    p99_ms: float
    opened: int
    whole: int
    seconds: float
    client_us: float
    gc_us: float = math.nan
    full_collections: int = 0
    gc_pause_ms: float = math.nan

    def __str__(self) -> str:
        return (
            f"cpu {self.cpu_us:6.1f} us/delta (gc {self.gc_us:4.1f}, "
            f"{self.full_collections} full, longest {self.gc_pause_ms:.0f} ms)  "
            f"rss {self.rss_kib:5.1f} KiB/stream ({self.opened} open)  "
            f"p50 {self.p50_ms:6.2f} p99 {self.p99_ms:7.2f} ms  "
            f"whole {self.whole}  {self.seconds:.1f} s  client {self.client_us:.0f} us/delta  "
            f"load {os.getloadavg()[0]:.1f}"
        )


async def _sample_open(pid: int, counts: Open, peak: list[tuple[int, int]]) -> None:
    """Sample (streams open, RSS) until the first stream ends."""
    while counts.ended == 0:
        peak.append((counts.opened, rss_kib(pid)))
        await asyncio.sleep(0.1)


async def drive(pid: int, port: int, concurrency: int, args: argparse.Namespace) -> Figures:
    """Open `concurrency` runs over `--ramp` seconds, read them whole; the server's figures."""
    body = request_body(args.deltas, args.interval)
    counts, peak = Open(), list[tuple[int, int]]()
    idle, cpu, began = rss_kib(pid), cpu_seconds(pid), time.perf_counter()
    client = time.process_time()

    async def delayed(index: int) -> Stream:
        await asyncio.sleep(args.ramp * index / concurrency)
        return await stream(port, body, counts)

    sampler = asyncio.create_task(_sample_open(pid, counts, peak))
    streams = await asyncio.wait_for(
        asyncio.gather(*(delayed(index) for index in range(concurrency))), CONFIG_TIMEOUT
    )
    cpu = cpu_seconds(pid) - cpu
    seconds = time.perf_counter() - began
    sampler.cancel()
    client = time.process_time() - client
    opened, rss = max(peak, default=(0, 0))
    latencies = sorted(value for one in streams for value in one.latencies)
    whole = sum(one.status == 200 and one.deltas == args.deltas and one.finished for one in streams)
    return Figures(
        cpu_us=cpu * 1e6 / (concurrency * args.deltas),
        rss_kib=(rss - idle) / opened if opened >= concurrency / 4 else float("nan"),
        opened=opened,
        p50_ms=_percentile(latencies, 0.50) / 1e6,
        p99_ms=_percentile(latencies, 0.99) / 1e6,
        whole=whole,
        seconds=seconds,
        client_us=client * 1e6 / (concurrency * args.deltas),
    )


def _percentile(values: list[int], fraction: float) -> float:
    if not values:
        return float("nan")
    return float(values[min(len(values) - 1, int(fraction * len(values)))])


# -- one measurement: a fresh server, warmed up, then C runs -----------------------------------


def start_server(
    name: str, source: str | None, profile: str | None = None
) -> tuple[subprocess.Popen[str], int]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = source
    command = [sys.executable, __file__, "--serve", name]
    if profile is not None:
        command += ["--server-profile", profile]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)  # noqa: S603
    assert server.stdout is not None
    return server, int(server.stdout.readline())


def stop_server(server: subprocess.Popen[str]) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


async def warm_up(port: int, args: argparse.Namespace) -> None:
    body = request_body(WARM_DELTAS, args.interval / 5)
    await asyncio.gather(*(stream(port, body, Open()) for _ in range(WARM_RUNS)))
    await asyncio.sleep(0.3)


async def measure(
    name: str, source: str | None, concurrency: int, args: argparse.Namespace
) -> Figures:
    server, port = start_server("agui" if source is not None else name, source)
    try:
        await warm_up(port, args)
        before = await _collected(server)
        figures = await drive(server.pid, port, concurrency, args)
        after = await _collected(server)
    finally:
        stop_server(server)
    figures.gc_us = (after[0] - before[0]) * 1e6 / (concurrency * args.deltas)
    figures.full_collections = int(after[3] - before[3])
    figures.gc_pause_ms = after[4] * 1e3
    return figures


async def _collected(server: subprocess.Popen[str]) -> list[float]:
    """The server's time in the collector so far (seconds) and its collections per generation."""
    assert server.stdout is not None
    server.send_signal(signal.SIGUSR2)
    line = await asyncio.to_thread(server.stdout.readline)
    return [float(field) for field in line.split()]


# -- rounds and the report ---------------------------------------------------------------------

Results = dict[tuple[str, int], list[Figures]]


async def run_rounds(args: argparse.Namespace, servers: dict[str, str | None]) -> Results:
    results: Results = {(name, c): [] for name in servers for c in args.concurrency}
    deadline = time.monotonic() + args.time_limit
    names = list(servers)
    for turn in range(args.rounds):
        for concurrency in args.concurrency:
            shift = turn % len(names)
            for name in names[shift:] + names[:shift]:
                if time.monotonic() > deadline:
                    print(f"time limit reached in round {turn + 1}; reporting what was measured")
                    return results
                figures = await measure(name, servers[name], concurrency, args)
                results[name, concurrency].append(figures)
                print(f"  round {turn + 1} C={concurrency:<5} {name:<10} {figures}", flush=True)
    return results


FIGURES = (
    ("cpu_us", "server CPU per delta, us"),
    ("gc_us", "of which collecting, us"),
    ("rss_kib", "RSS per open stream, KiB"),
    ("p50_ms", "latency p50, ms"),
    ("p99_ms", "latency p99, ms"),
)


def _spread(values: list[float], digits: int = 1) -> str:
    """Median (min-max), over the figures there are (a saturated server may have no RSS one)."""
    values = [value for value in values if not math.isnan(value)]
    if not values:
        return "-"
    median = statistics.median(values)
    return f"{median:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def report(results: Results, names: list[str], concurrency: list[int]) -> None:
    others = [name for name in names if name not in {"floor", "peer"}]
    for c in concurrency:
        print(f"\nC = {c} concurrent runs: median (min-max) over rounds")
        print(f"{'figure':<28}" + "".join(f"{name:>24}" for name in names))
        for field, label in FIGURES:
            cells = [_spread([getattr(f, field) for f in results[name, c]]) for name in names]
            print(f"{label:<28}" + "".join(f"{cell:>24}" for cell in cells))
        wholes = [f"{sum(f.whole for f in results[n, c])}/{c * len(results[n, c])}" for n in names]
        print(f"{'runs whole':<28}" + "".join(f"{cell:>24}" for cell in wholes))
        for name in others:
            for reference in ("floor", "peer"):
                _compare(results, name, reference, c)


def _compare(results: Results, name: str, reference: str, c: int) -> None:
    """Ratios of CPU and memory, and differences of latency (ms), within each round."""
    pairs = list(zip(results[name, c], results.get((reference, c), []), strict=False))
    if not pairs:
        return
    cpu = _spread([a.cpu_us / b.cpu_us for a, b in pairs], 2)
    rss = _spread([a.rss_kib / b.rss_kib for a, b in pairs], 2)
    p50 = _spread([a.p50_ms - b.p50_ms for a, b in pairs], 2)
    p99 = _spread([a.p99_ms - b.p99_ms for a, b in pairs], 2)
    print(
        f"  {name} vs {reference}: CPU {cpu}x, RSS {rss}x; latency minus {reference}'s: "
        f"p50 {p50} ms, p99 {p99} ms"
    )


# -- profiling ---------------------------------------------------------------------------------


async def profile(args: argparse.Namespace) -> None:
    """Serve one server under cProfile or tracemalloc and drive one configuration at it.

    The profile is printed by the server (stderr): `cpu` profiles from the warm-up's end to
    the server's; `memory` reports what was allocated since the warm-up's end and is held
    halfway through the runs, when every stream is open (sites, and objects by type).
    """
    server, port = start_server(args.servers.split(",")[0], None, args.profile)
    try:
        await warm_up(port, args)
        server.send_signal(signal.SIGUSR1)
        concurrency = args.concurrency[0]
        task = asyncio.create_task(drive(server.pid, port, concurrency, args))
        if args.profile == "memory":
            await asyncio.sleep(args.ramp + args.interval * args.deltas / 2)
            server.send_signal(signal.SIGUSR1)
        print(await task)
    finally:
        stop_server(server)


def _raise_open_files() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="many concurrent token streams, three servers")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--concurrency",
        type=lambda text: [int(c) for c in text.split(",")],
        default=[200, 1000, 2000],
    )
    parser.add_argument("--deltas", type=int, default=100)
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between deltas")
    parser.add_argument("--ramp", type=float, default=1.0, help="seconds to open the runs over")
    parser.add_argument("--servers", default=",".join(SERVERS))
    parser.add_argument("--also", action="append", default=[], metavar="NAME=SRC")
    parser.add_argument("--time-limit", type=float, default=1800, help="seconds, in all")
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--server-profile", choices=("cpu", "memory"), help=argparse.SUPPRESS)
    parser.add_argument("--profile", choices=("cpu", "memory"))
    return parser.parse_args()


def main() -> int:
    args = parse()
    files = _raise_open_files()
    if args.serve is not None:
        serve(args.serve, args.server_profile)
        return 0
    if args.profile is not None:
        uvloop.run(profile(args))
        return 0
    servers: dict[str, str | None] = dict.fromkeys(args.servers.split(","))
    servers |= dict(pair.split("=", 1) for pair in args.also)
    print(
        f"streams: {args.deltas} deltas {args.interval * 1000:.0f} ms apart per run, C in "
        f"{args.concurrency}, {args.rounds} rounds; uvicorn {uvicorn.__version__} (uvloop, "
        f"httptools, one worker); Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, open files {files}; load at start {os.getloadavg()}",
        flush=True,
    )
    results = uvloop.run(run_rounds(args, servers))
    report(results, list(servers), args.concurrency)
    print(f"load at end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
