"""Backpressure: what a client that stops reading costs the server, in resident memory.

A real uvicorn (agui's own `listen` socket, as `agui serve` binds it) serves, in a child
process, an agent that streams 100 MB of text as 100,000 deltas of 1,000 characters. A
raw-socket client sends the request and then reads nothing. The child's
resident set (`VmRSS`) is sampled until it has not grown for a while; then the client reads the
rest, and the stream must end with `RUN_FINISHED`. The figure is the growth of the child's RSS
over its RSS after a warm-up request, the peak minus that baseline.

Three agents, `--agent`:

- `paced` (the default): awaits `ctx.writable()` after each delta, as the tool loop does after
  each model chunk. The queue stops at the high-water mark (`max_buffered_bytes`, 1 MiB).
- `unpaced`: awaits `asyncio.sleep(0)` instead, with `buffer_hard_limit` raised to 1 GiB: what
  the server did before backpressure, everything the client has not read held in memory.
- `capped`: `unpaced` with the default hard limit (64 MiB): the run is cancelled there, and the
  stream still ends (`RUN_FINISHED`, outcome `cancelled`) once the client reads.

Linux only (`/proc`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import uvicorn

import agui
from agui.asgi._server import LIMITS, listen
from agui.sink import HARD_LIMIT

DELTAS = 100_000
FILL = "x" * 990 + "\n"
SAMPLE_SECONDS = 0.2
STABLE_SECONDS = 3.0
LIMIT_SECONDS = 120.0
WARM_UP_DELTAS = 2_000


def serve(agent_kind: str) -> None:
    """The child: serve the agent on a free port, print the port, serve until killed."""

    async def agent(ctx: agui.RunContext[object]) -> None:
        count = int(str(ctx.forwarded_props or DELTAS))
        with ctx.message() as message:
            for number in range(count):
                message.delta(f"{number:09d}{FILL}")  # a new string each, as a model's are
                if agent_kind == "paced":
                    await ctx.writable()
                else:
                    await asyncio.sleep(0)

    hard_limit = 1 << 30 if agent_kind == "unpaced" else HARD_LIMIT
    app = agui.asgi_app(agent, buffer_hard_limit=hard_limit)
    sock = listen("127.0.0.1", 0)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="none", **LIMITS)
    uvicorn.Server(config).run(sockets=[sock])


def rss_kib(pid: int) -> int:
    """The resident set of a process, in KiB, from `/proc/PID/status`."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    message = f"no VmRSS for process {pid}"
    raise RuntimeError(message)


def post(port: int, deltas: int) -> socket.socket:
    """Send the run's request on a new connection; return the connection, unread."""
    run = {"threadId": "t", "runId": "r", "protocolVersion": "1.0", "forwardedProps": deltas}
    body = json.dumps(run).encode()
    head = (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    sock.connect(("127.0.0.1", port))
    sock.sendall(head.encode() + body)
    return sock


def read_to_end(sock: socket.socket) -> tuple[int, bytes]:
    """Read the stream until its chunked body ends; its size and its last bytes."""
    total, tail = 0, b""
    sock.settimeout(LIMIT_SECONDS)
    while not tail.endswith(b"\r\n0\r\n\r\n"):
        data = sock.recv(1 << 20)
        if not data:
            break
        total += len(data)
        tail = (tail + data)[-400:]
    return total, tail


def watch(pid: int) -> tuple[int, float]:
    """Sample the child's RSS until it stops growing; its peak (KiB) and the seconds taken."""
    start = time.monotonic()
    peak = rss_kib(pid)
    grew = start
    while time.monotonic() - grew < STABLE_SECONDS and time.monotonic() - start < LIMIT_SECONDS:
        time.sleep(SAMPLE_SECONDS)
        now = rss_kib(pid)
        if now > peak + 256:
            grew = time.monotonic()
        peak = max(peak, now)
    return peak, time.monotonic() - start


def measure(agent_kind: str) -> int:
    """Run one measurement against a fresh child; print the figures; 1 if the stream is wrong."""
    child = subprocess.Popen(  # noqa: S603 - this script, run again as the server
        [sys.executable, __file__, "--serve", agent_kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        with post(port, WARM_UP_DELTAS) as warm:
            read_to_end(warm)
        time.sleep(0.5)
        baseline = rss_kib(child.pid)
        with post(port, DELTAS) as sock:
            peak, seconds = watch(child.pid)
            total, tail = read_to_end(sock)
    finally:
        child.kill()
        _, logged = child.communicate()
    ended = b'"type":"RUN_FINISHED"' in tail
    outcome = "cancelled" if b'"cancelled"' in tail else "success"
    print(
        f"{agent_kind:>8}: RSS {baseline / 1024:6.1f} MiB -> peak {peak / 1024:6.1f} MiB, "
        f"growth {(peak - baseline) / 1024:6.1f} MiB (watched {seconds:4.1f} s); then read "
        f"{total / 1e6:6.1f} MB, RUN_FINISHED {outcome if ended else 'MISSING'}"
    )
    for line in logged.splitlines():
        print(f"          logged: {line}")
    return 0 if ended else 1


def main() -> int:
    parser = argparse.ArgumentParser(description="server RSS when a client stops reading")
    parser.add_argument(
        "--agent",
        choices=("paced", "unpaced", "capped", "all"),
        default="paced",
        help="which agent (default paced; all runs the three)",
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    kinds = ("paced", "unpaced", "capped") if args.agent == "all" else (args.agent,)
    print(
        f"Python {platform.python_version()}, {platform.machine()}; {DELTAS:,} deltas of "
        f"{len(FILL) + 9:,} characters ({DELTAS * (len(FILL) + 9) / 1e6:.0f} MB of text) to a "
        "client that reads nothing until the server's memory stops growing"
    )
    return max(measure(kind) for kind in kinds)


if __name__ == "__main__":
    sys.exit(main())
