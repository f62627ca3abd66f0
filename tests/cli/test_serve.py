"""`agui serve`: in a real subprocess, and its options, addresses and shutdown in process."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
import uvicorn

import agui
from agui.asgi import KEEPALIVE, asgi_app
from agui.cli import (
    _serve,
    main,
)
from agui.cli._serve import exit_past_lingering_threads
from agui.testing import fold
from agui_command import (
    AGUI,
    ROOT,
    STARTUP_SECONDS,
    App,
    agui_serve,
    announced_url,
    post_run,
)

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


def test_serve_serves_an_asgi_application_target_as_it_is() -> None:
    # The dojo's app routes to one endpoint per feature; its file imports its own package.
    with agui_serve("examples/dojo/app.py:app", cwd=ROOT) as url:
        events = post_run(url + "agentic_chat", {"threadId": "t", "runId": "r", "messages": []})
        with httpx.Client(timeout=STARTUP_SECONDS) as client:
            elsewhere = client.post(url + "nowhere", json={})

    assert events[-1].type == "RUN_FINISHED"
    assert elsewhere.status_code == 404
    assert elsewhere.json()["code"] == "NOT_FOUND"


APP_FILE = """
async def app(scope, receive, send):
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})
"""


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--state", "agents:Counter"], "--state"),
        (["--runs", "memory", "--debug"], "--debug and --runs"),
        (["--path", "/agent", "--inspector"], "--path and --inspector"),
        (["--keepalive", "1", "--buffer-budget", "8"], "--keepalive and --buffer-budget"),
    ],
)
def test_serve_refuses_the_endpoints_options_for_an_asgi_application(
    project: Path, capsys: pytest.CaptureFixture[str], options: list[str], named: str
) -> None:
    (project / "apps.py").write_text(APP_FILE)

    assert main(["serve", "apps.py:app", *options]) == 2

    assert capsys.readouterr().err == (
        f"agui serve: error: {named} configure the endpoint agui builds for an agent, and "
        "'apps.py:app' is an ASGI application, which configures its own: leave them out, or "
        "serve an agent\n"
    )


def test_serve_loads_an_asgi_application_target_to_serve_as_it_is(project: Path) -> None:
    (project / "apps.py").write_text(APP_FILE)
    parser = argparse.ArgumentParser(prog="agui")
    _serve.add_serve(parser.add_subparsers())
    args = parser.parse_args(["serve", "apps.py:app"])

    served = _serve._endpoint(args, _serve._load(args), "127.0.0.1")  # pyright: ignore[reportPrivateUsage]

    assert inspect.getfile(served.app) == str(project / "apps.py")
    assert served.before_shutdown is _serve._nothing  # pyright: ignore[reportPrivateUsage]


def test_serve_awaits_an_applications_aclose_before_shutdown_if_it_has_one() -> None:
    closed: list[str] = []

    class Closing:
        async def __call__(self, scope: object, receive: object, send: object) -> None: ...

        async def aclose(self) -> None:
            closed.append("closed")

    async def bare(scope: object, receive: object, send: object) -> None: ...

    async def close_both() -> None:
        await _serve._closer(Closing())()  # pyright: ignore[reportPrivateUsage]
        await _serve._closer(bare)()  # pyright: ignore[reportPrivateUsage]

    asyncio.run(close_both())
    assert closed == ["closed"]


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
        url = announced_url(process)
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
