"""SSE framing and the exact wire JSON, pinned by the cross-language null-omission fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

import pytest
from pydantic import JsonValue

from agui.errors import UsageError
from agui.events import (
    CustomEvent,
    Event,
    RawEvent,
    RunFinishedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallStartEvent,
)
from agui.sse import SSE_MEDIA_TYPE, comment_frame, encode_sse, event_json
from agui.types import RunAgentInput
from agui.wire import parse_event

SHARED = Path(__file__).resolve().parents[2] / "shared"
NULL_OMISSION = SHARED / "conformance" / "null-omission.json"


class Case(TypedDict):
    name: str
    producedBy: list[str]
    input: dict[str, JsonValue]
    expected: dict[str, JsonValue]


def _python_cases() -> list[Case]:
    stream: list[Case] = json.loads(NULL_OMISSION.read_text(encoding="utf-8"))["stream"]
    return [case for case in stream if "python" in case["producedBy"]]


PYTHON_CASES = _python_cases()


# -- the golden null-omission fixture ---------------------------------------------------------


def test_the_null_omission_fixture_has_python_cases() -> None:
    assert len(PYTHON_CASES) >= 28


@pytest.mark.parametrize("case", PYTHON_CASES, ids=[case["name"] for case in PYTHON_CASES])
def test_each_null_omission_case_writes_exactly_the_expected_json(case: Case) -> None:
    event = parse_event(case["input"])

    written = json.loads(event_json(event))

    assert written == case["expected"]
    assert sorted(written) == sorted(case["expected"])


@pytest.mark.parametrize("case", PYTHON_CASES, ids=[case["name"] for case in PYTHON_CASES])
def test_each_null_omission_case_frames_its_json_as_one_sse_event(case: Case) -> None:
    event = parse_event(case["input"])

    frame = encode_sse(event)

    assert frame.startswith(b"data: ")
    assert frame.endswith(b"\n\n")
    assert json.loads(frame[len(b"data: ") : -2]) == case["expected"]


def test_a_bare_null_run_input_state_converges_on_omission() -> None:
    run_input = RunAgentInput.model_validate(
        {"threadId": "t", "runId": "r", "state": None, "messages": []}
    )

    assert run_input.state is None
    assert json.loads(run_input.model_dump_json()) == {
        "threadId": "t",
        "runId": "r",
        "messages": [],
    }


# -- frames -----------------------------------------------------------------------------------


def test_a_frame_is_data_then_compact_json_then_a_blank_line() -> None:
    event = TextMessageContentEvent(message_id="m1", delta="Hi")

    assert (
        encode_sse(event)
        == b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}\n\n'
    )


@pytest.mark.parametrize(
    ("delta", "json_text"),
    [
        ("é ü 中文 😀", '"é ü 中文 😀"'),
        ("\u2028\u2029", '"\u2028\u2029"'),
        ("a\nb\rc\td", '"a\\nb\\rc\\td"'),
        ("\x00\x1f", '"\\u0000\\u001f"'),
        ('say "hi" \\ /', '"say \\"hi\\" \\\\ /"'),
    ],
    ids=[
        "non-ascii-raw",
        "line-separators-raw",
        "whitespace-escaped",
        "controls-escaped",
        "quotes",
    ],
)
def test_text_is_raw_utf8_like_json_stringify_with_control_characters_escaped(
    delta: str, json_text: str
) -> None:
    frame = encode_sse(TextMessageContentEvent(message_id="m", delta=delta))

    expected = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":' + json_text + "}"
    assert frame == b"data: " + expected.encode() + b"\n\n"
    assert b"\r" not in frame
    assert frame.count(b"\n") == 2


@pytest.mark.parametrize(
    ("event", "json_text"),
    [
        (CustomEvent(name="ping", value=None), '{"type":"CUSTOM","name":"ping","value":null}'),
        (StateSnapshotEvent(snapshot=None), '{"type":"STATE_SNAPSHOT","snapshot":null}'),
        (RawEvent(event=None), '{"type":"RAW","event":null}'),
        (TextMessageStartEvent(message_id="m"), '{"type":"TEXT_MESSAGE_START","messageId":"m"}'),
        (
            ToolCallStartEvent(tool_call_id="c", tool_call_name="f", timestamp=1_700_000_000_000),
            '{"type":"TOOL_CALL_START","timestamp":1700000000000,"toolCallId":"c","toolCallName":"f"}',
        ),
        (
            RunFinishedEvent(thread_id="t", run_id="r", result=[None, {"a": None}]),
            '{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":[null,{"a":null}]}',
        ),
    ],
    ids=[
        "custom-null",
        "snapshot-null",
        "raw-null",
        "absent-optionals",
        "timestamp-int",
        "nulls-in-data",
    ],
)
def test_event_json_is_the_exact_wire_form(event: Event, json_text: str) -> None:
    assert event_json(event) == json_text.encode()


def test_event_json_refuses_a_plain_dict() -> None:
    with pytest.raises(UsageError, match="expected an AG-UI event model, got dict"):
        event_json({"type": "CUSTOM", "name": "n", "value": 1})  # type: ignore[arg-type]


def test_encode_sse_refuses_a_plain_dict() -> None:
    with pytest.raises(UsageError, match=r"agui\.parse_event"):
        encode_sse({"type": "RAW", "event": 1})  # type: ignore[arg-type]


def test_a_comment_frame_is_a_colon_line_then_a_blank_line() -> None:
    assert comment_frame() == b": ping\n\n"
    assert comment_frame("keep-alive é") == ": keep-alive é\n\n".encode()


@pytest.mark.parametrize("text", ["a\nb", "a\rb", "\r\n"], ids=["lf", "cr", "crlf"])
def test_a_comment_frame_refuses_a_line_break(text: str) -> None:
    with pytest.raises(UsageError, match="an SSE comment is one line"):
        comment_frame(text)


def test_the_sse_media_type_is_text_event_stream() -> None:
    assert SSE_MEDIA_TYPE == "text/event-stream"
