"""The 31 AG-UI 1.0 events as frozen pydantic models, `EventType`, and the `Event` union.

Python names are snake_case; the wire names are camelCase, from one alias generator. Each event
omits the optional fields it does not hold (see `agui._protocol.model`), keeps `null` where it
is data, and lists its fields in the order of the official SDK (`type`, `timestamp`, `rawEvent`,
`metadata`, `subagentRunId`, then its own), so frames are byte-identical to it.

The five `THINKING_*` events of AG-UI 0.x were retired in 1.0: agui neither emits nor reads them
(`agui.parse_event` names them in its error). A 1.0 client translates them from old producers;
a stateless parser cannot, because their messages carry no ids.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, JsonValue, StrictBool

from agui._protocol.model import Opt, WireModel
from agui.messages import JsonObject, Message
from agui.types import (
    JsonPatchOperation,
    RunAgentInput,
    RunFinishedOutcome,
    SubagentFinishedOutcome,
    TokenUsage,
    ToolResultContent,
)

__all__ = [
    "ActivityDeltaEvent",
    "ActivitySnapshotEvent",
    "AttributableEvent",
    "BaseEvent",
    "CustomEvent",
    "Event",
    "EventType",
    "MessagesSnapshotEvent",
    "RawEvent",
    "ReasoningEncryptedValueEvent",
    "ReasoningEndEvent",
    "ReasoningMessageChunkEvent",
    "ReasoningMessageContentEvent",
    "ReasoningMessageEndEvent",
    "ReasoningMessageStartEvent",
    "ReasoningStartEvent",
    "RunErrorEvent",
    "RunFinishedEvent",
    "RunStartedEvent",
    "StateDeltaEvent",
    "StateSnapshotEvent",
    "StepFinishedEvent",
    "StepStartedEvent",
    "SubagentErrorEvent",
    "SubagentFinishedEvent",
    "SubagentStartedEvent",
    "TextMessageChunkEvent",
    "TextMessageContentEvent",
    "TextMessageEndEvent",
    "TextMessageStartEvent",
    "ToolCallArgsEvent",
    "ToolCallChunkEvent",
    "ToolCallEndEvent",
    "ToolCallResultEvent",
    "ToolCallStartEvent",
]

TextRole = Literal["developer", "system", "assistant", "user"]
Timestamp = Annotated[int, Field(strict=True, ge=-(2**53 - 1), le=2**53 - 1)]


class EventType(str, Enum):
    """The 31 AG-UI 1.0 event types; each member equals its wire string.

    Examples:
        >>> EventType.RUN_STARTED == "RUN_STARTED"
        True
        >>> len(EventType)
        31
    """

    TEXT_MESSAGE_START = "TEXT_MESSAGE_START"
    TEXT_MESSAGE_CONTENT = "TEXT_MESSAGE_CONTENT"
    TEXT_MESSAGE_END = "TEXT_MESSAGE_END"
    TEXT_MESSAGE_CHUNK = "TEXT_MESSAGE_CHUNK"
    TOOL_CALL_START = "TOOL_CALL_START"
    TOOL_CALL_ARGS = "TOOL_CALL_ARGS"
    TOOL_CALL_END = "TOOL_CALL_END"
    TOOL_CALL_CHUNK = "TOOL_CALL_CHUNK"
    TOOL_CALL_RESULT = "TOOL_CALL_RESULT"
    STATE_SNAPSHOT = "STATE_SNAPSHOT"
    STATE_DELTA = "STATE_DELTA"
    MESSAGES_SNAPSHOT = "MESSAGES_SNAPSHOT"
    ACTIVITY_SNAPSHOT = "ACTIVITY_SNAPSHOT"
    ACTIVITY_DELTA = "ACTIVITY_DELTA"
    RAW = "RAW"
    CUSTOM = "CUSTOM"
    RUN_STARTED = "RUN_STARTED"
    RUN_FINISHED = "RUN_FINISHED"
    RUN_ERROR = "RUN_ERROR"
    STEP_STARTED = "STEP_STARTED"
    STEP_FINISHED = "STEP_FINISHED"
    REASONING_START = "REASONING_START"
    REASONING_MESSAGE_START = "REASONING_MESSAGE_START"
    REASONING_MESSAGE_CONTENT = "REASONING_MESSAGE_CONTENT"
    REASONING_MESSAGE_END = "REASONING_MESSAGE_END"
    REASONING_MESSAGE_CHUNK = "REASONING_MESSAGE_CHUNK"
    REASONING_END = "REASONING_END"
    REASONING_ENCRYPTED_VALUE = "REASONING_ENCRYPTED_VALUE"
    SUBAGENT_STARTED = "SUBAGENT_STARTED"
    SUBAGENT_FINISHED = "SUBAGENT_FINISHED"
    SUBAGENT_ERROR = "SUBAGENT_ERROR"


class BaseEvent(WireModel, frozen=True):
    """The envelope every event shares: `type` and three optional fields.

    `timestamp` is integer milliseconds, `raw_event` the provider's own event (for debugging),
    and `metadata` an object open by key.

    Examples:
        >>> RunErrorEvent(message="boom", timestamp=1700000000000).model_dump_json()
        '{"type":"RUN_ERROR","timestamp":1700000000000,"message":"boom"}'
    """

    type: str
    timestamp: Opt[Timestamp] = None
    raw_event: Opt[JsonValue] = None
    metadata: Opt[JsonObject] = None


class AttributableEvent(BaseEvent, frozen=True):
    """An event a subagent may produce; `subagent_run_id` absent means the parent agent.

    Examples:
        >>> StepStartedEvent(step_name="plan", subagent_run_id="s1").model_dump_json()
        '{"type":"STEP_STARTED","subagentRunId":"s1","stepName":"plan"}'
    """

    subagent_run_id: Opt[str] = None


class _SubagentEvent(BaseEvent, frozen=True):
    """A subagent lifecycle event, identified (not attributed) by its `subagent_run_id`."""

    subagent_run_id: str


class TextMessageStartEvent(AttributableEvent, frozen=True):
    """Opens a text message; `role` absent means assistant.

    Examples:
        >>> TextMessageStartEvent(message_id="m1").type
        'TEXT_MESSAGE_START'
    """

    type: Literal["TEXT_MESSAGE_START"] = "TEXT_MESSAGE_START"
    message_id: str
    role: Opt[TextRole] = None
    name: Opt[str] = None


class TextMessageContentEvent(AttributableEvent, frozen=True):
    """Appends `delta` to an open text message; an empty delta is legal.

    Examples:
        >>> TextMessageContentEvent(message_id="m1", delta="Hi").type
        'TEXT_MESSAGE_CONTENT'
    """

    type: Literal["TEXT_MESSAGE_CONTENT"] = "TEXT_MESSAGE_CONTENT"
    message_id: str
    delta: str


class TextMessageEndEvent(AttributableEvent, frozen=True):
    """Closes a text message.

    Examples:
        >>> TextMessageEndEvent(message_id="m1").type
        'TEXT_MESSAGE_END'
    """

    type: Literal["TEXT_MESSAGE_END"] = "TEXT_MESSAGE_END"
    message_id: str


class TextMessageChunkEvent(AttributableEvent, frozen=True):
    """A self-describing text fragment a client expands to START/CONTENT/END.

    Examples:
        >>> TextMessageChunkEvent(message_id="m1", delta="Hi").type
        'TEXT_MESSAGE_CHUNK'
    """

    type: Literal["TEXT_MESSAGE_CHUNK"] = "TEXT_MESSAGE_CHUNK"
    message_id: Opt[str] = None
    role: Opt[TextRole] = None
    delta: Opt[str] = None
    name: Opt[str] = None


class ToolCallStartEvent(AttributableEvent, frozen=True):
    """Opens a tool call; `parent_message_id` attaches it to an assistant message.

    Examples:
        >>> ToolCallStartEvent(tool_call_id="c1", tool_call_name="get_weather").type
        'TOOL_CALL_START'
    """

    type: Literal["TOOL_CALL_START"] = "TOOL_CALL_START"
    tool_call_id: str
    tool_call_name: str
    parent_message_id: Opt[str] = None


class ToolCallArgsEvent(AttributableEvent, frozen=True):
    """A fragment of a tool call's argument text.

    Examples:
        >>> ToolCallArgsEvent(tool_call_id="c1", delta='{"city":').type
        'TOOL_CALL_ARGS'
    """

    type: Literal["TOOL_CALL_ARGS"] = "TOOL_CALL_ARGS"
    tool_call_id: str
    delta: str


class ToolCallEndEvent(AttributableEvent, frozen=True):
    """The tool call's arguments are complete.

    Examples:
        >>> ToolCallEndEvent(tool_call_id="c1").type
        'TOOL_CALL_END'
    """

    type: Literal["TOOL_CALL_END"] = "TOOL_CALL_END"
    tool_call_id: str


class ToolCallChunkEvent(AttributableEvent, frozen=True):
    """A self-describing tool-call fragment a client expands to START/ARGS/END.

    Examples:
        >>> ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f", delta="{}").type
        'TOOL_CALL_CHUNK'
    """

    type: Literal["TOOL_CALL_CHUNK"] = "TOOL_CALL_CHUNK"
    tool_call_id: Opt[str] = None
    tool_call_name: Opt[str] = None
    parent_message_id: Opt[str] = None
    delta: Opt[str] = None


class ToolCallResultEvent(AttributableEvent, frozen=True):
    """The result of a tool call, as a new tool message with its own `message_id`.

    Examples:
        >>> ToolCallResultEvent(message_id="m2", tool_call_id="c1", content="21C").type
        'TOOL_CALL_RESULT'
    """

    type: Literal["TOOL_CALL_RESULT"] = "TOOL_CALL_RESULT"
    message_id: str
    tool_call_id: str
    content: ToolResultContent
    role: Opt[Literal["tool"]] = None


class StateSnapshotEvent(AttributableEvent, frozen=True):
    """Replaces the client's whole state; `null` is a legal state.

    Examples:
        >>> StateSnapshotEvent(snapshot=None).type
        'STATE_SNAPSHOT'
    """

    type: Literal["STATE_SNAPSHOT"] = "STATE_SNAPSHOT"
    snapshot: JsonValue


class StateDeltaEvent(AttributableEvent, frozen=True):
    """A JSON Patch (RFC 6902) against the state the client holds.

    Examples:
        >>> StateDeltaEvent(delta=[{"op": "add", "path": "/n", "value": 1}]).type
        'STATE_DELTA'
    """

    type: Literal["STATE_DELTA"] = "STATE_DELTA"
    delta: list[JsonPatchOperation]


class MessagesSnapshotEvent(BaseEvent, frozen=True):
    """The complete, ordered set of messages the producer owns.

    Examples:
        >>> MessagesSnapshotEvent(messages=[]).type
        'MESSAGES_SNAPSHOT'
    """

    type: Literal["MESSAGES_SNAPSHOT"] = "MESSAGES_SNAPSHOT"
    messages: list[Message]


class ActivitySnapshotEvent(AttributableEvent, frozen=True):
    """Creates or replaces an activity message; `replace` absent means true.

    `replace` is a JSON boolean only: `"false"` or `0` is refused rather than read as true or
    false, as the official client's schema refuses it.

    Examples:
        >>> ActivitySnapshotEvent(message_id="p1", activity_type="PLAN", content={}).type
        'ACTIVITY_SNAPSHOT'
    """

    type: Literal["ACTIVITY_SNAPSHOT"] = "ACTIVITY_SNAPSHOT"
    message_id: str
    activity_type: str
    content: JsonObject
    replace: Opt[StrictBool] = None


class ActivityDeltaEvent(AttributableEvent, frozen=True):
    """A JSON Patch against an activity message's content.

    Examples:
        >>> ActivityDeltaEvent(message_id="p1", activity_type="PLAN", patch=[]).type
        'ACTIVITY_DELTA'
    """

    type: Literal["ACTIVITY_DELTA"] = "ACTIVITY_DELTA"
    message_id: str
    activity_type: str
    patch: list[JsonPatchOperation]


class RawEvent(AttributableEvent, frozen=True):
    """A provider-native event passed through verbatim; consumers must not act on it.

    Examples:
        >>> RawEvent(event={"id": 1}, source="openai").type
        'RAW'
    """

    type: Literal["RAW"] = "RAW"
    event: JsonValue
    source: Opt[str] = None


class CustomEvent(AttributableEvent, frozen=True):
    """An application-defined event; `value` is required and may be `null`.

    Examples:
        >>> CustomEvent(name="ping", value=None).type
        'CUSTOM'
    """

    type: Literal["CUSTOM"] = "CUSTOM"
    name: str
    value: JsonValue


class RunStartedEvent(BaseEvent, frozen=True):
    """Opens a run; agui always declares `protocol_version` "1.0".

    Examples:
        >>> RunStartedEvent(thread_id="t", run_id="r", protocol_version="1.0").type
        'RUN_STARTED'
    """

    type: Literal["RUN_STARTED"] = "RUN_STARTED"
    thread_id: str
    run_id: str
    protocol_version: Opt[str] = None
    parent_run_id: Opt[str] = None
    input: Opt[RunAgentInput] = None


class RunFinishedEvent(BaseEvent, frozen=True):
    """Ends a run; `outcome` absent means success.

    Examples:
        >>> RunFinishedEvent(thread_id="t", run_id="r").type
        'RUN_FINISHED'
    """

    type: Literal["RUN_FINISHED"] = "RUN_FINISHED"
    thread_id: str
    run_id: str
    result: Opt[JsonValue] = None
    outcome: Opt[RunFinishedOutcome] = None
    usage: Opt[list[TokenUsage]] = None


class RunErrorEvent(BaseEvent, frozen=True):
    """Ends a run with an error; nothing but a new RUN_STARTED may follow.

    Examples:
        >>> RunErrorEvent(message="boom", code="AGENT_ERROR").type
        'RUN_ERROR'
    """

    type: Literal["RUN_ERROR"] = "RUN_ERROR"
    message: str
    code: Opt[str] = None
    usage: Opt[list[TokenUsage]] = None


class StepStartedEvent(AttributableEvent, frozen=True):
    """Opens a named step.

    Examples:
        >>> StepStartedEvent(step_name="plan").type
        'STEP_STARTED'
    """

    type: Literal["STEP_STARTED"] = "STEP_STARTED"
    step_name: str


class StepFinishedEvent(AttributableEvent, frozen=True):
    """Closes the step of the same name.

    Examples:
        >>> StepFinishedEvent(step_name="plan").type
        'STEP_FINISHED'
    """

    type: Literal["STEP_FINISHED"] = "STEP_FINISHED"
    step_name: str


class ReasoningStartEvent(AttributableEvent, frozen=True):
    """Opens a reasoning span.

    Examples:
        >>> ReasoningStartEvent(message_id="r-msg-1").type
        'REASONING_START'
    """

    type: Literal["REASONING_START"] = "REASONING_START"
    message_id: str


class ReasoningMessageStartEvent(AttributableEvent, frozen=True):
    """Opens a reasoning message inside a span; `role` is always "reasoning".

    Examples:
        >>> ReasoningMessageStartEvent(message_id="r-msg-1").type
        'REASONING_MESSAGE_START'
    """

    type: Literal["REASONING_MESSAGE_START"] = "REASONING_MESSAGE_START"
    message_id: str
    role: Literal["reasoning"] = "reasoning"


class ReasoningMessageContentEvent(AttributableEvent, frozen=True):
    """Appends to an open reasoning message.

    Examples:
        >>> ReasoningMessageContentEvent(message_id="r-msg-1", delta="Hmm").type
        'REASONING_MESSAGE_CONTENT'
    """

    type: Literal["REASONING_MESSAGE_CONTENT"] = "REASONING_MESSAGE_CONTENT"
    message_id: str
    delta: str


class ReasoningMessageEndEvent(AttributableEvent, frozen=True):
    """Closes a reasoning message.

    Examples:
        >>> ReasoningMessageEndEvent(message_id="r-msg-1").type
        'REASONING_MESSAGE_END'
    """

    type: Literal["REASONING_MESSAGE_END"] = "REASONING_MESSAGE_END"
    message_id: str


class ReasoningMessageChunkEvent(AttributableEvent, frozen=True):
    """A self-describing reasoning fragment a client expands.

    Examples:
        >>> ReasoningMessageChunkEvent(message_id="r-msg-1", delta="Hmm").type
        'REASONING_MESSAGE_CHUNK'
    """

    type: Literal["REASONING_MESSAGE_CHUNK"] = "REASONING_MESSAGE_CHUNK"
    message_id: Opt[str] = None
    delta: Opt[str] = None


class ReasoningEndEvent(AttributableEvent, frozen=True):
    """Closes a reasoning span.

    Examples:
        >>> ReasoningEndEvent(message_id="r-msg-1").type
        'REASONING_END'
    """

    type: Literal["REASONING_END"] = "REASONING_END"
    message_id: str


class ReasoningEncryptedValueEvent(AttributableEvent, frozen=True):
    """An opaque value the client stores on a tool call or message and sends back later.

    Examples:
        >>> event = ReasoningEncryptedValueEvent(
        ...     subtype="message", entity_id="m1", encrypted_value="x"
        ... )
        >>> event.type
        'REASONING_ENCRYPTED_VALUE'
    """

    type: Literal["REASONING_ENCRYPTED_VALUE"] = "REASONING_ENCRYPTED_VALUE"
    subtype: Literal["tool-call", "message"]
    entity_id: str
    encrypted_value: str


class SubagentStartedEvent(_SubagentEvent, frozen=True):
    """Announces a subagent invocation, identified by `subagent_run_id`.

    Examples:
        >>> SubagentStartedEvent(subagent_run_id="s1", name="researcher").type
        'SUBAGENT_STARTED'
    """

    type: Literal["SUBAGENT_STARTED"] = "SUBAGENT_STARTED"
    name: str
    description: Opt[str] = None
    parent_subagent_run_id: Opt[str] = None
    parent_tool_call_id: Opt[str] = None
    parent_message_id: Opt[str] = None


class SubagentFinishedEvent(_SubagentEvent, frozen=True):
    """Ends a subagent invocation; `outcome` absent means success.

    Examples:
        >>> SubagentFinishedEvent(subagent_run_id="s1").type
        'SUBAGENT_FINISHED'
    """

    type: Literal["SUBAGENT_FINISHED"] = "SUBAGENT_FINISHED"
    result: Opt[JsonValue] = None
    outcome: Opt[SubagentFinishedOutcome] = None


class SubagentErrorEvent(_SubagentEvent, frozen=True):
    """Ends a subagent invocation with an error (not the run).

    Examples:
        >>> SubagentErrorEvent(subagent_run_id="s1", message="failed").type
        'SUBAGENT_ERROR'
    """

    type: Literal["SUBAGENT_ERROR"] = "SUBAGENT_ERROR"
    message: str
    code: Opt[str] = None


Event = Annotated[
    TextMessageStartEvent
    | TextMessageContentEvent
    | TextMessageEndEvent
    | TextMessageChunkEvent
    | ToolCallStartEvent
    | ToolCallArgsEvent
    | ToolCallEndEvent
    | ToolCallChunkEvent
    | ToolCallResultEvent
    | StateSnapshotEvent
    | StateDeltaEvent
    | MessagesSnapshotEvent
    | ActivitySnapshotEvent
    | ActivityDeltaEvent
    | RawEvent
    | CustomEvent
    | RunStartedEvent
    | RunFinishedEvent
    | RunErrorEvent
    | StepStartedEvent
    | StepFinishedEvent
    | ReasoningStartEvent
    | ReasoningMessageStartEvent
    | ReasoningMessageContentEvent
    | ReasoningMessageEndEvent
    | ReasoningMessageChunkEvent
    | ReasoningEndEvent
    | ReasoningEncryptedValueEvent
    | SubagentStartedEvent
    | SubagentFinishedEvent
    | SubagentErrorEvent,
    Field(discriminator="type"),
]
"""Any of the 31 AG-UI 1.0 events, discriminated by `type`; `match` on it with `assert_never`."""
