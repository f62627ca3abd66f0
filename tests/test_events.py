"""The 31 event models: their types, defaults, what they omit and what they refuse."""

from __future__ import annotations

import json
from typing import get_args

import pytest
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from agui import events
from agui.events import (
    ActivitySnapshotEvent,
    AttributableEvent,
    BaseEvent,
    CustomEvent,
    Event,
    EventType,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningMessageStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import TextPart, UserMessage
from agui.types import (
    Interrupt,
    ReplaceOperation,
    RunAgentInput,
    RunOutcome,
    SubagentSuspendedOutcome,
    TokenUsage,
)

EVENT_CLASSES: tuple[type[BaseModel], ...] = get_args(get_args(Event)[0])
RUN_SCOPED = {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"}
SUBAGENT_LIFECYCLE = {"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"}


def _wire(model: BaseModel) -> dict[str, JsonValue]:
    parsed: dict[str, JsonValue] = json.loads(model.model_dump_json())
    return parsed


# -- EventType and the union ------------------------------------------------------------------


def test_there_are_31_event_types_and_each_equals_its_wire_string() -> None:
    assert len(EventType) == 31
    for member in EventType:
        assert member == member.value
        assert member.name == member.value
        assert isinstance(member, str)


def test_no_retired_thinking_type_is_an_event_type() -> None:
    assert not [member for member in EventType if member.value.startswith("THINKING")]


def test_each_event_type_has_exactly_one_event_class_whose_type_defaults_to_it() -> None:
    defaults = [cls.model_fields["type"].default for cls in EVENT_CLASSES]

    assert len(EVENT_CLASSES) == 31
    assert sorted(defaults) == sorted(member.value for member in EventType)


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=[cls.__name__ for cls in EVENT_CLASSES])
def test_each_event_class_is_named_for_its_wire_type(cls: type[BaseModel]) -> None:
    kind = str(cls.model_fields["type"].default)

    assert cls.__name__ == "".join(word.capitalize() for word in kind.split("_")) + "Event"
    assert cls.__name__ in events.__all__


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=[cls.__name__ for cls in EVENT_CLASSES])
def test_only_content_events_carry_an_optional_subagent_run_id(cls: type[BaseModel]) -> None:
    kind = str(cls.model_fields["type"].default)
    field = cls.model_fields.get("subagent_run_id")

    if kind in RUN_SCOPED:
        assert field is None
    elif kind in SUBAGENT_LIFECYCLE:
        assert field is not None
        assert field.is_required()
    else:
        assert field is not None
        assert not field.is_required()
        assert issubclass(cls, AttributableEvent)


def test_an_event_type_member_and_its_string_select_the_same_class() -> None:
    adapter: TypeAdapter[Event] = TypeAdapter(Event)

    by_string = adapter.validate_python({"type": "STEP_STARTED", "stepName": "s"})
    by_member = adapter.validate_python({"type": EventType.STEP_STARTED, "stepName": "s"})

    assert by_string == by_member == StepStartedEvent(step_name="s")
    assert by_member.type == EventType.STEP_STARTED


def test_the_type_of_a_built_event_compares_equal_to_its_event_type_member() -> None:
    event = TextMessageContentEvent(message_id="m", delta="x")

    assert event.type == EventType.TEXT_MESSAGE_CONTENT
    assert event.type == "TEXT_MESSAGE_CONTENT"


# -- omission and nulls -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (TextMessageStartEvent(message_id="m"), {"type": "TEXT_MESSAGE_START", "messageId": "m"}),
        (TextMessageChunkEvent(), {"type": "TEXT_MESSAGE_CHUNK"}),
        (
            ToolCallStartEvent(tool_call_id="c", tool_call_name="f"),
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        ),
        (
            ToolCallResultEvent(message_id="m", tool_call_id="c", content="ok"),
            {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "ok"},
        ),
        (
            ActivitySnapshotEvent(message_id="a", activity_type="PLAN", content={}),
            {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN", "content": {}},
        ),
        (
            RunStartedEvent(thread_id="t", run_id="r"),
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        ),
        (
            RunFinishedEvent(thread_id="t", run_id="r"),
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        ),
        (RunErrorEvent(message="boom"), {"type": "RUN_ERROR", "message": "boom"}),
        (
            SubagentFinishedEvent(subagent_run_id="s"),
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s"},
        ),
    ],
    ids=[
        "text-start",
        "text-chunk",
        "tool-start",
        "tool-result",
        "activity-snapshot",
        "run-started",
        "run-finished",
        "run-error",
        "subagent-finished",
    ],
)
def test_optional_fields_left_at_none_are_omitted(
    event: Event, expected: dict[str, JsonValue]
) -> None:
    assert _wire(event) == expected


