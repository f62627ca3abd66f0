"""The Microsoft Agent Framework's AG-UI client, `AGUIChatClient`, on agui's live examples.

`agent-framework-ag-ui` 1.7.0 pins `ag-ui-protocol<0.2`, which this environment cannot hold
beside `ag-ui-protocol` 1.0, so it lives in an environment of its own, `.venv-maf`, made by
`scripts/setup-dev`. Each test serves an example on uvicorn (127.0.0.1, port 0) behind a
recorder, runs one scenario of `tests/maf/driver.py` in that environment, and asserts on what
the client ended with and on what agui was sent: how many round trips, with what.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import pytest
from examples.task_board import app as board
from examples.travel import app as travel

from agui.testing import serving
from test_copilotkit import Recorder

ROOT = Path(__file__).parent.parent
MAF_PYTHON = ROOT / ".venv-maf" / "bin" / "python"
DRIVER = Path(__file__).parent / "maf" / "driver.py"
SCENARIO_SECONDS = 120.0

Json = dict[str, Any]


def maf_python(python: Path = MAF_PYTHON) -> Path:
    """The Agent Framework's environment; the test fails, saying how to make it, without it."""
    if not python.is_file():
        pytest.fail(
            f"the Agent Framework client tests need their own environment ({python} is missing): "
            "run scripts/setup-dev, which creates .venv-maf with agent-framework-ag-ui 1.7.0"
        )
    return python


@pytest.fixture
def recorded_travel() -> Generator[tuple[Recorder, str], None, None]:
    recorder = Recorder(travel.app)
    with serving(recorder) as url:
        yield recorder, url


@pytest.fixture
def recorded_board() -> Generator[tuple[Recorder, str], None, None]:
    recorder = Recorder(board.app)
    with serving(recorder) as url:
        yield recorder, url


def drive(scenario: str, url: str) -> Json:
    """Run one scenario of the driver against `url`; what the client ended with."""
    completed = subprocess.run(  # noqa: S603 - a fixed command line
        [str(maf_python()), str(DRIVER), scenario, url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SCENARIO_SECONDS,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return cast("Json", json.loads(completed.stdout.splitlines()[-1]))


def test_the_maf_client_streams_the_travel_answer_update_by_update(
    recorded_travel: tuple[Recorder, str],
) -> None:
    recorder, url = recorded_travel

    result = drive("stream", url)

    assert result["updates"] > 10  # a word at a time, not one block
    assert result["text"].startswith("In Paris it is ")
    assert "Italian restaurants worth a visit: " in result["text"]
    assert result["outcome"] == {"type": "success"}
    assert len(recorder.exchanges) == 1


def test_a_maf_session_sends_the_first_turn_with_the_second(
    recorded_travel: tuple[Recorder, str],
) -> None:
    recorder, url = recorded_travel

    result = drive("session", url)

    first, second = result["answers"]
    assert first.startswith("In Rome it is ")
    assert second.startswith("In Paris it is ")
    # The session keeps the history on the client: the second request carries the first turn.
    # (This client spells the input's names in snake_case; agui reads both spellings.)
    assert len(recorder.exchanges) == 2
    two = recorder.exchanges[1].request
    sent = [(m["role"], m.get("content")) for m in two["messages"]]
    assert ("user", "What's the weather in Rome?") in sent
    assert ("assistant", first) in sent
    assert sent[-1] == ("user", "And the weather in Paris?")


def test_a_declaration_only_delete_comes_back_as_an_interrupt_that_the_app_resumes(
    recorded_board: tuple[Recorder, str],
) -> None:
    recorder, url = recorded_board

    result = drive("declared", url)

    asked, answered = result["asked"], result["answered"]
    [call] = asked["calls"]
    assert (call["type"], call["name"]) == ("function_call", "delete_task")
    [interrupt] = asked["interrupts"]
    assert interrupt["toolCallId"] == call["callId"]
    assert interrupt["reason"] == "tool_call"
    assert answered["text"] == "Deleted #1 buy milk.", recorder.describe()
    assert answered["outcome"] == {"type": "success"}
    assert len(recorder.exchanges) == 2, recorder.describe()
    resumed = recorder.exchanges[1].request
    assert resumed["resume"] == [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    ]


def test_an_executable_delete_finishes_in_at_most_two_round_trips(
    recorded_board: tuple[Recorder, str],
) -> None:
    recorder, url = recorded_board

    result = drive("executable", url)

    trips = len(recorder.exchanges)
    assert trips <= 2, f"{trips} round trips, {result['localRuns']} local runs of delete_task\n" + (
        recorder.describe()
    )
    assert result["localRuns"] == 1
    assert result["deleteCalls"] == 1
    assert "Deleted #1 buy milk." in result["text"], recorder.describe()


def test_the_maf_tests_fail_rather_than_skip_without_their_environment(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"run scripts/setup-dev, which creates"):
        maf_python(tmp_path / "python")
