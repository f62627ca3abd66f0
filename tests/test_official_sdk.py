"""agui against the official Python SDK, `ag-ui-protocol==1.0.0` (`ag_ui.core`, `ag_ui.encoder`).

Every event is written once here as wire JSON, fully populated and minimal, and fed to both
SDKs: each must read what the other writes and write back the same JSON. The hot-path events
must even be byte-identical. A drift test compares field names and required/optional status
of every wire model with the official one.
"""

from __future__ import annotations

import copy
import json
import types
import typing
from typing import Any, Literal, get_args, get_origin

import ag_ui.core as official
import pytest
from ag_ui._generated import models as official_generated
from ag_ui.encoder import EventEncoder
from pydantic import BaseModel, JsonValue

from agui import capabilities, events, messages
from agui import types as agui_types
from agui.events import EventType
from agui.sse import encode_sse, event_json
from agui.wire import parse_event

JsonDict = dict[str, JsonValue]

# -- the events, as wire JSON -------------------------------------------------------------------

META: JsonDict = {"source": "test", "trace": None, "tags": ["a", None]}
"""Metadata with a null value under a key: that null is data and must survive."""

ENVELOPE: JsonDict = {
    "timestamp": 1_700_000_000_123,
    "rawEvent": {"provider": "openai", "id": None, "choices": [{"delta": "hi"}]},
    "metadata": META,
}
ATTRIBUTED: JsonDict = {**ENVELOPE, "subagentRunId": "sub-1"}

SOURCES: list[JsonDict] = [
    {"type": "data", "value": "aGVsbG8=", "mimeType": "image/png"},
    {"type": "url", "value": "https://example.com/a.png", "mimeType": "image/png"},
    {"type": "file", "value": "file-123", "provider": "openai", "mimeType": "application/pdf"},
]


def _media_part(kind: str, index: int, source: JsonDict) -> JsonValue:
    return {"type": kind, "id": f"part-{kind}-{index}", "source": source, "metadata": [1, None]}


PARTS: list[JsonValue] = [
    {"type": "text", "id": "part-0", "text": "Look at this: é ✓ 😀", "metadata": {"k": None}},
    *(
        _media_part(kind, index, source)
        for kind in ("image", "audio", "video", "document")
        for index, source in enumerate(SOURCES)
    ),
]
TOOL_CALL: JsonDict = {
    "id": "call-1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    "encryptedValue": "enc-call",
    "metadata": META,
}
MESSAGES: list[JsonValue] = [
    {
        "role": "developer",
        "id": "dev-1",
        "content": "Answer briefly.",
        "name": "ops",
        "encryptedValue": "enc-dev",
        "metadata": META,
        "subagentRunId": "sub-1",
    },
    {
        "role": "system",
        "id": "sys-1",
        "content": "You are helpful.",
        "name": "root",
        "encryptedValue": "enc-sys",
        "metadata": META,
        "subagentRunId": "sub-1",
    },
    {
        "role": "user",
        "id": "user-1",
        "content": PARTS,
        "name": "ann",
        "encryptedValue": "enc-user",
        "metadata": META,
        "subagentRunId": "sub-1",
    },
    {"role": "user", "id": "user-2", "content": "plain text"},
    {
        "role": "assistant",
        "id": "asst-1",
        "content": "Let me check.",
        "name": "bot",
        "toolCalls": [TOOL_CALL, {**TOOL_CALL, "id": "call-2"}],
        "encryptedValue": "enc-asst",
        "metadata": META,
        "subagentRunId": "sub-1",
    },
    {"role": "assistant", "id": "asst-2"},
    {
        "role": "tool",
        "id": "tool-1",
        "toolCallId": "call-1",
        "content": PARTS,
        "error": "timed out",
        "encryptedValue": "enc-tool",
        "metadata": META,
        "subagentRunId": "sub-1",
    },
    {"role": "tool", "id": "tool-2", "toolCallId": "call-2", "content": '{"tempC":21}'},
    {
        "role": "activity",
        "id": "act-1",
        "activityType": "PLAN",
        "content": {"steps": ["search", "answer"], "current": None},
        "metadata": META,
        "subagentRunId": "sub-1",
    },
    {
        "role": "reasoning",
        "id": "reason-1",
        "content": "Paris is in France.",
        "encryptedValue": "enc-reason",
        "metadata": META,
        "subagentRunId": "sub-1",
    },
]
PATCH: list[JsonValue] = [
    {"op": "add", "path": "/tasks/-", "value": None, "note": "extra members are kept"},
    {"op": "remove", "path": "/old", "note": None},
    {"op": "replace", "path": "/owner", "value": None, "note": 1},
    {"op": "move", "from": "/a/0", "path": "/b", "note": [None]},
    {"op": "copy", "from": "/b", "path": "/c~1d", "note": {"x": None}},
    {"op": "test", "path": "/version", "value": None, "note": True},
]
INTERRUPT: JsonDict = {
    "id": "int-1",
    "reason": "tool_call",
    "message": "Approve the transfer?",
    "toolCallId": "call-1",
    "responseSchema": {"type": "object", "properties": {"approved": {"type": "boolean"}}},
    "expiresAt": "2030-01-01T00:00:00Z",
    "metadata": META,
    "subagentRunId": "sub-1",
}
USAGE: list[JsonValue] = [
    {
        "provider": "openai",
        "model": "gpt-x",
        "inputTokens": 120,
        "outputTokens": 30,
        "totalTokens": 150,
        "reasoningTokens": 10,
        "cachedInputTokens": 100,
        "cacheWriteInputTokens": 20,
    },
    {"provider": "anthropic"},
]
RUN_INPUT: JsonDict = {
    "threadId": "thread-1",
    "runId": "run-1",
    "protocolVersion": "1.0",
    "parentRunId": "run-0",
    "state": {"count": 1, "owner": None, "items": [None, {"x": None}]},
    "messages": MESSAGES,
    "tools": [
        {
            "name": "confirm",
            "description": "Ask the user to confirm",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "metadata": META,
        },
        {"name": "noop", "description": "Takes nothing"},
    ],
    "context": [{"description": "timezone", "value": "Europe/Paris"}],
    "forwardedProps": {"session": None, "flags": [1, 2]},
    "resume": [
        {
            "interruptId": "int-0",
            "status": "resolved",
            "payload": {"approved": True, "editedArgs": None},
            "metadata": META,
        },
        {"interruptId": "int-9", "status": "cancelled"},
    ],
}

