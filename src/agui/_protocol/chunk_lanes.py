"""Chunk events expanded into the explicit events they stand for, as a 1.0 client expands them.

The official client never applies a `*_CHUNK` event: it first rewrites each into START,
CONTENT (or ARGS) and END events (`transformChunks`), and applies those. An id-less chunk
continues the stream open in its lane, so what it means depends on what came before it; the
fold has to expand the same way, or it would lose every continuation. The verifier checks the
expansion (`agui.verify`); this module only performs it, for a reader that tolerates what the
verifier refuses: a chunk that cannot be placed is dropped, with the reason.

Each lane (the parent agent, or one subagent) holds at most one open chunk stream. A chunk with
an id continues the stream of that id wherever it is open, or opens one in its lane (closing
the lane's other stream first); an id-less chunk continues its lane's stream of its kind: a
tagged one its subagent's, an untagged one the parent's, else the only one open. Other events
close streams with a synthetic END first, as the client does: `RUN_*` and `MESSAGES_SNAPSHOT`
close every lane, a subagent's end its lane, and an explicit event its own lane, except the
few that pass through (`RAW`, activity events, encrypted values, `SUBAGENT_STARTED`).
"""

from __future__ import annotations

import dataclasses

from agui.events import (
    AttributableEvent,
    Event,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

__all__ = ["ChunkLanes"]

_Chunk = TextMessageChunkEvent | ToolCallChunkEvent | ReasoningMessageChunkEvent

_PASSING = frozenset(
    ("RAW", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_STARTED")
)
_CLOSING_ALL = frozenset(("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"))


@dataclasses.dataclass(frozen=True)
class _Stream:
    kind: type[_Chunk]
    entity_id: str
    established: tuple[tuple[str, str | None], ...]
    """The fields its first chunk set (a text's role and name, a call's name and parent)."""


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
        self._lanes: dict[str | None, _Stream] = {}

    def expand(self, event: Event) -> tuple[list[Event], str | None]:
        """The events `event` stands for, in order; for a chunk it drops, why (else `None`)."""
        if isinstance(event, _Chunk):
            return self._chunk(event)
        kind = event.type
        if kind in _PASSING:
            return [event], None
        if kind in _CLOSING_ALL:
            ends = [_end(stream, lane) for lane, stream in self._lanes.items()]
            self._lanes.clear()
            return [*ends, event], None
        if isinstance(event, SubagentFinishedEvent | SubagentErrorEvent):
            return [*self._close(event.subagent_run_id), event], None
        lane = event.subagent_run_id if isinstance(event, AttributableEvent) else None
        return [*self._close(lane), event], None

    def _close(self, lane: str | None) -> list[Event]:
        stream = self._lanes.pop(lane, None)
        return [] if stream is None else [_end(stream, lane)]

    def _chunk(self, chunk: _Chunk) -> tuple[list[Event], str | None]:
        entity_id = _entity(chunk)
        lane = self._lane(chunk, entity_id)
        if isinstance(lane, _Refused):
            return [], lane.reason
        stream = self._lanes.get(lane)
        expanded: list[Event] = []
        if (
            stream is None
            or stream.kind is not type(chunk)
            or (entity_id is not None and entity_id != stream.entity_id)
        ):
            problem = _unopenable(chunk, entity_id)
            if problem is not None:
                return [], problem
            expanded += self._close(lane)
            stream = self._lanes[lane] = _Stream(type(chunk), str(entity_id), _fields(chunk))
            expanded.append(_start(chunk, stream.entity_id, lane))
        else:
            conflict = _conflict(stream, chunk)
            if conflict is not None:
                return [], conflict
        if chunk.delta is not None or chunk.raw_event is not None or chunk.metadata is not None:
            expanded.append(_content(chunk, stream.entity_id, lane))
        return expanded, None

    def _lane(self, chunk: _Chunk, entity_id: str | None) -> str | _Refused | None:
        kind, tag = type(chunk), chunk.subagent_run_id
        if entity_id is not None:
            for lane, stream in self._lanes.items():
                if stream.kind is kind and stream.entity_id == entity_id:
                    if tag is not None and tag != lane:
                        return _Refused(
                            f"this {chunk.type} names subagent '{tag}', but '{entity_id}' is "
                            f"open for {'the parent agent' if lane is None else repr(lane)}"
                        )
                    return lane
            return tag
        parent = self._lanes.get(None)
        if tag is not None or (parent is not None and parent.kind is kind):
            return tag
        lanes = [lane for lane, stream in self._lanes.items() if stream.kind is kind]
        if len(lanes) > 1:
            return _Refused(
                f"this {chunk.type} carries neither an id nor a subagentRunId, and "
                f"{len(lanes)} lanes have one open; attribute it to its subagent"
            )
        return lanes[0] if lanes else None


@dataclasses.dataclass(frozen=True)
class _Refused:
    """A chunk the client would refuse to place, and why."""

    reason: str


def _fields(chunk: _Chunk) -> tuple[tuple[str, str | None], ...]:
    """What a chunk says of its stream beyond its id, by wire name, as the client compares it."""
    if isinstance(chunk, TextMessageChunkEvent):
        return (("role", chunk.role), ("name", chunk.name))
    if isinstance(chunk, ToolCallChunkEvent):
        return (
            ("toolCallName", chunk.tool_call_name),
            ("parentMessageId", chunk.parent_message_id),
        )
    return ()


def _conflict(stream: _Stream, chunk: _Chunk) -> str | None:
    """Why a continuation the client refuses is dropped: a field unlike its stream's first."""
    for (field, was), (_, value) in zip(stream.established, _fields(chunk), strict=True):
        if value is not None and value != was:
            shown = "(absent)" if was is None else f"'{was}'"
            return (
                f"this {chunk.type} sets {field} '{value}', but its stream '{stream.entity_id}' "
                f"opened with {shown}"
            )
    return None


def _entity(chunk: _Chunk) -> str | None:
    return chunk.tool_call_id if isinstance(chunk, ToolCallChunkEvent) else chunk.message_id


def _unopenable(chunk: _Chunk, entity_id: str | None) -> str | None:
    """Why `chunk` cannot open a stream, as the client refuses it; `None` when it can."""
    if entity_id is None:
        field = "toolCallId" if isinstance(chunk, ToolCallChunkEvent) else "messageId"
        return f"no stream is open for this {chunk.type} to continue, and it carries no {field}"
    if isinstance(chunk, ToolCallChunkEvent) and chunk.tool_call_name is None:
        return "the first TOOL_CALL_CHUNK of a call carries its toolCallName; this one does not"
    return None


def _start(chunk: _Chunk, entity_id: str, lane: str | None) -> Event:
    meta = chunk.metadata
    if isinstance(chunk, TextMessageChunkEvent):
        role = chunk.role or "assistant"
        return TextMessageStartEvent(
            message_id=entity_id, role=role, name=chunk.name, subagent_run_id=lane, metadata=meta
        )
    if isinstance(chunk, ToolCallChunkEvent):
        return ToolCallStartEvent(
            tool_call_id=entity_id,
            tool_call_name=str(chunk.tool_call_name),
            parent_message_id=chunk.parent_message_id,
            subagent_run_id=lane,
            metadata=meta,
        )
    return ReasoningMessageStartEvent(message_id=entity_id, subagent_run_id=lane, metadata=meta)


def _content(chunk: _Chunk, entity_id: str, lane: str | None) -> Event:
    delta, meta = chunk.delta or "", chunk.metadata
    if isinstance(chunk, TextMessageChunkEvent):
        return TextMessageContentEvent(
            message_id=entity_id, delta=delta, subagent_run_id=lane, metadata=meta
        )
    if isinstance(chunk, ToolCallChunkEvent):
        return ToolCallArgsEvent(
            tool_call_id=entity_id, delta=delta, subagent_run_id=lane, metadata=meta
        )
    return ReasoningMessageContentEvent(
        message_id=entity_id, delta=delta, subagent_run_id=lane, metadata=meta
    )


def _end(stream: _Stream, lane: str | None) -> Event:
    if stream.kind is TextMessageChunkEvent:
        return TextMessageEndEvent(message_id=stream.entity_id, subagent_run_id=lane)
    if stream.kind is ToolCallChunkEvent:
        return ToolCallEndEvent(tool_call_id=stream.entity_id, subagent_run_id=lane)
    return ReasoningMessageEndEvent(message_id=stream.entity_id, subagent_run_id=lane)
