"""The verifier's ledger of bracketed entities, and the chunk lanes that open and close them.

Text messages, tool calls, reasoning messages and reasoning spans are opened, continued and
closed by id; each id's first opener owns it for the rest of the run, and a continuation tagged
with another `subagentRunId` is refused. Chunk events are expanded as the official 1.0 client
expands them: one open chunk stream per lane (the parent agent, or one subagent), continued by
chunks that omit the id, closed by a chunk with another id, by an explicit event of the lane,
by the subagent's terminal event, by `MESSAGES_SNAPSHOT` and by the run's boundaries. The START,
CONTENT and END a client would synthesize are checked like explicit ones, in the same order.

This module names rules by their values ("chunk-conflict"): `agui.verify` owns the `Rule` enum
and turns them into members, which keeps the imports one-way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from agui.errors import ProtocolViolation
from agui.messages import AssistantMessage, Message

if TYPE_CHECKING:
    from agui import events as ev

TEXT, TOOL, THOUGHT, SPAN = range(4)
_PARENT = "(the parent agent)"
# The rules this module checks besides each kind's own, by value (`agui.verify.Rule` names them).
MISMATCH, CONFLICT, AMBIGUOUS = "subagent-attribution-mismatch", "chunk-conflict", "chunk-ambiguous"
MISSING_ID, MISSING_NAME = "chunk-missing-id", "chunk-missing-name"
RESULT_BEFORE_END, RESULT_UNKNOWN = "tool-result-before-end", "tool-result-unknown-call"


class Kind(NamedTuple):
    """A kind of bracketed entity: its events, its rules, and (for chunks) its agreed fields."""

    label: str
    owner_label: str
    start: str
    content: str
    end: str
    already: str
    not_open: str
    chunk: str
    id_field: str
    chunk_fields: tuple[str, ...]


KINDS = (
    Kind("text message", "message", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
         "TEXT_MESSAGE_END", "message-already-open", "message-not-open", "TEXT_MESSAGE_CHUNK",
         "messageId", ("role", "name")),
    Kind("tool call", "tool call", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
         "tool-call-already-open", "tool-call-not-open", "TOOL_CALL_CHUNK", "toolCallId",
         ("toolCallName", "parentMessageId")),
    Kind("reasoning message", "reasoning message", "REASONING_MESSAGE_START",
         "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "reasoning-message-already-open",
         "reasoning-message-not-open", "REASONING_MESSAGE_CHUNK", "messageId", ()),
    Kind("reasoning span", "reasoning message", "REASONING_START", "", "REASONING_END",
         "reasoning-already-open", "reasoning-not-open", "", "messageId", ()),
)  # fmt: skip
_UNSAID = ((None, None), (None, None), ())  # a continuation chunk that repeats no field


@dataclass(frozen=True)
class Stream:
    """The chunk stream a lane is assembling; `established` lines up with `chunk_fields`."""

    kind: int
    entity_id: str
    established: tuple[str | None, ...]


def fail(rule: str, message: str) -> ProtocolViolation:
    """The violation of `rule` (a `Rule` or its value), with the fact, the rule and the fix."""
    return ProtocolViolation(message, rule=rule)


def who(owner: str | None) -> str:
    """An owner as the 1.0 client's messages name it."""
    return _PARENT if owner is None else owner


def _not_open(
    k: int, type_: str, entity_id: str, *, synthesized: bool = False
) -> ProtocolViolation:
    kind = KINDS[k]
    hint = (
        f"A '{kind.start}' event must be sent first."
        if type_ == kind.end and k != THOUGHT  # the 1.0 client's wording, kept verbatim
        else f"Start a {kind.label} with '{kind.start}' first."
    )
    why = (
        f" A client synthesizes this '{type_}' for the open {kind.chunk}, but an explicit event"
        " of another lane already ended it. Never mix chunk and explicit forms for one item."
        if synthesized
        else ""
    )
    return fail(
        kind.not_open,
        f"Cannot send '{type_}' event: No active {kind.label} found with ID '{entity_id}'. {hint}"
        f"{why}",
    )


def _mismatch(
    type_: str, tag: str, label: str, entity_id: str, owner: str | None
) -> ProtocolViolation:
    return fail(
        MISMATCH,
        f"Cannot send '{type_}': subagentRunId '{tag}' does not match the {label} '{entity_id}' "
        f"opener's subagent '{who(owner)}'.",
    )