POPULATED: dict[str, JsonDict] = {
    "TEXT_MESSAGE_START": {**ATTRIBUTED, "messageId": "m1", "role": "user", "name": "ann"},
    "TEXT_MESSAGE_CONTENT": {
        **ATTRIBUTED,
        "messageId": "m1",
        "delta": 'héllo\u2028wörld\n"quoted"\t\x01 😀',
    },
    "TEXT_MESSAGE_END": {**ATTRIBUTED, "messageId": "m1"},
    "TEXT_MESSAGE_CHUNK": {
        **ATTRIBUTED,
        "messageId": "m1",
        "role": "assistant",
        "delta": "chunk",
        "name": "bot",
    },
    "TOOL_CALL_START": {
        **ATTRIBUTED,
        "toolCallId": "call-1",
        "toolCallName": "get_weather",
        "parentMessageId": "m1",
    },
    "TOOL_CALL_ARGS": {**ATTRIBUTED, "toolCallId": "call-1", "delta": '{"city":"Zürich"'},
    "TOOL_CALL_END": {**ATTRIBUTED, "toolCallId": "call-1"},
    "TOOL_CALL_CHUNK": {
        **ATTRIBUTED,
        "toolCallId": "call-1",
        "toolCallName": "get_weather",
        "parentMessageId": "m1",
        "delta": "{}",
    },
    "TOOL_CALL_RESULT": {
        **ATTRIBUTED,
        "messageId": "m2",
        "toolCallId": "call-1",
        "content": PARTS,
        "role": "tool",
    },
    "STATE_SNAPSHOT": {**ATTRIBUTED, "snapshot": {"a": None, "b": [1, None, {"c": None}]}},
    "STATE_DELTA": {**ATTRIBUTED, "delta": PATCH},
    "MESSAGES_SNAPSHOT": {**ENVELOPE, "messages": MESSAGES},
    "ACTIVITY_SNAPSHOT": {
        **ATTRIBUTED,
        "messageId": "act-1",
        "activityType": "PLAN",
        "content": {"steps": [], "note": None},
        "replace": False,
    },
    "ACTIVITY_DELTA": {**ATTRIBUTED, "messageId": "act-1", "activityType": "PLAN", "patch": PATCH},
    "RAW": {**ATTRIBUTED, "event": {"id": "evt-1", "payload": None}, "source": "openai"},
    "CUSTOM": {**ATTRIBUTED, "name": "progress", "value": {"pct": 50, "eta": None}},
    "RUN_STARTED": {
        **ENVELOPE,
        "threadId": "thread-1",
        "runId": "run-1",
        "protocolVersion": "1.0",
        "parentRunId": "run-0",
        "input": RUN_INPUT,
    },
    "RUN_FINISHED": {
        **ENVELOPE,
        "threadId": "thread-1",
        "runId": "run-1",
        "result": {"answer": 42, "extra": None},
        "outcome": {"type": "interrupt", "interrupts": [INTERRUPT, {"id": "i2", "reason": "x"}]},
        "usage": USAGE,
    },
    "RUN_ERROR": {**ENVELOPE, "message": "boom", "code": "AGENT_ERROR", "usage": USAGE},
    "STEP_STARTED": {**ATTRIBUTED, "stepName": "plan"},
    "STEP_FINISHED": {**ATTRIBUTED, "stepName": "plan"},
    "REASONING_START": {**ATTRIBUTED, "messageId": "r1"},
    "REASONING_MESSAGE_START": {**ATTRIBUTED, "messageId": "r1-m", "role": "reasoning"},
    "REASONING_MESSAGE_CONTENT": {**ATTRIBUTED, "messageId": "r1-m", "delta": "Hmm… "},
    "REASONING_MESSAGE_END": {**ATTRIBUTED, "messageId": "r1-m"},
    "REASONING_MESSAGE_CHUNK": {**ATTRIBUTED, "messageId": "r1-m", "delta": "more"},
    "REASONING_END": {**ATTRIBUTED, "messageId": "r1"},
    "REASONING_ENCRYPTED_VALUE": {
        **ATTRIBUTED,
        "subtype": "tool-call",
        "entityId": "call-1",
        "encryptedValue": "opaque==",
    },
    "SUBAGENT_STARTED": {
        **ATTRIBUTED,
        "name": "researcher",
        "description": "Finds sources",
        "parentSubagentRunId": "sub-0",
        "parentToolCallId": "call-1",
        "parentMessageId": "m1",
    },
    "SUBAGENT_FINISHED": {
        **ATTRIBUTED,
        "result": {"sources": [], "note": None},
        "outcome": {"type": "suspended", "interruptIds": ["int-1"]},
    },
    "SUBAGENT_ERROR": {**ATTRIBUTED, "message": "failed", "code": "TIMEOUT"},
}

