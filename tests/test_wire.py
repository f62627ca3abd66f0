"""Reading events and inputs: unknown material is stripped with a warning; malformed is fatal."""

from __future__ import annotations

import copy
import json
import re
import warnings
from collections.abc import Callable
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from agui.errors import (
    DecodeError,
    InvalidInput,
    MalformedEvent,
    UnknownEventType,
    UnknownMemberWarning,
)
from agui.events import (
    Event,
    EventType,
    StateDeltaEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import (
    AudioPart,
    DataSource,
    DocumentPart,
    FileSource,
    ImagePart,
    TextPart,
    UrlSource,
    UserMessage,
)
from agui.sse import encode_sse, event_json
from agui.types import RunAgentInput
from agui.wire import misfits, parse_event, parse_input, parse_json

JsonDict = dict[str, JsonValue]


def _read_warning_free(data: JsonDict) -> Event:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return parse_event(data)


def _read_with_warnings(data: JsonDict | bytes) -> tuple[Event, list[str]]:
    with pytest.warns(UnknownMemberWarning) as record:
        event = parse_event(data)
    return event, [str(item.message) for item in record]


def _row_ids(rows: list[tuple[JsonDict, str]] | list[tuple[JsonDict, str, str]]) -> list[str]:
    """Each table row's id: the event type of its data, then the pointer it is about."""
    return [f"{str(row[0]['type']).lower()}{row[1]}" for row in rows]


def _nested_lists(depth: int) -> JsonValue:
    value: JsonValue = []
    for _ in range(depth - 1):
        value = [value]
    return value


# -- not an event at all ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"type": "RAW", "event": "\xff\xfe"}', r"not UTF-8 \(byte 26 is not\); JSON travels"),
        (b'{"type": "RAW", "event": NaN}', "not valid JSON: .*; NaN and Infinity are not JSON"),
        (b'{"type": "RAW", "event": Infinity}', "not valid JSON: .*; NaN and Infinity are not"),
        (b'{"type": "RAW", "event": -Infinity}', "column 27; NaN and Infinity are not JSON"),
        ('{"type": "RAW",\n "event": nan}', "at line 2 column 12; NaN and Infinity are not JSON"),
        (b"", "not valid JSON"),
        ('{"type": "RAW", "event": 1} trailing', "not valid JSON"),
        (
            '{"type": "RAW", "event": ' + "9" * 5000 + "}",
            (
                r"holds a number too long to read \(number out of range at line 1 column \d+\): "
                "agui reads whole numbers of up to 4,300 digits, as Python does; send a longer"
            ),
        ),
    ],
    ids=[
        "truncated",
        "invalid-utf8",
        "nan",
        "infinity",
        "minus-infinity",
        "lower-case-nan-on-line-2",
        "empty",
        "trailing-garbage",
        "a-whole-number-of-5000-digits",
    ],
)
def test_bytes_that_are_not_json_raise_decode_error(data: bytes | str, match: str) -> None:
    with pytest.raises(DecodeError, match=match) as caught:
        parse_event(data)

    assert caught.value.path == ""
    assert caught.value.code == "DECODE_ERROR"


_CONTENT = '{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": '


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (_CONTENT + r'"\ud800"}', r"\ud800 at line 1 column 62"),
        (_CONTENT.encode() + rb'"a\uDBFF"}', r"\uDBFF at line 1 column 63"),
        (_CONTENT + r'"\udc00x"}', r"\udc00 at line 1 column 62"),
        (_CONTENT + r'"\ud800\u0041"}', r"\ud800 at line 1 column 62"),
        (_CONTENT + r'"\ud800\ud800"}', r"\ud800 at line 1 column 62"),
        (_CONTENT + r'"\ud83d\ude00\\\ud83d\\ud800"}', r"\ud83d at line 1 column 76"),
        ('{"type": "RAW",\n "event": ["\\ud800"]}', r"\ud800 at line 2 column 13"),
        (_CONTENT + '"\ud800"}', "U+D800 at line 1 column 62"),
        (_CONTENT + '"\\ud83d\\ude00 \udfff"}', "U+DFFF at line 1 column 75"),
    ],
    ids=[
        "escaped-first-half",
        "escaped-first-half-in-bytes",
        "escaped-second-half",
        "first-half-before-another-escape",
        "two-first-halves",
        "after-a-pair-and-escaped-backslashes",
        "on-line-2",
        "a-str-holding-one",
        "a-str-holding-one-after-a-pair",
    ],
)
def test_json_holding_a_lone_surrogate_is_refused_as_one(data: str | bytes, where: str) -> None:
    """Valid JSON syntax (RFC 8259, 8.2), but no Unicode character: UTF-8 cannot carry it."""
    with pytest.raises(
        DecodeError,
        match=re.escape(f"the body holds a lone surrogate ({where}): half of a UTF-16 surrogate")
        + ".* UTF-8 cannot carry, so agui does not read it; send the whole character",
    ) as caught:
        parse_event(data)

    assert caught.value.path == ""


def test_the_escape_of_a_whole_surrogate_pair_reads_as_its_character() -> None:
    event = parse_event(_CONTENT + r'"\ud83d\ude00 \\ud800"}')

    assert isinstance(event, TextMessageContentEvent)
    assert event.delta == "\U0001f600 \\ud800"


def test_parse_json_of_what_is_not_text_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Expected bytes, bytearray or str"):
        parse_json(cast("str", None))


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"[1, 2]", "must be a JSON object, not an array"),
        (b"42", "must be a JSON object, not a number or boolean"),
        (b'"RAW"', "must be a JSON object, not a string"),
        (b"null", "must be a JSON object, not null"),
    ],
    ids=["array", "number", "string", "null"],
)
def test_json_that_is_not_an_object_raises_malformed_event(data: bytes, match: str) -> None:
    with pytest.raises(MalformedEvent, match=match) as caught:
        parse_event(data)

    assert caught.value.path == ""


