"""`agui verify`: the conformance corpus, files and standard input, and live endpoints."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest

import agui
import corpus
from agui.cli import (
    main,
)
from agui.testing import serving
from agui_command import (
    AGUI,
    BROKEN,
    RUN,
    STARTUP_SECONDS,
    hello_agent,
    replaying,
    run_agui,
    run_verify,
)

# -- verify: the conformance corpus ------------------------------------------------------------

CORPUS_STREAMS = corpus.streams()


def _conformance_module() -> Any:
    """tests/test_conformance.py, for its classification of the corpus (tests are no package)."""
    path = Path(__file__).parents[1] / "test_conformance.py"
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
        # The server's words for 422, which Python 3.13 changed ("Unprocessable Entity" before).
        f"agui verify: error: {url}: HTTP 422 {HTTPStatus(422).phrase} from {url}\n"
        '{\n  "code": "INVALID_INPUT",\n  "message": "no runId"\n}\n'
    )