MINIMAL: dict[str, JsonDict] = {
    "TEXT_MESSAGE_START": {"messageId": "m1"},
    "TEXT_MESSAGE_CONTENT": {"messageId": "m1", "delta": ""},
    "TEXT_MESSAGE_END": {"messageId": "m1"},
    "TEXT_MESSAGE_CHUNK": {},
    "TOOL_CALL_START": {"toolCallId": "c1", "toolCallName": "f"},
    "TOOL_CALL_ARGS": {"toolCallId": "c1", "delta": ""},
    "TOOL_CALL_END": {"toolCallId": "c1"},
    "TOOL_CALL_CHUNK": {},
    "TOOL_CALL_RESULT": {"messageId": "m2", "toolCallId": "c1", "content": ""},
    "STATE_SNAPSHOT": {"snapshot": None},
    "STATE_DELTA": {"delta": []},
    "MESSAGES_SNAPSHOT": {"messages": []},
    "ACTIVITY_SNAPSHOT": {"messageId": "a1", "activityType": "PLAN", "content": {}},
    "ACTIVITY_DELTA": {"messageId": "a1", "activityType": "PLAN", "patch": []},
    "RAW": {"event": None},
    "CUSTOM": {"name": "ping", "value": None},
    "RUN_STARTED": {"threadId": "t", "runId": "r"},
    "RUN_FINISHED": {"threadId": "t", "runId": "r"},
    "RUN_ERROR": {"message": "boom"},
    "STEP_STARTED": {"stepName": "s"},
    "STEP_FINISHED": {"stepName": "s"},
    "REASONING_START": {"messageId": "r1"},
    # `role` has a default on both sides, and a default that is not None is always written.
    "REASONING_MESSAGE_START": {"messageId": "r1", "role": "reasoning"},
    "REASONING_MESSAGE_CONTENT": {"messageId": "r1", "delta": ""},
    "REASONING_MESSAGE_END": {"messageId": "r1"},
    "REASONING_MESSAGE_CHUNK": {},
    "REASONING_END": {"messageId": "r1"},
    "REASONING_ENCRYPTED_VALUE": {"subtype": "message", "entityId": "m1", "encryptedValue": "x"},
    "SUBAGENT_STARTED": {"subagentRunId": "s1", "name": "researcher"},
    "SUBAGENT_FINISHED": {"subagentRunId": "s1"},
    "SUBAGENT_ERROR": {"subagentRunId": "s1", "message": "failed"},
}