@pytest.mark.parametrize(
    "data",
    [{"event": 1}, {"type": "", "event": 1}, {"type": 5}, {"type": None}, {"type": ["RAW"]}],
    ids=["missing", "empty", "number", "null", "array"],
)
def test_an_event_without_a_string_type_raises_malformed_event_at_type(data: JsonDict) -> None:
    with pytest.raises(MalformedEvent, match="carries no event type") as caught:
        parse_event(data)

    assert caught.value.path == "/type"


def test_an_unknown_event_type_raises_unknown_event_type() -> None:
    with pytest.raises(UnknownEventType, match="unknown event type 'TEXT_MESSAGE_BEGIN'") as caught:
        parse_event({"type": "TEXT_MESSAGE_BEGIN", "messageId": "m"})

    assert caught.value.path == "/type"
    assert caught.value.code == "UNKNOWN_EVENT_TYPE"
    assert isinstance(caught.value, DecodeError)


@pytest.mark.parametrize(
    "kind",
    [
        "THINKING_START",
        "THINKING_END",
        "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
    ],
    ids=lambda kind: kind.lower(),
)
def test_a_retired_thinking_event_is_unknown_and_the_error_names_1_0(kind: str) -> None:
    with pytest.raises(UnknownEventType, match=rf"'{kind}' was retired in AG-UI 1\.0.*REASONING"):
        parse_event({"type": kind, "delta": "hmm"})


def test_the_type_is_case_sensitive() -> None:
    with pytest.raises(UnknownEventType, match="unknown event type 'text_message_end'"):
        parse_event({"type": "text_message_end", "messageId": "m"})


# -- malformed known fields -------------------------------------------------------------------


WRONG_TYPE: list[tuple[JsonDict, str, str]] = [
    ({"type": "TEXT_MESSAGE_START", "messageId": 1}, "/messageId", "valid string"),
    ({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "tool"}, "/role", "'user'"),
    ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 5}, "/delta", "string"),
    ({"type": "TEXT_MESSAGE_END", "messageId": ["m"]}, "/messageId", "valid string"),
    ({"type": "TEXT_MESSAGE_CHUNK", "delta": False}, "/delta", "valid string"),
    ({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": 3}, "/toolCallName", ""),
    ({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": {"a": 1}}, "/delta", "string"),
    ({"type": "TOOL_CALL_END", "toolCallId": 7}, "/toolCallId", "valid string"),
    ({"type": "TOOL_CALL_CHUNK", "parentMessageId": 1}, "/parentMessageId", "string"),
    (
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": "x",
            "role": "assistant",
        },
        "/role",
        "'tool'",
    ),
    ({"type": "STATE_SNAPSHOT", "snapshot": {}, "metadata": "m"}, "/metadata", "valid dictionary"),
    ({"type": "STATE_DELTA", "delta": {"op": "add"}}, "/delta", "valid list"),
    ({"type": "MESSAGES_SNAPSHOT", "messages": {}}, "/messages", "valid list"),
    (
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "P", "content": []},
        "/content",
        "valid dictionary",
    ),
    (
        {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "P", "patch": "x"},
        "/patch",
        "valid list",
    ),
    ({"type": "RAW", "event": 1, "source": 2}, "/source", "valid string"),
    ({"type": "CUSTOM", "name": None, "value": 1}, "/name", "valid string"),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": 1}, "/runId", "valid string"),
    (
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": 1.0},
        "/protocolVersion",
        "valid string",
    ),
    ({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "usage": {}}, "/usage", "list"),
    ({"type": "RUN_ERROR", "message": "m", "code": 500}, "/code", "valid string"),
    ({"type": "STEP_STARTED", "stepName": True}, "/stepName", "valid string"),
    ({"type": "STEP_FINISHED", "stepName": 1}, "/stepName", "valid string"),
    ({"type": "REASONING_START", "messageId": 1}, "/messageId", "valid string"),
    (
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "assistant"},
        "/role",
        "'reasoning'",
    ),
    ({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": 1}, "/delta", ""),
    ({"type": "REASONING_MESSAGE_END", "messageId": {}}, "/messageId", "valid string"),
    ({"type": "REASONING_MESSAGE_CHUNK", "messageId": 1}, "/messageId", "valid string"),
    ({"type": "REASONING_END", "messageId": 1.5}, "/messageId", "valid string"),
    (
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "thought",
            "entityId": "m",
            "encryptedValue": "x",
        },
        "/subtype",
        "'tool-call' or 'message'",
    ),
    ({"type": "SUBAGENT_STARTED", "subagentRunId": 1, "name": "n"}, "/subagentRunId", ""),
    (
        {
            "type": "SUBAGENT_FINISHED",
            "subagentRunId": "s",
            "outcome": {"type": "suspended", "interruptIds": "i1"},
        },
        "/outcome/interruptIds",
        "valid list",
    ),
    ({"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": 1}, "/message", "string"),
    (
        {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": 5},
        "/content",
        "valid",
    ),
    (
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": [{"type": "text", "text": 5}],
        },
        "/content/0/text",
        "valid string",
    ),
    (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"role": "user", "id": "u", "content": {"text": "hi"}}],
        },
        "/messages/0/content",
        "valid",
    ),
    (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {
                    "role": "assistant",
                    "id": "a",
                    "toolCalls": [{"id": "c", "function": {"name": "f", "arguments": {}}}],
                }
            ],
        },
        "/messages/0/toolCalls/0/function/arguments",
        "valid string",
    ),
]


def test_the_wrong_type_table_covers_every_event_type() -> None:
    assert {str(row[0]["type"]) for row in WRONG_TYPE} == {member.value for member in EventType}


@pytest.mark.parametrize(("data", "path", "match"), WRONG_TYPE, ids=_row_ids(WRONG_TYPE))
def test_a_known_field_of_the_wrong_type_raises_malformed_event_at_its_pointer(
    data: JsonDict, path: str, match: str
) -> None:
    with pytest.raises(MalformedEvent, match=re.escape(path) + ".*" + match) as caught:
        parse_event(data)

    assert caught.value.path == path
    assert caught.value.code == "MALFORMED_EVENT"