def _holds(stream: Stream | None, k: int, entity_id: str) -> bool:
    """Whether closing `stream` (before the event at hand) ends entity `entity_id` of kind `k`."""
    return stream is not None and stream.kind == k and stream.entity_id == entity_id


class Ledger:
    """The open entities, their owners and the open chunk streams of a stream's current run.

    Every method checks first and changes state last, so a refused event changes nothing.
    """

    def __init__(self, known_tool_call_ids: Iterable[str]) -> None:
        self.open: tuple[dict[str, None], ...] = ({}, {}, {}, {})
        self.open_text, self.open_tools = self.open[TEXT], self.open[TOOL]
        reasoning_owners: dict[str, str | None] = {}
        self.owners: tuple[dict[str, str | None], ...] = (
            {},
            {},
            reasoning_owners,
            reasoning_owners,
        )
        self.activity_owners: dict[str, str | None] = {}
        self.lanes: dict[str | None, Stream] = {}
        # Calls a result may answer: stream-wide, so a later run may answer an earlier one's.
        self.known_calls = set(known_tool_call_ids)

    def reset(self) -> None:
        """Forget the previous run's entities and owners (a new run starts afresh)."""
        for opened in self.open:
            opened.clear()
        for owners in (*self.owners, self.activity_owners):
            owners.clear()
        self.lanes.clear()

    def snapshot(self) -> tuple[object, ...]:
        """Everything the ledger holds, copied."""
        return (
            tuple(tuple(opened) for opened in self.open),
            tuple(tuple(owners.items()) for owners in self.owners),
            tuple(self.activity_owners.items()),
            tuple(self.lanes.items()),
            frozenset(self.known_calls),
        )

    def unheld(self, k: int) -> tuple[str, ...]:
        """Open entities of kind `k` that need an explicit end (no chunk stream holds them)."""
        held = {stream.entity_id for stream in self.lanes.values() if stream.kind == k}
        return tuple(entity_id for entity_id in self.open[k] if entity_id not in held)

    # Explicit events.

    def message_start(
        self,
        k: int,
        e: ev.TextMessageStartEvent | ev.ReasoningStartEvent | ev.ReasoningMessageStartEvent,
    ) -> None:
        """Open a text message, reasoning span or reasoning message."""
        self._start(k, e.message_id, e.subagent_run_id, None)

    def tool_start(self, e: ev.ToolCallStartEvent) -> None:
        """Open a tool call."""
        self._start(TOOL, e.tool_call_id, e.subagent_run_id, e.parent_message_id)

    def _start(self, k: int, entity_id: str, tag: str | None, parent: str | None) -> None:
        closing = self.closing(tag) if self.lanes else None
        self._check_start(k, entity_id, tag, closing, parent)
        if closing is not None:
            self.close(tag)
        self._do_start(k, entity_id, tag, parent)

    def _check_start(
        self, k: int, entity_id: str, tag: str | None, closing: Stream | None, parent: str | None
    ) -> None:
        kind = KINDS[k]
        if entity_id in self.open[k] and not _holds(closing, k, entity_id):
            raise fail(
                kind.already,
                f"Cannot send '{kind.start}' event: A {kind.label} with ID '{entity_id}' is "
                f"already in progress. Complete it with '{kind.end}' first.",
            )
        if tag is not None:
            self._check_owner(kind.start, k, entity_id, tag)
        if parent is not None and parent in self.owners[TEXT]:
            self._check_parent(entity_id, tag, parent)

    def _check_parent(self, call: str, tag: str | None, parent: str) -> None:
        # A tool call has no owner field of its own: it lives in the message that carries it.
        owner, calls = self.owners[TEXT][parent], self.owners[TOOL]
        if tag is not None and tag != owner:
            problem = f"subagentRunId '{tag}' does not match its parent message '{parent}' owner "
            problem += f"'{who(owner)}'."
        elif tag is None and call in calls and calls[call] != owner:
            problem = f"tool call '{call}' is owned by '{who(calls[call])}' but its parent message"
            problem += f" '{parent}' is owned by '{who(owner)}'."
        else:
            return
        raise fail(
            MISMATCH,
            f"Cannot send 'TOOL_CALL_START': {problem} A tool call belongs to the message that "
            "carries it.",
        )

    def _do_start(self, k: int, entity_id: str, tag: str | None, parent: str | None) -> None:
        self.open[k][entity_id] = None
        owners = self.owners[k]
        if entity_id not in owners:
            # The first opener owns the id for the run; an untagged call inherits the owner of
            # the message that carries it.
            inherited = self.owners[TEXT].get(parent) if parent is not None else None
            owners[entity_id] = tag if tag is not None else inherited
        if k == TOOL:
            self.known_calls.add(entity_id)

    # The four methods below run for nearly every event of a stream. Each first tries the
    # common case, which `_touch` would accept without a change: no chunk stream open, no
    # subagent tag, the entity open. Anything else takes `_touch`, which checks it all.

    def message_content(
        self, k: int, e: ev.TextMessageContentEvent | ev.ReasoningMessageContentEvent
    ) -> None:
        """Continue an open text or reasoning message."""
        if self.lanes or e.subagent_run_id is not None or e.message_id not in self.open[k]:
            self._touch(e.type, k, e.message_id, e.subagent_run_id, end=False)

    def text_content(self, e: ev.TextMessageContentEvent) -> None:
        """Continue an open text message (`message_content` for TEXT, without the indirection)."""
        if self.lanes or e.subagent_run_id is not None or e.message_id not in self.open_text:
            self._touch(e.type, TEXT, e.message_id, e.subagent_run_id, end=False)

    def message_end(
        self, k: int, e: ev.TextMessageEndEvent | ev.ReasoningMessageEndEvent | ev.ReasoningEndEvent
    ) -> None:
        """Close an open text or reasoning message, or reasoning span."""
        opened = self.open[k]
        if self.lanes or e.subagent_run_id is not None or e.message_id not in opened:
            self._touch(e.type, k, e.message_id, e.subagent_run_id, end=True)
        else:
            del opened[e.message_id]

    def tool_args(self, e: ev.ToolCallArgsEvent) -> None:
        """Continue an open tool call."""
        if self.lanes or e.subagent_run_id is not None or e.tool_call_id not in self.open_tools:
            self._touch(e.type, TOOL, e.tool_call_id, e.subagent_run_id, end=False)

    def tool_end(self, e: ev.ToolCallEndEvent) -> None:
        """Close an open tool call."""
        opened = self.open[TOOL]
        if self.lanes or e.subagent_run_id is not None or e.tool_call_id not in opened:
            self._touch(e.type, TOOL, e.tool_call_id, e.subagent_run_id, end=True)
        else:
            del opened[e.tool_call_id]

    def _touch(self, type_: str, k: int, entity_id: str, tag: str | None, *, end: bool) -> None:
        closing = self.closing(tag) if self.lanes else None
        if entity_id not in self.open[k] or _holds(closing, k, entity_id):
            raise _not_open(k, type_, entity_id)
        if tag is not None:
            self._check_owner(type_, k, entity_id, tag)
        if closing is not None:
            self.close(tag)
        if end:
            del self.open[k][entity_id]

    def _check_owner(self, type_: str, k: int, entity_id: str, tag: str) -> None:
        owners = self.owners[k]
        if entity_id in owners and owners[entity_id] != tag:
            raise _mismatch(type_, tag, KINDS[k].owner_label, entity_id, owners[entity_id])

    def tool_result(self, e: ev.ToolCallResultEvent) -> None:
        """Accept a result only for an ended call that this stream or its input knows about."""
        tag, call = e.subagent_run_id, e.tool_call_id
        closing = self.closing(tag) if self.lanes else None
        # Stricter than the 1.0 client, which checks no result: one that overtakes its END, or
        # answers a call nobody made, leaves the UI with a tool message it cannot place.
        if call in self.open[TOOL] and not _holds(closing, TOOL, call):
            raise fail(
                RESULT_BEFORE_END,
                f"Cannot send 'TOOL_CALL_RESULT' for tool call '{call}': the call is still in "
                "progress. Send its 'TOOL_CALL_END' before its result.",
            )
        if call not in self.known_calls:
            raise fail(
                RESULT_UNKNOWN,
                f"Cannot send 'TOOL_CALL_RESULT' for tool call '{call}': no such call was started"
                " in this stream, sent in the run input, or declared known. A result answers a "
                "tool call.",
            )
        if closing is not None:
            self.close(tag)
        # The result mints a tool message under its own tag, replacing any earlier owner.
        self.owners[TEXT][e.message_id] = tag

    def lane_event(self, e: ev.StateSnapshotEvent | ev.StateDeltaEvent | ev.CustomEvent) -> None:
        """An unordered event that still closes its own lane's chunk stream (1.0)."""
        if self.lanes and self.closing(e.subagent_run_id) is not None:
            self.close(e.subagent_run_id)

    def messages_snapshot(self, e: ev.MessagesSnapshotEvent) -> None:
        """Close every chunk stream, then take the snapshot's owners as authoritative."""
        self.check_lanes()
        self.drop_lanes()
        self.seed(e.messages, authoritative=True)

    def seed(self, messages: Iterable[Message], *, authoritative: bool) -> None:
        """Record who owns each message (and its tool calls) that history puts on the wire."""
        for message in messages:
            if message.role == "reasoning":
                owners = self.owners[THOUGHT]
            else:
                owners = self.activity_owners if message.role == "activity" else self.owners[TEXT]
            owner = message.subagent_run_id
            if authoritative or message.id not in owners:
                owners[message.id] = owner
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls or ():
                    self.known_calls.add(call.id)
                    if authoritative or call.id not in self.owners[TOOL]:
                        self.owners[TOOL][call.id] = owner

    def activity_snapshot(self, e: ev.ActivitySnapshotEvent) -> None:
        """Only a replacing snapshot re-mints the activity, and with it its owner."""
        if e.message_id not in self.activity_owners or e.replace is not False:
            self.activity_owners[e.message_id] = e.subagent_run_id

    def activity_delta(self, e: ev.ActivityDeltaEvent) -> None:
        """A tagged delta must agree with the activity's owner."""
        tag, owners = e.subagent_run_id, self.activity_owners
        if tag is not None and e.message_id in owners and owners[e.message_id] != tag:
            raise _mismatch(e.type, tag, "activity", e.message_id, owners[e.message_id])

    def encrypted_value(self, e: ev.ReasoningEncryptedValueEvent) -> None:
        """A tagged value must agree with the owner of the call or message it lands on."""
        tag, entity_id = e.subagent_run_id, e.entity_id
        if tag is None:
            return
        if e.subtype == "tool-call":
            k, label = TOOL, "tool call"
        else:
            k, label = (TEXT if entity_id in self.owners[TEXT] else THOUGHT), "message"
        owners = self.owners[k]
        if entity_id in owners and owners[entity_id] != tag:
            raise _mismatch(e.type, tag, label, entity_id, owners[entity_id])

    # Chunks.

    def text_chunk(self, e: ev.TextMessageChunkEvent) -> None:
        """Expand a text chunk."""
        self._chunk(TEXT, e, e.message_id, (e.role, e.name))

    def tool_chunk(self, e: ev.ToolCallChunkEvent) -> None:
        """Expand a tool call chunk."""
        self._chunk(TOOL, e, e.tool_call_id, (e.tool_call_name, e.parent_message_id))

    def thought_chunk(self, e: ev.ReasoningMessageChunkEvent) -> None:
        """Expand a reasoning message chunk."""
        self._chunk(THOUGHT, e, e.message_id, ())

    def _chunk(
        self,
        k: int,
        e: ev.TextMessageChunkEvent | ev.ToolCallChunkEvent | ev.ReasoningMessageChunkEvent,
        entity_id: str | None,
        incoming: tuple[str | None, ...],
    ) -> None:
        lane = self._resolve_lane(k, entity_id, e.subagent_run_id)
        stream = self.lanes.get(lane)
        if (
            stream is None
            or stream.kind != k
            or (entity_id is not None and entity_id != stream.entity_id)
        ):
            self._open_stream(k, entity_id, lane, stream, incoming)
            return
        if incoming != _UNSAID[k]:
            self._check_agreement(stream, incoming)
        if e.delta is not None or e.raw_event is not None or e.metadata is not None:
            self._check_alive(lane, stream, KINDS[k].content)

    def _check_agreement(self, stream: Stream, incoming: tuple[str | None, ...]) -> None:
        kind = KINDS[stream.kind]
        for field, was, value in zip(kind.chunk_fields, stream.established, incoming, strict=True):
            if value is not None and value != was:
                shown = "(absent)" if was is None else f"'{was}'"
                raise fail(
                    CONFLICT,
                    f"Cannot continue {kind.label} '{stream.entity_id}': chunk {field} '{value}' "
                    f"does not match the open stream's {field} {shown}.",
                )

    def _open_stream(
        self,
        k: int,
        entity_id: str | None,
        lane: str | None,
        closing: Stream | None,
        incoming: tuple[str | None, ...],
    ) -> None:
        kind = KINDS[k]
        if entity_id is None:
            # Also the fate of an id-less chunk after its stream was closed by an explicit
            # event of its lane, a CUSTOM say (`custom-closes-chunk-stream-fatal`): nothing is
            # left to continue, so it is a first chunk. With its id it would simply open the
            # message again, a legal reopen whose content appends.
            raise fail(MISSING_ID, f"First {kind.chunk} must have a {kind.id_field}")
        if k == TOOL and incoming[0] is None:
            raise fail(MISSING_NAME, "First TOOL_CALL_CHUNK must have a toolCallName")
        if closing is not None:
            self._check_alive(lane, closing, KINDS[closing.kind].end)
        parent = incoming[1] if k == TOOL else None
        self._check_start(k, entity_id, lane, closing, parent)
        if closing is not None:
            self.close(lane)
        self._do_start(k, entity_id, lane, parent)
        if k == TEXT and incoming[0] is None:
            incoming = ("assistant", incoming[1])  # the opener establishes the default role
        self.lanes[lane] = Stream(k, entity_id, incoming)

    def _resolve_lane(self, k: int, entity_id: str | None, tag: str | None) -> str | None:
        if entity_id is not None:
            # An id continues wherever it is open, whoever sends it; a tag must agree.
            for lane, stream in self.lanes.items():
                if stream.kind == k and stream.entity_id == entity_id:
                    if tag is not None and tag != lane:
                        raise fail(
                            MISMATCH,
                            f"Cannot continue {KINDS[k].label} '{entity_id}': chunk subagentRunId"
                            f" '{tag}' does not match the open stream's subagent '{who(lane)}'.",
                        )
                    return lane
            return tag
        parent = self.lanes.get(None)
        if tag is not None or (parent is not None and parent.kind == k):
            return tag
        lanes = [lane for lane, stream in self.lanes.items() if stream.kind == k]
        if len(lanes) > 1:
            kind = KINDS[k]
            raise fail(
                AMBIGUOUS,
                f"Ambiguous {kind.chunk}: it carries neither a {kind.id_field} nor a "
                f"subagentRunId, but {len(lanes)} lanes have an open {kind.label}. Attribute the "
                "chunk to the subagent it belongs to.",
            )
        return lanes[0] if lanes else None

    # Lanes.

    def closing(self, lane: str | None) -> Stream | None:
        """The stream the event at hand closes in `lane`, once its synthesized END checks out."""
        stream = self.lanes.get(lane)
        if stream is not None:
            self._check_alive(lane, stream, KINDS[stream.kind].end)
        return stream

    def _check_alive(self, lane: str | None, stream: Stream, type_: str) -> None:
        if stream.entity_id not in self.open[stream.kind]:
            raise _not_open(stream.kind, type_, stream.entity_id, synthesized=True)
        if lane is not None:
            self._check_owner(type_, stream.kind, stream.entity_id, lane)

    def check_lanes(self) -> None:
        """Check the END a client synthesizes for every open chunk stream."""
        for lane, stream in self.lanes.items():
            self._check_alive(lane, stream, KINDS[stream.kind].end)

    def close(self, lane: str | None) -> None:
        """Close the chunk stream of `lane` (checked by `closing`)."""
        stream = self.lanes.pop(lane)
        del self.open[stream.kind][stream.entity_id]

    def drop_lanes(self) -> None:
        """Close every chunk stream, unchecked: the run's end closes them all."""
        for stream in self.lanes.values():
            self.open[stream.kind].pop(stream.entity_id, None)
        self.lanes.clear()