VARIANTS: dict[str, JsonDict] = {
    "run-finished-success-with-pending-calls": {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "success", "pendingToolCallIds": ["c1", "c2"]},
    },
    "run-finished-success-bare": {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "success"},
    },
    "run-finished-cancelled": {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "cancelled"},
    },
    "run-finished-result-is-a-scalar": {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "result": 0,
    },
    "subagent-finished-success": {
        "type": "SUBAGENT_FINISHED",
        "subagentRunId": "s1",
        "outcome": {"type": "success"},
    },
    "subagent-finished-suspended-bare": {
        "type": "SUBAGENT_FINISHED",
        "subagentRunId": "s1",
        "outcome": {"type": "suspended"},
    },
    "run-started-with-minimal-input": {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
        "input": {"threadId": "t", "runId": "r", "messages": []},
    },
    "state-snapshot-is-an-array": {"type": "STATE_SNAPSHOT", "snapshot": [1, "two", None]},
    "custom-value-is-a-string": {"type": "CUSTOM", "name": "n", "value": "v"},
    "text-message-start-each-role": {
        "type": "TEXT_MESSAGE_START",
        "messageId": "m",
        "role": "system",
    },
    "tool-call-result-text-parts-only": {
        "type": "TOOL_CALL_RESULT",
        "messageId": "m",
        "toolCallId": "c",
        "content": [{"type": "text", "text": "21°C"}],
    },
}


def _cases() -> list[tuple[str, JsonDict]]:
    cases = [(f"{kind}-populated", {"type": kind, **body}) for kind, body in POPULATED.items()]
    cases += [(f"{kind}-minimal", {"type": kind, **body}) for kind, body in MINIMAL.items()]
    cases += list(VARIANTS.items())
    return cases


CASES = _cases()
CASE_IDS = [name for name, _ in CASES]

HOT_PATH = frozenset(
    {
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_DELTA",
    }
)
HOT_CASES = [(name, case) for name, case in CASES if case["type"] in HOT_PATH]


def _official_class(kind: str) -> type[BaseModel]:
    name = "".join(word.capitalize() for word in kind.split("_")) + "Event"
    cls: type[BaseModel] = getattr(official, name)
    return cls


def _official_extras(value: object, pointer: str = "") -> list[str]:
    """Pointers to every member an official model kept as an unknown extra (patch ops aside)."""
    found: list[str] = []
    if isinstance(value, BaseModel):
        is_patch_op = "op" in type(value).model_fields
        if value.model_extra and not is_patch_op:
            found += [f"{pointer}/{key}" for key in value.model_extra]
        for name in type(value).model_fields:
            found += _official_extras(getattr(value, name), f"{pointer}/{name}")
    elif isinstance(value, list):
        for index, item in enumerate(typing.cast("list[object]", value)):
            found += _official_extras(item, f"{pointer}/{index}")
    return found


def _official_frame_json(model: BaseModel) -> str:
    assert isinstance(model, official.BaseEvent)
    frame = EventEncoder().encode(model)
    assert frame.startswith("data: ")
    assert frame.endswith("\n\n")
    return frame[len("data: ") : -len("\n\n")]


# -- the fixtures themselves ------------------------------------------------------------------


def test_the_fixtures_cover_every_event_type_both_populated_and_minimal() -> None:
    assert set(POPULATED) == {member.value for member in EventType}
    assert set(MINIMAL) == set(POPULATED)


def _member(value: JsonValue, key: str) -> str:
    return str(typing.cast("JsonDict", value)[key])


