"""The `agui` command: `agui serve` in a real subprocess, and its errors, in and out of process.

Subprocesses listen on 127.0.0.1 only, print their address, and are stopped by the test; every
wait is bounded.
"""

from __future__ import annotations

import importlib.util
import inspect
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import uvicorn

import agui
import corpus
from agui.asgi import KEEPALIVE, asgi_app
from agui.cli import (
    _capture,
    _demo,
    _serve,
    _watch,
    load_agent,
    load_state_type,
    load_target,
    main,
)
from agui.cli._render import Renderer
from agui.cli._serve import exit_past_lingering_threads
from agui.client import SSEParser
from agui.errors import CaptureError, TargetError
from agui.events import ToolCallStartEvent
from agui.testing import assert_valid, fold, serving

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


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding `agents.py`, made the working directory; sys.path is restored."""
    (tmp_path / "agents.py").write_text(AGENT_FILE)
    (tmp_path / "broken.py").write_text("raise RuntimeError('this module fails on import')\n")
    (tmp_path / "exits.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "boom.py").write_text(
        "class Boom(BaseException):\n    pass\n\nraise Boom('bang')\n"
    )
    (tmp_path / "interrupts.py").write_text("raise KeyboardInterrupt\n")
    (tmp_path / "lazy.py").write_text(LAZY_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("agents", "broken", "exits", "boom", "interrupts", "lazy"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


@contextmanager
def agui_serve(*args: str, cwd: Path) -> Generator[str, None, None]:
    """Run `agui serve ARGS` in a subprocess; yield the URL it prints; stop it on exit."""
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", *args, "--port", "0"],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield _announced_url(process)
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


def _announced_url(process: subprocess.Popen[bytes]) -> str:
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


# -- serving, for real -------------------------------------------------------------------------


def test_serve_streams_runs_of_a_file_target_at_its_path(project: Path) -> None:
    with agui_serve(str(project / "agents.py") + ":agent", "--path", "/agent/", cwd=project) as url:
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/agent")
        events = post_run(url, {"threadId": "t", "runId": "r"})
        with httpx.Client(timeout=STARTUP_SECONDS) as client:
            elsewhere = client.post(url.removesuffix("agent") + "other", json={})

    assert [m.content for m in fold(events).messages] == ["Hello from a file"]
    assert elsewhere.status_code == 404
    assert elsewhere.json()["code"] == "NOT_FOUND"


def test_serve_loads_a_module_target_and_a_state_type_from_the_working_directory(
    project: Path,
) -> None:
    with agui_serve("agents:counting", "--state", "agents:Counter", cwd=project) as url:
        assert url.endswith("/")
        events = post_run(url, {"threadId": "t", "runId": "r", "state": {"count": 41}})

    folded = fold(events)
    assert folded.state == {"count": 42}
    assert [m.content for m in folded.messages] == ["count is 42"]


def test_serve_on_another_loopback_address_answers_requests_naming_it(project: Path) -> None:
    with agui_serve("agents.py:agent", "--host", "127.0.0.2", cwd=project) as url:
        assert url.startswith("http://127.0.0.2:")
        events = post_run(url, {"threadId": "t", "runId": "r"})
        with httpx.Client(timeout=STARTUP_SECONDS) as client:
            rebound = client.post(url, json={}, headers={"host": "attacker.example"})

    assert [m.content for m in fold(events).messages] == ["Hello from a file"]
    assert rebound.status_code == 403
    assert rebound.json()["code"] == "HOST_NOT_ALLOWED"


def test_serve_prints_its_url_percent_encoded_and_answers_at_it(project: Path) -> None:
    with agui_serve("agents.py:agent", "--path", "/my agents/café", cwd=project) as url:
        assert url.endswith("/my%20agents/caf%C3%A9")
        events = post_run(url, {"threadId": "t", "runId": "r"})

    assert [m.content for m in fold(events).messages] == ["Hello from a file"]


def test_serve_reports_a_bad_target_with_exit_status_2(project: Path) -> None:
    completed = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", "agents:missing"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )

    assert completed.returncode == 2
    assert completed.stderr == (
        "agui serve: error: 'agents' has no attribute 'missing': name one it defines, after "
        "the colon\n"
    )
    assert completed.stdout == ""


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"]])
def test_help_is_printed_by_the_console_script(args: list[str]) -> None:
    completed = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), *args], capture_output=True, text=True, timeout=STARTUP_SECONDS, check=False
    )

    assert completed.returncode == 0
    assert completed.stdout.startswith("usage: agui")
    assert "serve" in completed.stdout


# -- the command line, in process --------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing.py:agent", "cannot load 'missing.py': no such file"),
        ("nowhere/agents.py:agent", "cannot load 'nowhere/agents.py': no such file"),
        ("no_such_module_xyz:agent", "cannot import module 'no_such_module_xyz'"),
        ("broken:agent", "cannot import module 'broken': RuntimeError: this module fails"),
        ("broken.py:agent", "cannot load 'broken.py': RuntimeError: this module fails on import"),
        ("exits:agent", "cannot import module 'exits': it exited at import (SystemExit: 3); a"),
        ("exits.py:agent", "cannot load 'exits.py': it exited at import (SystemExit: 3); a"),
        (
            "boom:agent",
            (
                "cannot import module 'boom': Boom: bang (importing it failed; python -c "
                "'import boom' shows the traceback)\n"
            ),
        ),
        (
            "boom.py:agent",
            "cannot load 'boom.py': Boom: bang (running the file failed; python boom.py shows",
        ),
        (
            "lazy:agent",
            (
                "cannot get 'agent' from 'lazy': ImportError: agent needs an extra that is not "
                "installed; name an attribute the module defines, after the colon\n"
            ),
        ),
        (
            "lazy:computed",
            (
                "'lazy:computed' cannot be checked as an agent: looking at it raised "
                "RuntimeError: run is computed, and computing it fails; an agent is an async"
            ),
        ),
        ("agents:missing", "'agents' has no attribute 'missing'"),
        ("agents.py:Runner.missing", "'agents.py' has no attribute 'Runner.missing'"),
        ("agents", "target 'agents' must be package.module:attr or path/to/file.py:attr"),
        ("agents:", "target 'agents:' must be package.module:attr"),
        ("agents:not_async", "is not an agent: it is a function that is not async"),
        ("agents:two_arguments", "is not an agent: it does not take exactly one argument"),
        ("agents:Runner", "is not an agent: it is the class Runner; use an instance of it"),
        ("agents:sync_runner", "is not an agent: its run method is not async"),
        ("agents:wide_runner", "its run method does not take exactly one argument"),
        ("agents:streams", "is not an agent: it is an async generator function (it yields)"),
        ("agents:number", "is not an agent: it is a int (42)"),
    ],
)
def test_a_target_that_is_not_an_agent_exits_2_naming_the_problem(
    project: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    del project

    assert main(["serve", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("agui serve: error: ")
    assert message in captured.err


@pytest.mark.parametrize("target", ["interrupts:agent", "interrupts.py:agent"])
def test_a_target_interrupted_while_it_loads_stops_the_command_with_130_and_is_not_kept(
    project: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Ctrl-C during a slow import stops the command; the half-run module is not loaded."""
    del project

    assert main(["serve", target]) == 130
    assert capsys.readouterr().err == "agui serve: error: interrupted\n"
    assert "interrupts" not in sys.modules


def test_a_state_that_is_not_a_type_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del project

    assert main(["serve", "agents:agent", "--state", "agents:number"]) == 2
    assert "state 'agents:number' is not a type: it is a int (42)" in capsys.readouterr().err


def test_a_state_type_the_clients_state_cannot_be_read_into_exits_2_in_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "kinds.py").write_text("class Strange(BaseException):\n    pass\n")

    assert main(["serve", "agents:agent", "--state", "kinds:Strange", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agui serve: error: the state type must be one the client's state can")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "status", "stream", "text"),
    [
        (["--help"], 0, "out", "usage: agui [-h] [--version] COMMAND"),
        (["serve", "--help"], 0, "out", "--state MODULE:TYPE"),
        (["--version"], 0, "out", f"agui {agui.__version__}"),
        ([], 2, "err", "the following arguments are required: COMMAND"),
        (["serve"], 2, "err", "the following arguments are required: TARGET"),
        (["serve", "x:y", "--port", "eighty"], 2, "err", "invalid int value: 'eighty'"),
        (["serve", "x:y", "--port", "65536"], 2, "err", "65536 is not a port: a port is 0 to"),
        (["frobnicate"], 2, "err", "invalid choice: 'frobnicate'"),
    ],
)
def test_the_command_line_is_parsed_with_help_and_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], status: int, stream: str, text: str
) -> None:
    assert main(argv) == status
    captured = capsys.readouterr()
    assert text in (captured.out if stream == "out" else captured.err)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["serve", "x:y", "--nope"],
            "agui serve: error: unrecognized arguments: --nope (see 'agui serve --help')\n",
        ),
        (
            ["watch", "http://127.0.0.1:1/", "--nope", "extra"],
            "agui watch: error: unrecognized arguments: --nope extra (see 'agui watch --help')\n",
        ),
        (
            ["--nope", "verify", "-"],
            "agui: error: unrecognized arguments: --nope (see 'agui --help')\n",
        ),
    ],
    ids=["serve", "watch", "before-the-command"],
)
def test_an_unknown_option_is_reported_by_the_parser_it_was_given_to(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == message


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize("given", ["-1", "0", "nan", "inf", "-inf", "1e10", "86401"])
def test_a_timeout_that_is_not_a_positive_number_of_seconds_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], command: str, given: str
) -> None:
    assert main([command, "http://127.0.0.1:1/", f"--timeout={given}"]) == 2
    assert capsys.readouterr().err == (
        f"agui {command}: error: argument --timeout: {given} is not a timeout: give a number of "
        f"seconds above 0 and at most 86400 (a day), such as 60 (see 'agui {command} --help')\n"
    )