MISSING: list[tuple[JsonDict, str]] = [
    ({"type": "TEXT_MESSAGE_START"}, "/messageId"),
    ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m"}, "/delta"),
    ({"type": "TOOL_CALL_START", "toolCallId": "c"}, "/toolCallName"),
    ({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c"}, "/content"),
    ({"type": "STATE_SNAPSHOT"}, "/snapshot"),
    ({"type": "RAW"}, "/event"),
    ({"type": "CUSTOM", "name": "n"}, "/value"),
    ({"type": "RUN_STARTED", "threadId": "t"}, "/runId"),
    ({"type": "RUN_ERROR"}, "/message"),
    ({"type": "SUBAGENT_FINISHED"}, "/subagentRunId"),
    (
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "m"},
        "/encryptedValue",
    ),
    (
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"role": "user", "id": "u"}]},
        "/messages/0/content",
    ),
    (
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"role": "tool", "id": "t", "content": "x"}]},
        "/messages/0/toolCallId",
    ),
    (
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r",
            "outcome": {"type": "interrupt", "interrupts": [{"id": "i"}]},
        },
        "/outcome/interrupts/0/reason",
    ),
    ({"type": "STATE_DELTA", "delta": [{"op": "move", "path": "/a"}]}, "/delta/0/from"),
    ({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a"}]}, "/delta/0/value"),
    ({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/a"}]}, "/delta/0/value"),
    ({"type": "STATE_DELTA", "delta": [{"op": "test", "path": "/a"}]}, "/delta/0/value"),
    ({"type": "STATE_DELTA", "delta": [{"op": "remove"}]}, "/delta/0/path"),
    (
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {
                    "role": "assistant",
                    "id": "a",
                    "toolCalls": [{"id": "c", "type": "function", "function": {"arguments": ""}}],
                }
            ],
        },
        "/messages/0/toolCalls/0/function/name",
    ),
    (
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": [{"type": "text"}],
        },
        "/content/0/text",
    ),
    (
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": [{"type": "image"}],
        },
        "/content/0/source",
    ),
]


@pytest.mark.parametrize(("data", "path"), MISSING, ids=_row_ids(MISSING))
def test_a_missing_required_field_raises_malformed_event_at_its_pointer(
    data: JsonDict, path: str
) -> None:
    with pytest.raises(MalformedEvent, match="Field required") as caught:
        parse_event(data)

    assert caught.value.path == path


@pytest.mark.parametrize(
    "value",
    [1.5, 1.0, "1700000000000", True, 2**53, -(2**53), 1e20],
    ids=["fraction", "integral-float", "string", "bool", "above-2-53", "below-minus-2-53", "1e20"],
)
def test_a_timestamp_that_is_not_a_safe_integer_is_malformed(value: JsonValue) -> None:
    with pytest.raises(MalformedEvent, match="/timestamp") as caught:
        parse_event({"type": "RAW", "event": 1, "timestamp": value})

    assert caught.value.path == "/timestamp"


@pytest.mark.parametrize(
    "value", [0, -1, 2**53 - 1, -(2**53 - 1)], ids=["zero", "negative", "max", "min"]
)
def test_a_timestamp_within_plus_minus_2_53_is_read(value: int) -> None:
    event = parse_event(json.dumps({"type": "RAW", "event": 1, "timestamp": value}))

    assert event.timestamp == value


def test_a_timestamp_beyond_2_53_in_json_text_is_malformed() -> None:
    with pytest.raises(MalformedEvent, match="less than or equal to 9007199254740991"):
        parse_event(b'{"type":"RAW","event":1,"timestamp":9007199254740993}')


@pytest.mark.parametrize(
    ("value", "pointer"),
    [
        (float("nan"), "/value"),
        ([1, float("inf")], "/value/1"),
        ({"k": float("nan")}, "/value/k"),
        ([{"k": [float("-inf")]}], "/value/0/k/0"),
        ({"a": {"b": float("nan")}}, "/value/a/b"),
    ],
    ids=["bare", "in-a-list", "in-an-object", "list-object-list", "object-in-object"],
)
def test_nan_inside_a_mapping_is_malformed_like_nan_in_json_text(
    value: JsonValue, pointer: str
) -> None:
    """JSON has no NaN; it must not pass through a dict and come out as `null`."""
    with pytest.raises(MalformedEvent, match="finite number") as caught:
        parse_event({"type": "CUSTOM", "name": "n", "value": value})

    assert caught.value.path == pointer


def test_a_payload_nested_300_levels_deep_raises_decode_error_not_recursion_error() -> None:
    deep = "[" * 300 + "]" * 300
    text = '{"type":"CUSTOM","name":"deep","value":' + deep + "}"

    with pytest.raises(DecodeError, match="recursion limit exceeded"):
        parse_event(text)


def test_json_nested_past_the_limit_is_called_too_deep_not_invalid() -> None:
    text = '{"a":' * 201 + "1" + "}" * 201

    with pytest.raises(DecodeError, match="nests deeper than 200 levels") as caught:
        parse_json(text)

    assert "not valid JSON" not in str(caught.value)


def _nested_objects(depth: int) -> JsonValue:
    value: JsonValue = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("value", "pointer"),
    [(_nested_lists(300), r"/value(/0)*"), (_nested_objects(300), r"/value(/k)*")],
    ids=["lists", "objects"],
)
def test_a_mapping_nested_300_levels_deep_raises_decode_error_with_a_json_pointer(
    value: JsonValue, pointer: str
) -> None:
    with pytest.raises(DecodeError, match="depth") as caught:
        parse_event({"type": "CUSTOM", "name": "deep", "value": value})

    assert caught.value.path is not None
    assert re.fullmatch(pointer, caught.value.path)


def test_a_payload_nested_200_levels_deep_round_trips() -> None:
    deep = "[" * 200 + "]" * 200
    text = '{"type":"CUSTOM","name":"deep","value":' + deep + "}"

    assert event_json(parse_event(text)) == text.encode()


