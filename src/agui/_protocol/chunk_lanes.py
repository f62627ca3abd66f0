"""The chunk expansion: what a `*_CHUNK` event stands for, as a 1.0 client expands it.

The official client never applies a `*_CHUNK` event: it first rewrites each into START,
CONTENT (or ARGS) and END events (`transformChunks`) and applies those, and its verifier checks
the expansion, not the chunk. An id-less chunk continues the stream open in its lane, so what a
chunk means depends on what came before it. This module is the one place that decides it, for
the two readers that must agree with the client: the verifier (`agui.verify`) checks the
expansion against its books and refuses what the client refuses; the fold (`agui.fold`) applies
it and leaves out, with the reason, what the client would refuse.

Each lane (the parent agent, or one subagent) holds at most one open chunk stream. A chunk with
an id continues the stream that has that id open, in whichever lane (a `subagentRunId` it
carries must agree); an id-less chunk continues a stream of its kind in its lane: a tagged one
its subagent's, an untagged one the parent agent's, or else the one lane that has such a stream
open (two make it ambiguous). A continuation may repeat the fields its opener established (a
message's role, default `assistant`, and name; a call's name and parent message) but not change
them. Any other chunk opens a stream: it first closes its lane's open stream with the END a
client would synthesize. A first chunk carries its id, and a tool call's first chunk its name,
since there is nothing to continue. Other events close streams too (`closed_lanes`): `RUN_*`
and `MESSAGES_SNAPSHOT` every lane, a subagent's end its lane, and an explicit event its own
lane, except the few that pass through (`RAW`, activity events, encrypted values,
`SUBAGENT_STARTED`).

`place` decides, and changes nothing: it reads the open streams and says where a chunk lands
(`Placement`) or why the client refuses it (a `Refusal`); each reader keeps its own lanes and
words a refusal its own way. `ChunkLanes` is the expansion into events, for the fold.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from typing_extensions import assert_never

from agui.events import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
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

__all__ = [
    "FIELDS",
    "TEXT",
    "THOUGHT",
    "TOOL",
    "Ambiguous",
    "Chunk",
    "ChunkLanes",
    "Conflict",
    "Misattributed",
    "MissingId",
    "MissingName",
    "Placement",
    "Refusal",
    "Stream",
    "closed_lanes",
    "end_of",
    "place",
]

TEXT, TOOL, THOUGHT = range(3)
"""The kinds of chunk stream: a text message, a tool call, a reasoning message."""

FIELDS: tuple[tuple[str, ...], ...] = (("role", "name"), ("toolCallName", "parentMessageId"), ())
"""What a chunk of each kind says of its stream beyond its id, by wire name."""

Chunk = TextMessageChunkEvent | ToolCallChunkEvent | ReasoningMessageChunkEvent


@dataclasses.dataclass(frozen=True, slots=True)
class Stream:
    """An open chunk stream: its kind, its id, and what its first chunk set (by `FIELDS`)."""

    kind: int
    entity_id: str
    established: tuple[str | None, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Placement:
    """Where a chunk lands: in `lane`, continuing `stream`, or opening it after `closing`."""

    lane: str | None
    stream: Stream
    opens: bool
    closing: Stream | None
    """When the chunk opens its stream: the lane's other stream, which it closes first."""
    content: bool
    """Whether the chunk also stands for a CONTENT (or ARGS) event: it carries a delta."""


@dataclasses.dataclass(frozen=True, slots=True)
class Misattributed:
    """A chunk whose `subagentRunId` is not the lane its id is open in."""

    kind: int
    entity_id: str
    tag: str
    lane: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class Ambiguous:
    """An id-less, untagged chunk that more than one lane's open stream could continue."""

    kind: int
    lanes: int


@dataclasses.dataclass(frozen=True, slots=True)
class MissingId:
    """A chunk with nothing to continue, and no id to open a stream with."""

    kind: int


@dataclasses.dataclass(frozen=True, slots=True)
class MissingName:
    """A tool call's first chunk, without the call's name."""


@dataclasses.dataclass(frozen=True, slots=True)
class Conflict:
    """A continuation that changes a field its stream's first chunk set."""

    stream: Stream
    field: str
    value: str


Refusal = Misattributed | Ambiguous | MissingId | MissingName | Conflict
"""Why the client refuses a chunk; the chunk changes nothing."""


def read(chunk: Chunk) -> tuple[int, str | None, tuple[str | None, ...]]:
    """A chunk's kind, its id, and what it says of its stream (by `FIELDS`)."""
    match chunk:
        case TextMessageChunkEvent():
            return TEXT, chunk.message_id, (chunk.role, chunk.name)
        case ToolCallChunkEvent():
            return TOOL, chunk.tool_call_id, (chunk.tool_call_name, chunk.parent_message_id)
        case ReasoningMessageChunkEvent():
            return THOUGHT, chunk.message_id, ()
        case _:
            assert_never(chunk)


