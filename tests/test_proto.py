"""The protobuf binding, judged by the official `@ag-ui/proto` 1.0.0 in both directions.

Frames we write are read by the official `decode`, and frames the official `encode` writes are
read by ours, each batch through one node subprocess (`tests/js/proto.mjs`).
"""

from __future__ import annotations

import importlib
import json
import re
import struct
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

import pytest
from google.protobuf import descriptor_pool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue

import agui
from agui import UnknownMemberWarning, UsageError, proto
from agui.errors import DecodeError, MalformedEvent
from agui.events import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
    EventType,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import (
    ActivityMessage,
    AssistantMessage,
    AudioPart,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    FileSource,
    FunctionCall,
    ImagePart,
    Message,
    ReasoningMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
    VideoPart,
)
from agui.proto import PROTO_MEDIA_TYPE, _codec, decode_proto, encode_proto
from agui.proto._requirement import PROTOBUF_FLOOR
from agui.proto._schema import ARMS, EVENT_TYPES
from agui.sse import event_json
from agui.types import (
    AddOperation,
    Context,
    CopyOperation,
    Interrupt,
    JsonPatchOperation,
    MoveOperation,
    RemoveOperation,
    ReplaceOperation,
    ResumeEntry,
    RunAgentInput,
    RunOutcome,
    SubagentSuccessOutcome,
    SubagentSuspendedOutcome,
    TestOperation,
    TokenUsage,
    Tool,
)
from node_clients import node

JS_DIR = Path(__file__).parent / "js"
DATA: JsonValue = {"n": 3, "x": 2.5, "none": None, "ok": True, "list": [1, "two", [], {}]}
USAGE = [
    TokenUsage(
        provider="openai",
        model="gpt",
        input_tokens=12,
        output_tokens=3,
        total_tokens=15,
        reasoning_tokens=1,
        cached_input_tokens=4,
        cache_write_input_tokens=2,
    )
]
INTERRUPT = Interrupt(
    subagent_run_id="s1",
    id="i1",
    reason="confirmation",
    message="Book it?",
    tool_call_id="c2",
    response_schema={"type": "object"},
    expires_at="2030-01-01T00:00:00Z",
    metadata={"by": "agent"},
)
MESSAGES: list[Message] = [
    DeveloperMessage(id="d1", content="Be brief.", name="dev", metadata={"v": 1}),
    SystemMessage(id="s1", content="You help.", encrypted_value="enc"),
    UserMessage(id="u1", content="Hi", name="ann"),
    UserMessage(
        id="u2",
        content=[
            TextPart(text="look", id="p1", metadata={"source": "search"}),
            ImagePart(source=DataSource(value="aGk=", mime_type="image/png"), id="p2"),
            AudioPart(source=UrlSource(value="https://a.example/x.mp3", mime_type="audio/mpeg")),
            VideoPart(source=FileSource(value="file-1", provider="openai", mime_type="video/mp4")),
            DocumentPart(source=UrlSource(value="https://a.example/x.pdf"), metadata=[1, 2]),
        ],
    ),
    AssistantMessage(
        id="a1",
        subagent_run_id="s1",
        content="Checking.",
        tool_calls=[
            ToolCall(
                id="c1",
                function=FunctionCall(name="get_weather", arguments='{"city":"Seoul"}'),
                encrypted_value="e1",
                metadata={"k": [1]},
            )
        ],
    ),
    AssistantMessage(id="a2"),
    ToolMessage(id="t1", tool_call_id="c1", content='{"tempC":21}', error="late"),
    ToolMessage(id="t2", tool_call_id="c1", content=[TextPart(text="21C")]),
    ActivityMessage(id="p1", activity_type="PLAN", content={"steps": ["a", "b"]}),
    ReasoningMessage(id="r1", content="Hmm.", encrypted_value="e2"),
]
RUN_INPUT = RunAgentInput(
    thread_id="t",
    run_id="r",
    protocol_version="1.0",
    parent_run_id="r0",
    state={"city": "Seoul"},
    messages=MESSAGES,
    tools=[
        Tool(name="f", description="does f", parameters={"type": "object"}, metadata={"ui": 1}),
        Tool(name="g", description=""),
    ],
    context=[Context(description="tz", value="Europe/Paris")],
    forwarded_props={"theme": "dark"},
    resume=[
        ResumeEntry(interrupt_id="i0", status="resolved", payload=True, metadata={"sig": "x"}),
        ResumeEntry(interrupt_id="i9", status="cancelled"),
    ],
)
PATCH: list[JsonPatchOperation] = [
    AddOperation(path="/a", value=None),
    RemoveOperation(path="/b"),
    ReplaceOperation(path="/c", value={"d": [1.5]}),
    MoveOperation(from_="/c", path="/e"),
    CopyOperation(from_="/e", path="/f"),
    TestOperation(path="/f", value="x"),
]
ENVELOPE: dict[str, Any] = {
    "timestamp": 1_700_000_000_000,
    "raw_event": {"provider": "openai", "seq": 7},
    "metadata": {"trace": "abc", "n": 1},
}