def test_a_five_megabyte_delta_parses_and_round_trips_unchanged() -> None:
    delta = ('héllo wörld ✓ \u2028 "q" \\ \n' * 200_000)[: 5 * 1024 * 1024]
    text = json.dumps(
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": delta},
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()

    event = parse_event(text)

    assert isinstance(event, TextMessageContentEvent)
    assert event.delta == delta
    assert event_json(event) == text


# -- nulls ------------------------------------------------------------------------------------


NULL_ON_OPTIONAL: list[tuple[JsonDict, str]] = [
    ({"type": "RAW", "event": 1, "metadata": None}, "/metadata"),
    ({"type": "RAW", "event": 1, "timestamp": None}, "/timestamp"),
    ({"type": "RAW", "event": 1, "source": None}, "/source"),
    ({"type": "TEXT_MESSAGE_END", "messageId": "m", "subagentRunId": None}, "/subagentRunId"),
    ({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": None}, "/role"),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "parentRunId": None}, "/parentRunId"),
    ({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": None}, "/input"),
    ({"type": "RUN_ERROR", "message": "m", "code": None}, "/code"),
]


@pytest.mark.parametrize(("data", "pointer"), NULL_ON_OPTIONAL, ids=_row_ids(NULL_ON_OPTIONAL))
def test_null_on_an_optional_field_is_malformed(data: JsonDict, pointer: str) -> None:
    with pytest.raises(MalformedEvent, match="null is not allowed on an optional field") as caught:
        parse_event(data)

    assert caught.value.path == pointer


LEGACY_NULLS: list[tuple[JsonDict, str]] = [
    (
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c",
            "toolCallName": "f",
            "parentMessageId": None,
        },
        "/parentMessageId",
    ),
    ({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "parentMessageId": None}, "/parentMessageId"),
    ({"type": "RAW", "event": 1, "rawEvent": None}, "/rawEvent"),
    ({"type": "CUSTOM", "name": "n", "value": 1, "rawEvent": None}, "/rawEvent"),
    ({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": None}, "/outcome"),
    ({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": None}, "/result"),
    ({"type": "SUBAGENT_FINISHED", "subagentRunId": "s", "result": None}, "/result"),
]


@pytest.mark.parametrize(("data", "pointer"), LEGACY_NULLS, ids=_row_ids(LEGACY_NULLS))
def test_a_legacy_null_is_read_as_absent_with_a_warning(data: JsonDict, pointer: str) -> None:
    event, messages = _read_with_warnings(data)

    assert messages == [f"Removed legacy null at '{pointer}' on {data['type']}"]
    assert pointer[1:] not in json.loads(event_json(event))
    expected = {key: value for key, value in data.items() if value is not None}
    assert json.loads(event_json(event)) == expected


@pytest.mark.parametrize(
    "data",
    [
        {"type": "CUSTOM", "name": "n", "value": None},
        {"type": "STATE_SNAPSHOT", "snapshot": None},
        {"type": "RAW", "event": None},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/a", "value": None}]},
        {"type": "CUSTOM", "name": "n", "value": {"a": None, "b": [None]}, "metadata": {"k": None}},
    ],
    ids=["custom-value", "state-snapshot", "raw-event", "patch-value", "nested-nulls"],
)
def test_a_null_that_is_data_is_read_and_written_back(data: JsonDict) -> None:
    event = _read_warning_free(data)

    assert json.loads(event_json(event)) == data


_RUN = {"threadId": "t", "runId": "r"}
_IMAGE: JsonDict = {"type": "image", "source": {"type": "url", "value": "https://x/a.png"}}


def _snapshot(message: JsonDict) -> JsonDict:
    return {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m1", **message}]}


def _started(**input_fields: JsonValue) -> JsonDict:
    return {"type": "RUN_STARTED", **_RUN, "input": {**_RUN, "messages": [], **input_fields}}


NESTED_NULLS: list[tuple[JsonDict, str]] = [
    (
        _snapshot({"role": "user", "content": "x", "subagentRunId": None}),
        "/messages/0/subagentRunId",
    ),
    (_snapshot({"role": "user", "content": "x", "metadata": None}), "/messages/0/metadata"),
    (_snapshot({"role": "user", "content": "x", "name": None}), "/messages/0/name"),
    (_snapshot({"role": "assistant", "toolCalls": None}), "/messages/0/toolCalls"),
    (
        _snapshot({"role": "user", "content": [{"type": "text", "text": "a", "metadata": None}]}),
        "/messages/0/content/0/metadata",
    ),
    (
        _snapshot(
            {
                "role": "assistant",
                "toolCalls": [
                    {"id": "c", "function": {"name": "f", "arguments": "{}"}, "metadata": None}
                ],
            }
        ),
        "/messages/0/toolCalls/0/metadata",
    ),
    (
        {
            "type": "RUN_FINISHED",
            **_RUN,
            "outcome": {
                "type": "interrupt",
                "interrupts": [{"id": "i", "reason": "r", "subagentRunId": None}],
            },
        },
        "/outcome/interrupts/0/subagentRunId",
    ),
    (
        {
            "type": "RUN_FINISHED",
            **_RUN,
            "outcome": {"type": "success", "pendingToolCallIds": None},
        },
        "/outcome/pendingToolCallIds",
    ),
    (
        {
            "type": "SUBAGENT_FINISHED",
            "subagentRunId": "s",
            "outcome": {"type": "suspended", "interruptIds": None},
        },
        "/outcome/interruptIds",
    ),
    ({"type": "RUN_FINISHED", **_RUN, "usage": [{"model": None}]}, "/usage/0/model"),
    (
        _started(messages=[{"id": "u", "role": "user", "content": "x", "subagentRunId": None}]),
        "/input/messages/0/subagentRunId",
    ),
    (_started(tools=None), "/input/tools"),
    (_started(parentRunId=None), "/input/parentRunId"),
    (
        _started(resume=[{"interruptId": "i", "status": "resolved", "metadata": None}]),
        "/input/resume/0/metadata",
    ),
    (
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": [{**_IMAGE, "metadata": None}],
        },
        "/content/0/metadata",
    ),
]


@pytest.mark.parametrize(("data", "pointer"), NESTED_NULLS, ids=_row_ids(NESTED_NULLS))
def test_a_null_on_a_nested_optional_field_is_malformed_at_its_pointer(
    data: JsonDict, pointer: str
) -> None:
    expected = f"{data['type']}: field '{pointer}': null is not allowed on an optional field"
    with pytest.raises(MalformedEvent, match=re.escape(expected)) as caught:
        parse_event(data)

    assert caught.value.path == pointer


def _as_text(data: JsonDict) -> str:
    return json.dumps(data)


def _as_bytes(data: JsonDict) -> bytes:
    return json.dumps(data).encode()


@pytest.mark.parametrize("encode", [_as_text, _as_bytes], ids=["text", "bytes"])
def test_a_nested_null_in_json_text_or_bytes_is_malformed_as_in_a_mapping(
    encode: Callable[[JsonDict], str | bytes],
) -> None:
    data = _snapshot({"role": "user", "content": "x", "subagentRunId": None})

    with pytest.raises(MalformedEvent, match="'/messages/0/subagentRunId': null is not allowed"):
        parse_event(encode(data))


def test_the_first_of_several_nested_nulls_is_named_the_same_way_every_time() -> None:
    data = _snapshot({"role": "user", "content": "x", "subagentRunId": None, "name": None})

    with pytest.raises(MalformedEvent) as caught:
        parse_event(data)

    assert caught.value.path == "/messages/0/name"


def test_the_nested_legacy_nulls_a_1_0_client_accepts_are_read_as_absent() -> None:
    legacy: JsonDict = _started(
        messages=[{"id": "u", "role": "user", "content": [{**_IMAGE, "metadata": None}]}],
        state=None,
        forwardedProps=None,
        tools=[{"name": "f", "description": "d", "parameters": None}],
        resume=[{"interruptId": "i", "status": "resolved", "payload": None}],
    )
    snapshot = _snapshot({"role": "user", "content": [{**_IMAGE, "metadata": None}]})

    started = _read_warning_free(legacy)

    assert json.loads(event_json(started)) == _started(
        messages=[{"id": "u", "role": "user", "content": [_IMAGE]}],
        tools=[{"name": "f", "description": "d"}],
        resume=[{"interruptId": "i", "status": "resolved"}],
    )
    assert json.loads(event_json(_read_warning_free(snapshot))) == _snapshot(
        {"role": "user", "content": [_IMAGE]}
    )


def test_a_run_input_still_reads_every_nested_optional_null_as_absent() -> None:
    body: JsonDict = {
        **_RUN,
        "tools": None,
        "messages": [{"id": "u", "role": "user", "content": "x", "subagentRunId": None}],
    }

    assert parse_input(body).model_dump(mode="json", by_alias=True) == {
        **_RUN,
        "messages": [{"id": "u", "role": "user", "content": "x"}],
    }


# -- unknown material -------------------------------------------------------------------------


def test_an_unknown_top_level_member_is_stripped_with_a_warning_and_the_rest_kept() -> None:
    data: JsonDict = {"type": "RAW", "event": {"a": None, "colour": 1}, "colour": "red"}

    event, messages = _read_with_warnings(data)

    assert messages == ["Removed unrecognised material at '/colour' on RAW"]
    assert json.loads(event_json(event)) == {"type": "RAW", "event": {"a": None, "colour": 1}}


def test_unknown_members_nested_in_messages_and_tool_calls_are_each_stripped_by_pointer() -> None:
    data: JsonDict = {
        "type": "MESSAGES_SNAPSHOT",
        "extra": True,
        "messages": [
            {"role": "user", "id": "u", "content": "hi", "mood": "calm"},
            {
                "role": "assistant",
                "id": "a",
                "toolCalls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}", "strict": True},
                        "index": 0,
                    }
                ],
            },
        ],
    }

    event, messages = _read_with_warnings(data)

    assert sorted(messages) == sorted(
        f"Removed unrecognised material at '{pointer}' on MESSAGES_SNAPSHOT"
        for pointer in (
            "/extra",
            "/messages/0/mood",
            "/messages/1/toolCalls/0/index",
            "/messages/1/toolCalls/0/function/strict",
        )
    )
    assert json.loads(event_json(event)) == {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"role": "user", "id": "u", "content": "hi"},
            {
                "role": "assistant",
                "id": "a",
                "toolCalls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ],
    }


def test_unknown_members_inside_content_parts_are_stripped_by_pointer() -> None:
    data: JsonDict = {
        "type": "TOOL_CALL_RESULT",
        "messageId": "m",
        "toolCallId": "c",
        "content": [
            {"type": "text", "text": "21°C", "lang": "en"},
            {"type": "image", "source": {"type": "url", "value": "u", "width": 3}},
        ],
    }

    event, messages = _read_with_warnings(data)

    assert sorted(messages) == [
        "Removed unrecognised material at '/content/0/lang' on TOOL_CALL_RESULT",
        "Removed unrecognised material at '/content/1/source/width' on TOOL_CALL_RESULT",
    ]
    assert event == ToolCallResultEvent(
        message_id="m",
        tool_call_id="c",
        content=[TextPart(text="21°C"), ImagePart(source=UrlSource(value="u"))],
    )


def test_a_message_with_an_unknown_role_is_dropped_with_a_warning() -> None:
    data: JsonDict = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"role": "narrator", "id": "n", "content": "Once upon a time"},
            {"role": "user", "id": "u", "content": "hi"},
        ],
    }

    event, messages = _read_with_warnings(data)

    assert messages == ["Removed unrecognised material at '/messages/0' on MESSAGES_SNAPSHOT"]
    assert json.loads(event_json(event))["messages"] == [
        {"role": "user", "id": "u", "content": "hi"}
    ]


def test_a_run_input_message_with_an_unknown_role_is_stripped_with_a_warning() -> None:
    """AG-UI 1.0: an unknown role is unknown material, stripped with a warning, never silently."""
    data: JsonDict = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {"role": "narrator", "id": "n", "content": "Once upon a time"},
            {"role": "user", "id": "u", "content": "hi"},
        ],
    }

    with pytest.warns(UnknownMemberWarning) as record:
        run_input = parse_input(data)

    assert [str(w.message) for w in record] == [
        "Removed unrecognised material at '/messages/0' on RunAgentInput"
    ]
    assert run_input.messages == [UserMessage(id="u", content="hi")]