def place(lanes: Mapping[str | None, Stream], chunk: Chunk) -> Placement | Refusal:
    """Where `chunk` lands among the open streams `lanes`, or why the client refuses it.

    Examples:
        >>> opened = place({}, TextMessageChunkEvent(message_id="m1", delta="Hi"))
        >>> opened.opens, opened.stream
        (True, Stream(kind=0, entity_id='m1', established=('assistant', None)))
        >>> place({None: opened.stream}, TextMessageChunkEvent(delta="!")).opens
        False
        >>> place({None: opened.stream}, TextMessageChunkEvent(role="user"))
        Conflict(stream=Stream(...), field='role', value='user')
    """
    kind, entity_id, incoming = read(chunk)
    lane = _lane(lanes, kind, entity_id, chunk.subagent_run_id)
    if isinstance(lane, Misattributed | Ambiguous):
        return lane
    stream = lanes.get(lane)
    content = chunk.delta is not None or chunk.raw_event is not None or chunk.metadata is not None
    if (
        stream is None
        or stream.kind != kind
        or (entity_id is not None and entity_id != stream.entity_id)
    ):
        if entity_id is None:
            return MissingId(kind)
        if kind == TOOL and incoming[0] is None:
            return MissingName()
        if kind == TEXT and incoming[0] is None:
            incoming = ("assistant", incoming[1])  # the opener establishes the default role
        opened = Stream(kind, entity_id, incoming)
        return Placement(lane, opened, opens=True, closing=stream, content=content)
    for field, was, value in zip(FIELDS[kind], stream.established, incoming, strict=True):
        if value is not None and value != was:
            return Conflict(stream, field, value)
    return Placement(lane, stream, opens=False, closing=None, content=content)


def _lane(
    lanes: Mapping[str | None, Stream], kind: int, entity_id: str | None, tag: str | None
) -> str | Misattributed | Ambiguous | None:
    if entity_id is not None:
        # An id continues wherever it is open, whoever sends it; a tag must agree.
        for lane, stream in lanes.items():
            if stream.kind == kind and stream.entity_id == entity_id:
                if tag is not None and tag != lane:
                    return Misattributed(kind, entity_id, tag, lane)
                return lane
        return tag
    parent = lanes.get(None)
    if tag is not None or (parent is not None and parent.kind == kind):
        return tag
    holding = [lane for lane, stream in lanes.items() if stream.kind == kind]
    if len(holding) > 1:
        return Ambiguous(kind, len(holding))
    return holding[0] if holding else None


def closed_lanes(event: Event, lanes: Mapping[str | None, Stream]) -> list[str | None]:
    """The lanes of `lanes` whose stream a client closes before it applies `event`.

    A chunk closes (or continues) a stream by `place`, so here it closes none.

    Examples:
        >>> lanes = {None: Stream(TEXT, "m1", ("assistant", None)), "s1": Stream(TOOL, "c1", ())}
        >>> closed_lanes(StepStartedEvent(step_name="plan"), lanes)
        [None]
        >>> closed_lanes(RunErrorEvent(message="boom"), lanes)
        [None, 's1']
        >>> closed_lanes(RawEvent(event={}), lanes)
        []
    """
    match event:
        case (
            RawEvent()
            | ActivitySnapshotEvent()
            | ActivityDeltaEvent()
            | ReasoningEncryptedValueEvent()
            | SubagentStartedEvent()
            | TextMessageChunkEvent()
            | ToolCallChunkEvent()
            | ReasoningMessageChunkEvent()
        ):
            return []
        case RunStartedEvent() | RunFinishedEvent() | RunErrorEvent() | MessagesSnapshotEvent():
            return list(lanes)
        case (
            TextMessageStartEvent()
            | TextMessageContentEvent()
            | TextMessageEndEvent()
            | ToolCallStartEvent()
            | ToolCallArgsEvent()
            | ToolCallEndEvent()
            | ToolCallResultEvent()
            | StateSnapshotEvent()
            | StateDeltaEvent()
            | CustomEvent()
            | StepStartedEvent()
            | StepFinishedEvent()
            | ReasoningStartEvent()
            | ReasoningMessageStartEvent()
            | ReasoningMessageContentEvent()
            | ReasoningMessageEndEvent()
            | ReasoningEndEvent()
            | SubagentFinishedEvent()
            | SubagentErrorEvent()
        ):
            lane = event.subagent_run_id
            return [lane] if lane in lanes else []
        case _:
            assert_never(event)


