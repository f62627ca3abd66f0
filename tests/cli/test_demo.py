"""`agui demo`: the travel example served and watched in one command."""

from __future__ import annotations

import io
import socket
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import pytest
import uvicorn

import agui
from agui.cli import (
    _demo,
    _serve,
    main,
)
from agui.errors import CaptureError
from agui.events import ToolCallStartEvent
from agui_command import (
    ROOT,
    run_verify,
)

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