@pytest.mark.parametrize(
    ("event", "key"),
    [
        (CustomEvent(name="n", value=None), "value"),
        (StateSnapshotEvent(snapshot=None), "snapshot"),
        (RawEvent(event=None), "event"),
    ],
    ids=["custom-value", "state-snapshot", "raw-event"],
)
def test_a_required_null_is_written(event: Event, key: str) -> None:
    written = _wire(event)

    assert key in written
    assert written[key] is None


def test_nulls_inside_data_are_written() -> None:
    event = CustomEvent(
        name="n",
        value={"a": None, "b": [None, {"c": None}]},
        metadata={"trace": None},
        raw_event=[None],
    )

    assert _wire(event) == {
        "type": "CUSTOM",
        "rawEvent": [None],
        "metadata": {"trace": None},
        "name": "n",
        "value": {"a": None, "b": [None, {"c": None}]},
    }


def test_a_null_patch_value_is_written() -> None:
    event = StateDeltaEvent(delta=[ReplaceOperation(path="/owner", value=None)])

    assert _wire(event)["delta"] == [{"op": "replace", "path": "/owner", "value": None}]


def test_a_copy_that_sets_an_optional_field_to_none_omits_it() -> None:
    event = TextMessageStartEvent(message_id="m", role="user", name="Ann")

    copied = event.model_copy(update={"name": None})

    assert _wire(copied) == {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user"}


def test_nested_models_omit_their_own_absent_fields() -> None:
    event = RunStartedEvent(
        thread_id="t",
        run_id="r",
        protocol_version="1.0",
        input=RunAgentInput(
            thread_id="t", run_id="r", messages=[UserMessage(id="u", content=[TextPart(text="hi")])]
        ),
    )

    assert _wire(event) == {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
        "input": {
            "threadId": "t",
            "runId": "r",
            "messages": [{"role": "user", "id": "u", "content": [{"type": "text", "text": "hi"}]}],
        },
    }


def test_a_reasoning_message_start_always_writes_its_role() -> None:
    assert _wire(ReasoningMessageStartEvent(message_id="r")) == {
        "type": "REASONING_MESSAGE_START",
        "messageId": "r",
        "role": "reasoning",
    }


def test_a_run_finished_event_carries_outcome_and_usage() -> None:
    event = RunFinishedEvent(
        thread_id="t",
        run_id="r",
        outcome=RunOutcome.interrupt([Interrupt(id="i", reason="confirmation")]),
        usage=[TokenUsage(provider="openai", input_tokens=3)],
    )

    assert _wire(event) == {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "confirmation"}]},
        "usage": [{"provider": "openai", "inputTokens": 3}],
    }


def test_a_subagent_finished_event_carries_a_suspended_outcome() -> None:
    event = SubagentFinishedEvent(
        subagent_run_id="s", outcome=SubagentSuspendedOutcome(interrupt_ids=["i"])
    )

    assert _wire(event)["outcome"] == {"type": "suspended", "interruptIds": ["i"]}


def test_the_envelope_fields_come_first_in_the_official_order() -> None:
    event = TextMessageContentEvent(
        delta="d", message_id="m", subagent_run_id="s", metadata={}, raw_event=1, timestamp=2
    )

    assert list(_wire(event)) == [
        "type",
        "timestamp",
        "rawEvent",
        "metadata",
        "subagentRunId",
        "messageId",
        "delta",
    ]


# -- refusals ---------------------------------------------------------------------------------


def test_events_are_frozen() -> None:
    event = TextMessageContentEvent(message_id="m", delta="x")

    with pytest.raises(ValidationError, match="Instance is frozen"):
        event.delta = "y"  # type: ignore[misc]