def test_a_timeout_that_is_not_a_number_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["watch", "http://127.0.0.1:1/", "--timeout", "soon"]) == 2
    assert "argument --timeout: invalid number of seconds: 'soon'" in capsys.readouterr().err


def test_a_missing_uvicorn_is_named_with_the_extra_to_install(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    del project
    monkeypatch.setitem(sys.modules, "uvicorn", None)

    assert main(["serve", "agents:agent"]) == 2
    assert 'pip install "agui-server[serve]"' in capsys.readouterr().err


@pytest.mark.parametrize("host", ["", " ", "\t"], ids=["empty", "space", "tab"])
def test_serve_refuses_a_blank_host_rather_than_bind_every_interface(
    project: Path, capsys: pytest.CaptureFixture[str], fake_server: type[FakeServer], host: str
) -> None:
    del project

    assert main(["serve", "agents:agent", "--port", "0", "--host", host]) == 2
    assert fake_server.served == []
    assert capsys.readouterr().err == (
        f"agui serve: error: argument --host: {host!r} names no interface: give an address, "
        "such as 127.0.0.1, or --host 0.0.0.0 to serve on all interfaces (see 'agui serve "
        "--help')\n"
    )


@pytest.mark.parametrize(
    ("option", "given", "problem"),
    [
        ("--host", " 127.0.0.1", "has a space in it: give the address or name alone, such as"),
        ("--host", "127.0.0.1\n", "has a space in it: give the address or name alone, such as"),
        ("--host", "local host", "has a space in it: give the address or name alone, such as"),
        ("--host", "127.0.0.\udcff", "holds bytes that are not UTF-8; give it as UTF-8 text"),
        ("--path", "/agent\udcff", "holds bytes that are not UTF-8; give it as UTF-8 text"),
    ],
    ids=["leading-space", "newline", "inner-space", "host-not-utf8", "path-not-utf8"],
)
def test_serve_refuses_a_host_or_path_it_cannot_bind_or_show_in_one_line(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: type[FakeServer],
    option: str,
    given: str,
    problem: str,
) -> None:
    del project

    assert main(["serve", "agents:agent", "--port", "0", option, given]) == 2
    assert fake_server.served == []
    err = capsys.readouterr().err
    assert err.startswith(f"agui serve: error: argument {option}: {given!r} {problem}")
    assert err.count("\n") == 1


def test_a_port_in_use_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    del project
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        assert main(["serve", "agents:agent", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


class FakeServer:
    """Stands in for `uvicorn.Server`: records what it was asked to serve, serves nothing."""

    served: list[tuple[uvicorn.Config, list[socket.socket]]]
    interrupt = False

    def __init__(self, config: uvicorn.Config) -> None:
        self.config = config

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        FakeServer.served.append((self.config, list(sockets or [])))
        if FakeServer.interrupt:
            raise KeyboardInterrupt


def _raw_run(url: str) -> bytes:
    with httpx.Client(timeout=STARTUP_SECONDS) as client:
        response = client.post(url, json={"threadId": "t", "runId": "r"})
    assert response.status_code == 200, response.text
    return response.content


def test_serve_pings_a_quiet_stream_every_keepalive_seconds_and_not_with_0(
    project: Path,
) -> None:
    with agui_serve("agents.py:thinking", "--keepalive", "0.1", cwd=project) as url:
        pinged = _raw_run(url)
    with agui_serve("agents.py:thinking", "--keepalive", "0", cwd=project) as url:
        quiet = _raw_run(url)

    head, _, rest = pinged.partition(b"\n\n")
    assert b'"RUN_STARTED"' in head
    assert rest.startswith(b": ping\n\n: ping\n\n")
    assert b"thought it over" in rest
    assert b": ping" not in quiet
    assert b"thought it over" in quiet


def test_serve_and_asgi_app_ping_after_15_seconds_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--help"]) == 0

    assert KEEPALIVE == 15.0
    assert inspect.signature(asgi_app).parameters["keepalive"].default == KEEPALIVE
    assert "0 for none (15)" in " ".join(capsys.readouterr().out.split())


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> type[FakeServer]:
    FakeServer.served = []
    FakeServer.interrupt = False
    monkeypatch.setattr(uvicorn, "Server", FakeServer)
    return FakeServer


def test_serve_announces_the_bound_address_and_hands_uvicorn_the_socket(
    project: Path, capsys: pytest.CaptureFixture[str], fake_server: type[FakeServer]
) -> None:
    del project

    assert main(["serve", "agents:runner", "--port", "0", "--path", "agent", "--debug"]) == 0
    [(config, [sock])] = fake_server.served
    assert capsys.readouterr().out == f"agui: serving on http://127.0.0.1:{config.port}/agent\n"
    assert config.host == "127.0.0.1"
    assert config.port > 0
    assert sock.fileno() == -1, "the listening socket is closed once the server returns"


@pytest.mark.parametrize("option", ["--grace", "--keepalive"])
def test_serve_takes_durations_of_zero_or_more_seconds(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: type[FakeServer],
    option: str,
) -> None:
    del project

    assert main(["serve", "agents:agent", "--port", "0", option, "0"]) == 0
    assert len(fake_server.served) == 1
    for given in ["-1", "inf", "nan"]:
        assert main(["serve", "agents:agent", option, given]) == 2
        assert capsys.readouterr().err.startswith(
            f"agui serve: error: argument {option}: {given} is not a duration: give zero or more "
            "seconds (see"
        )


@pytest.mark.parametrize(("runs", "status"), [("memory", 0), ("redis://x", 0), ("sqlite:", 2)])
def test_serve_keeps_runs_in_the_run_log_runs_names(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: type[FakeServer],
    runs: str,
    status: int,
) -> None:
    del project

    assert main(["serve", "agents:agent", "--port", "0", "--runs", runs]) == status
    assert len(fake_server.served) == 1 - status // 2
    assert capsys.readouterr().err == (
        ""
        if status == 0
        else "agui serve: error: --runs 'sqlite:' names no run log: give memory or a redis:// URL\n"
    )


def test_ctrl_c_ends_serve_quietly_with_status_0(
    project: Path, fake_server: type[FakeServer]
) -> None:
    del project
    fake_server.interrupt = True

    assert main(["serve", "agents:agent", "--port", "0"]) == 0
    assert len(fake_server.served) == 1


def test_an_ipv6_address_is_shown_in_brackets(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    fake_server: type[FakeServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    del project, fake_server

    class Listening(socket.socket):
        def getsockname(self) -> tuple[str, int, int, int]:
            return ("::1", 8123, 0, 0)

    def listening(_host: str, _port: int) -> socket.socket:
        return Listening()

    monkeypatch.setattr(_serve, "listen", listening)

    assert main(["serve", "agents:agent", "--host", "::1"]) == 0
    assert capsys.readouterr().out == "agui: serving on http://[::1]:8123/\n"


def _host_status(app: App, host: str) -> int:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def call() -> None:
        headers = [(b"host", host.encode())]
        scope = {"type": "http", "method": "GET", "path": "/capabilities", "headers": headers}
        await app(scope, receive, send)

    import asyncio  # noqa: PLC0415 - only these tests run a loop

    asyncio.run(call())
    status: int = sent[0]["status"]
    return status


@pytest.mark.parametrize(
    ("host", "admitted", "refused"),
    [
        ("localhost", ["localhost:1", "127.0.0.1:1", "[::1]:1"], ["127.0.0.2:1", "x.example"]),
        ("127.0.0.2", ["127.0.0.2:1", "localhost:1"], ["127.0.0.3:1", "x.example"]),
    ],
)
def test_serve_on_loopback_admits_this_machines_names_and_the_host_it_binds(
    project: Path,
    fake_server: type[FakeServer],
    host: str,
    admitted: list[str],
    refused: list[str],
) -> None:
    del project
    assert main(["serve", "agents:agent", "--port", "0", "--host", host]) == 0
    [(config, _)] = fake_server.served
    app = cast("App", config.app)

    assert [_host_status(app, name) for name in admitted] == [200] * len(admitted)
    assert [_host_status(app, name) for name in refused] == [403] * len(refused)


def test_serve_on_every_interface_admits_any_host(
    project: Path, fake_server: type[FakeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    del project

    class Listening(socket.socket):
        def getsockname(self) -> tuple[str, int]:
            return ("0.0.0.0", 8123)  # noqa: S104 - what the socket reports, nothing is bound

    def listening(_host: str, _port: int) -> socket.socket:
        return Listening()

    monkeypatch.setattr(_serve, "listen", listening)

    assert main(["serve", "agents:agent", "--host", "0.0.0.0"]) == 0  # noqa: S104
    [(config, _)] = fake_server.served
    assert _host_status(cast("App", config.app), "agent.example") == 200


def test_the_served_app_answers_only_at_its_path(
    project: Path, fake_server: type[FakeServer]
) -> None:
    del project
    main(["serve", "agents:agent", "--port", "0", "--path", "/agent"])
    [(config, _)] = fake_server.served
    app = cast("App", config.app)

    async def call(path: str) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []
        incoming = [{"type": "http.request", "body": b'{"threadId":"t","runId":"r"}'}]

        async def receive() -> dict[str, Any]:
            return incoming.pop(0) if incoming else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        headers = [(b"content-type", b"application/json")]
        scope: dict[str, Any] = {"type": "http", "method": "POST", "path": path, "headers": headers}
        await app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])

    import asyncio  # noqa: PLC0415 - only this test runs a loop

    assert asyncio.run(call("/agent"))[0] == 200
    assert asyncio.run(call("/agent/"))[0] == 200
    status, body = asyncio.run(call("/agents"))
    assert status == 404
    assert json.loads(body) == {"code": "NOT_FOUND", "message": "no agent at '/agents'"}


def test_the_served_app_answers_its_capabilities_route_below_its_path(
    project: Path, fake_server: type[FakeServer]
) -> None:
    del project
    main(["serve", "agents:agent", "--port", "0", "--path", "/agent"])
    [(config, _)] = fake_server.served
    app = cast("App", config.app)

    async def get(path: str) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope: dict[str, Any] = {"type": "http", "method": "GET", "path": path, "headers": []}
        await app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])

    import asyncio  # noqa: PLC0415 - only this test runs a loop

    status, body = asyncio.run(get("/agent/capabilities"))
    assert status == 200
    assert json.loads(body)["transport"]["streaming"] is True
    assert asyncio.run(get("/other/capabilities"))[0] == 404


# -- loading targets ---------------------------------------------------------------------------


def test_targets_load_from_modules_files_and_dotted_attributes(project: Path) -> None:
    by_module = load_target("agents:runner")
    by_file = load_target(str(project / "agents.py") + ":Runner.run")

    assert type(by_module).__name__ == "Runner"
    assert callable(by_file)


def test_load_agent_accepts_functions_and_objects_with_a_run_method(project: Path) -> None:
    del project

    assert callable(load_agent("agents:agent"))
    assert hasattr(load_agent("agents:runner"), "run")
    assert callable(load_agent("agents:callable_agent"))  # an async __call__, as run() takes
    with pytest.raises(TargetError, match="is not an agent"):
        load_agent("agents:number")


def test_load_state_type_returns_the_class(project: Path) -> None:
    del project

    assert load_state_type("agents:Counter").__name__ == "Counter"


def test_a_file_whose_name_is_not_an_identifier_still_loads(project: Path) -> None:
    odd = project / "my-agent.py"
    odd.write_text("async def agent(ctx):\n    ctx.say('hi')\n")

    assert callable(load_agent(f"{odd}:agent"))


def test_a_file_that_is_not_python_is_refused(project: Path) -> None:
    data = project / "data.txt"
    data.write_text("not python")

    with pytest.raises(TargetError, match=r"cannot load '.*data\.txt': it is not a Python file"):
        load_target(f"{data}:agent")


# -- serve: state types and files loaded once --------------------------------------------------

STATE_FILE = """
from dataclasses import dataclass
from typing import Any

from agui import RunContext


@dataclass
class Board:
    tasks: list[str]


async def typed(ctx: RunContext[Board]) -> None:
    ctx.say(str(ctx.state))


async def untyped(ctx):
    ctx.say("no annotation")


async def loose(ctx: RunContext[object]) -> None:
    ctx.say("object")


async def generic(ctx: RunContext[dict[str, Any]]) -> None:
    ctx.say("a generic alias is no class")


async def unresolved(ctx: "RunContext[Missing]") -> None:
    ctx.say("the name does not resolve")


class Runner:
    async def run(self, ctx: RunContext[Board]) -> None:
        ctx.say("from a method")


runner = Runner()
"""


@pytest.mark.parametrize(
    ("attr", "state"),
    [
        ("typed", "Board"),
        ("runner", "Board"),
        ("untyped", None),
        ("loose", None),
        ("generic", None),
        ("unresolved", None),
    ],
)
def test_serve_reads_the_state_type_from_the_agents_annotation(
    project: Path, attr: str, state: str | None
) -> None:
    (project / "typed_agents.py").write_text(STATE_FILE)

    agent = load_agent(f"{project / 'typed_agents.py'}:{attr}")
    found = _serve._annotated_state(agent)  # pyright: ignore[reportPrivateUsage]

    assert (found.__name__ if found is not None else None) == state


def test_a_file_is_loaded_once_so_an_agent_and_its_state_share_their_classes(
    project: Path,
) -> None:
    path = project / "typed_agents.py"
    path.write_text(STATE_FILE)

    agent = load_agent(f"{path}:typed")
    state = load_state_type(f"{path}:Board")

    assert _serve._annotated_state(agent) is state  # pyright: ignore[reportPrivateUsage]
    assert load_agent(f"{path}:typed") is agent


def test_a_file_whose_module_name_is_taken_loads_beside_the_other(project: Path) -> None:
    other = project / "elsewhere"
    other.mkdir()
    (other / "agents.py").write_text("async def agent(ctx):\n    ctx.say('the other one')\n")
    first = load_target(f"{project / 'agents.py'}:agent")

    second = load_target(f"{other / 'agents.py'}:agent")

    assert first is not second
    assert sys.modules["agents"].__file__ == str(project / "agents.py")
    assert inspect.getmodule(second) is not inspect.getmodule(first)


# -- verify: the conformance corpus ------------------------------------------------------------

CORPUS_STREAMS = corpus.streams()


def _conformance_module() -> Any:
    """tests/test_conformance.py, for its classification of the corpus (tests are no package)."""
    path = Path(__file__).with_name("test_conformance.py")
    spec = importlib.util.spec_from_file_location("agui_tests_conformance", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONFORMANCE = _conformance_module()
STRICTER: set[str] = set(CONFORMANCE.STRICTER)
MALFORMED: set[str] = set(CONFORMANCE.MALFORMED)


def verify_status(fixture: dict[str, Any]) -> int:
    """The status `agui verify` owes a fixture: 1 where agui refuses it, 0 where it accepts."""
    if fixture["name"] in STRICTER | MALFORMED:
        return 1
    return 0 if CONFORMANCE.expectation(fixture)["outcome"] == "completed" else 1


@pytest.mark.corpus
def test_the_corpus_is_there_for_verify() -> None:
    assert len(CORPUS_STREAMS) > 60
    assert {"truncated-run-reported-as-completed"} == STRICTER
    assert "malformed-known-field-fatal" in MALFORMED


@pytest.mark.corpus
@pytest.mark.parametrize("path", CORPUS_STREAMS, ids=[path.stem for path in CORPUS_STREAMS])
def test_verify_reaches_the_corpus_verdict_on_every_stream(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    capture = tmp_path / f"{path.stem}.json"
    capture.write_text(json.dumps(fixture["stream"]), encoding="utf-8")

    status = main(["verify", str(capture)])

    out = capsys.readouterr().out
    assert status == verify_status(fixture), out
    lines = out.splitlines()
    assert lines[-1].startswith(f"{capture}: ")
    assert lines[-1].endswith("(JSON array)")
    expect = CONFORMANCE.expectation(fixture)
    if status == 1 and fixture["name"] not in MALFORMED | STRICTER:
        assert expect.get("errorContains", "") in out
    if fixture["name"] in MALFORMED:
        assert ": malformed-event: " in out


def corpus_file(name: str, tmp_path: Path, *, sse: bool = False) -> Path:
    fixture = json.loads(
        corpus.require().joinpath("spec-1.1", "streams", f"{name}.json").read_text()
    )
    if sse:
        body = "".join(f"data: {json.dumps(event)}\n\n" for event in fixture["stream"])
        path = tmp_path / f"{name}.sse"
        path.write_text(body)
    else:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(fixture["stream"]))
    return path


def test_verify_as_a_command_reports_the_event_index_and_rule(tmp_path: Path) -> None:
    path = corpus_file("event-after-run-finished-fatal", tmp_path)

    completed = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), "verify", str(path)],
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )

    assert completed.returncode == 1
    assert completed.stdout.splitlines() == [
        (
            f"{path}: event 2 (TEXT_MESSAGE_START): event-after-run-finished: Cannot send "
            "event type 'TEXT_MESSAGE_START': The run has already finished with 'RUN_FINISHED'. "
            "Start a new run with 'RUN_STARTED'."
        ),
        f"{path}: 3 events in 1 run: 1 violation (JSON array)",
    ]
    assert completed.stderr == ""


def test_verify_as_a_command_reads_an_sse_body_from_standard_input(tmp_path: Path) -> None:
    body = corpus_file("conformant-run-is-quiet", tmp_path, sse=True).read_bytes()

    completed = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), "verify", "-"],
        input=body,
        capture_output=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.decode() == "<stdin>: 9 events in 1 run: valid (SSE)\n"