def test_an_unknown_content_part_type_is_dropped_and_the_other_parts_kept() -> None:
    data: JsonDict = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {
                "role": "user",
                "id": "u",
                "content": [{"type": "hologram", "beam": 1}, {"type": "text", "text": "hi"}],
            }
        ],
    }

    event, messages = _read_with_warnings(data)

    assert messages == [
        "Removed unrecognised material at '/messages/0/content/0' on MESSAGES_SNAPSHOT"
    ]
    assert json.loads(event_json(event))["messages"][0]["content"] == [
        {"type": "text", "text": "hi"}
    ]


def test_unknown_json_patch_ops_are_dropped_and_the_other_ops_kept_with_their_extras() -> None:
    data: JsonDict = {
        "type": "STATE_DELTA",
        "delta": [
            {"op": "add", "path": "/a", "value": None, "why": "extra members are kept"},
            {"op": "merge", "path": "/b", "value": {}},
            {"op": "remove", "path": "/c"},
            {"op": "increment", "path": "/d"},
            {"op": "replace", "path": "/e", "value": None},
        ],
    }

    event, messages = _read_with_warnings(data)

    assert sorted(messages) == [
        "Removed unrecognised material at '/delta/1' on STATE_DELTA",
        "Removed unrecognised material at '/delta/3' on STATE_DELTA",
    ]
    assert isinstance(event, StateDeltaEvent)
    assert json.loads(event_json(event))["delta"] == [
        {"op": "add", "path": "/a", "value": None, "why": "extra members are kept"},
        {"op": "remove", "path": "/c"},
        {"op": "replace", "path": "/e", "value": None},
    ]