def test_a_misspelt_keyword_is_refused() -> None:
    with pytest.raises(ValidationError, match="mesage_id\n  Extra inputs are not permitted"):
        TextMessageStartEvent(message_id="m", mesage_id="m")  # type: ignore[call-arg]


def test_a_misspelt_wire_key_is_refused_by_model_validate() -> None:
    with pytest.raises(ValidationError, match="messageID\n  Extra inputs are not permitted"):
        TextMessageStartEvent.model_validate({"messageID": "m"})


@pytest.mark.parametrize(
    "kind", ["TEXT_MESSAGE_END", "CUSTOM", "text_message_start"], ids=["other", "custom", "case"]
)
def test_an_event_refuses_another_type(kind: str) -> None:
    with pytest.raises(ValidationError, match="type\n  Input should be 'TEXT_MESSAGE_START'"):
        TextMessageStartEvent.model_validate({"type": kind, "messageId": "m"})


@pytest.mark.parametrize(
    "value",
    [1.5, 1.0, True, "1", 2**53, -(2**53)],
    ids=["fraction", "integral-float", "bool", "string", "too-big", "too-small"],
)
def test_a_timestamp_must_be_a_safe_integer(value: JsonValue) -> None:
    with pytest.raises(ValidationError, match="timestamp"):
        RawEvent.model_validate({"event": 1, "timestamp": value})


def test_metadata_must_be_an_object() -> None:
    with pytest.raises(ValidationError, match="metadata\n  Input should be a valid dictionary"):
        RawEvent.model_validate({"event": 1, "metadata": []})


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "minus-inf"]
)
def test_a_non_finite_number_in_data_is_refused_not_written_as_null(value: float) -> None:
    """JSON has no NaN or Infinity; writing them as `null` would silently change the data."""
    with pytest.raises(ValidationError, match="finite number"):
        CustomEvent(name="n", value=[value])
    with pytest.raises(ValidationError, match="finite number"):
        StateSnapshotEvent(snapshot={"x": value})


def test_a_text_message_cannot_take_the_tool_role() -> None:
    with pytest.raises(ValidationError, match="role\n  Input should be 'developer'"):
        TextMessageStartEvent.model_validate({"messageId": "m", "role": "tool"})


def test_activity_content_must_be_an_object() -> None:
    with pytest.raises(ValidationError, match="content\n  Input should be a valid dictionary"):
        ActivitySnapshotEvent.model_validate({"messageId": "a", "activityType": "P", "content": 1})


def test_subagent_lifecycle_events_require_their_subagent_run_id() -> None:
    for cls in (SubagentStartedEvent, SubagentFinishedEvent, SubagentErrorEvent):
        with pytest.raises(ValidationError, match="subagentRunId\n  Field required"):
            cls.model_validate({"name": "n", "message": "m"})


def test_a_messages_snapshot_reads_each_role_by_its_discriminator() -> None:
    event = MessagesSnapshotEvent.model_validate(
        {"messages": [{"role": "user", "id": "u", "content": "hi"}]}
    )

    assert event.messages == [UserMessage(id="u", content="hi")]


def test_the_base_events_declare_the_envelope() -> None:
    assert set(BaseEvent.model_fields) == {"type", "timestamp", "raw_event", "metadata"}
    assert set(AttributableEvent.model_fields) == set(BaseEvent.model_fields) | {"subagent_run_id"}


@pytest.mark.parametrize("value", ["false", "yes", 0, 1])
def test_an_activity_snapshots_replace_is_a_json_boolean_not_a_truthy_value(
    value: JsonValue,
) -> None:
    text = json.dumps(
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "P", "content": {}}
        | {"replace": value}
    )

    with pytest.raises(ValidationError, match=r"replace\n  Input should be a valid boolean"):
        ActivitySnapshotEvent.model_validate_json(text)


@pytest.mark.parametrize("value", [True, False])
def test_an_activity_snapshots_replace_reads_true_and_false(value: bool) -> None:  # noqa: FBT001
    text = json.dumps(
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "P", "content": {}}
        | {"replace": value}
    )

    assert ActivitySnapshotEvent.model_validate_json(text).replace is value
