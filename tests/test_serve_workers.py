"""`agui serve --workers N`: several processes on one socket, stopped together, sharing runs.

The real tests start `agui serve` as a shell would, with a real `redis-server` for the run log
the workers share. Which worker answers a connection is the kernel's choice; a worker whose
agent blocks its event loop (`time.sleep`) accepts nothing meanwhile, so the next connection
goes to the other one: that is how a test reaches a given worker, with bounded retries.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from agui.cli import _serve, main
from agui.cli._workers import supervise
from redis_server import running_redis

AGUI = Path(sys.executable).parent / "agui"
HELLO = Path(__file__).parent.parent / "examples" / "hello.py"
SECONDS = 30.0
BLOCK_SECONDS = 3.0

AGENT = f"""
import asyncio, os, pathlib, time

async def agent(ctx):
    ctx.say(str(os.getpid()))
    if ctx.run_id.startswith("block"):
        await asyncio.sleep(0.2)  # the pid goes out first
        pathlib.Path(__file__).with_name(ctx.run_id).touch()
        time.sleep({BLOCK_SECONDS})  # then this worker accepts nothing for a while
"""


@pytest.mark.parametrize("given", ["0", "-1", "1.5", "two"])
def test_serve_refuses_a_number_of_workers_below_one_or_not_whole(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", f"{HELLO}:agent", "--port", "0", "--workers", given]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"agui serve: error: argument --workers: {given!r} is not a number of workers: give a "
        "whole number, 1 or more"
    )
    assert err.count("\n") == 1


def test_serve_refuses_workers_that_would_each_keep_their_own_memory_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", f"{HELLO}:agent", "--workers", "2", "--runs", "memory"]) == 2
    assert capsys.readouterr().err == (
        "agui serve: error: --workers 2 with --runs memory would keep each worker's runs to "
        "itself: give a redis:// URL the workers share, or one worker\n"
    )


@contextmanager
def served_by_workers(target: str, redis_url: str) -> Generator[tuple[int, subprocess.Popen[str]]]:
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", target, "--port", "0", "--workers", "2", "--runs", redis_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        line = process.stdout.readline()
        assert line.startswith("agui: serving on "), line + process.stderr.read()
        url = line.removeprefix("agui: serving on ").strip()
        yield int(url.rsplit(":", 1)[1].strip("/")), process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=SECONDS)
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def post(port: int, run_id: str) -> list[dict[str, object]]:
    body = {"threadId": f"t-{run_id}", "runId": run_id}
    with httpx.Client(timeout=SECONDS) as client:
        answer = client.post(f"http://127.0.0.1:{port}/", json=body)
    assert answer.status_code == 200, answer.text
    return frames(answer.text)


def frames(text: str) -> list[dict[str, object]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data: ")
    ]


def said(events: list[dict[str, object]]) -> int:
    [delta] = [event["delta"] for event in events if event["type"] == "TEXT_MESSAGE_CONTENT"]
    return int(str(delta))


@contextmanager
def blocking(port: int, run_id: str, where: Path) -> Generator[int, None, None]:
    """Start a run that blocks its worker's loop; yield that worker's pid once it is blocked
    (the agent marks it in `where`); then read the run out."""
    body = json.dumps({"threadId": f"t-{run_id}", "runId": run_id}).encode()
    head = (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=SECONDS) as sock:
        sock.sendall(head + body)
        answer = b""
        while (pid := re.search(rb'"delta":"(\d+)"', answer)) is None:
            chunk = sock.recv(65536)
            assert chunk, answer
            answer += chunk
        deadline = time.monotonic() + SECONDS
        while not (where / run_id).exists():
            assert time.monotonic() < deadline, f"{run_id} never blocked its worker"
            time.sleep(0.01)
        yield int(pid[1])
        while sock.recv(65536):
            pass


def test_two_workers_serve_share_runs_through_redis_and_stop_together_on_sigterm(
    tmp_path: Path,
) -> None:
    (tmp_path / "pids.py").write_text(AGENT)
    with (
        running_redis() as redis,
        served_by_workers(f"{tmp_path}/pids.py:agent", redis.url) as (
            port,
            process,
        ),
    ):
        with blocking(port, "block-1", tmp_path) as first:
            events = post(port, "r1")  # the other worker: the first is blocked
        second = said(events)
        assert first != second
        for attempt in range(10):  # block the worker that ran r1, then read r1 through the other
            with blocking(port, f"block-{attempt + 2}", tmp_path) as blocked:
                if blocked != second:
                    continue
                with httpx.Client(timeout=SECONDS) as client:
                    replay = client.get(f"http://127.0.0.1:{port}/runs/r1/events")
            break
        else:
            pytest.fail("no run landed on the worker that ran r1")
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=SECONDS)

    assert replay.status_code == 200, replay.text
    assert frames(replay.text) == events
    assert status == 0
    deadline = time.monotonic() + SECONDS
    while any(Path(f"/proc/{pid}").exists() for pid in (first, second)):
        assert time.monotonic() < deadline, "a worker outlived its supervisor"
        time.sleep(0.05)


# -- the supervisor, in this process: its workers are spawned processes running these -------


def wait_then_stop(sock: socket.socket) -> None:
    """A worker that says it is up (a byte to the test) and waits for its SIGTERM."""
    with socket.socket(fileno=sock.detach()) as channel:
        channel.sendall(b"up")
        time.sleep(SECONDS)


def leave_at_once(sock: socket.socket) -> None:
    """A worker that exits on its own, at once."""
    sock.close()


def test_the_supervisor_stops_every_worker_on_sigterm_and_exits_0() -> None:
    here, there = socket.socketpair()
    with here, there:

        def stop_once_both_are_up() -> None:
            here.settimeout(SECONDS)
            received = b""
            while len(received) < len(b"upup"):
                received += here.recv(16)
            os.kill(os.getpid(), signal.SIGTERM)

        waiter = threading.Thread(target=stop_once_both_are_up)
        waiter.start()
        status = supervise(wait_then_stop, there, 2, grace=0.5)
        waiter.join(SECONDS)

    assert status == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_worker_that_exits_on_its_own_stops_the_others_and_the_command_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as sock:
        status = supervise(leave_at_once, sock, 2, grace=0.5)

    assert status == 1
    assert re.fullmatch(
        r"agui serve: error: agui worker [12] exited on its own \(status 0\); the others were "
        r"stopped\n",
        capsys.readouterr().err,
    )


def test_serve_hands_its_bound_socket_and_options_to_the_supervisor(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    handed: list[tuple[object, socket.socket, int, float]] = []

    def fake_supervise(work: object, sock: socket.socket, workers: int, *, grace: float) -> int:
        handed.append((work, sock, workers, grace))
        return 1

    monkeypatch.setattr(_serve, "supervise", fake_supervise)
    argv = ["serve", f"{HELLO}:agent", "--port", "0", "--workers", "3", "--grace", "2"]

    assert main(argv) == 1
    [(work, sock, workers, grace)] = handed
    assert (workers, grace) == (3, 2.0)
    assert isinstance(work, functools.partial)
    assert work.func is _serve._work  # pyright: ignore[reportPrivateUsage]
    assert sock.fileno() == -1, "the listening socket is closed once the workers are done"
    assert capsys.readouterr().out.startswith("agui: serving on http://127.0.0.1:")