# -- verify: formats and the reporting policy --------------------------------------------------

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


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        (json.dumps(RUN), "JSON array"),
        ("\n".join(json.dumps(event) for event in RUN) + "\n", "JSON lines"),
        ("".join(f"data: {json.dumps(event)}\r\n\r\n" for event in RUN), "SSE"),
        (": a comment first\n\n" + "".join(f"data:{json.dumps(e)}\n\n" for e in RUN), "SSE"),
        (json.dumps({"name": "a fixture", "stream": RUN}, indent=2), "conformance fixture"),
        ("\ufeff" + json.dumps(RUN, indent=2), "JSON array"),
    ],
    ids=["array", "lines", "sse-crlf", "sse-comment", "fixture", "bom"],
)
def test_verify_tells_the_format_from_the_first_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, shape: str
) -> None:
    path = tmp_path / "capture"
    path.write_text(text, encoding="utf-8")

    status, out, _ = run_verify(capsys, str(path))

    assert status == 0
    assert out == [f"{path}: 5 events in 1 run: valid ({shape})"]


def test_verify_reads_a_last_sse_frame_without_its_blank_line_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.sse"
    path.write_text("\n\n".join(f"data: {json.dumps(event)}" for event in RUN))

    status, out, _ = run_verify(capsys, str(path))

    assert status == 0
    assert out == [
        (
            f"{path}: 5 events in 1 run: valid "
            "(SSE; note: the last frame had no blank line after it; it was read anyway)"
        )
    ]