def test_the_populated_fixtures_cover_every_role_part_source_and_patch_op() -> None:
    roles = {_member(message, "role") for message in MESSAGES}
    part_kinds = {_member(part, "type") for part in PARTS}
    sources = {
        _member(typing.cast("JsonDict", part)["source"], "type")
        for part in PARTS
        if "source" in typing.cast("JsonDict", part)
    }
    ops = {_member(op, "op") for op in PATCH}
    outcomes = {
        _member(case["outcome"], "type")
        for _, case in CASES
        if case["type"] == "RUN_FINISHED" and "outcome" in case
    }
    assert roles == {"developer", "system", "assistant", "user", "tool", "activity", "reasoning"}
    assert part_kinds == {"text", "image", "audio", "video", "document"}
    assert sources == {"data", "url", "file"}
    assert ops == {"add", "remove", "replace", "move", "copy", "test"}
    assert outcomes == {"success", "interrupt", "cancelled"}


# -- (a) what agui writes, the official SDK reads ---------------------------------------------


@pytest.mark.parametrize("case", [case for _, case in CASES], ids=CASE_IDS)
def test_agui_json_is_read_by_the_official_model_and_written_back_equal(case: JsonDict) -> None:
    ours = parse_event(copy.deepcopy(case))
    written = event_json(ours)
    assert json.loads(written) == case

    theirs = _official_class(str(case["type"])).model_validate_json(written)

    assert _official_extras(theirs) == []
    assert theirs.model_dump(mode="json", by_alias=True) == case
    assert json.loads(_official_frame_json(theirs)) == case


# -- (b) what the official SDK writes, agui reads ---------------------------------------------


@pytest.mark.parametrize("case", [case for _, case in CASES], ids=CASE_IDS)
def test_official_json_is_read_by_agui_and_written_back_equal(case: JsonDict) -> None:
    theirs = _official_class(str(case["type"])).model_validate(copy.deepcopy(case))
    written = _official_frame_json(theirs)
    assert json.loads(written) == case

    ours = parse_event(written)

    assert json.loads(event_json(ours)) == json.loads(written)


# -- (c) the hot path is byte-identical -------------------------------------------------------


@pytest.mark.parametrize("case", [case for _, case in HOT_CASES], ids=[n for n, _ in HOT_CASES])
def test_hot_path_frames_are_byte_identical_to_the_official_encoder(case: JsonDict) -> None:
    theirs = _official_class(str(case["type"])).model_validate(copy.deepcopy(case))
    ours = parse_event(copy.deepcopy(case))

    assert isinstance(theirs, official.BaseEvent)
    assert encode_sse(ours) == EventEncoder().encode(theirs).encode()


@pytest.mark.parametrize("case", [case for _, case in CASES], ids=[n for n, _ in CASES])
def test_every_frame_is_byte_identical_to_the_official_encoder(case: JsonDict) -> None:
    theirs = _official_class(str(case["type"])).model_validate(copy.deepcopy(case))
    ours = parse_event(copy.deepcopy(case))

    assert isinstance(theirs, official.BaseEvent)
    assert encode_sse(ours) == EventEncoder().encode(theirs).encode()


@pytest.mark.parametrize(
    "text",
    ["plain", "", "é ü ß 中文 😀", "line\nbreak\r\n", "\u2028\u2029", "\x00\x1f\x7f", '"\\/<>&'],
    ids=["ascii", "empty", "non-ascii", "newlines", "line-separators", "controls", "escapes"],
)
def test_text_deltas_are_byte_identical_to_the_official_encoder_for_any_text(text: str) -> None:
    ours = events.TextMessageContentEvent(message_id="m1", delta=text, timestamp=1)
    theirs = official.TextMessageContentEvent(message_id="m1", delta=text, timestamp=1)

    assert encode_sse(ours) == EventEncoder().encode(theirs).encode()


# -- drift: the same wire fields, required the same way ---------------------------------------


def _official_by_name(name: str) -> type[BaseModel]:
    cls: type[BaseModel] = getattr(official, name, None) or getattr(official_generated, name)
    return cls


RENAMED: dict[type[BaseModel], str] = {
    agui_types.SuccessOutcome: "RunFinishedSuccessOutcome",
    agui_types.InterruptOutcome: "RunFinishedInterruptOutcome",
    agui_types.CancelledOutcome: "RunFinishedCancelledOutcome",
    agui_types.SubagentSuccessOutcome: "SubagentFinishedSuccessOutcome",
    agui_types.SubagentSuspendedOutcome: "SubagentFinishedSuspendedOutcome",
}
"""Our classes whose official counterpart has another name (the wire does not name classes)."""