def test_an_unknown_outcome_type_is_stripped_so_the_run_reads_as_success() -> None:
    data: JsonDict = {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "paused", "until": "tomorrow"},
    }

    event, messages = _read_with_warnings(data)

    assert messages == ["Removed unrecognised material at '/outcome' on RUN_FINISHED"]
    assert json.loads(event_json(event)) == {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


@pytest.mark.parametrize(
    ("outcome", "match"),
    [
        ([], "valid dictionary"),
        ("success", "valid dictionary"),
        ({"type": "interrupt", "interrupts": []}, "at least 1 item"),
        ({"type": "interrupt"}, "Field required"),
    ],
    ids=["array", "string", "interrupt-without-interrupts", "interrupt-missing-list"],
)
def test_a_malformed_outcome_is_fatal(outcome: JsonValue, match: str) -> None:
    data: JsonDict = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": outcome}

    with pytest.raises(MalformedEvent, match=match) as caught:
        parse_event(data)

    assert caught.value.path is not None
    assert caught.value.path.startswith("/outcome")


def test_an_unknown_union_member_stripped_from_a_required_field_is_fatal() -> None:
    data: JsonDict = {
        "type": "TOOL_CALL_RESULT",
        "messageId": "m",
        "toolCallId": "c",
        "content": [{"type": "image", "source": {"type": "ftp", "value": "ftp://x"}}],
    }

    with (
        pytest.raises(MalformedEvent, match="unrecognised value was removed") as caught,
        pytest.warns(UnknownMemberWarning, match="'/content/0/source'"),
    ):
        parse_event(data)

    assert caught.value.path == "/content/0/source"


def test_reading_never_mutates_the_callers_mapping() -> None:
    data: JsonDict = {
        "type": "STATE_DELTA",
        "colour": "red",
        "rawEvent": None,
        "delta": [{"op": "merge", "path": "/a"}, {"op": "add", "path": "/b", "value": 1, "x": 2}],
    }
    before = copy.deepcopy(data)

    _read_with_warnings(data)

    assert data == before


def test_a_clean_event_is_read_without_any_warning() -> None:
    event = _read_warning_free({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user"})

    assert event == TextMessageStartEvent(message_id="m", role="user")


def test_snake_case_field_names_are_read_like_camel_case() -> None:
    event = _read_warning_free(
        {"type": "TOOL_CALL_START", "tool_call_id": "c", "tool_call_name": "f"}
    )

    assert event == ToolCallStartEvent(tool_call_id="c", tool_call_name="f")


@pytest.mark.parametrize(
    "data",
    [
        b'{"type":"TEXT_MESSAGE_CHUNK","delta":"hi"}',
        '{"type":"TEXT_MESSAGE_CHUNK","delta":"hi"}',
        bytearray(b'{"type":"TEXT_MESSAGE_CHUNK","delta":"hi"}'),
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "hi"},
    ],
    ids=["bytes", "str", "bytearray", "mapping"],
)
def test_an_event_is_read_from_bytes_text_or_a_mapping(data: bytes | str | JsonDict) -> None:
    assert parse_event(data) == TextMessageChunkEvent(delta="hi")


# -- the run input ----------------------------------------------------------------------------


def test_a_camel_case_run_input_with_everything_is_read() -> None:
    body = {
        "threadId": "t",
        "runId": "r",
        "parentRunId": "r0",
        "protocolVersion": "1.0",
        "state": {"n": 1, "owner": None},
        "messages": [{"role": "user", "id": "u", "content": "hi"}],
        "tools": [{"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}],
        "context": [{"description": "tz", "value": "UTC"}],
        "forwardedProps": {"x": None},
        "resume": [{"interruptId": "i", "status": "resolved", "payload": {"ok": True}}],
    }

    run_input = parse_input(json.dumps(body))

    assert run_input.model_dump(mode="json") == body


def test_a_snake_case_run_input_is_read_like_camel_case() -> None:
    body = {
        "thread_id": "t",
        "run_id": "r",
        "parent_run_id": "r0",
        "messages": [{"role": "tool", "id": "m", "tool_call_id": "c", "content": "ok"}],
        "forwarded_props": {"a": 1},
        "resume": [{"interrupt_id": "i", "status": "cancelled"}],
    }

    run_input = parse_input(body)

    assert run_input.model_dump(mode="json") == {
        "threadId": "t",
        "runId": "r",
        "parentRunId": "r0",
        "messages": [{"role": "tool", "id": "m", "toolCallId": "c", "content": "ok"}],
        "forwardedProps": {"a": 1},
        "resume": [{"interruptId": "i", "status": "cancelled"}],
    }


@pytest.mark.parametrize(
    "body",
    [
        {"threadId": "t", "runId": "r", "messages": []},
        {"threadId": "t", "runId": "r"},
        {"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": []},
        {"threadId": "t", "runId": "r", "messages": [], "forwardedProps": {}, "state": {}},
    ],
    ids=["no-optionals", "no-messages", "empty-tools-and-context", "empty-props-and-state"],
)
def test_a_run_input_with_or_without_its_optional_lists_is_read(body: JsonDict) -> None:
    run_input = parse_input(body)

    assert run_input.thread_id == "t"
    assert run_input.messages == []


def test_the_legacy_optional_nulls_in_a_run_input_are_read_as_absent() -> None:
    body: JsonDict = {
        "threadId": "t",
        "runId": "r",
        "state": None,
        "forwardedProps": None,
        "messages": [
            {
                "role": "user",
                "id": "u",
                "content": [
                    {"type": "image", "source": {"type": "url", "value": "u"}, "metadata": None}
                ],
            }
        ],
        "tools": [{"name": "n", "description": "d", "parameters": None}],
        "resume": [{"interruptId": "i", "status": "resolved", "payload": None}],
    }

    run_input = parse_input(body)

    assert run_input.state is None
    assert run_input.forwarded_props is None
    assert json.loads(run_input.model_dump_json()) == {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {
                "role": "user",
                "id": "u",
                "content": [{"type": "image", "source": {"type": "url", "value": "u"}}],
            }
        ],
        "tools": [{"name": "n", "description": "d"}],
        "resume": [{"interruptId": "i", "status": "resolved"}],
    }


def test_unknown_members_of_a_run_input_are_stripped_with_a_warning() -> None:
    body: JsonDict = {
        "threadId": "t",
        "runId": "r",
        "messages": [],
        "agentId": "a",
        "tools": [{"name": "n", "description": "d", "strict": True}],
    }

    with pytest.warns(UnknownMemberWarning) as record:
        run_input = parse_input(body)

    assert sorted(str(item.message) for item in record) == [
        "Removed unrecognised material at '/agentId' on RunAgentInput",
        "Removed unrecognised material at '/tools/0/strict' on RunAgentInput",
    ]
    assert json.loads(run_input.model_dump_json())["tools"] == [{"name": "n", "description": "d"}]


def test_a_0x_binary_content_part_becomes_a_media_part_with_a_warning() -> None:
    body: JsonDict = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {
                "role": "user",
                "id": "u",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "binary", "mimeType": "image/png", "data": "aGk="},
                    {"type": "binary", "mimeType": "application/pdf", "url": "https://x/y.pdf"},
                    {"type": "binary", "mimeType": "audio/wav", "id": "file-1", "filename": "a"},
                ],
            }
        ],
    }

    with pytest.warns(UnknownMemberWarning) as record:
        run_input = parse_input(body)

    assert sorted(str(item.message) for item in record) == [
        f"Converted the deprecated binary content part at '/messages/0/content/{index}' "
        "on RunAgentInput"
        for index in (1, 2, 3)
    ]
    message = run_input.messages[0]
    assert isinstance(message, UserMessage)
    assert isinstance(message.content, list)
    assert message.content[1:] == [
        ImagePart(source=DataSource(value="aGk=", mime_type="image/png")),
        DocumentPart(source=UrlSource(value="https://x/y.pdf", mime_type="application/pdf")),
        AudioPart(source=FileSource(value="file-1", mime_type="audio/wav")),
    ]