def test_verify_reports_the_first_violation_of_each_run_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = [
        RUN[0],
        RUN[2],  # content for a message that is not open: the first violation of run r1
        RUN[3],  # ... its end follows from it: counted, not shown
        RUN[4],
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
        {"type": "STEP_FINISHED", "stepName": "plan"},  # the first violation of run r2
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"},
    ]
    path = tmp_path / "two-runs.json"
    path.write_text(json.dumps(stream))

    status, out, _ = run_verify(capsys, str(path))

    assert status == 1
    assert [line.split(": ", 3)[1:3] for line in out[:-1]] == [
        ["event 1 (TEXT_MESSAGE_CONTENT)", "message-not-open"],
        ["event 5 (STEP_FINISHED)", "step-not-open"],
    ]
    assert out[-1] == (
        f"{path}: 7 events in 2 runs: 2 violations (1 more in the same runs not shown) (JSON array)"
    )


def test_verify_goes_on_past_items_that_are_not_events_and_reports_truncation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        json.dumps(RUN[0]),
        "not json",
        json.dumps({"type": "FUTURE_EVENT", "x": 1}),
        json.dumps({**RUN[1], "colour": "red"}),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines))

    status, out, _ = run_verify(capsys, str(path))

    assert status == 1
    assert out[0].startswith(f"{path}: event 1: invalid-json: the item is not valid JSON")
    assert out[1] == (
        f"{path}: event 2 (FUTURE_EVENT): note: dropped: unknown event type 'FUTURE_EVENT': "
        "AG-UI 1.0 does not define it (a consumer drops it)"
    )
    assert out[2] == (
        f"{path}: event 3 (TEXT_MESSAGE_START): note: Removed unrecognised material at "
        "'/colour' on TEXT_MESSAGE_START"
    )
    assert out[3].startswith(f"{path}: end of stream: truncated: The stream ended without")
    assert out[4] == f"{path}: 2 events in 1 run: 2 violations (JSON lines)"


@pytest.mark.parametrize(
    ("stream", "rule"),
    [
        ([RUN[0], [1, 2], RUN[4]], "malformed-event: an event must be a JSON object, not an array"),
        ([RUN[0], {"type": "RUN_FINISHED"}], "malformed-event: RUN_FINISHED: field '/threadId'"),
    ],
)
def test_verify_reports_items_that_are_not_valid_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stream: list[object], rule: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(stream))

    status, out, _ = run_verify(capsys, str(path))

    assert status == 1
    assert rule in out[0]


def test_verify_knows_the_tool_calls_of_the_input_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    resumed = [
        RUN[0],
        {"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "c1", "content": "ok"},
        RUN[4],
    ]
    stream = tmp_path / "resumed.json"
    stream.write_text(json.dumps(resumed))
    given = tmp_path / "input.json"
    history = [
        {"id": "a1", "role": "assistant", "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        ]},
    ]  # fmt: skip
    given.write_text(json.dumps({"threadId": "t", "runId": "r1", "messages": history}))

    without, out, _ = run_verify(capsys, str(stream))
    with_input, _, _ = run_verify(capsys, str(stream), "--input", str(given))

    assert without == 1
    assert "tool-result-unknown-call" in out[0]
    assert with_input == 0


def test_verify_with_the_input_refuses_a_resumed_stream_that_starts_a_call_of_the_history_again(
    tmp_path: Path,
) -> None:
    """A run resumed with the interrupted run's own id, numbering its calls from 1 again."""
    call = {
        "id": "r-call-1",
        "type": "function",
        "function": {"name": "delete_task", "arguments": '{"id":1}'},
    }
    history = [
        {"id": "u1", "role": "user", "content": "delete 1"},
        {"id": "r-msg-1", "role": "assistant", "toolCalls": [call]},
    ]
    given = tmp_path / "input.json"
    given.write_text(json.dumps({"threadId": "t", "runId": "r", "messages": history}))
    resumed = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r-msg-2", "toolCallId": "r-call-1",
         "content": "deleted"},
        {"type": "TOOL_CALL_START", "toolCallId": "r-call-1", "toolCallName": "render_a2ui"},
        {"type": "TOOL_CALL_END", "toolCallId": "r-call-1"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]  # fmt: skip
    stream = tmp_path / "resumed.json"
    stream.write_text(json.dumps(resumed))

    refused = run_agui("verify", str(stream), "--input", str(given))
    fixed = [*resumed[:2], resumed[-1]]
    stream.write_text(json.dumps(fixed))
    accepted = run_agui("verify", str(stream), "--input", str(given))

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "tool-call-id-reused" in refused.stdout
    assert "tool call 'r-call-1' already exists" in refused.stdout
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("", "the input is empty: no events to check"),
        ("   \n", "the input is empty: no events to check"),
        ("hello", "cannot tell the format"),
        ("[1, 2", "the input starts like a JSON array but is not JSON"),
    ],
    ids=["missing", "empty", "blank", "prose", "broken-array"],
)
def test_verify_exits_2_when_it_cannot_read_a_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / "capture"
    if content is not None:
        path.write_text(content)

    status, out, err = run_verify(capsys, str(path))

    assert status == 2
    assert out == []
    assert err.startswith(f"agui verify: error: {path}: ")
    assert message in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--input", "/no/such/input.json"], "cannot read --input '/no/such/input.json'"),
        (["--state", "{"], "--state is not JSON"),
        (["-H", "no colon"], "--header 'no colon' is not 'Name: value'"),
    ],
)
def test_verify_exits_2_for_options_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN))

    status, _, err = run_verify(capsys, str(path), *argv)

    assert status == 2
    assert message in err


def test_verify_refuses_an_input_that_is_not_a_run_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = tmp_path / "input.json"
    given.write_text('{"threadId": "t"}')

    status, _, err = run_verify(capsys, "-", "--input", str(given))

    assert status == 2
    assert "is not a RunAgentInput: the run input is invalid: '/runId'" in err


def test_verify_checks_several_sources_and_exits_with_the_worst(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(RUN))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(RUN[:2]))
    stdin = io.TextIOWrapper(io.BytesIO(json.dumps(RUN).encode()))
    monkeypatch.setattr(sys, "stdin", stdin)

    status, out, _ = run_verify(capsys, str(good), str(bad), "-")
    assert status == 1
    assert out[0] == f"{good}: 5 events in 1 run: valid (JSON array)"
    assert out[-1] == "<stdin>: 5 events in 1 run: valid (JSON array)"

    status, _, _ = run_verify(capsys, str(good), str(tmp_path / "missing.json"), str(bad))
    assert status == 2


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


def test_verify_checks_a_live_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(agui.asgi_app(hello_agent)) as url:
        status, out, _ = run_verify(capsys, url, "-m", "Ada")

    assert status == 0
    assert out == [f"{url}: 5 events in 1 run: valid (HTTP)"]


