"""The `agui` command's failures: one line and one exit status, never a traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agui.cli import (
    main,
)
from agui.testing import serving
from agui_command import (
    AGUI,
    ROOT,
    RUN,
    STARTUP_SECONDS,
    frames,
    replaying,
    run_agui,
    run_watch,
)


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"]])
def test_help_is_printed_by_the_console_script(args: list[str]) -> None:
    completed = subprocess.run(  # noqa: S603 - the project's own console script
        [str(AGUI), *args], capture_output=True, text=True, timeout=STARTUP_SECONDS, check=False
    )

    assert completed.returncode == 0
    assert completed.stdout.startswith("usage: agui")
    assert "serve" in completed.stdout


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