class ChunkLanes:
    """The open chunk stream of each lane, and what each event of a stream expands to.

    Examples:
        >>> lanes = ChunkLanes()
        >>> [e.type for e in lanes.expand(TextMessageChunkEvent(message_id="m1", delta="Hi"))[0]]
        ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT']
        >>> [(e.type, e.delta) for e in lanes.expand(TextMessageChunkEvent(delta=" there"))[0]]
        [('TEXT_MESSAGE_CONTENT', ' there')]
        >>> lanes.expand(ToolCallChunkEvent(tool_call_id="c1", delta="{}"))
        ([], 'the first TOOL_CALL_CHUNK of a call carries its toolCallName; this one does not')
    """

    def __init__(self) -> None:
        self._lanes: dict[str | None, Stream] = {}

    def expand(self, event: Event) -> tuple[list[Event], str | None]:
        """The events `event` stands for, in order; for a chunk it drops, why (else `None`)."""
        if isinstance(event, Chunk):
            return self._chunk(event)
        if not self._lanes:  # no stream open: nothing to close, the common case
            return [event], None
        ends = [_end(self._lanes.pop(lane), lane) for lane in closed_lanes(event, self._lanes)]
        return [*ends, event], None

    def _chunk(self, chunk: Chunk) -> tuple[list[Event], str | None]:
        placed = place(self._lanes, chunk)
        if not isinstance(placed, Placement):
            return [], _reason(placed, chunk)
        lane, stream = placed.lane, placed.stream
        expanded: list[Event] = []
        if placed.opens:
            if placed.closing is not None:
                expanded.append(_end(self._lanes.pop(lane), lane))
            self._lanes[lane] = stream
            expanded.append(_start(chunk, stream, lane))
        if placed.content:
            expanded.append(_content(chunk, stream.entity_id, lane))
        return expanded, None


def _reason(refusal: Refusal, chunk: Chunk) -> str:
    """Why the fold leaves `chunk` out, as one line of its warnings."""
    match refusal:
        case Misattributed(entity_id=entity_id, tag=tag, lane=lane):
            owner = "the parent agent" if lane is None else repr(lane)
            return (
                f"this {chunk.type} names subagent '{tag}', but '{entity_id}' is open for {owner}"
            )
        case Ambiguous(lanes=count):
            return (
                f"this {chunk.type} carries neither an id nor a subagentRunId, and "
                f"{count} lanes have one open; attribute it to its subagent"
            )
        case MissingId(kind=kind):
            field = "toolCallId" if kind == TOOL else "messageId"
            return f"no stream is open for this {chunk.type} to continue, and it carries no {field}"
        case MissingName():
            return "the first TOOL_CALL_CHUNK of a call carries its toolCallName; this one does not"
        case Conflict(stream=stream, field=field, value=value):
            was = stream.established[FIELDS[stream.kind].index(field)]
            shown = "(absent)" if was is None else f"'{was}'"
            return (
                f"this {chunk.type} sets {field} '{value}', but its stream '{stream.entity_id}' "
                f"opened with {shown}"
            )
        case _:
            assert_never(refusal)


def _start(chunk: Chunk, stream: Stream, lane: str | None) -> Event:
    meta, entity_id = chunk.metadata, stream.entity_id
    match chunk:
        case TextMessageChunkEvent():
            return TextMessageStartEvent(
                message_id=entity_id,
                role=chunk.role or "assistant",
                name=chunk.name,
                subagent_run_id=lane,
                metadata=meta,
            )
        case ToolCallChunkEvent():
            return ToolCallStartEvent(
                tool_call_id=entity_id,
                tool_call_name=str(chunk.tool_call_name),
                parent_message_id=chunk.parent_message_id,
                subagent_run_id=lane,
                metadata=meta,
            )
        case ReasoningMessageChunkEvent():
            return ReasoningMessageStartEvent(
                message_id=entity_id, subagent_run_id=lane, metadata=meta
            )
        case _:
            assert_never(chunk)


def _content(chunk: Chunk, entity_id: str, lane: str | None) -> Event:
    delta, meta = chunk.delta or "", chunk.metadata
    match chunk:
        case TextMessageChunkEvent():
            return TextMessageContentEvent(
                message_id=entity_id, delta=delta, subagent_run_id=lane, metadata=meta
            )
        case ToolCallChunkEvent():
            return ToolCallArgsEvent(
                tool_call_id=entity_id, delta=delta, subagent_run_id=lane, metadata=meta
            )
        case ReasoningMessageChunkEvent():
            return ReasoningMessageContentEvent(
                message_id=entity_id, delta=delta, subagent_run_id=lane, metadata=meta
            )
        case _:
            assert_never(chunk)


def end_of(kind: int, entity_id: str, lane: str | None) -> Event:
    """The END that closes the item `entity_id` of a chunk stream's `kind`, in `lane`.

    Examples:
        >>> end_of(TOOL, "c1", "s1").model_dump_json()
        '{"type":"TOOL_CALL_END","subagentRunId":"s1","toolCallId":"c1"}'
    """
    if kind == TEXT:
        return TextMessageEndEvent(message_id=entity_id, subagent_run_id=lane)
    if kind == TOOL:
        return ToolCallEndEvent(tool_call_id=entity_id, subagent_run_id=lane)
    return ReasoningMessageEndEvent(message_id=entity_id, subagent_run_id=lane)


def _end(stream: Stream, lane: str | None) -> Event:
    return end_of(stream.kind, stream.entity_id, lane)
