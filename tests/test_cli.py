"""The `agui` command: `agui serve` in a real subprocess, and its errors, in and out of process.

Subprocesses listen on 127.0.0.1 only, print their address, and are stopped by the test; every
wait is bounded.
"""

from __future__ import annotations

import inspect
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import uvicorn

import agui
from agui import cli
from agui.cli import TargetError, load_agent, load_state_type, load_target, main
from agui.testing import assert_valid, fold

AGUI = Path(sys.executable).parent / "agui"
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


async def counting(ctx):
    ctx.state.count += 1
    ctx.publish_state()
    ctx.say(f"count is {ctx.state.count}")


def not_async(ctx):
    return None


async def two_arguments(ctx, extra):
    return None


class Runner:
    async def run(self, ctx):
        ctx.say("from a run method")


class SyncRunner:
    def run(self, ctx):
        return None


class WideRunner:
    async def run(self, ctx, extra):
        return None


runner = Runner()
sync_runner = SyncRunner()
wide_runner = WideRunner()
number = 42
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding `agents.py`, made the working directory; sys.path is restored."""
    (tmp_path / "agents.py").write_text(AGENT_FILE)
    (tmp_path / "broken.py").write_text("raise RuntimeError('this module fails on import')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("agents", "broken"):
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
    assert completed.stderr == "agui serve: error: 'agents' has no attribute 'missing'\n"
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
        ("agents:missing", "'agents' has no attribute 'missing'"),
        ("agents.py:Runner.missing", "'agents.py' has no attribute 'Runner.missing'"),
        ("agents", "target 'agents' must be package.module:attr or path/to/file.py:attr"),
        ("agents:", "target 'agents:' must be package.module:attr"),
        ("agents:not_async", "is not an agent: it is a function that is not async"),
        ("agents:two_arguments", "is not an agent: it does not take exactly one argument"),
        ("agents:Runner", "is not an agent: it is the class Runner; serve an instance of it"),
        ("agents:sync_runner", "is not an agent: its run method is not async"),
        ("agents:wide_runner", "is not an agent: its run method does not take one argument"),
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


def test_a_state_that_is_not_a_type_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del project

    assert main(["serve", "agents:agent", "--state", "agents:number"]) == 2
    assert "state 'agents:number' is not a type: it is a int (42)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "status", "stream", "text"),
    [
        (["--help"], 0, "out", "usage: agui [-h] [--version] COMMAND"),
        (["serve", "--help"], 0, "out", "--state MODULE:TYPE"),
        (["--version"], 0, "out", f"agui {agui.__version__}"),
        ([], 2, "err", "the following arguments are required: COMMAND"),
        (["serve"], 2, "err", "the following arguments are required: TARGET"),
        (["serve", "x:y", "--port", "eighty"], 2, "err", "invalid int value: 'eighty'"),
        (["frobnicate"], 2, "err", "invalid choice: 'frobnicate'"),
    ],
)
def test_the_command_line_is_parsed_with_help_and_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], status: int, stream: str, text: str
) -> None:
    assert main(argv) == status
    captured = capsys.readouterr()
    assert text in (captured.out if stream == "out" else captured.err)


def test_a_missing_uvicorn_is_named_with_the_extra_to_install(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    del project
    monkeypatch.setitem(sys.modules, "uvicorn", None)

    assert main(["serve", "agents:agent"]) == 1
    assert 'pip install "agui-server[serve]"' in capsys.readouterr().err


def test_a_port_in_use_exits_1(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    del project
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        assert main(["serve", "agents:agent", "--port", str(port)]) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


class FakeServer:
    """Stands in for `uvicorn.Server`: records what it was asked to serve, serves nothing."""

    served: list[tuple[uvicorn.Config, list[socket.socket]]]
    interrupt = False

    def __init__(self, config: uvicorn.Config) -> None:
        self.config = config

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        FakeServer.served.append((self.config, list(sockets or [])))
        if FakeServer.interrupt:
            raise KeyboardInterrupt


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

    monkeypatch.setattr(cli, "_listen", listening)

    assert main(["serve", "agents:agent", "--host", "::1"]) == 0
    assert capsys.readouterr().out == "agui: serving on http://[::1]:8123/\n"


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

        scope: dict[str, Any] = {"type": "http", "method": "POST", "path": path, "headers": []}
        await app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])

    import asyncio  # noqa: PLC0415 - only this test runs a loop

    assert asyncio.run(call("/agent"))[0] == 200
    assert asyncio.run(call("/agent/"))[0] == 200
    status, body = asyncio.run(call("/agents"))
    assert status == 404
    assert json.loads(body) == {"code": "NOT_FOUND", "message": "no agent at '/agents'"}


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
    with pytest.raises(TargetError, match="is not an agent"):
        load_agent("agents:number")


def test_load_state_type_returns_the_class(project: Path) -> None:
    del project

    assert load_state_type("agents:Counter").__name__ == "Counter"


def test_a_file_whose_name_is_not_an_identifier_still_loads(project: Path) -> None:
    odd = project / "my-agent.py"
    odd.write_text("async def agent(ctx):\n    ctx.say('hi')\n")

    assert callable(load_agent(f"{odd}:agent"))


def test_an_agent_without_a_readable_signature_is_given_the_benefit_of_the_doubt(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    del project

    def unreadable(_function: object) -> inspect.Signature:
        message = "no signature found"
        raise ValueError(message)

    monkeypatch.setattr("agui.cli.inspect.signature", unreadable)

    assert callable(load_agent("agents:two_arguments"))


def test_a_file_that_is_not_python_is_refused(project: Path) -> None:
    data = project / "data.txt"
    data.write_text("not python")

    with pytest.raises(TargetError, match=r"cannot load '.*data\.txt': it is not a Python file"):
        load_target(f"{data}:agent")
