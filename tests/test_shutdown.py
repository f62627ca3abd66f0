"""Graceful shutdown: the runs in flight end, their streams with a terminal event, and then the
server stops.

`agui serve` is a real subprocess sent a real signal; the lifespan's shutdown is driven in
process, as any ASGI server sends it; and a plain uvicorn that cancels its connections once its
graceful timeout is over (`agui.testing.serving`, 2 s) is served in a thread. The agents write a
file from their `finally` block, which the tests read: proof that each agent unwound.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn
from pydantic import JsonValue
from starlette.applications import Starlette
from starlette.routing import Mount

from agui import RunContext
from agui.asgi import Receive, Scope, Send, asgi_app
from agui.asgi._admission import Message
from agui.asgi._server import LIMITS, graceful_server, listen, run_to_end
from agui.cli import main
from agui.cli._serve import add_serve
from agui.testing import serving
from asgi_calls import post_in_process

Ctx = RunContext[JsonValue]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

AGUI = Path(sys.executable).parent / "agui"
WAIT_SECONDS = 20.0
STREAMS = 10
GRACE = 3

AGENT_FILE = """\
import asyncio
import os
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path


async def agent(ctx):
    try:
        ctx.say("working")
        await asyncio.sleep(3600)
    finally:
        Path(os.environ["UNWOUND"], ctx.run_id).write_text("unwound")
"""


def request_body(run_id: str) -> bytes:
    return json.dumps({"threadId": "t", "runId": run_id, "protocolVersion": "1.0"}).encode()


def request_bytes(run_id: str) -> bytes:
    body = request_body(run_id)
    head = (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def open_stream(port: int, run_id: str) -> tuple[socket.socket, bytearray]:
    """Start a run on a new connection; return it once the agent's text has arrived."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)
    sock.sendall(request_bytes(run_id))
    answer = bytearray()
    while b"TEXT_MESSAGE_END" not in answer:
        data = sock.recv(65536)
        assert data, "the server closed the connection before the agent's text"
        answer += data
    return sock, answer


def read_to_end(sock: socket.socket, answer: bytearray) -> list[dict[str, Any]]:
    """Read until the server closes the connection; the stream's events, decoded."""
    while data := sock.recv(65536):
        answer += data
    sock.close()
    body = bytes(answer).partition(b"\r\n\r\n")[2]
    frames = [line for line in body.split(b"\n") if line.startswith(b"data: ")]
    return [json.loads(frame[len(b"data: ") :]) for frame in frames]


