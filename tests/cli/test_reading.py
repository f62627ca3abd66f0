"""How `agui watch` and `agui verify` read a stream: one event, long frames, any output encoding."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agui
from agui.cli import (
    _capture,
    main,
)
from agui.client import SSEParser
from agui.testing import serving
from agui_command import (
    AGUI,
    RUN,
    STARTUP_SECONDS,
    frames,
    replaying,
    run_verify,
    run_watch,
)

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