SAMPLES: list[Event] = [
    RunStartedEvent(thread_id="t", run_id="r", protocol_version="1.0", **ENVELOPE),
    RunStartedEvent(thread_id="t", run_id="r", parent_run_id="r0", input=RUN_INPUT),
    TextMessageStartEvent(message_id="m1", role="assistant", name="bot", subagent_run_id="s1"),
    TextMessageContentEvent(message_id="m1", delta="héllo\n\u2028 \U0001f600", **ENVELOPE),
    TextMessageContentEvent(message_id="m1", delta=""),
    TextMessageContentEvent(message_id="m1", delta="x", timestamp=0, metadata={}),
    TextMessageEndEvent(message_id="m1"),
    TextMessageChunkEvent(message_id="m2", role="user", delta="", name="ann", subagent_run_id="s"),
    TextMessageChunkEvent(),
    ToolCallStartEvent(tool_call_id="c1", tool_call_name="get_weather", parent_message_id="m1"),
    ToolCallArgsEvent(tool_call_id="c1", delta='{"city":', subagent_run_id="s1"),
    ToolCallEndEvent(tool_call_id="c1"),
    ToolCallChunkEvent(
        tool_call_id="c2",
        tool_call_name="f",
        parent_message_id="m1",
        delta="{}",
        subagent_run_id="s",
    ),
    ToolCallResultEvent(message_id="t1", tool_call_id="c1", content="21C", role="tool"),
    ToolCallResultEvent(
        message_id="t2",
        tool_call_id="c1",
        content=[TextPart(text="21C"), ImagePart(source=UrlSource(value="https://a.example/i"))],
        subagent_run_id="s1",
    ),
    ToolCallResultEvent(message_id="t3", tool_call_id="c1", content=""),
    StateSnapshotEvent(snapshot=DATA, subagent_run_id="s1"),
    StateSnapshotEvent(snapshot=None),
    StateDeltaEvent(delta=PATCH),
    MessagesSnapshotEvent(messages=MESSAGES, **ENVELOPE),
    ActivitySnapshotEvent(
        message_id="p1", activity_type="PLAN", content={"steps": []}, replace=False
    ),
    ActivitySnapshotEvent(message_id="p2", activity_type="PLAN", content={}),
    ActivityDeltaEvent(message_id="p1", activity_type="PLAN", patch=PATCH, subagent_run_id="s"),
    RawEvent(event={"id": 1, "data": DATA}, source="openai", subagent_run_id="s1"),
    CustomEvent(name="app.ping", value=None),
    CustomEvent(name="app.list", value=[1, "a", None, -2.25]),
    RunFinishedEvent(thread_id="t", run_id="r", result=DATA, usage=USAGE),
    RunFinishedEvent(thread_id="t", run_id="r", outcome=RunOutcome.success()),
    RunFinishedEvent(
        thread_id="t", run_id="r", outcome=RunOutcome.success(pending_tool_call_ids=["c1", "c2"])
    ),
    RunFinishedEvent(thread_id="t", run_id="r", outcome=RunOutcome.interrupt([INTERRUPT])),
    RunFinishedEvent(thread_id="t", run_id="r", outcome=RunOutcome.cancelled(), **ENVELOPE),
    RunErrorEvent(message="boom", code="AGENT_ERROR", usage=USAGE),
    RunErrorEvent(message=""),
    StepStartedEvent(step_name="plan", subagent_run_id="s1"),
    StepFinishedEvent(step_name="plan"),
    ReasoningStartEvent(message_id="r1", subagent_run_id="s1"),
    ReasoningMessageStartEvent(message_id="r1"),
    ReasoningMessageContentEvent(message_id="r1", delta="Hmm"),
    ReasoningMessageEndEvent(message_id="r1"),
    ReasoningMessageChunkEvent(message_id="r2", delta="more", subagent_run_id="s"),
    ReasoningMessageChunkEvent(),
    ReasoningEndEvent(message_id="r1"),
    ReasoningEncryptedValueEvent(subtype="tool-call", entity_id="c1", encrypted_value="opaque"),
    SubagentStartedEvent(
        subagent_run_id="s1",
        name="researcher",
        description="looks things up",
        parent_subagent_run_id="s0",
        parent_tool_call_id="c1",
        parent_message_id="m1",
        **ENVELOPE,
    ),
    SubagentFinishedEvent(subagent_run_id="s1", result=DATA, outcome=SubagentSuccessOutcome()),
    SubagentFinishedEvent(
        subagent_run_id="s2", outcome=SubagentSuspendedOutcome(interrupt_ids=["i1"])
    ),
    SubagentFinishedEvent(subagent_run_id="s3"),
    SubagentErrorEvent(subagent_run_id="s1", message="failed", code="TIMEOUT"),
]


def wire(event: Event) -> dict[str, JsonValue]:
    value: dict[str, JsonValue] = json.loads(event_json(event))
    return value


def _node() -> str:
    return node("@ag-ui/proto", "the protobuf tests")


def official(mode: Literal["decode", "encode"], data: bytes) -> bytes:
    """Run `data` through the official @ag-ui/proto (`tests/js/proto.mjs`) in one subprocess."""
    completed = subprocess.run(  # noqa: S603 - a fixed command line
        [_node(), "proto.mjs", mode],
        input=data,
        cwd=JS_DIR,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr.decode()
    return completed.stdout


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def varint(number: int) -> bytes:
    out = bytearray()
    while number > 0x7F:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field: a message, a string or bytes."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def base(kind: str) -> bytes:
    """A `baseEvent` field declaring `kind` (the enum's varint at field 1)."""
    return field(1, b"\x08" + varint(EVENT_TYPES.index(kind)))


def arm(kind: str, body: bytes) -> bytes:
    """One frame whose `Event` carries `body` in the arm of `kind`."""
    return frame(field(ARMS.index(kind) + 1, body))


# -- against the official package --------------------------------------------------------------


def test_the_samples_cover_all_31_event_types() -> None:
    assert {event.type for event in SAMPLES} == set(EventType)


def test_the_official_decoder_reads_each_of_our_frames_as_the_event_we_sent() -> None:
    body = b"".join(encode_proto(event) for event in SAMPLES)

    lines = official("decode", body).decode().split("\n")[:-1]  # not splitlines: U+2028

    assert [json.loads(line) for line in lines] == [wire(event) for event in SAMPLES]


def test_we_read_each_frame_the_official_encoder_writes_as_the_event_it_was() -> None:
    lines = "".join(event_json(event).decode() + "\n" for event in SAMPLES)

    assert decode_proto(official("encode", lines.encode())) == SAMPLES


def test_our_frames_without_maps_are_byte_identical_to_the_official_encoders() -> None:
    """Objects are maps, whose order neither side fixes; everything else is one encoding."""
    plain = [event for event in SAMPLES if "{" not in event_json(event).decode()[1:-1]]
    lines = "".join(event_json(event).decode() + "\n" for event in plain)

    assert len(plain) > 10
    assert official("encode", lines.encode()) == b"".join(encode_proto(e) for e in plain)


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("event", SAMPLES, ids=[f"{e.type}-{i}" for i, e in enumerate(SAMPLES)])
def test_each_sample_reads_back_as_itself(event: Event) -> None:
    assert decode_proto(encode_proto(event)) == [event]


texts = st.text(max_size=6)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
pointers = st.sampled_from(["", "/a", "/a/0", "/b~1c", "/-"])
_BY_NAME: dict[str, st.SearchStrategy[Any]] = {
    "timestamp": st.none() | st.integers(-(2**53 - 1), 2**53 - 1),
    "path": pointers,
    "from_": pointers,
}
_COUNTS = st.none() | st.integers(0, 2**53 - 1)


def strategy(annotation: object, name: str = "") -> st.SearchStrategy[Any]:
    """Values for a wire model field, from its annotation: optional lists are never empty."""
    if name in _BY_NAME or name.endswith("_tokens"):
        return _BY_NAME.get(name, _COUNTS)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return models(annotation)
    build = _BUILDERS.get(get_origin(annotation))
    if build is not None:
        return build(get_args(annotation), name)
    simple: dict[object, st.SearchStrategy[Any]] = {
        JsonValue: json_values,
        str: texts,
        bool: st.booleans(),
    }
    return simple[annotation]


def _union(args: tuple[Any, ...], name: str) -> st.SearchStrategy[Any]:
    return st.one_of([st.none() if arg is type(None) else strategy(arg, name) for arg in args])


_Builder = Callable[[tuple[Any, ...], str], st.SearchStrategy[Any]]
_BUILDERS: dict[object, _Builder] = {
    Annotated: lambda args, name: strategy(args[0], name),
    Literal: lambda args, _name: st.sampled_from(args),
    Union: _union,
    types.UnionType: _union,
    list: lambda args, _name: st.lists(strategy(args[0]), min_size=1, max_size=2),
    dict: lambda _args, _name: st.dictionaries(texts, json_values, max_size=3),
}


def models(cls: type[BaseModel]) -> st.SearchStrategy[Any]:
    """A model from its fields' values (not `st.builds`, which would add the camelCase ones)."""
    fields = {name: strategy(info.annotation, name) for name, info in cls.model_fields.items()}
    return st.fixed_dictionaries(fields).map(lambda values: cls(**values))


events: st.SearchStrategy[Event] = st.deferred(lambda: strategy(Event))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(event=events)
def test_any_event_reads_back_as_itself(event: Event) -> None:
    assert decode_proto(encode_proto(event)) == [event]


@given(
    event=st.one_of(
        models(TextMessageContentEvent),
        models(ToolCallArgsEvent),
        models(ReasoningMessageContentEvent),
    )
)
def test_a_delta_written_directly_is_the_message_the_schema_gives(event: Event) -> None:
    schema = _codec._message(event)  # pyright: ignore[reportPrivateUsage]
    assert encode_proto(event)[4:] == schema.SerializeToString()


@pytest.mark.parametrize(
    ("event", "where"),
    [
        (
            TextMessageContentEvent(message_id="m1", delta="\ud800"),
            "its field '/delta' holds a lone surrogate (U+D800) at index 0",
        ),
        (
            CustomEvent(name="n", value={"a/b": [1, {"c": "ok"}, "x\udfff"]}),
            "its field '/value/a~1b/2' holds a lone surrogate (U+DFFF) at index 1",
        ),
        (
            CustomEvent(name="n", value={"ok": "ok", "k\ud83d": 1}),
            "a member name in its field '/value' holds a lone surrogate (U+D83D) at index 1",
        ),
        (
            StepStartedEvent(step_name="plan", metadata={"n": 1, "s": "\ud800"}),
            "its field '/metadata/s' holds a lone surrogate (U+D800) at index 0",
        ),
    ],
    ids=["a-text-field", "deep-in-a-value", "a-member-name", "in-the-envelope"],
)
def test_an_event_holding_a_lone_surrogate_cannot_be_written_and_says_where(
    event: Event, where: str
) -> None:
    with pytest.raises(
        UsageError,
        match=re.escape(f"a {event.type} event cannot be written: {where}; AG-UI text travels as")
        + " UTF-8, which cannot encode it; decode the source with errors='replace'",
    ):
        encode_proto(event)


def test_an_event_that_cannot_be_serialized_for_another_reason_says_the_serializers_words() -> None:
    value = cast("JsonValue", {"a": object()})
    event = cast("Event", CustomEvent.model_construct(name="n", value=value))

    with pytest.raises(ValueError, match="Unable to serialize unknown type: <class 'object'>"):
        encode_proto(event)


@given(batch=st.lists(events, max_size=4))
def test_a_body_of_abutting_frames_reads_back_in_order(batch: list[Event]) -> None:
    assert decode_proto(b"".join(encode_proto(event) for event in batch)) == batch


# -- framing -----------------------------------------------------------------------------------


def test_a_frame_is_a_big_endian_length_then_the_message() -> None:
    event = CustomEvent(name="n", value="x" * 300)
    body = encode_proto(event)

    assert int.from_bytes(body[:4], "big") == len(body) - 4 > 256
    assert body[:2] == b"\x00\x00"


@pytest.mark.parametrize(
    ("data", "told"),
    [
        ("\x00\x00\x00\x00", "not str: read the response's body as bytes (httpx's"),
        (None, "not NoneType"),
    ],
    ids=["text", "none"],
)
def test_decode_proto_of_what_is_not_bytes_is_a_usage_error(data: object, told: str) -> None:
    with pytest.raises(
        UsageError,
        match=re.escape(
            "decode_proto takes the bytes of a body of protobuf frames (bytes, bytearray or "
            f"memoryview), {told}"
        ),
    ):
        decode_proto(cast("bytes", data))


def test_a_body_in_a_bytearray_or_any_memoryview_reads_as_its_bytes() -> None:
    body = encode_proto(StepStartedEvent(step_name="plan")) * 2
    events = [StepStartedEvent(step_name="plan")] * 2

    assert decode_proto(bytearray(body)) == events
    assert decode_proto(memoryview(body)) == events
    assert decode_proto(memoryview(body).cast("H")) == events


def test_an_empty_body_holds_no_events() -> None:
    assert decode_proto(b"") == []


def test_a_body_that_ends_inside_a_length_prefix_is_truncated() -> None:
    body = encode_proto(StepStartedEvent(step_name="plan")) + b"\x00\x00"

    with pytest.raises(
        DecodeError, match="ends mid-frame: frame 1 has 2 of the 4 bytes of its length"
    ):
        decode_proto(body)


def test_a_body_that_ends_inside_a_message_is_truncated() -> None:
    body = encode_proto(StepStartedEvent(step_name="plan"))

    with pytest.raises(DecodeError, match="frame 0 declares 12 bytes, 11 follow"):
        decode_proto(body[:-1])


def test_a_body_that_is_not_protobuf_frames_says_what_a_frame_is() -> None:
    sse = event_json(StepStartedEvent(step_name="plan"))

    with pytest.raises(
        DecodeError,
        match="frame 0 declares 1684108385 bytes, 45 follow; a frame is a 4-byte big-endian "
        r"length and then that many bytes, .* or is not protobuf frames at all \(SSE, say\)",
    ):
        decode_proto(b"data: " + sse + b"\n\n")


def test_bytes_that_are_not_a_message_do_not_decode() -> None:
    with pytest.raises(
        DecodeError,
        match=r"frame 1 is not an ag_ui\.Event message: .*; each frame of the protobuf binding "
        r"holds one serialized AG-UI 1\.0 ag_ui\.Event",
    ):
        decode_proto(encode_proto(StepStartedEvent(step_name="plan")) + frame(b"\xff\xff\xff"))


def test_a_string_that_is_not_utf8_does_not_decode() -> None:
    body = base("CUSTOM") + field(2, b"\xff")

    with pytest.raises(DecodeError, match=r"frame 0 is not an ag_ui\.Event message"):
        decode_proto(arm("CUSTOM", body))


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_number_json_cannot_hold_does_not_decode(number: float) -> None:
    value = b"\x11" + struct.pack("<d", number)
    body = base("CUSTOM") + field(2, b"x") + field(3, value)

    with pytest.raises(DecodeError, match=f"frame 0 holds the number {number}, which JSON cannot"):
        decode_proto(arm("CUSTOM", body))


def test_an_empty_frame_carries_no_event() -> None:
    with pytest.raises(
        DecodeError,
        match=r"frame 0 is empty: it carries no event; each frame holds one ag_ui\.Event \(a 0\.x",
    ):
        decode_proto(frame(b""))


def test_a_frame_of_an_unknown_event_type_is_dropped_with_a_warning() -> None:
    later = encode_proto(StepFinishedEvent(step_name="plan"))
    body = frame(field(40, base("RAW"))) + later

    with pytest.warns(UnknownMemberWarning, match="frame 0 carries an event type this version"):
        events = decode_proto(body)

    assert events == [StepFinishedEvent(step_name="plan")]


def test_an_envelope_whose_base_event_declares_another_type_is_refused() -> None:
    body = base("RAW") + field(2, b"x") + field(3, b"\x20\x01")

    with pytest.raises(
        DecodeError,
        match="frame 0 carries a CUSTOM event whose baseEvent declares RAW; the type in "
        "baseEvent must be the type of the arm that carries it",
    ):
        decode_proto(arm("CUSTOM", body))


@pytest.mark.parametrize("kind", ["TEXT_MESSAGE_START", "STEP_STARTED"])
def test_an_event_without_its_base_event_is_refused(kind: str) -> None:
    """Its type would read as the enum's first value; the official reader refuses it too."""
    with pytest.raises(
        DecodeError,
        match=f"frame 0 carries a {kind} event without its baseEvent; every event message opens "
        r"with a BaseEvent \(field 1\) that declares its type",
    ):
        decode_proto(arm(kind, field(2, b"m1")))


@pytest.mark.parametrize(
    ("body", "where", "expected", "came"),
    [
        (
            arm(
                "TEXT_MESSAGE_CONTENT", base("TEXT_MESSAGE_CONTENT") + b"\x10\x05" + field(3, b"h")
            ),
            "TextMessageContentEvent field 2 (messageId)",
            "length-delimited bytes (wire type 2)",
            "a varint (wire type 0)",
        ),
        (
            arm("STEP_STARTED", field(1, b"\x08\x0e" + field(2, b"7")) + field(2, b"p")),
            "BaseEvent field 2 (timestamp)",
            "a varint (wire type 0)",
            "length-delimited bytes (wire type 2)",
        ),
        (
            frame(varint((ARMS.index("STEP_STARTED") + 1) << 3 | 5) + b"\x00\x00\x00\x00"),
            "Event field 15 (stepStarted)",
            "length-delimited bytes (wire type 2)",
            "4 bytes (wire type 5)",
        ),
        (
            arm(
                "TOOL_CALL_RESULT",
                base("TOOL_CALL_RESULT") + field(3, b"t") + field(4, b"c") + field(7, b"\x08\x01"),
            ),
            "InputContent field 1 (text)",
            "length-delimited bytes (wire type 2)",
            "a varint (wire type 0)",
        ),
    ],
    ids=["in-the-event", "in-its-base-event", "its-arm", "in-a-content-part"],
)
def test_a_declared_field_sent_with_another_wire_type_does_not_decode(
    body: bytes, where: str, expected: str, came: str
) -> None:
    """Protobuf sets it aside; read as its default, it would look as if it had not been sent."""
    with pytest.raises(
        DecodeError,
        match=re.escape(
            f"frame 0 carries ag_ui.{where} with the wrong wire type: the schema sends it as "
            f"{expected}, and it came as {came}; check that the producer writes the AG-UI 1.0"
        ),
    ):
        decode_proto(body)


def test_an_event_that_decodes_but_does_not_validate_is_malformed() -> None:
    body = base("REASONING_MESSAGE_START") + field(3, b"r1") + field(4, b"assistant")

    with pytest.raises(MalformedEvent, match="REASONING_MESSAGE_START: field '/role'"):
        decode_proto(arm("REASONING_MESSAGE_START", body))


def test_a_content_part_of_an_unknown_kind_is_dropped_with_a_warning() -> None:
    parts = field(7, field(9, b"")) + field(7, field(2, field(1, b""))) + field(7, field(1, b""))
    body = base("TOOL_CALL_RESULT") + field(3, b"t1") + field(4, b"c1") + parts

    with pytest.warns(UnknownMemberWarning, match="a content part of a kind") as caught:
        [event] = decode_proto(arm("TOOL_CALL_RESULT", body))

    assert len(caught) == 2
    assert event == ToolCallResultEvent(
        message_id="t1", tool_call_id="c1", content=[TextPart(text="")]
    )


def test_content_text_beside_content_parts_is_refused() -> None:
    parts = field(7, field(1, field(1, b"a")))
    body = base("TOOL_CALL_RESULT") + field(3, b"t1") + field(4, b"c1") + field(5, b"b") + parts

    with pytest.raises(DecodeError, match="a TOOL_CALL_RESULT carries content parts beside"):
        decode_proto(arm("TOOL_CALL_RESULT", body))


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        (field(1, b"a1") + field(2, b"assistant") + field(8, field(1, b"")), "content parts"),
        (field(1, b"a1") + field(2, b"assistant") + field(13, b""), "activity content"),
        (field(1, b"a1") + field(2, b"activity") + field(3, b"x") + field(13, b""), "activity"),
    ],
    ids=["parts-on-assistant", "activity-on-assistant", "activity-beside-text"],
)
def test_a_message_carrying_content_in_a_form_its_role_does_not_use_is_refused(
    message: bytes, problem: str
) -> None:
    body = base("MESSAGES_SNAPSHOT") + field(2, message)

    with pytest.raises(DecodeError, match=problem):
        decode_proto(arm("MESSAGES_SNAPSHOT", body))


def test_an_outcome_left_empty_leaves_its_lists_to_the_reader() -> None:
    """No outcome but pending calls: the reader strips what has no place, with a warning."""
    body = base("RUN_FINISHED") + field(2, b"t") + field(3, b"r") + field(8, b"c1")

    with pytest.warns(UnknownMemberWarning, match="pendingToolCallIds"):
        events = decode_proto(arm("RUN_FINISHED", body))

    assert events == [RunFinishedEvent(thread_id="t", run_id="r")]


# -- open JSON (state, payloads, metadata) -----------------------------------------------------


def nested(depth: int, kind: Literal["list", "object"]) -> JsonValue:
    value: JsonValue = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def value_frame(value: bytes) -> bytes:
    """A CUSTOM frame whose `value` field holds the bytes of a `google.protobuf.Value`."""
    return arm("CUSTOM", base("CUSTOM") + field(2, b"n") + field(3, value))


DEEP: list[Event] = [
    CustomEvent(name="n", value=nested(250, "list")),
    CustomEvent(name="n", value=nested(250, "object")),
    StepStartedEvent(step_name="s", metadata={"k": nested(250, "object")}),
]


@pytest.mark.parametrize("event", DEEP, ids=["list", "object", "metadata"])
def test_json_nested_past_protobufs_own_limit_reads_back_as_itself(event: Event) -> None:
    """Protobuf's reader stops at 100 nested messages: 33 levels of objects in a `Value`."""
    assert decode_proto(encode_proto(event)) == [event]


def test_the_official_package_and_we_read_each_others_deeply_nested_json() -> None:
    lines = "".join(event_json(event).decode() + "\n" for event in DEEP)

    assert decode_proto(official("encode", lines.encode())) == DEEP
    decoded = official("decode", b"".join(encode_proto(event) for event in DEEP)).splitlines()
    assert [json.loads(line) for line in decoded] == [wire(event) for event in DEEP]


def test_a_frame_nested_past_256_levels_does_not_decode() -> None:
    value = b"\x08\x00"
    for _ in range(300):
        value = field(6, field(1, value))

    with pytest.raises(DecodeError, match="frame 0 holds JSON nested deeper than 256 levels"):
        decode_proto(value_frame(value))


def test_open_json_whose_bytes_are_not_a_value_does_not_decode() -> None:
    with pytest.raises(DecodeError, match=r"frame 0 is not an ag_ui\.Event message"):
        decode_proto(value_frame(field(5, b"\xff\xff")))


def test_a_value_holding_nothing_reads_as_null() -> None:
    assert decode_proto(value_frame(b"")) == [CustomEvent(name="n", value=None)]


def test_an_object_member_sent_twice_reads_as_its_last_value() -> None:
    members = field(1, field(1, b"k") + field(2, b"\x20\x01")) + field(1, field(1, b"k"))

    assert decode_proto(value_frame(field(5, members))) == [
        CustomEvent(name="n", value={"k": None})
    ]


def test_object_members_keep_their_order_from_agui_to_agui() -> None:
    value: dict[str, JsonValue] = {key: i for i, key in enumerate("zyxwvutsrqponmlkjihgfedcba")}

    [event] = decode_proto(encode_proto(CustomEvent(name="n", value=value)))

    assert isinstance(event, CustomEvent)
    assert list(cast("dict[str, JsonValue]", event.value)) == list(value)


# -- fields the schema does not declare --------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (
            arm("STEP_STARTED", base("STEP_STARTED") + field(2, b"p") + field(50, b"x")),
            "StepStartedEvent field 50",
        ),
        (
            arm("STEP_STARTED", field(1, b"\x08\x0e" + field(9, b"")) + field(2, b"p")),
            "BaseEvent field 9",
        ),
        (
            frame(
                field(ARMS.index("STEP_STARTED") + 1, base("STEP_STARTED") + field(2, b"p"))
                + field(60, b"")
            ),
            "Event field 60",
        ),
    ],
    ids=["in-the-event", "in-its-base-event", "beside-its-arm"],
)
def test_fields_a_known_event_does_not_declare_are_dropped_with_a_warning(
    body: bytes, where: str
) -> None:
    with pytest.warns(
        UnknownMemberWarning,
        match=rf"frame 0 carries fields this version does not know \(ag_ui\.{where}\); they were",
    ):
        events = decode_proto(body)

    assert events == [StepStartedEvent(step_name="p")]


def test_fields_nested_deep_in_a_known_event_are_each_named_once() -> None:
    function = field(1, b"f") + field(2, b"{}") + field(9, b"")
    call = field(1, b"c") + field(2, b"function") + field(3, function) + field(8, b"")
    message = field(1, b"a1") + field(2, b"assistant") + field(5, call)
    body = base("MESSAGES_SNAPSHOT") + field(2, message) + field(2, message)

    with pytest.warns(UnknownMemberWarning) as caught:
        [event] = decode_proto(arm("MESSAGES_SNAPSHOT", body))

    assert [str(warning.message) for warning in caught] == [
        (
            "frame 0 carries fields this version does not know (ag_ui.FunctionCall field 9, "
            "ag_ui.ToolCall field 8); they were dropped"
        )
    ]
    assert isinstance(event, MessagesSnapshotEvent)
    assert len(event.messages) == 2


# -- the documented caveats --------------------------------------------------------------------


def test_an_integer_beyond_2_to_the_53_reads_back_rounded_to_a_double() -> None:
    [event] = decode_proto(encode_proto(CustomEvent(name="n", value=[2**60 + 1, 2**53 + 1])))

    assert isinstance(event, CustomEvent)
    assert event.value == [float(2**60), float(2**53)]


def test_a_number_without_a_fraction_reads_back_as_an_int() -> None:
    [event] = decode_proto(encode_proto(CustomEvent(name="n", value={"a": 2.0, "b": -0.0})))

    assert isinstance(event, CustomEvent)
    assert event.value == {"a": 2, "b": 0}
    assert json.loads(event_json(event))["value"] == {"a": 2, "b": 0}


def test_a_whole_number_past_2_to_the_53_reads_back_as_a_float_and_minus_zero_as_0() -> None:
    [event] = decode_proto(encode_proto(CustomEvent(name="n", value=[2**53, 2**53 + 2, -0.0])))

    assert isinstance(event, CustomEvent)
    assert isinstance(event.value, list)
    assert event.value == [2**53, 2.0**53 + 2, 0]
    assert [isinstance(number, int) for number in event.value] == [True, False, True]


def test_an_integer_beyond_a_double_cannot_be_written() -> None:
    with pytest.raises(
        UsageError,
        match="a CUSTOM event cannot be written in the protobuf binding: its JSON holds an "
        "integer beyond the range of a double",
    ):
        encode_proto(CustomEvent(name="n", value=10**400))


def test_a_value_the_schema_cannot_hold_cannot_be_written() -> None:
    event = cast("Event", RunErrorEvent.model_construct(message="m", timestamp=2**70))

    with pytest.raises(UsageError, match="a RUN_ERROR event cannot be written"):
        encode_proto(event)


def test_empty_optional_lists_read_back_as_absent() -> None:
    event = RunStartedEvent(
        thread_id="t",
        run_id="r",
        input=RunAgentInput(
            thread_id="t",
            run_id="r",
            messages=[AssistantMessage(id="a", content="x", tool_calls=[])],
            tools=[],
            context=[],
            resume=[],
        ),
    )
    finished = RunFinishedEvent(
        thread_id="t", run_id="r", outcome=RunOutcome.success(pending_tool_call_ids=[]), usage=[]
    )
    suspended = SubagentFinishedEvent(
        subagent_run_id="s", outcome=SubagentSuspendedOutcome(interrupt_ids=[])
    )

    assert decode_proto(b"".join(encode_proto(e) for e in (event, finished, suspended))) == [
        RunStartedEvent(
            thread_id="t",
            run_id="r",
            input=RunAgentInput(
                thread_id="t", run_id="r", messages=[AssistantMessage(id="a", content="x")]
            ),
        ),
        RunFinishedEvent(thread_id="t", run_id="r", outcome=RunOutcome.success()),
        SubagentFinishedEvent(subagent_run_id="s", outcome=SubagentSuspendedOutcome()),
    ]


def test_empty_content_parts_stay_an_empty_list() -> None:
    events: list[Event] = [
        MessagesSnapshotEvent(messages=[UserMessage(id="u", content=[])]),
        ToolCallResultEvent(message_id="t", tool_call_id="c", content=[]),
    ]

    assert decode_proto(b"".join(encode_proto(e) for e in events)) == events


def test_patch_members_beyond_op_path_from_and_value_are_not_written() -> None:
    operation = AddOperation.model_validate({"op": "add", "path": "/a", "value": 1, "why": "x"})
    leftover = RemoveOperation.model_validate({"op": "remove", "path": "/b", "value": 2})

    [event] = decode_proto(encode_proto(StateDeltaEvent(delta=[operation, leftover])))

    assert wire(event) == {
        "type": "STATE_DELTA",
        "delta": [
            {"op": "add", "path": "/a", "value": 1},
            {"op": "remove", "path": "/b", "value": 2},
        ],
    }


# -- the module --------------------------------------------------------------------------------


def test_the_schema_lives_in_a_private_pool_not_the_default_one() -> None:
    with pytest.raises(KeyError):
        descriptor_pool.Default().FindMessageTypeByName("ag_ui.Event")


def test_the_media_type_is_the_one_the_official_client_compares_with() -> None:
    assert PROTO_MEDIA_TYPE == "application/vnd.ag-ui.event+proto"


@pytest.mark.parametrize(
    "imports",
    [
        "import agui, agui.asgi",
        "from agui.proto import PROTO_MEDIA_TYPE",
        "import agui.proto",
        (
            "from agui.asgi import asgi_app\n"
            "async def agent(ctx): ...\n"
            "asgi_app(agent, protobuf=False)"
        ),
    ],
)
def test_importing_agui_or_the_media_type_does_not_import_protobuf(imports: str) -> None:
    code = f"import sys\n{imports}\nprint('google.protobuf' in sys.modules)"
    completed = subprocess.run(  # noqa: S603 - a fixed command line
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )

    assert completed.stdout.strip() == "False"


def test_the_codec_is_loaded_on_first_use_of_encode_or_decode() -> None:
    code = (
        "import sys, agui.proto; before = 'google.protobuf' in sys.modules; "
        "agui.proto.encode_proto; print(before, 'google.protobuf' in sys.modules)"
    )
    completed = subprocess.run(  # noqa: S603 - a fixed command line
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )

    assert completed.stdout.strip() == "False True"


@pytest.mark.parametrize("name", ["encode_proto", "decode_proto"])
def test_the_binding_without_protobuf_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    monkeypatch.delitem(sys.modules, "agui.proto")
    monkeypatch.delitem(sys.modules, "agui.proto._codec")
    monkeypatch.delitem(sys.modules, "agui.proto._schema")
    monkeypatch.delitem(sys.modules, "agui.proto._mapping")
    binding = importlib.import_module("agui.proto")

    assert binding.PROTO_MEDIA_TYPE == "application/vnd.ag-ui.event+proto"
    with pytest.raises(ImportError, match=r'pip install "agui-server\[proto\]"'):
        getattr(binding, name)


@pytest.mark.parametrize(
    ("installed", "without", "told"),
    [
        (
            "4.25.3",
            None,
            'and protobuf 4.25.3 is installed: pip install --upgrade "protobuf>=5.26.1"',
        ),
        (
            "4.21.12",
            "google.protobuf.unknown_fields",
            'and protobuf 4.21.12 is installed: pip install --upgrade "protobuf>=5.26.1"',
        ),
        (
            "6.31.0",
            "google.protobuf.unknown_fields",
            (
                "and the installed protobuf 6.31.0 does not import as agui needs (import of "
                "google.protobuf.unknown_fields halted; None in sys.modules): reinstall it, pip "
                'install --force-reinstall "protobuf>=5.26.1"'
            ),
        ),
    ],
    ids=["older-than-the-floor", "too-old-to-have-a-part", "new-enough-but-broken"],
)
def test_a_protobuf_the_binding_cannot_use_is_named_beside_the_one_it_needs(
    monkeypatch: pytest.MonkeyPatch, installed: str, without: str | None, told: str
) -> None:
    import google.protobuf  # noqa: PLC0415 - patched for this test only

    monkeypatch.setattr(google.protobuf, "__version__", installed)
    if without is not None:
        monkeypatch.setitem(sys.modules, without, None)
    monkeypatch.delitem(sys.modules, "agui.proto")
    monkeypatch.delitem(sys.modules, "agui.proto._codec")
    binding = importlib.import_module("agui.proto")

    with pytest.raises(
        ImportError,
        match=re.escape(f"agui.proto.decode_proto needs protobuf 5.26.1 or later, {told}"),
    ):
        binding.decode_proto  # noqa: B018 - the lookup is the test


def test_the_protobuf_the_binding_needs_is_the_floor_of_the_proto_extra() -> None:
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")

    assert f'proto = ["protobuf>={PROTOBUF_FLOOR}"]' in pyproject


def test_without_protobuf_a_probe_or_a_star_import_says_how_to_install_it_too() -> None:
    """A missing dependency is an error to see: `hasattr` passes on all but AttributeError."""
    program = [
        "import sys",
        "sys.modules['google.protobuf'] = None",
        "import agui.proto",
        "probes = ['hasattr(agui.proto, \"encode_proto\")', 'exec(\"from agui.proto import *\")']",
        "for probe in probes:",
        "    try:",
        "        eval(probe)",
        "    except ImportError as error:",
        "        print(error)",
    ]
    completed = subprocess.run(  # noqa: S603 - a fixed command line
        [sys.executable, "-c", "\n".join(program)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    missing = 'needs the protobuf package, which is not installed: pip install "agui-server[proto]"'

    assert completed.stdout.splitlines() == [
        f"agui.proto.encode_proto {missing}",
        f"agui.proto.decode_proto {missing}",
    ]


def test_a_name_the_binding_does_not_have_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'agui\.proto' has no attribute 'encode'"):
        proto.encode  # noqa: B018 - the lookup is the test


def test_an_import_error_of_agui_itself_is_not_reported_as_missing_protobuf(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agui.proto._mapping", None)
    monkeypatch.delitem(sys.modules, "agui.proto")
    monkeypatch.delitem(sys.modules, "agui.proto._codec")
    binding = importlib.import_module("agui.proto")

    with pytest.raises(ImportError, match=r"agui\.proto\._mapping") as caught:
        binding.decode_proto  # noqa: B018 - the lookup is the test
    assert "pip install" not in str(caught.value)


def test_an_event_read_from_frames_reads_the_same_from_its_json() -> None:
    [event] = decode_proto(encode_proto(RawEvent(event=1)))

    assert agui.parse_event(wire(event)) == event