def test_a_binary_content_part_without_any_source_is_dropped_with_a_warning() -> None:
    body: JsonDict = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {
                "role": "user",
                "id": "u",
                "content": [
                    {"type": "binary", "mimeType": "image/png"},
                    {"type": "text", "text": "hi"},
                ],
            }
        ],
    }

    with pytest.warns(UnknownMemberWarning) as record:
        run_input = parse_input(body)

    assert [str(item.message) for item in record] == [
        "Removed unrecognised material at '/messages/0/content/0' on RunAgentInput"
    ]
    assert run_input.messages == [UserMessage(id="u", content=[TextPart(text="hi")])]


def test_an_invalid_run_input_lists_every_problem_with_its_pointer() -> None:
    body: JsonDict = {
        "threadId": 5,
        "messages": [
            {"role": "user", "id": "u"},
            {"role": "tool", "id": "t", "content": "x"},
        ],
        "tools": [{"name": "n"}],
        "resume": [{"interruptId": "i", "status": "maybe"}],
    }

    with pytest.raises(InvalidInput, match="the run input is invalid") as caught:
        parse_input(body)

    assert sorted(pointer for pointer, _ in caught.value.errors) == [
        "/messages/0/content",
        "/messages/1/toolCallId",
        "/resume/0/status",
        "/runId",
        "/threadId",
        "/tools/0/description",
    ]
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.path == caught.value.errors[0][0]


@pytest.mark.parametrize(
    ("body", "pointer"),
    [
        ({"threadId": "t", "runId": "r", "messages": None}, "/messages"),
        (
            {
                "threadId": "t",
                "runId": "r",
                "messages": [{"role": "user", "id": "u", "content": 5}],
            },
            "/messages/0/content",
        ),
        ({"threadId": "t", "runId": "r", "tools": {"name": "n"}}, "/tools"),
        (
            {"threadId": "t", "runId": "r", "context": [{"description": "d", "value": 1}]},
            "/context/0/value",
        ),
    ],
    ids=["null-messages", "content-wrong-type", "tools-not-a-list", "context-value-wrong-type"],
)
def test_a_malformed_run_input_field_is_reported_at_its_pointer(
    body: JsonDict, pointer: str
) -> None:
    with pytest.raises(InvalidInput, match=re.escape(pointer)) as caught:
        parse_input(body)

    assert [p for p, _ in caught.value.errors] == [pointer]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"[]", InvalidInput),
        (b"7", InvalidInput),
        (b"{", DecodeError),
        (b"\xff", DecodeError),
    ],
    ids=["array", "number", "truncated", "invalid-utf8"],
)
def test_a_run_input_that_is_not_a_json_object_is_refused(
    data: bytes, error: type[DecodeError]
) -> None:
    with pytest.raises(error, match="JSON"):
        parse_input(data)


def test_invalid_input_without_a_list_of_errors_has_no_path() -> None:
    error = InvalidInput("the body is empty")

    assert error.errors == []
    assert error.path is None


def test_parse_json_refuses_nan_and_reads_everything_else() -> None:
    assert parse_json('{"a":[1,2.5,null,true,"é"]}') == {"a": [1, 2.5, None, True, "é"]}
    with pytest.raises(DecodeError, match="not valid JSON"):
        parse_json("[NaN]")
    with pytest.raises(DecodeError, match=r"not valid JSON: .* column 10$"):
        parse_json('{"a": nul}')  # a slip that is not NaN gets no word of it


# -- round trip, for any text -----------------------------------------------------------------

_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\u2028", "\u2029", "\n", "\r", "\x00", "\x1f", '"', "\\", "😀", "é"]),
    )
)
_JSON: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TEXT, children, max_size=4),
    max_leaves=12,
)
_POINTER = st.lists(_TEXT, max_size=3).map(
    lambda parts: "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)
)
_OPS = st.one_of(
    st.fixed_dictionaries({"op": st.just("add"), "path": _POINTER, "value": _JSON}),
    st.fixed_dictionaries({"op": st.just("remove"), "path": _POINTER}),
    st.fixed_dictionaries({"op": st.just("replace"), "path": _POINTER, "value": _JSON}),
    st.fixed_dictionaries({"op": st.just("move"), "from": _POINTER, "path": _POINTER}),
    st.fixed_dictionaries({"op": st.just("copy"), "from": _POINTER, "path": _POINTER}),
    st.fixed_dictionaries({"op": st.just("test"), "path": _POINTER, "value": _JSON}),
)
_ENVELOPE: dict[str, st.SearchStrategy[JsonValue]] = {
    "timestamp": st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1),
    "rawEvent": _JSON.filter(lambda value: value is not None),
    "metadata": st.dictionaries(_TEXT, _JSON, max_size=3),
    "subagentRunId": _TEXT,
}


def _event(kind: str, **fields: st.SearchStrategy[JsonValue]) -> st.SearchStrategy[Event]:
    """Valid events of one kind: the given fields, and any of the envelope's optional ones."""
    required: dict[str, st.SearchStrategy[JsonValue]] = {"type": st.just(kind), **fields}
    return st.fixed_dictionaries(required, optional=_ENVELOPE).map(_EVENT.validate_python)


_EVENT: TypeAdapter[Event] = TypeAdapter(Event)
_EVENTS: st.SearchStrategy[Event] = st.one_of(
    _event("TEXT_MESSAGE_START", messageId=_TEXT, name=_TEXT),
    _event("TEXT_MESSAGE_CONTENT", messageId=_TEXT, delta=_TEXT),
    _event("TEXT_MESSAGE_CHUNK", messageId=_TEXT, delta=_TEXT),
    _event("TOOL_CALL_START", toolCallId=_TEXT, toolCallName=_TEXT, parentMessageId=_TEXT),
    _event("TOOL_CALL_ARGS", toolCallId=_TEXT, delta=_TEXT),
    _event("TOOL_CALL_RESULT", messageId=_TEXT, toolCallId=_TEXT, content=_TEXT),
    _event("CUSTOM", name=_TEXT, value=_JSON),
    _event("RAW", event=_JSON, source=_TEXT),
    _event("STATE_SNAPSHOT", snapshot=_JSON),
    _event("STATE_DELTA", delta=st.lists(_OPS, max_size=4)),
)


@given(_EVENTS)
def test_any_valid_event_round_trips_and_frames_as_one_lf_only_data_line(event: Event) -> None:
    body = event_json(event)
    frame = encode_sse(event)

    assert frame == b"data: " + body + b"\n\n"
    assert b"\n" not in body
    assert b"\r" not in frame
    assert body.decode("utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_event(body) == event


# -- misfits: validation errors as JSON Pointers into the data given ---------------------------


def _refusal(cls: type[BaseModel], data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        cls(**data)
    return caught.value


def test_misfits_point_into_the_data_by_its_own_keys_escaped_as_rfc_6901_asks() -> None:
    data: dict[str, object] = {"thread_id": "t", "run_id": "r", "state": {"a/b": {"c~d": {1}}}}

    assert misfits(data, _refusal(RunAgentInput, data)) == [
        ("/state/a~1b/c~0d", "input was not a valid JSON value")
    ]


def test_misfits_give_one_place_once_and_only_the_union_arms_that_fit_the_data() -> None:
    refused: dict[str, object] = {"message_id": "m", "tool_call_id": "c", "content": {"a": 1}}
    parts: dict[str, object] = {"message_id": "m", "tool_call_id": "c", "content": [{"a": 1}]}

    assert misfits(refused, _refusal(ToolCallResultEvent, refused)) == [
        ("/content", "Input should be a valid string")
    ]
    assert misfits(parts, _refusal(ToolCallResultEvent, parts)) == [
        ("/content/0", "Unable to extract tag using discriminator 'type'")
    ]