def test_verify_reports_a_live_endpoints_violations(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(replaying(*BROKEN)) as url:
        status, out, _ = run_verify(capsys, url)

    assert status == 1
    assert [line.split(": ")[2] for line in out[:3]] == ["note", "message-not-open", "truncated"]


def test_verify_exits_2_with_the_servers_json_error(capsys: pytest.CaptureFixture[str]) -> None:
    refusal = b'{"code":"INVALID_INPUT","message":"no runId"}'
    with serving(replaying(refusal, status=422, content_type=b"application/json")) as url:
        status, out, err = run_verify(capsys, url)

    assert status == 2
    assert out == []
    assert err == (
        f"agui verify: error: {url}: HTTP 422 Unprocessable Entity from {url}\n"
        '{\n  "code": "INVALID_INPUT",\n  "message": "no runId"\n}\n'
    )


# -- watch ---------------------------------------------------------------------------------------


def run_watch(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    status = main(["watch", *argv])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def test_watch_shows_the_task_board_served_by_agui_serve() -> None:
    """The agent is typed `RunContext[Board]`; `agui serve` reads the state type from that."""
    with agui_serve("examples/task_board/app.py:agent", cwd=ROOT) as url:
        completed = subprocess.run(  # noqa: S603 - the project's own console script
            [str(AGUI), "watch", url, "-m", "add buy milk, call mum", "--tool", "add_task",
             "--state", '{"tasks": [{"id": 1, "title": "water plants"}]}'],
            capture_output=True,
            text=True,
            timeout=STARTUP_SECONDS,
            check=False,
        )  # fmt: skip

    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[:3] == [
        "[Run Started]",
        "[Step Started: update the board]",
        "[Reasoning] The user wants 2 new task(s) on the board; one call each.",
    ]
    assert lines[3:6] == [
        '[Tool Call: add_task] {"title":"buy milk"}',
        (
            '[State Snapshot] {"tasks":[{"id":1,"title":"water plants","done":false},'
            '{"id":2,"title":"buy milk","done":false}]}'
        ),
        '[Tool Result: add_task] {"added":{"id":2,"title":"buy milk","done":false}}',
    ]
    assert lines[6].startswith('[Tool Call: add_task] {"title":"call mum"}')
    assert lines[7].startswith("[State Delta] [")
    assert "Added #2 buy milk, #3 call mum." in lines
    assert lines[-5].startswith('[Tool Call: render_a2ui] {"surfaceId":"task-board"}')
    assert lines[-4].startswith('[Tool Result: render_a2ui] {"operations":[')
    assert lines[-3:] == [
        "[Step Finished: update the board]",
        "[Run Finished]",
        (
            '[Final State] {"tasks":[{"id":1,"title":"water plants","done":false},'
            '{"id":2,"title":"buy milk","done":false},{"id":3,"title":"call mum","done":false}]}'
        ),
    ]


def test_watch_shows_an_approval_the_run_waits_for(capsys: pytest.CaptureFixture[str]) -> None:
    from examples.task_board.app import app  # noqa: PLC0415 - only this test serves it

    state = '{"tasks": [{"id": 1, "title": "water plants"}]}'
    with serving(app) as url:
        status, out, _ = run_watch(capsys, url, "-m", "delete 1", "--tool", "delete_task",
                                   "--state", state)  # fmt: skip

    assert status == 0
    assert out[-3] == "[Run Finished: interrupt]"
    assert out[-2].startswith("[Interrupt: approve-run-")
    assert "] Delete task #1 'water plants'? (tool call run-" in out[-2]
    assert out[-1] == '[Final State] {"tasks":[{"id":1,"title":"water plants","done":false}]}'


def test_watch_shows_violations_where_they_happen_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving(replaying(*BROKEN)) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 1
    assert out[0] == "[Run Started]"
    assert out[1] == (
        "[Note] event 1 (FUTURE_EVENT): dropped: unknown event type 'FUTURE_EVENT': AG-UI 1.0 "
        "does not define it (a consumer drops it)"
    )
    assert out[2] == "Hi"
    assert out[3].startswith(
        "[Violation: message-not-open] event 2 (TEXT_MESSAGE_CONTENT): Cannot send"
    )
    assert out[4] == "[Tool Call: f]"
    assert out[5].startswith("[Violation: truncated] end of stream: The stream ended without")
    assert len(out) == 6
    assert (
        err == "agui watch: 5 events in 1 run: 2 violations (2 more in the same runs not shown)\n"
    )


def test_watch_raw_prints_wire_json_lines_that_verify_accepts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(agui.asgi_app(hello_agent)) as url:
        status, out, err = run_watch(capsys, url, "--raw", "-m", "Ada")

    assert status == 0
    assert err == ""
    assert [json.loads(line)["type"] for line in out] == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    assert json.loads(out[2])["delta"] == "Hello, Ada!"
    stdin = io.TextIOWrapper(io.BytesIO(("\n".join(out) + "\n").encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert run_verify(capsys, "-")[:2] == (0, ["<stdin>: 5 events in 1 run: valid (JSON lines)"])


def test_watch_raw_sends_violations_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(replaying(*BROKEN)) as url:
        status, out, err = run_watch(capsys, url, "--raw")

    assert status == 1
    assert out[4] == "not json"
    assert len(out) == 7
    errors = err.splitlines()
    assert errors[0].startswith("agui watch: event 1 (FUTURE_EVENT): note: dropped: ")
    assert errors[1].startswith(
        "agui watch: event 2 (TEXT_MESSAGE_CONTENT): message-not-open: Cannot send"
    )
    assert errors[2].startswith("agui watch: end of stream: truncated: ")


def test_watch_sends_the_message_state_tools_and_headers_it_is_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[agui.RunAgentInput] = []
    headers: list[dict[str, str]] = []

    async def echo(ctx: agui.RunContext[object]) -> None:
        seen.append(ctx.input)
        ctx.say("ok")

    def authorize(given: Mapping[str, str]) -> bool:
        headers.append(dict(given))
        return given.get("authorization") == "Bearer s3cret"

    app = agui.asgi_app(echo, authorize=authorize)
    with serving(app) as url:
        status, _, _ = run_watch(
            capsys, url, "-m", "hi", "--state", '{"n": 1}', "--tool", "a,b", "--tool", "c",
            "-H", "Authorization: Bearer s3cret",
        )  # fmt: skip
        refused, _, err = run_watch(capsys, url, "-H", "Authorization: Bearer wrong")

    assert status == 0
    [given] = seen
    assert [m.content for m in given.messages] == ["hi"]
    assert given.state == {"n": 1}
    assert [tool.name for tool in given.tools or []] == ["a", "b", "c"]
    assert headers[0]["accept"] == "text/event-stream"
    assert refused == 2
    assert err.startswith(f'agui watch: error: HTTP 403 Forbidden from {url}\n{{\n  "code":')


@pytest.mark.parametrize(
    ("app", "message"),
    [
        (replaying(b"<html>", content_type=b"text/html"), "answered with text/html, not an event"),
        (replaying(b"oops", status=500, content_type=b"text/plain"), "HTTP 500 Internal Server"),
    ],
    ids=["html", "server-error"],
)
def test_watch_exits_2_when_the_answer_is_no_stream(
    capsys: pytest.CaptureFixture[str], app: Asgi, message: str
) -> None:
    with serving(app) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert message in err


def test_watch_exits_2_when_it_cannot_connect(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"

    status, out, err = run_watch(capsys, url, "--timeout", "5")

    assert status == 2
    assert out == []
    assert err.startswith(f"agui watch: error: the connection to {url} failed: ConnectError")


@pytest.mark.parametrize("url", ["http://127.0.0.1:abc/", "http://[::1/"])
def test_watch_exits_2_for_a_url_that_cannot_be_reached(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert f"{url!r} is not a URL that can be reached (Invalid port" in err


def test_watch_exits_2_for_a_header_that_is_not_ascii(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_watch(capsys, "http://127.0.0.1:9/", "-H", "Authorization: Bearer é")

    assert status == 2
    assert out == []
    assert "the header 'authorization' holds text that is not ASCII ('Bearer é')" in err


def refusal(command: str, url: str, message: str) -> str:
    """The one line `agui watch URL` or `agui verify URL` prints when it cannot use the URL."""
    where = f"{url}: " if command == "verify" else ""
    return f"agui {command}: error: {where}{message}\n"


def run_live(capsys: pytest.CaptureFixture[str], command: str, *argv: str) -> tuple[int, str, str]:
    status = main([command, *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (f"http://{'a' * 64}.example/", "label empty or too long"),
        ("http://a..b/", "label empty or too long"),
        ("http://xn--a/", "Codepoint U+0080 at position 1"),
    ],
    ids=["label-of-64", "empty-label", "bad-punycode"],
)
def test_watch_and_verify_exit_2_for_a_url_whose_host_is_not_a_name(
    capsys: pytest.CaptureFixture[str], command: str, url: str, reason: str
) -> None:
    """The resolver (or idna, for punycode) raised UnicodeError, a traceback."""
    status, out, err = run_live(capsys, command, url)

    assert status == 2
    assert out == ""
    fact = f"{url!r} is not a URL that can be reached: its host is not a name: "
    assert err.startswith(refusal(command, url, fact).removesuffix("\n"))
    assert reason in err
    assert err.endswith(
        "; a host name is labels of 1 to 63 letters, digits and hyphens, separated by dots\n"
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize("location", [f"http://{'a' * 64}.example/", "http://xn--a/"])
def test_watch_exits_2_when_redirected_to_a_url_whose_host_is_not_a_name(
    capsys: pytest.CaptureFixture[str], location: str
) -> None:
    with serving(replaying(status=307, location=location)) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert err.startswith(
        f"agui watch: error: the connection to {url} failed: it was redirected to a URL whose "
        "host is not a name: "
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize("port", [0, 65536, 99999])
def test_watch_and_verify_exit_2_for_a_url_whose_port_is_no_port(
    capsys: pytest.CaptureFixture[str], command: str, port: int
) -> None:
    """Port 99999 is no port: a socket would connect to 34463 (99999 - 65536) instead."""
    url = f"http://127.0.0.1:{port}/"

    status, out, err = run_live(capsys, command, url)

    assert status == 2
    assert out == ""
    assert err == refusal(
        command,
        url,
        f"{url!r} is not a URL that can be reached: its port {port} is no port; a port is 1 to "
        "65535",
    )


def test_watch_exits_2_for_a_url_that_is_not_utf8(capsys: pytest.CaptureFixture[str]) -> None:
    url = "http://127.0.0.1:9/agent\udcff"

    status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert err == refusal(
        "watch", url, f"the URL {url!r} holds bytes that are not UTF-8; give it as UTF-8 text"
    )


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            "Content-Length: 5",
            (
                "the header 'content-length' cannot be given: the command sets Content-Length "
                "itself, from the JSON body it sends; drop -H 'Content-Length: ...'"
            ),
        ),
        (
            "content-length: 99999",
            (
                "the header 'content-length' cannot be given: the command sets Content-Length "
                "itself, from the JSON body it sends; drop -H 'Content-Length: ...'"
            ),
        ),
        (
            "Transfer-Encoding: chunked",
            (
                "the header 'transfer-encoding' cannot be given: the command sends the JSON body "
                "whole, with its Content-Length; drop -H 'Transfer-Encoding: ...'"
            ),
        ),
        (
            "Bad Name: x",
            (
                "the header name 'bad name' is not an HTTP token: a name is letters, digits and "
                "!#$%&'*+-.^_`|~, with no space: give the header as 'Name: value'"
            ),
        ),
        (
            "X-Trace(1): x",
            "the header name 'x-trace(1)' is not an HTTP token: a name is letters, digits and",
        ),
        (
            "X-Note: one\ntwo",
            (
                "the header 'x-note' holds a control character ('one\\ntwo'); a header value is "
                "one line of printable text: send line breaks and the like encoded, as the "
                "server reads it"
            ),
        ),
        ("X-Note: a\x00b", "the header 'x-note' holds a control character ('a\\x00b'); a"),
    ],
    ids=["length", "length-too-long", "chunked", "space", "parenthesis", "newline", "nul"],
)
def test_watch_and_verify_exit_2_for_a_header_http_cannot_carry(
    capsys: pytest.CaptureFixture[str], command: str, header: str, message: str
) -> None:
    """Refused before any request: h11 raised for some (Content-Length, a traceback), and
    others reached the server."""
    with serving(agui.asgi_app(hello_agent)) as url:
        status, out, err = run_live(capsys, command, url, "-H", header)

    assert status == 2
    assert out == ""
    assert err.startswith(f"agui {command}: error: {message}")
    assert err.count("\n") == 1


def test_watch_sends_a_header_with_a_tab_and_an_empty_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    headers: list[dict[str, str]] = []

    def authorize(given: Mapping[str, str]) -> bool:
        headers.append(dict(given))
        return True

    with serving(agui.asgi_app(hello_agent, authorize=authorize)) as url:
        status, _, _ = run_watch(capsys, url, "-H", "X-Note: a\tb", "-H", "X-Empty:")

    assert status == 0
    assert headers[0]["x-note"] == "a\tb"
    assert headers[0]["x-empty"] == ""


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        ('{"a": NaN}', "--state is not JSON: NaN is not JSON"),
        ('{"a": 1e999}', "--state is not JSON: 1e999 is too large for a JSON number"),
        ('{"a": "\\ud800"}', "--state must be a JSON value, but it holds text that is not valid"),
    ],
    ids=["nan", "overflow", "surrogate"],
)
def test_watch_exits_2_for_a_state_no_request_can_carry(
    capsys: pytest.CaptureFixture[str], state: str, problem: str
) -> None:
    status, out, err = run_watch(capsys, "http://127.0.0.1:9/", "--state", state)

    assert status == 2
    assert out == []
    assert problem in err


def test_watch_exits_2_for_a_message_that_is_not_utf8(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_watch(capsys, "http://127.0.0.1:9/", "-m", "a\udcffb")

    assert status == 2
    assert "--message holds bytes that are not UTF-8; give it as UTF-8 text" in err


def test_watch_exits_2_for_a_state_that_is_not_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_watch(capsys, "http://127.0.0.1:9/", "--state", "{")

    assert status == 2
    assert err.startswith("agui watch: error: --state is not JSON: ")


def test_watch_stops_quietly_on_ctrl_c(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: object, **_kwargs: object) -> Iterator[str]:
        yield json.dumps(RUN[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(_watch, "post_stream", interrupted)

    status, out, err = run_watch(capsys, "http://127.0.0.1:9/")

    assert status == 130
    assert out == ["[Run Started]"]
    assert err == "agui watch: error: interrupted\n"


def test_watch_and_verify_name_the_extra_when_httpx_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)

    assert main(["watch", "http://127.0.0.1:9/"]) == 2
    assert "pip install 'agui-server[client]'" in capsys.readouterr().err
    assert main(["verify", "http://127.0.0.1:9/"]) == 2
    assert "pip install 'agui-server[client]'" in capsys.readouterr().err


# -- demo ----------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    """Standard output that records each flush, to see text arrive in pieces."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[str] = []

    def flush(self) -> None:
        self.flushed.append(self.getvalue())


@pytest.fixture
def demo_module_names(monkeypatch: pytest.MonkeyPatch) -> Generator[None, None, None]:
    """The demo loads the travel example by file; keep that from other tests' modules."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("AGUI_MODEL_BASE_URL", raising=False)  # the scripted model, always
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name == "app" or name.startswith("app_"):
            del sys.modules[name]


DEMO_LINES = [
    "[Run Started]",
    '[Tool Call: get_weather] {"location":"Paris"}',
    '[Tool Result: get_weather] {"location":"Paris",',
    '[Tool Call: search_restaurants] {"location":"Paris","cuisine":"italian"}',
    "[Tool Result: search_restaurants] [{",
    "In Paris it is ",
    "[Run Finished]",
]


def test_demo_shows_the_travel_run_as_it_streams(
    demo_module_names: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    del demo_module_names
    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    threads = threading.active_count()

    assert main(["demo"]) == 0

    lines = terminal.getvalue().splitlines()
    assert len(lines) == len(DEMO_LINES)
    assert all(line.startswith(start) for line, start in zip(lines, DEMO_LINES, strict=True))
    answer = lines[5]
    assert answer.endswith("Enjoy your trip!")
    pieces = [text for text in terminal.flushed if lines[4] in text and answer not in text]
    assert len(pieces) > 10, "the answer was not written as its deltas arrived"
    assert threading.active_count() == threads
    assert "agui demo server" not in [thread.name for thread in threading.enumerate()]


def test_demo_raw_prints_the_events_which_verify_accepts(
    demo_module_names: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    del demo_module_names

    assert main(["demo", "--raw", "-m", "Weather in Oslo?"]) == 0

    out = capsys.readouterr().out
    events = [agui.parse_event(line) for line in out.splitlines()]
    assert [e.tool_call_name for e in events if isinstance(e, ToolCallStartEvent)] == [
        "get_weather"
    ]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(out.encode())))
    status, lines, _ = run_verify(capsys, "-")
    assert status == 0
    assert lines[0].endswith("in 1 run: valid (JSON lines)")


def test_demo_names_the_extras_it_needs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)

    assert main(["demo"]) == 2
    assert capsys.readouterr().err == (
        "agui demo: error: the demo needs uvicorn: pip install 'agui-server[serve,client]'\n"
    )


def test_demo_says_so_when_the_travel_example_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_demo, "travel_example", lambda: None)

    assert main(["demo"]) == 2
    assert "cannot find the travel example" in capsys.readouterr().err


def test_the_demo_asks_the_question_of_the_travel_example() -> None:
    from examples.travel.app import QUESTION  # noqa: PLC0415 - the example, read by this test only

    assert _demo.DEMO_QUESTION == QUESTION
    assert _demo.travel_example() == ROOT / "examples" / "travel" / "app.py"


@pytest.mark.parametrize(
    ("command", "text"),
    [
        ("demo", "--raw"),
        ("watch", "--tool NAME"),
        ("verify", "SOURCE [SOURCE ...]"),
    ],
)
def test_each_command_has_help(capsys: pytest.CaptureFixture[str], command: str, text: str) -> None:
    assert main([command, "--help"]) == 0

    out = capsys.readouterr().out
    assert out.startswith(f"usage: agui {command}")
    assert text in out
    assert "exit status:" in out


def test_demo_reports_a_server_that_does_not_start(
    demo_module_names: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    del demo_module_names

    def fails(_self: uvicorn.Server, sockets: list[socket.socket] | None = None) -> None:
        del sockets

    monkeypatch.setattr(uvicorn.Server, "run", fails)

    assert main(["demo"]) == 2
    assert capsys.readouterr().err == (
        "agui demo: error: the server stopped before it started; uvicorn's log says why\n"
    )


@pytest.mark.parametrize(
    ("source", "status", "message"),
    [
        ("raise RuntimeError('broken example')\n", 2, "RuntimeError: broken example"),
        (
            "import agui\n\nasync def agent(ctx):\n    raise agui.AgentError('no model today')\n",
            1,
            "agui demo: the run did not finish",
        ),
    ],
    ids=["does-not-load", "run-error"],
)
def test_demo_fails_when_its_example_does(
    demo_module_names: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    status: int,
    message: str,
) -> None:
    del demo_module_names
    example = tmp_path / "app.py"
    example.write_text(source)
    monkeypatch.setattr(_demo, "travel_example", lambda: example)

    assert main(["demo"]) == status
    captured = capsys.readouterr()
    assert message in captured.err
    if status == 1:
        assert "[Run Error: AGENT_ERROR] no model today" in captured.out


@pytest.mark.parametrize("error", [KeyboardInterrupt, CaptureError])
def test_demo_stops_its_server_when_interrupted_or_cut_off(
    demo_module_names: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    error: type[BaseException],
) -> None:
    del demo_module_names

    def stopped(*_args: object, **_kwargs: object) -> int:
        message = "cut off"
        raise error(message)

    monkeypatch.setattr(_demo, "follow", stopped)

    assert main(["demo"]) == (130 if error is KeyboardInterrupt else 2)
    assert capsys.readouterr().err.startswith("agui demo: error: ")
    assert "agui demo server" not in [thread.name for thread in threading.enumerate()]


def test_the_travel_example_is_not_found_outside_a_checkout_or_a_wheel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def nowhere(_self: Path) -> bool:
        return False

    monkeypatch.setattr(Path, "is_file", nowhere)

    assert _demo.travel_example() is None


def test_an_object_without_a_run_method_names_no_state() -> None:
    assert _serve._annotated_state(cast("Any", 42)) is None  # pyright: ignore[reportPrivateUsage]


# -- reading edge cases --------------------------------------------------------------------------


def test_verify_reads_one_event_object_as_a_stream_of_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "error.json"
    path.write_text('{"type": "RUN_ERROR", "message": "refused"}')

    assert run_verify(capsys, str(path))[:2] == (
        0,
        [f"{path}: 1 event in 0 runs: valid (JSON lines)"],
    )


def test_watch_raw_keeps_a_multi_line_frame_on_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    multi = b'data: {"type": "RUN_STARTED",\ndata: "threadId": "t", "runId": "r"}\n\n'
    prose = b"data: two\ndata: lines\n\n"
    with serving(replaying(multi, prose, *frames(RUN[4]))) as url:
        status, out, _ = run_watch(capsys, url, "--raw")

    assert status == 1
    assert out == [
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        "two lines",
        json.dumps(RUN[4]),
    ]


async def accented_agent(ctx: agui.RunContext[object]) -> None:
    ctx.say("Grüße aus Köln, 世界 👋")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_watch_raw_writes_utf_8_whatever_the_encoding_of_standard_output(encoding: str) -> None:
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    with serving(agui.asgi_app(accented_agent)) as url:
        completed = subprocess.run(  # noqa: S603 - the project's own console script
            [str(AGUI), "watch", url, "--raw"],
            capture_output=True,
            env=env,
            timeout=STARTUP_SECONDS,
            check=False,
        )

    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.decode("utf-8").splitlines()
    assert json.loads(lines[2])["delta"] == "Grüße aus Köln, 世界 👋"
    checked = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), "verify", "-"],
        input=completed.stdout,
        capture_output=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )
    assert checked.stdout == b"<stdin>: 5 events in 1 run: valid (JSON lines)\n"


def test_watch_raw_writes_text_to_a_standard_output_without_bytes_beneath(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    with serving(agui.asgi_app(accented_agent)) as url:
        assert main(["watch", url, "--raw"]) == 0

    assert json.loads(out.getvalue().splitlines()[2])["delta"] == "Grüße aus Köln, 世界 👋"


def test_watch_raw_writes_a_lone_surrogate_as_its_json_escape(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    multi = b'data: {"type": "CUSTOM", "name": "x",\ndata: "value": "\\ud800 \xc3\xa9"}\n\n'
    with serving(replaying(multi)) as url:
        status = main(["watch", url, "--raw"])
    out.flush()

    assert status == 1  # no run around the event
    written = out.buffer.getvalue()
    assert written == b'{"type":"CUSTOM","name":"x","value":"\\ud800 \xc3\xa9"}\n'
    assert json.loads(written)["value"] == "\ud800 \u00e9"
    assert "truncated" in capsys.readouterr().err


def test_a_frame_too_large_to_read_is_reported(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_capture, "SSEParser", lambda: SSEParser(max_frame_bytes=8))
    with serving(replaying(*frames(*RUN))) as url:
        status, _, err = run_watch(capsys, url)

    assert status == 2
    assert "an SSE frame grew past 8 bytes" in err
    assert "grew past 8 bytes without ending (frame 0 of the stream, from byte 0);" in err


def test_a_long_error_body_is_cut_at_64_kib(capsys: pytest.CaptureFixture[str]) -> None:
    body = b"x" * (100 * 1024)
    with serving(
        replaying(body[:50_000], body[50_000:], status=500, content_type=b"text/plain")
    ) as url:
        status, _, err = run_watch(capsys, url)

    assert status == 2
    assert err.count("x") == 64 * 1024


# -- the rendering -------------------------------------------------------------------------------


def render(*raw: dict[str, Any], state: Any = None) -> list[str]:
    out = io.StringIO()
    renderer = Renderer(out, state=state)
    for item in raw:
        renderer.event(agui.parse_event(item))
    renderer.close()
    return out.getvalue().splitlines()


def test_a_subagent_is_named_by_its_start_or_by_its_id_when_its_start_was_not_seen() -> None:
    lines = render(
        {"type": "SUBAGENT_STARTED", "subagentRunId": "r-sub-1", "name": "researcher"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "r-sub-1"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "r-sub-9"},
    )

    assert lines == [
        "[Subagent Started: researcher]",
        "[Subagent Finished: researcher]",
        "[Subagent Finished: r-sub-9]",
    ]


def test_every_kind_of_event_is_shown() -> None:
    lines = render(
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "REASONING_START", "messageId": "s1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "s2", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "s2", "delta": "Hmm."},
        {"type": "REASONING_MESSAGE_END", "messageId": "s2"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "s3", "delta": "Chunked "},
        {"type": "REASONING_MESSAGE_CHUNK", "delta": "thought."},
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "s3",
         "encryptedValue": "xyz"},
        {"type": "REASONING_END", "messageId": "s1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "A user line"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m2"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m2"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m3", "role": "developer", "delta": "Dev "},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "note."},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m4", "delta": "Plain."},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m4"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "k1", "toolCallName": "lookup", "delta": '{"q":'},
        {"type": "TOOL_CALL_CHUNK", "delta": '"x"}'},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "k2", "toolCallName": "other", "delta": "{}"},
        {"type": "TOOL_CALL_CHUNK", "delta": ""},
        {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "k1",
         "content": [{"type": "text", "text": "found"}]},
        {"type": "TOOL_CALL_RESULT", "messageId": "r2", "toolCallId": "nobody", "content": "?"},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": None}]},
        {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}]},
        {"type": "MESSAGES_SNAPSHOT", "messages": []},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "plan",
         "content": {"steps": 2}},
        {"type": "ACTIVITY_DELTA", "messageId": "a1", "activityType": "plan",
         "patch": [{"op": "replace", "path": "/steps", "value": 3}]},
        {"type": "CUSTOM", "name": "ping", "value": None},
        {"type": "RAW", "event": {"x": "y" * 400}},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa", "name": "researcher"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa"},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sb", "name": "writer"},
        {"type": "SUBAGENT_ERROR", "subagentRunId": "sb", "message": "gave up"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "cancelled"}},
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2",
         "outcome": {"type": "success", "pendingToolCallIds": ["c9"]}},
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r3"},
        {"type": "RUN_ERROR", "message": "boom"},
        state={"n": 1},
    )  # fmt: skip

    assert lines == [
        "[Run Started]",
        "[Step Started: plan]",
        "[Reasoning] Hmm.",
        "[Reasoning] Chunked thought.",
        "[Reasoning Encrypted Value]",
        "[User] A user line",
        "[Developer] Dev note.",
        "Plain.",
        '[Tool Call: lookup] {"q":"x"}',
        "[Tool Call: other] {}",
        '[Tool Result: lookup] [{"type":"text","text":"found"}]',
        "[Tool Result: nobody] ?",
        '[State Delta] [{"op":"add","path":"/n","value":null}]',
        '[State Delta] [{"op":"remove","path":"/missing"}]',
        (
            "[Note] the state delta does not apply to the state shown: operation 0 (remove): "
            "path '/missing' does not exist: the object at '' has no member 'missing'"
        ),
        "[Messages Snapshot] 0 message(s)",
        '[Activity: plan] {"steps":2}',
        '[Activity Delta: plan] [{"op":"replace","path":"/steps","value":3}]',
        "[Custom: ping] null",
        '[Raw] {"x":"' + "y" * 293 + "…",
        "[Subagent Started: researcher]",
        "[Subagent Finished: researcher]",
        "[Subagent Started: writer]",
        "[Subagent Error: writer] gave up",
        "[Step Finished: plan]",
        "[Run Finished: cancelled]",
        '[Final State] {"n":null}',
        "[Run Started]",
        "[Run Finished] waiting for the app to answer tool calls: c9",
        "[Run Started]",
        "[Run Error] boom",
    ]


def test_a_call_is_shown_before_the_state_published_inside_it() -> None:
    lines = render(
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "add"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"a":'},
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "1}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "again"},
        {"type": "CUSTOM", "name": "inside", "value": 1},
        {"type": "CUSTOM", "name": "inside", "value": 2},
        {"type": "TOOL_CALL_END", "toolCallId": "c2"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "gone", "delta": "x"},
        {"type": "TOOL_CALL_END", "toolCallId": "gone"},
    )

    assert lines == [
        "[Run Started]",
        '[Tool Call: add] {"a":',
        '[State Snapshot] {"a":1}',
        "[Tool Call: add] (more arguments) 1}",
        "[Tool Call: again]",
        "[Custom: inside] 1",
        "[Custom: inside] 2",
        "[Tool Call: ?]",
    ]


def test_interleaved_text_messages_each_keep_their_prefix() -> None:
    lines = render(
        {"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "system"},
        {"type": "TEXT_MESSAGE_START", "messageId": "b"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "one"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "two"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": " more\nlines"},
        {"type": "TEXT_MESSAGE_END", "messageId": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a"},
        {"type": "TOOL_CALL_CHUNK", "delta": "ignored: no call to continue"},
    )

    assert lines == ["[System] one", "two", "[System]  more", "lines"]


# -- one line and one exit status, never a traceback ------------------------------------------


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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["serve", "examples/hello.py:agent", "--port", "99999"],
            (
                "agui serve: error: argument --port: 99999 is not a port: a port is 0 to 65535, "
                "and 0 picks a free one (see 'agui serve --help')"
            ),
        ),
        (
            ["serve", "examples/hello.py:agent", "--port", "-1"],
            "agui serve: error: argument --port: -1 is not a port",
        ),
        (
            ["serve", "examples/nowhere.py:agent"],
            "agui serve: error: cannot load 'examples/nowhere.py': no such file",
        ),
        (
            ["serve", "examples/hello.py:agent", "--host", "no-such-host.invalid"],
            "agui serve: error: cannot listen on no-such-host.invalid:8000: ",
        ),
        (["watch", "--nope"], "agui watch: error: the following arguments are required: URL"),
        (["verify", "no-such-capture.jsonl"], "agui verify: error: no-such-capture.jsonl: cannot"),
        (["frobnicate"], "agui: error: argument COMMAND: invalid choice: 'frobnicate'"),
    ],
    ids=[
        "port-too-high",
        "port-negative",
        "no-such-file",
        "unknown-host",
        "usage",
        "unreadable",
        "no-such-command",
    ],
)
def test_a_user_error_is_one_line_and_exit_status_2_in_a_real_process(
    args: list[str], message: str
) -> None:
    completed = run_agui(*args)

    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith(message), completed.stderr
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert completed.stdout == ""


@pytest.mark.parametrize(
    ("target", "status", "message"),
    [
        (
            "boom:agent",
            2,
            (
                "agui serve: error: cannot import module 'boom': Boom: bang (importing it "
                "failed; python -c 'import boom' shows the traceback)\n"
            ),
        ),
        (
            "boom.py:agent",
            2,
            (
                "agui serve: error: cannot load 'boom.py': Boom: bang (running the file failed; "
                "python boom.py shows the traceback)\n"
            ),
        ),
        ("interrupts.py:agent", 130, "agui serve: error: interrupted\n"),
    ],
    ids=["module", "file", "ctrl-c"],
)
def test_a_target_raising_a_base_exception_at_import_is_one_line_in_a_real_process(
    project: Path, target: str, status: int, message: str
) -> None:
    """`class Boom(BaseException)` is an import failure; `KeyboardInterrupt` is a Ctrl-C."""
    completed = run_agui("serve", target, cwd=project)

    assert completed.returncode == status, completed.stderr
    assert completed.stderr == message
    assert completed.stdout == ""


def test_a_closed_standard_output_ends_the_demo_with_one_line_and_status_2() -> None:
    with subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "demo"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "AGUI_MODEL_BASE_URL": ""},
    ) as demo:
        assert demo.stdout is not None
        assert demo.stderr is not None
        head = [demo.stdout.readline() for _ in range(3)]  # what `agui demo | head -3` reads
        demo.stdout.close()
        status = demo.wait(timeout=STARTUP_SECONDS * 3)
        err = demo.stderr.read().decode()

    assert head[0] == b"[Run Started]\n"
    assert status == 2, err
    assert err == "agui demo: error: standard output was closed before the command ended\n"


class ClosedPipe(io.StringIO):
    """Standard output whose reader has gone: every write fails, as a closed pipe's does."""

    def __init__(self, descriptor: int | None = None) -> None:
        super().__init__()
        self._descriptor = descriptor

    def write(self, text: str) -> int:
        del text
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        if self._descriptor is None:
            message = "no file descriptor"
            raise io.UnsupportedOperation(message)
        return self._descriptor


@pytest.mark.parametrize("with_descriptor", [True, False], ids=["a-file", "no-descriptor"])
def test_a_closed_standard_output_is_reported_once_and_then_discarded(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    with_descriptor: bool,  # noqa: FBT001 - a parameter of the test
) -> None:
    capture = tmp_path / "run.json"
    capture.write_text(json.dumps(RUN))
    with (tmp_path / "stdout").open("w") as held:
        monkeypatch.setattr(sys, "stdout", ClosedPipe(held.fileno() if with_descriptor else None))

        status = main(["verify", str(capture)])

        err = capsys.readouterr().err
    assert status == 2
    assert err == "agui verify: error: standard output was closed before the command ended\n"


def test_watch_exits_1_when_the_run_ends_with_run_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    failed = frames(RUN[0], {"type": "RUN_ERROR", "message": "no model today", "code": "X"})
    with serving(replaying(*failed)) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 1
    assert out[-1] == "[Run Error: X] no model today"
    assert err == "agui watch: the run did not finish: it ended with RUN_ERROR\n"


@pytest.mark.parametrize("command", ["serve", "demo", "watch", "verify"])
def test_each_commands_help_lists_the_same_exit_statuses(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, "--help"]) == 0

    table = capsys.readouterr().out.split("exit status:\n", 1)[1]
    statuses = [line.split()[0] for line in table.splitlines() if not line.startswith(" " * 7)]
    assert statuses[0] == "0"
    assert set(statuses) <= {"0", "1", "2", "130"}
    assert "2" in statuses
    assert ("1" in statuses) is (command != "serve")  # serve has no run or check of its own


def test_version_loads_none_of_the_commands_layers() -> None:
    script = (
        "import contextlib, io, sys\n"
        "from agui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--version']) == 0\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(  # noqa: S603 - this interpreter, on a script of this test
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=True,
    ).stdout.split()

    commands = ("_serve", "_demo", "_watch", "_verify", "_capture", "_targets")
    for layer in ("uvicorn", "httpx", "agui.asgi", *(f"agui.cli.{name}" for name in commands)):
        assert layer not in loaded


@pytest.mark.parametrize(
    ("missing", "args", "message"),
    [
        ("uvicorn", ["serve", "examples/hello.py:agent"], "serving needs uvicorn"),
        ("uvicorn", ["demo"], "the demo needs uvicorn"),
        ("httpx", ["demo"], "the demo needs httpx"),
        ("httpx", ["watch", "http://127.0.0.1:9/"], "watch needs httpx"),
        ("httpx", ["verify", "http://127.0.0.1:9/"], "checking a URL needs httpx"),
    ],
)
def test_a_missing_extra_exits_2_in_every_command_of_a_fresh_process(
    missing: str, args: list[str], message: str
) -> None:
    script = (
        "import sys\n"
        f"sys.modules[{missing!r}] = None  # as if the extra were not installed\n"
        "from agui.cli import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    completed = subprocess.run(  # noqa: S603 - this interpreter, on a script of this test
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=False,
    )

    assert completed.returncode == 2, completed.stderr
    assert message in completed.stderr
    assert completed.stderr.count("\n") == 1, completed.stderr


STUBBORN_FILE = """
import asyncio
import time


async def agent(ctx):
    ctx.say("started")
    if ctx.run_id == "thread":
        await asyncio.to_thread(time.sleep, 60)  # a thread cancellation cannot stop
    for _ in range(100):  # ignores every cancellation, for as long as a test could wait
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            pass
"""


@pytest.mark.parametrize("run_id", ["stubborn", "thread"])
def test_serve_exits_after_its_grace_even_if_a_run_ignores_its_cancellation(
    tmp_path: Path, run_id: str
) -> None:
    (tmp_path / "stubborn.py").write_text(STUBBORN_FILE)
    process = subprocess.Popen(  # noqa: S603 - the project's own console script
        [str(AGUI), "serve", "stubborn.py:agent", "--port", "0", "--grace", "0.2"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = _announced_url(process)
        with httpx.stream(
            "POST", url, json={"threadId": "t", "runId": run_id}, timeout=STARTUP_SECONDS
        ) as response:
            lines = response.iter_lines()
            assert "RUN_STARTED" in next(lines)
            process.send_signal(signal.SIGINT)
            ending = [line for line in lines if line.startswith("data:")][-1]
        status = process.wait(timeout=STARTUP_SECONDS)  # it waited forever before
    finally:
        if process.poll() is None:
            process.kill()
        _, errors = process.communicate(timeout=STARTUP_SECONDS)

    assert status == 0
    assert '"type":"RUN_' in ending
    if run_id == "thread":  # the cancelled task ended; its thread sleeps on
        assert "agui serve: exiting without the agents' threads still running" in errors.decode()
    else:
        assert "ignored its cancellation; the server leaves it behind" in errors.decode()


def test_serve_exits_at_once_past_an_agents_thread_the_interpreter_would_wait_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    release = threading.Event()
    sleeper = threading.Thread(target=release.wait, args=(STARTUP_SECONDS,), name="sleeper")
    exits: list[int] = []
    monkeypatch.setattr(os, "_exit", exits.append)
    sleeper.start()
    try:
        exit_past_lingering_threads()
    finally:
        release.set()
        sleeper.join(STARTUP_SECONDS)

    assert exits == [0]
    assert capsys.readouterr().err == (
        "agui serve: exiting without the agents' threads still running: sleeper\n"
    )
    exit_past_lingering_threads()  # none left now: nothing to do
    assert exits == [0]