EVENT_CLASSES: list[type[BaseModel]] = list(
    typing.cast("tuple[type[BaseModel], ...]", get_args(get_args(events.Event)[0]))
)
WIRE_CLASSES: list[type[BaseModel]] = [
    *EVENT_CLASSES,
    messages.DeveloperMessage,
    messages.SystemMessage,
    messages.AssistantMessage,
    messages.UserMessage,
    messages.ToolMessage,
    messages.ActivityMessage,
    messages.ReasoningMessage,
    messages.TextPart,
    messages.ImagePart,
    messages.AudioPart,
    messages.VideoPart,
    messages.DocumentPart,
    messages.DataSource,
    messages.UrlSource,
    messages.FileSource,
    messages.ToolCall,
    messages.FunctionCall,
    agui_types.Tool,
    agui_types.Context,
    agui_types.Interrupt,
    agui_types.ResumeEntry,
    agui_types.SuccessOutcome,
    agui_types.InterruptOutcome,
    agui_types.CancelledOutcome,
    agui_types.SubagentSuccessOutcome,
    agui_types.SubagentSuspendedOutcome,
    agui_types.TokenUsage,
    agui_types.RunAgentInput,
    # Patch operations are not re-exported by `ag_ui.core`; they live in its generated models.
    agui_types.AddOperation,
    agui_types.RemoveOperation,
    agui_types.ReplaceOperation,
    agui_types.MoveOperation,
    agui_types.CopyOperation,
    agui_types.TestOperation,
    *(getattr(capabilities, name) for name in capabilities.__all__),
]

DELIBERATE: dict[tuple[str, str], str] = {
    ("RunAgentInput", "messages"): (
        "ours defaults to [] so the pinned RunAgentInput(thread_id=..., run_id=...) works; "
        "it is always serialized, so the wire still carries it"
    ),
}
"""Wire fields whose required/optional status differs from the official SDK on purpose."""


def _wire_fields(cls: type[BaseModel]) -> dict[str, bool]:
    """Wire name -> required, for every field of a model."""
    return {
        str(field.serialization_alias or field.alias or name): field.is_required()
        for name, field in cls.model_fields.items()
    }


def _literal_values(annotation: object) -> frozenset[str]:
    """The string values a field's Literal allows (through Optional/Union/Annotated), if any."""
    if get_origin(annotation) is Literal:
        return frozenset(str(getattr(arg, "value", arg)) for arg in get_args(annotation))
    if get_origin(annotation) in (typing.Union, types.UnionType, typing.Annotated):
        found: frozenset[str] = frozenset()
        for arg in get_args(annotation):
            found |= _literal_values(arg)
        return found
    return frozenset()


def _pair_ids() -> list[str]:
    return [cls.__name__ for cls in WIRE_CLASSES]


def test_event_types_are_the_official_ones_without_the_retired_thinking_events() -> None:
    theirs = {member.value for member in official.EventType}
    retired = {value for value in theirs if value.startswith("THINKING_")}

    assert {member.value for member in EventType} == theirs - retired
    assert len(EventType) == 31


def test_every_event_class_has_its_official_counterpart_and_type_string() -> None:
    kinds = [cls.model_fields["type"].default for cls in EVENT_CLASSES]

    assert sorted(kinds) == sorted(member.value for member in EventType)
    for cls in EVENT_CLASSES:
        theirs = _official_by_name(cls.__name__)
        assert str(getattr(theirs.model_fields["type"].default, "value", None)) == (
            cls.model_fields["type"].default
        )


@pytest.mark.parametrize("ours", WIRE_CLASSES, ids=_pair_ids())
def test_wire_fields_and_their_required_status_match_the_official_model(
    ours: type[BaseModel],
) -> None:
    theirs = _official_by_name(RENAMED.get(ours, ours.__name__))
    mine = _wire_fields(ours)
    official_fields = _wire_fields(theirs)

    assert set(mine) == set(official_fields)
    differing = {name for name in mine if mine[name] != official_fields[name]}
    expected = {field for cls, field in DELIBERATE if cls == ours.__name__}
    assert differing == expected


