"""The `agui` command in tests: a project of agent files, and `agui serve` in a real subprocess.

Subprocesses listen on 127.0.0.1 only, print their address, and are stopped by the test; every
wait is bounded.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import agui
from agui.cli import (
    main,
)
from agui.testing import assert_valid

AGUI = Path(sys.executable).parent / "agui"
ROOT = Path(__file__).resolve().parents[1]
App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
STARTUP_SECONDS = 20.0

AGENT_FILE = """
import asyncio
from dataclasses import dataclass

from agui import RunOutcome


@dataclass
class Counter:
    count: int = 0


async def agent(ctx):
    ctx.say("Hello from a file")


async def thinking(ctx):
    await asyncio.sleep(0.8)
    ctx.say("thought it over")


async def counting(ctx):
    ctx.state.count += 1
    ctx.publish_state()
    ctx.say(f"count is {ctx.state.count}")


def not_async(ctx):
    return None


async def two_arguments(ctx, extra):
    return None


async def streams(ctx):
    yield "hi"


class Runner:
    async def run(self, ctx):
        ctx.say("from a run method")


class SyncRunner:
    def run(self, ctx):
        return None


class WideRunner:
    async def run(self, ctx, extra):
        return None


class Callable:
    async def __call__(self, ctx):
        ctx.say("from an async __call__")


runner = Runner()
sync_runner = SyncRunner()
wide_runner = WideRunner()
callable_agent = Callable()
number = 42
"""

LAZY_FILE = """
class Computed:
    @property
    def run(self):
        raise RuntimeError("run is computed, and computing it fails")


computed = Computed()


def __getattr__(name):
    raise ImportError(f"{name} needs an extra that is not installed")
"""


@contextmanager
def agui_serve(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> Generator[str, None, None]:
    """Run `agui serve ARGS` in a subprocess; yield the URL it prints; stop it on exit.

    `env` adds to this process's environment.
    """
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", *args, "--port", "0"],
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield announced_url(process)
    finally:
        process.send_signal(signal.SIGINT)  # Ctrl-C: a graceful shutdown
        try:
            status = process.wait(timeout=STARTUP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STARTUP_SECONDS)
            raise
        finally:
            assert process.stdout is not None
            assert process.stderr is not None
            process.stdout.close()
            errors = process.stderr.read().decode()
            process.stderr.close()
        assert status == 0, errors
        assert "Traceback" not in errors


def announced_url(process: subprocess.Popen[bytes]) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + STARTUP_SECONDS
    line = b""
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        assert remaining > 0, "agui serve did not announce its address in time"
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if ready:
            byte = os.read(process.stdout.fileno(), 1)
            assert byte, f"agui serve exited early: {process.wait(timeout=STARTUP_SECONDS)}"
            line += byte
    prefix = "agui: serving on "
    text = line.decode().strip()
    assert text.startswith(prefix), text
    return text.removeprefix(prefix)


def post_run(url: str, body: dict[str, Any]) -> list[agui.Event]:
    with httpx.Client(timeout=STARTUP_SECONDS) as client:
        response = client.post(url, json=body, headers={"accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    frames = [f for f in response.content.split(b"\n\n") if f.startswith(b"data: ")]
    events = [agui.parse_event(frame.removeprefix(b"data: ")) for frame in frames]
    assert_valid(events)
    return events


# -- verify and watch: a run to read, and the commands run in process -------------------------

RUN = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"},
]


def run_verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(["verify", *argv])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


# -- live endpoints: a server in a thread ------------------------------------------------------

Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def replaying(
    *frames: bytes,
    status: int = 200,
    content_type: bytes = b"text/event-stream",
    location: str | None = None,
) -> Asgi:
    """An endpoint that answers every POST with these bytes, whatever it is asked."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", content_type)]
        headers += [(b"location", location.encode())] if location else []
        await send({"type": "http.response.start", "status": status, "headers": headers})
        for frame in frames:
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


def frames(*events: dict[str, Any] | str) -> list[bytes]:
    return [
        b"data: " + (e if isinstance(e, str) else json.dumps(e)).encode() + b"\n\n" for e in events
    ]


BROKEN = frames(
    RUN[0],
    {"type": "FUTURE_EVENT"},  # dropped, with a note
    RUN[2],  # content for a message that is not open
    RUN[3],  # follows from it: counted, not shown
    "not json",  # counted too
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
)  # and no terminal event


async def hello_agent(ctx: agui.RunContext[object]) -> None:
    ctx.say(f"Hello, {ctx.last_user_text or 'you'}!")


def run_watch(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(["watch", *argv])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


# -- the command in a real process ------------------------------------------------------------


def run_agui(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """The console script, run for real, with its output."""
    return subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )
