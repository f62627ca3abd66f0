"""SSE framing and the exact wire JSON, pinned by the cross-language null-omission fixture."""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any, Literal, TypedDict, cast, get_args, get_origin

import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, JsonValue

import corpus
from agui._emit.frames import encode_items, item_json
from agui._emit.record import FIELDS, Item, Kind, Record, materialize
from agui.errors import UsageError
from agui.events import (
    CustomEvent,
    Event,
    RawEvent,
    ReasoningMessageContentEvent,
    RunFinishedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import TextPart
from agui.sse import (
    _LEAN,  # pyright: ignore[reportPrivateUsage]
    SSE_MEDIA_TYPE,
    comment_frame,
    encode_sse,
    event_json,
)
from agui.types import RunAgentInput
from agui.wire import parse_event


class Case(TypedDict):
    name: str
    producedBy: list[str]
    input: dict[str, JsonValue]
    expected: dict[str, JsonValue]


def _python_cases() -> list[Case]:
    stream: list[Case] = corpus.json("null-omission.json")["stream"]
    return [case for case in stream if "python" in case["producedBy"]]


PYTHON_CASES = _python_cases()


# -- the golden null-omission fixture ---------------------------------------------------------


@pytest.mark.corpus
def test_the_null_omission_fixture_has_python_cases() -> None:
    assert len(PYTHON_CASES) >= 28


@pytest.mark.corpus
@pytest.mark.parametrize("case", PYTHON_CASES, ids=[case["name"] for case in PYTHON_CASES])
def test_each_null_omission_case_writes_exactly_the_expected_json(case: Case) -> None:
    event = parse_event(case["input"])

    written = json.loads(event_json(event))

    assert written == case["expected"]
    assert sorted(written) == sorted(case["expected"])


@pytest.mark.corpus
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


# -- the quicker paths give the serializer's very bytes ----------------------------------------
# `encode_sse` and `event_json` write the delta events themselves and serialize the other
# text-only events with `exclude_none`; each must match the model's own serializer exactly.


def _serializer_json(event: Event) -> bytes:
    return event.__pydantic_serializer__.to_json(event)


def _assert_serializer_bytes(event: Event) -> None:
    expected = _serializer_json(event)
    assert event_json(event) == expected
    assert encode_sse(event) == b"data: " + expected + b"\n\n"


def test_the_string_escaper_matches_pydantic_core_on_every_code_point() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert encode_basestring(every).encode() == pydantic_core.to_json(every)


DELTA_EVENTS: list[tuple[type[Event], str]] = [
    (TextMessageContentEvent, "message_id"),
    (ToolCallArgsEvent, "tool_call_id"),
    (ReasoningMessageContentEvent, "message_id"),
]
TEXT = st.text(alphabet=st.characters(codec="utf-8"))
TIMESTAMPS = st.one_of(st.none(), st.integers(-(2**53 - 1), 2**53 - 1))


@settings(max_examples=300)
@given(
    kind=st.sampled_from(DELTA_EVENTS),
    entity=TEXT,
    delta=st.one_of(TEXT, st.sampled_from(["\u2028\u2029", "\x00\x1f\x7f", '"\\/', "é😀"])),
    timestamp=TIMESTAMPS,
)
def test_a_delta_event_is_written_as_its_serializer_would_for_any_text(
    kind: tuple[type[Event], str], entity: str, delta: str, timestamp: int | None
) -> None:
    cls, id_field = kind
    event = cls.model_validate({id_field: entity, "delta": delta, "timestamp": timestamp})
    _assert_serializer_bytes(event)


def _literals(annotation: object) -> tuple[object, ...]:
    """The values of a `Literal` field (optional or not), or nothing for any other field."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return next((_literals(arg) for arg in get_args(annotation) if _literals(arg)), ())


@given(
    kind=st.sampled_from(sorted(_LEAN, key=lambda cls: cls.__name__)),
    text=TEXT,
    timestamp=TIMESTAMPS,
    subagent=st.one_of(st.none(), TEXT),
    optionals=st.booleans(),
)
def test_a_text_only_event_is_written_as_its_serializer_would(
    *,
    kind: type[BaseModel],
    text: str,
    timestamp: int | None,
    subagent: str | None,
    optionals: bool,
) -> None:
    fields: dict[str, object] = {"timestamp": timestamp, "subagent_run_id": subagent}
    for name, field in kind.model_fields.items():
        if name in {*fields, "type", "raw_event", "metadata"} or (
            field.exclude_if is not None and not optionals
        ):
            continue
        literals = _literals(field.annotation)
        fields[name] = literals[-1] if literals else text
    _assert_serializer_bytes(cast("Event", kind.model_validate(fields)))


def test_the_text_only_events_are_the_attributable_ones_with_text_fields_and_the_result() -> None:
    names = {cls.__name__ for cls in _LEAN}
    assert "ToolCallResultEvent" in names
    assert names.isdisjoint({"StateDeltaEvent", "CustomEvent", "RunStartedEvent", "RawEvent"})
    assert len(names) == 18


@pytest.mark.parametrize(
    "event",
    [
        TextMessageContentEvent(message_id="m", delta="d", subagent_run_id="s"),
        TextMessageContentEvent(message_id="m", delta="d", metadata={"k": None}),
        ToolCallArgsEvent(tool_call_id="c", delta="d", raw_event=[None]),
        ToolCallResultEvent(
            message_id="m", tool_call_id="c", content=[TextPart(text="t", metadata={"k": None})]
        ),
        TextMessageStartEvent(message_id="m", metadata={"k": None}, raw_event=None),
    ],
    ids=["subagent", "metadata", "raw-event", "content-parts", "start-metadata"],
)
def test_an_envelope_or_data_holding_nulls_is_written_as_the_serializer_would(
    event: Event,
) -> None:
    _assert_serializer_bytes(event)


def _unvalidated(cls: type[Event], **fields: object) -> Event:
    """An event built without validation, holding what its model would refuse."""
    return cls.model_construct(**fields)  # type: ignore[arg-type]


UNVALIDATED = [
    _unvalidated(TextMessageContentEvent, type="X", message_id="m", delta="d"),
    _unvalidated(TextMessageContentEvent, message_id="m", delta="d", timestamp=2**60),
    _unvalidated(TextMessageContentEvent, message_id="m", delta="d", timestamp=True),
    _unvalidated(TextMessageContentEvent, delta="d"),
    _unvalidated(ToolCallArgsEvent, tool_call_id=None, delta="d"),
    _unvalidated(TextMessageEndEvent, message_id=None),
    _unvalidated(TextMessageEndEvent),
]


@pytest.mark.parametrize(
    "event",
    UNVALIDATED,
    ids=["type", "huge-timestamp", "bool-timestamp", "no-id", "null-id", "null-end", "no-end-id"],
)
def test_an_event_built_unvalidated_is_still_written_as_the_serializer_would(event: Event) -> None:
    _assert_serializer_bytes(event)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_value_of_the_wrong_type_is_left_to_the_serializer() -> None:
    _assert_serializer_bytes(_unvalidated(TextMessageContentEvent, message_id="m", delta=5))


@pytest.mark.parametrize(
    "event",
    [
        TextMessageContentEvent(message_id="m", delta="\ud800"),
        ToolCallArgsEvent(tool_call_id="\udfff", delta="d", timestamp=1),
        TextMessageEndEvent(message_id="\ud800"),
    ],
    ids=["delta", "id", "lean"],
)
def test_a_lone_surrogate_raises_the_serializers_error(event: Event) -> None:
    with pytest.raises(pydantic_core.PydanticSerializationError, match="surrogates not allowed"):
        event_json(event)
    with pytest.raises(pydantic_core.PydanticSerializationError, match="surrogates not allowed"):
        encode_sse(event)


def test_deltas_of_alternating_ids_each_carry_their_own_id() -> None:
    first, second = "m-1", "m-2"
    events = [
        TextMessageContentEvent(message_id=first, delta="a"),
        TextMessageContentEvent(message_id=first, delta="b", timestamp=2),
        TextMessageContentEvent(message_id=second, delta="c"),
        TextMessageContentEvent(message_id=first, delta="d"),
    ]
    for event in events:
        _assert_serializer_bytes(event)


# -- queued items: events and delta records ----------------------------------------------------

_KINDS = (TextMessageContentEvent, ToolCallArgsEvent, ReasoningMessageContentEvent)


def _record_event(record: Record) -> Event:
    kind, entity_id, text = record
    if kind == 5:
        return TextMessageStartEvent(message_id=entity_id, role=text)  # type: ignore[arg-type]
    if kind == 4:
        return ToolCallEndEvent(tool_call_id=entity_id)
    if kind == 3:
        return TextMessageEndEvent(message_id=entity_id)
    if kind == 1:
        return ToolCallArgsEvent(tool_call_id=entity_id, delta=text)
    return _KINDS[kind](message_id=entity_id, delta=text)  # type: ignore[call-arg]


_IDS = st.sampled_from(["m1", "m/2", 'c"3'])
_records = st.one_of(
    st.tuples(st.integers(min_value=0, max_value=2).map(Kind), _IDS, st.text()),
    st.tuples(st.integers(min_value=3, max_value=4).map(Kind), _IDS, st.just("")),
    st.tuples(
        st.just(Kind.TEXT_START),
        _IDS,
        st.sampled_from(["assistant", "user", "system", "developer"]),
    ),
)
_events = st.sampled_from(
    [
        TextMessageStartEvent(message_id="m1"),
        TextMessageEndEvent(message_id="m1", timestamp=5),
        ToolCallResultEvent(message_id="r", tool_call_id="c", content=[TextPart(text="t")]),
        CustomEvent(name="n", value=None),
    ]
)


_SURROGATE_OR_NOT = st.text(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)))
_IDS_OR_SURROGATE = st.one_of(_IDS, st.just("m\ud800"))
_drainable = st.one_of(
    st.tuples(
        st.integers(min_value=0, max_value=2).map(Kind), _IDS_OR_SURROGATE, _SURROGATE_OR_NOT
    ),
    st.tuples(st.integers(min_value=3, max_value=4).map(Kind), _IDS_OR_SURROGATE, st.just("")),
    st.tuples(st.just(Kind.TEXT_START), _IDS_OR_SURROGATE, st.sampled_from(["user", "system"])),
)


def _frame_or_refusal(event: Event) -> tuple[bytes | None, str | None]:
    try:
        return encode_sse(event), None
    except (UsageError, ValueError) as error:
        return None, type(error).__name__


@settings(max_examples=300)
@given(st.lists(_drainable, max_size=12))
def test_a_record_drained_as_its_model_frames_as_its_validated_event_does(
    records: list[Record],
) -> None:
    for record in records:  # in turn: ids and kinds change, and a delta's kept head with them
        drained = materialize(record)
        assert drained.model_fields_set is FIELDS[record[0]]
        assert _frame_or_refusal(drained) == _frame_or_refusal(_record_event(record))


def test_a_start_built_as_a_record_is_but_named_is_framed_with_its_name() -> None:
    # A handle's named start shares the fields-set of a drained start, whose name is None.
    named = TextMessageStartEvent.trusted_builder("message_id", "role", "name")("m1", "user", "bo")
    assert named.model_fields_set is FIELDS[Kind.TEXT_START]

    frame = encode_sse(named)

    assert frame == encode_sse(TextMessageStartEvent(message_id="m1", role="user", name="bo"))
    assert frame.endswith(b'"role":"user","name":"bo"}\n\n')


def test_a_model_given_a_drained_fields_set_but_not_text_takes_the_serializer() -> None:
    numbers: dict[str, Any] = {"message_id": 1, "delta": 2}  # not text, unvalidated
    forged = TextMessageContentEvent.model_construct(
        _fields_set=FIELDS[Kind.TEXT_CONTENT], **numbers
    )
    plain = TextMessageContentEvent.model_construct(**numbers)

    with pytest.warns(UserWarning, match="Expected `str`"):
        frames = encode_sse(forged), encode_sse(plain)
    assert (
        frames[0]
        == frames[1]
        == b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":1,"delta":2}\n\n'
    )


@settings(max_examples=300)
@given(st.lists(st.one_of(_records, _events), max_size=12))
def test_a_batch_of_items_is_written_as_the_frames_of_their_events(items: list[Item]) -> None:
    events = [_record_event(item) if isinstance(item, tuple) else item for item in items]
    assert encode_items(items) == b"".join(encode_sse(event) for event in events)
    for item, event in zip(items, events, strict=True):
        assert item_json(item) == event_json(event)


def test_a_record_whose_text_holds_a_lone_surrogate_is_left_to_the_serializer() -> None:
    with pytest.raises(pydantic_core.PydanticSerializationError, match="surrogates not allowed"):
        item_json((Kind.TEXT_CONTENT, "m1", "\ud800"))
    with pytest.raises(pydantic_core.PydanticSerializationError, match="surrogates not allowed"):
        encode_items([TextMessageEndEvent(message_id="m0"), (Kind.TEXT_CONTENT, "m1", "\ud800")])


def test_an_empty_batch_is_no_bytes() -> None:
    assert encode_items([]) == b""


def test_a_batch_holding_an_unset_field_is_written_by_the_serializer() -> None:
    unset = _unvalidated(TextMessageEndEvent)
    assert encode_items([unset]) == encode_sse(unset) == b'data: {"type":"TEXT_MESSAGE_END"}\n\n'


@pytest.mark.parametrize(
    "event",
    [
        ToolCallStartEvent(tool_call_id="c", tool_call_name="f", parent_message_id=None),
        ToolCallResultEvent(message_id="r", tool_call_id="c", content="ok", role="tool"),
        TextMessageStartEvent(message_id="m", role="user", name="ann"),
        _unvalidated(TextMessageEndEvent, type="OTHER", message_id="m"),
        _unvalidated(ToolCallStartEvent, tool_call_id="c", tool_call_name=None),
        _unvalidated(TextMessageStartEvent, message_id="m", name=3),
    ],
    ids=["start", "result", "named", "other-type", "null-name", "not-text"],
)
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_text_events_are_written_as_the_serializer_would(event: Event) -> None:
    _assert_serializer_bytes(event)
    assert encode_items([event]) == encode_sse(event)