def port_of(process: subprocess.Popen[str]) -> int:
    assert process.stdout is not None
    line: str = process.stdout.readline()
    assert line.startswith("agui: serving on "), line
    port = urlsplit(line.removeprefix("agui: serving on ").strip()).port
    assert port is not None
    return port


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_shutdown_signal_ends_every_stream_in_flight_with_run_finished_cancelled(
    tmp_path: Path, sent: signal.Signals
) -> None:
    (tmp_path / "agents.py").write_text(AGENT_FILE)
    unwound = tmp_path / "unwound"
    unwound.mkdir()
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", "agents.py:agent", "--port", "0", "--grace", str(GRACE)],
        cwd=tmp_path,
        env={"UNWOUND": str(unwound), "PATH": str(AGUI.parent)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = port_of(process)
        streams = [open_stream(port, f"run-{number}") for number in range(STREAMS)]
        process.send_signal(sent)
        ended = [read_to_end(sock, answer) for sock, answer in streams]
        status = process.wait(timeout=WAIT_SECONDS)
    finally:
        if process.poll() is None:  # pragma: no cover - only when the shutdown hangs
            process.kill()
        _, errors = process.communicate(timeout=WAIT_SECONDS)

    assert status == 0, errors
    assert "Traceback" not in errors
    for events in ended:
        assert events[-1]["type"] == "RUN_FINISHED"
        assert events[-1]["outcome"] == {"type": "cancelled"}
    assert sorted(path.name for path in unwound.iterdir()) == sorted(
        f"run-{number}" for number in range(STREAMS)
    )


def test_the_lifespans_shutdown_ends_the_streams_in_flight() -> None:
    unwound: list[str] = []
    started: list[str] = []

    async def agent(ctx: Ctx) -> None:
        try:
            ctx.say("working")
            started.append(ctx.run_id)
            await asyncio.sleep(3600)
        finally:
            unwound.append(ctx.run_id)

    app = asgi_app(agent)

    async def main() -> tuple[list[list[bytes]], list[str]]:
        streams = [
            asyncio.ensure_future(post_in_process(app, request_body(f"run-{number}")))
            for number in range(3)
        ]
        for _ in range(1000):
            if len(started) == len(streams):
                break
            await asyncio.sleep(0.01)
        lifespan = await run_lifespan(app)
        return [stream.result() for stream in streams], lifespan

    bodies, lifespan = asyncio.run(main())

    assert lifespan == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert sorted(unwound) == ["run-0", "run-1", "run-2"]
    for parts in bodies:
        last = b"".join(parts).strip().rsplit(b"\n\n", 1)[-1]
        assert json.loads(last.removeprefix(b"data: "))["outcome"] == {"type": "cancelled"}
        assert parts[-1] == b""  # the response ended


def test_a_mounted_endpoint_ends_its_streams_from_the_frameworks_lifespan_as_documented() -> None:
    started: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ctx.say("working")
        started.append(ctx.run_id)
        await asyncio.sleep(3600)

    endpoint = asgi_app(agent)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        yield
        await endpoint.aclose()

    app = Starlette(routes=[Mount("/agent", app=endpoint)], lifespan=lifespan)

    async def main() -> tuple[list[bytes], list[str]]:
        stream = asyncio.ensure_future(
            post_in_process(app, request_body("run-mounted"), path="/agent/")
        )
        for _ in range(1000):
            if started:
                break
            await asyncio.sleep(0.01)
        return await asyncio.wait_for(run_and_stop(app, stream), WAIT_SECONDS)

    parts, answers = asyncio.run(main())

    assert answers == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    last = b"".join(parts).strip().rsplit(b"\n\n", 1)[-1]
    assert json.loads(last.removeprefix(b"data: "))["outcome"] == {"type": "cancelled"}


async def run_and_stop(
    app: App, stream: asyncio.Future[list[bytes]]
) -> tuple[list[bytes], list[str]]:
    """The framework's lifespan, started and shut down, then what the stream carried."""
    answers = await run_lifespan(app)
    return await stream, answers


async def run_lifespan(app: App) -> list[str]:
    """Start `app`'s lifespan and shut it down at once; what the app answered."""
    answers: list[str] = []
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> Message:
        return next(incoming)

    async def send(message: Message) -> None:
        answers.append(message["type"])

    await app({"type": "lifespan"}, receive, send)
    return answers


def test_a_plain_uvicorn_past_its_graceful_timeout_still_ends_the_stream(
    caplog: pytest.LogCaptureFixture,
) -> None:
    unwound: list[str] = []

    async def agent(ctx: Ctx) -> None:
        try:
            ctx.say("working")
            await asyncio.sleep(3600)
        finally:
            unwound.append(ctx.run_id)

    ended: list[list[dict[str, Any]]] = []
    with serving(asgi_app(agent)) as url:
        port = urlsplit(url).port
        assert port is not None
        # uvicorn's loggers do not propagate: hear its own (once it has configured them).
        logging.getLogger("uvicorn.error").addHandler(caplog.handler)
        sock, answer = open_stream(port, "run-1")
        reader = threading.Thread(target=lambda: ended.append(read_to_end(sock, answer)))
        reader.start()
        began = time.monotonic()
    # uvicorn waited for the connection for its graceful timeout, then cancelled it.
    reader.join(WAIT_SECONDS)
    logging.getLogger("uvicorn.error").removeHandler(caplog.handler)

    assert time.monotonic() - began < WAIT_SECONDS
    assert unwound == ["run-1"]
    assert ended[0][-1]["type"] == "RUN_FINISHED"
    assert ended[0][-1]["outcome"] == {"type": "cancelled"}
    assert any("timeout graceful shutdown exceeded" in r.getMessage() for r in caplog.records)


def test_an_agent_that_ignores_the_shutdowns_cancellation_is_logged_and_its_stream_ended(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ignored = threading.Event()

    async def agent(ctx: Ctx) -> None:
        ctx.say("working")
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            ignored.set()  # and carries on, for longer than the grace period
            await asyncio.sleep(3)

    ended: list[list[dict[str, Any]]] = []
    with (
        caplog.at_level(logging.ERROR, logger="agui.asgi"),
        serving(asgi_app(agent, cancel_grace=0.5)) as url,
    ):
        port = urlsplit(url).port
        assert port is not None
        sock, answer = open_stream(port, "run-1")
        reader = threading.Thread(target=lambda: ended.append(read_to_end(sock, answer)))
        reader.start()
    reader.join(WAIT_SECONDS)

    assert ignored.is_set()
    assert [event["type"] for event in ended[0]][-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert ended[0][-1]["code"] == "RUN_ABANDONED"
    logged = [r.getMessage() for r in caplog.records if r.name == "agui.asgi"]
    assert logged == [
        (
            "run task 'agui run run-1' ignored being cancelled (the server is shutting down) "
            "for 0.5 s; it is left running"
        )
    ]


def test_a_run_that_ignores_the_shutdown_and_loses_its_client_gets_no_frame_of_the_endpoints(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("working")
        ctx.say("more")  # its send hangs, then fails: the client is gone
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(0.6)  # ignored, for longer than the grace period

    async def main() -> list[bytes]:
        parts: list[bytes] = []
        incoming: list[Message] = [{"type": "http.request", "body": request_body("run-1")}]
        never, hanging, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def receive() -> Message:
            if incoming:
                return incoming.pop()
            await never.wait()
            return {"type": "http.disconnect"}  # pragma: no cover - the task is cancelled first

        async def send(message: Message) -> None:
            body = message.get("body", b"")
            if b'"more"' in body:
                hanging.set()
                await release.wait()
                raise OSError("the client went away")  # noqa: EM101, TRY003 - a fake transport
            parts.append(body)

        headers = [(b"content-type", b"application/json")]
        scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
        task = asyncio.ensure_future(asgi_app(agent, cancel_grace=0.2)(scope, receive, send))
        await hanging.wait()
        task.cancel()  # as a server does at its graceful timeout
        await asyncio.sleep(0.05)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        return parts

    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        parts = asyncio.run(main())

    assert not any(b"RUN_ERROR" in part for part in parts)
    logged = [r.getMessage() for r in caplog.records if r.name == "agui.asgi"]
    assert logged[0] == (
        "run task 'agui run run-1' ignored being cancelled (the server is shutting down) "
        "for 0.2 s; it is left running"
    )


def test_a_graceful_server_ends_the_runs_before_uvicorn_waits_on_their_connections(
    caplog: pytest.LogCaptureFixture,
) -> None:
    order: list[str] = []

    async def agent(ctx: Ctx) -> None:
        try:
            ctx.say("working")
            await asyncio.sleep(3600)
        finally:
            order.append("unwound")

    app = asgi_app(agent)

    async def before_shutdown() -> None:
        order.append("hook")
        await app.aclose()
        order.append("runs ended")

    config = uvicorn.Config(app, log_level="info", timeout_graceful_shutdown=60, **LIMITS)
    logging.getLogger("uvicorn.error").addHandler(caplog.handler)  # it does not propagate
    server = graceful_server(config, before_shutdown)
    sock = listen("127.0.0.1", 0)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(int(WAIT_SECONDS * 100)):
            if server.started:
                break
            time.sleep(0.01)
        stream, answer = open_stream(sock.getsockname()[1], "run-1")
        server.should_exit = True
        events = read_to_end(stream, answer)
    finally:
        server.should_exit = True
        thread.join(WAIT_SECONDS)
        sock.close()
        logging.getLogger("uvicorn.error").removeHandler(caplog.handler)

    assert not thread.is_alive()
    assert order == ["hook", "unwound", "runs ended"]
    assert events[-1]["outcome"] == {"type": "cancelled"}
    logged = [r.getMessage() for r in caplog.records if r.name == "uvicorn.error"]
    assert not any("timeout graceful shutdown exceeded" in line for line in logged)


def test_agui_serve_states_its_grace_period_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())

    assert status == 0
    assert "--grace SECONDS on Ctrl-C or SIGTERM, how long the cancelled runs have" in text
    assert "stopped with Ctrl-C or SIGTERM: the runs in flight are cancelled" in text


@pytest.mark.parametrize(
    ("given", "problem"),
    [("-1", "-1 is not a duration"), ("inf", "inf is not a duration"), ("soon", "'soon'")],
)
def test_agui_serve_refuses_a_grace_that_is_not_a_duration(
    given: str, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["serve", "x.py:agent", "--grace", given])

    assert status == 2
    assert problem in capsys.readouterr().err


# uvicorn closes the cut connection's transport, which keeps its unsent frames until the client
# reads them; its loop then stops with the transport still closing, which an in-thread server
# leaves to the garbage collector (a server process exits there).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stream_whose_client_reads_nothing_is_cut_once_its_grace_is_over() -> None:
    unwound: list[str] = []

    async def agent(ctx: Ctx) -> None:
        try:
            with ctx.message() as message:
                while True:  # until cancelled: the client reads nothing
                    message.delta("v" * 65536)
                    await ctx.writable()
        finally:
            unwound.append(ctx.run_id)

    with serving(asgi_app(agent, cancel_grace=0.2)) as url:
        port = urlsplit(url).port
        assert port is not None
        sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.sendall(request_bytes("run-1"))
        sock.recv(1024)  # the stream has begun
    sock.close()
    gc.collect()  # the transport uvicorn left closing goes here, not in a later test

    assert unwound == ["run-1"]


def test_agui_serve_takes_a_grace_in_seconds_five_by_default() -> None:
    parser = argparse.ArgumentParser(prog="agui")
    add_serve(parser.add_subparsers())

    assert parser.parse_args(["serve", "x.py:agent", "--grace", "2.5"]).grace == 2.5
    assert parser.parse_args(["serve", "x.py:agent"]).grace == 5


class _LeavesTasks(uvicorn.Server):
    """A server whose run leaves a task that ends when cancelled and one that never does."""

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:  # noqa: ARG002
        async def polite() -> None:
            await asyncio.sleep(60)

        async def stubborn() -> None:
            for _ in range(100):  # ignores every cancellation the test gives it
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.sleep(60)

        self.left = [asyncio.create_task(polite()), asyncio.create_task(stubborn(), name="mule")]
        await asyncio.sleep(0)


def test_run_to_end_cancels_what_the_server_left_and_leaves_behind_what_ignores_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def hello(ctx: RunContext[JsonValue]) -> None:
        ctx.say("hi")

    server = _LeavesTasks(uvicorn.Config(asgi_app(hello)))

    with caplog.at_level(logging.ERROR, logger="agui.asgi"), listen("127.0.0.1", 0) as sock:
        started = time.monotonic()
        left = run_to_end(server, [sock], grace=0.2)

    assert left == 1
    assert time.monotonic() - started < 5.0
    assert server.left[0].cancelled()
    assert not server.left[1].done()
    assert "task 'mule' ignored its cancellation; the server leaves it behind" in caplog.text