@pytest.mark.parametrize("ours", WIRE_CLASSES, ids=_pair_ids())
def test_literal_fields_allow_the_same_values_as_the_official_model(
    ours: type[BaseModel],
) -> None:
    theirs = _official_by_name(RENAMED.get(ours, ours.__name__))
    for name, field in ours.model_fields.items():
        allowed = _literal_values(field.annotation)
        if allowed:
            assert allowed == _literal_values(theirs.model_fields[name].annotation), name


def test_every_deliberate_difference_is_still_a_difference() -> None:
    by_name = {cls.__name__: cls for cls in WIRE_CLASSES}
    for (cls_name, field), reason in DELIBERATE.items():
        ours = _wire_fields(by_name[cls_name])
        theirs = _wire_fields(_official_by_name(cls_name))
        assert ours[field] != theirs[field], reason


def test_a_run_input_built_from_ids_alone_still_writes_its_messages() -> None:
    body = agui_types.RunAgentInput(thread_id="t", run_id="r").model_dump_json()

    assert json.loads(body) == {"threadId": "t", "runId": "r", "messages": []}
    assert official.RunAgentInput.model_validate_json(body).messages == []


def test_every_wire_class_is_compared_with_the_official_sdk() -> None:
    """New public models in the wire modules must join WIRE_CLASSES (or be named here)."""
    not_wire = {"RunOutcome", "BaseEvent", "AttributableEvent", "SubagentEvent"}
    public_models = {
        name
        for module in (events, messages, agui_types, capabilities)
        for name in module.__all__
        if isinstance(getattr(module, name), type) and issubclass(getattr(module, name), BaseModel)
    }

    assert public_models - not_wire == {cls.__name__ for cls in WIRE_CLASSES}


def test_official_models_keep_unknown_members_where_agui_refuses_them() -> None:
    """The official SDK silently keeps a typo as an extra; agui names it (Python pitfall 9)."""
    theirs: Any = official.TextMessageStartEvent.model_validate({"messageId": "m", "nmae": "x"})

    assert theirs.model_extra == {"nmae": "x"}
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        events.TextMessageStartEvent.model_validate({"messageId": "m", "nmae": "x"})


# -- the independent validator ----------------------------------------------------------------


@pytest.mark.ag_ui_validate
def test_a_stream_of_agui_frames_passes_ag_ui_validate_without_warnings() -> None:
    from ag_ui_validate.pytest_plugin import validate_agui  # noqa: PLC0415 - Python >= 3.11 only

    stream: list[events.Event] = [
        events.RunStartedEvent(thread_id="t", run_id="r", protocol_version="1.0", timestamp=1),
        events.StepStartedEvent(step_name="plan", timestamp=2),
        events.TextMessageStartEvent(message_id="m1", timestamp=3),
        events.TextMessageContentEvent(message_id="m1", delta="héllo\u2028", timestamp=4),
        events.TextMessageEndEvent(message_id="m1", timestamp=5),
        events.ToolCallStartEvent(
            tool_call_id="c1", tool_call_name="f", parent_message_id="m1", timestamp=6
        ),
        events.ToolCallArgsEvent(tool_call_id="c1", delta='{"a":1}', timestamp=7),
        events.ToolCallEndEvent(tool_call_id="c1", timestamp=8),
        events.ToolCallResultEvent(message_id="m2", tool_call_id="c1", content="ok", timestamp=9),
        events.StateSnapshotEvent(snapshot={"owner": None, "n": 1}, timestamp=10),
        events.StateDeltaEvent.model_validate(
            {"delta": [{"op": "replace", "path": "/owner", "value": None}], "timestamp": 11}
        ),
        events.ReasoningStartEvent(message_id="r1", timestamp=12),
        events.ReasoningMessageStartEvent(message_id="r1-m", timestamp=13),
        events.ReasoningMessageContentEvent(message_id="r1-m", delta="hmm", timestamp=14),
        events.ReasoningMessageEndEvent(message_id="r1-m", timestamp=15),
        events.ReasoningEndEvent(message_id="r1", timestamp=16),
        events.CustomEvent(name="acme.ping", value=None, timestamp=17),
        events.StepFinishedEvent(step_name="plan", timestamp=18),
        events.RunFinishedEvent(thread_id="t", run_id="r", timestamp=19),
    ]
    frames = [encode_sse(event) for event in stream]

    report = validate_agui([frame[len(b"data: ") : -2].decode() for frame in frames])

    assert [d.message for d in report.diagnostics if d.severity != "info"] == []
    assert report.summary.errors == 0
    assert report.summary.warnings == 0
