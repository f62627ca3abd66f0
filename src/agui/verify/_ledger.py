"""The verifier's ledger of bracketed entities, and the chunk lanes that open and close them.

Text messages, tool calls, reasoning messages and reasoning spans are opened, continued and
closed by id; each id's first opener owns it for the rest of the run, and a continuation tagged
with another `subagentRunId` is refused. Chunk events are expanded as the official 1.0 client
expands them: one open chunk stream per lane (the parent agent, or one subagent), continued by
chunks that omit the id, closed by a chunk with another id, by an explicit event of the lane,
by the subagent's terminal event, by `MESSAGES_SNAPSHOT` and by the run's boundaries. The START,
CONTENT and END a client would synthesize are checked like explicit ones, in the same order.

What tells the four kinds apart is data (`agui.verify._kinds`), and where a chunk lands is
decided by the protocol's chunk expansion (`agui._protocol.chunk_lanes`) and checked in
`agui.verify._chunks`; this module keeps the books both work on, and closes a lane's stream
when an explicit event of the lane arrives. The verifier's fast paths for the
run context read `open` (the open ids of each kind, in opening order) and `lanes` (empty unless
a chunk stream is open; while one is, only the full check may decide).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agui._protocol.chunk_lanes import Stream
from agui._protocol.rules import Rule
from agui.messages import AssistantMessage, Message
from agui.verify._kinds import (
    KINDS,
    SPAN,
    TEXT,
    THOUGHT,
    TOOL,
    fail,
    holds,
    mismatch,
    not_open,
    who,
)

if TYPE_CHECKING:
    from agui import events as ev
    from agui.errors import ProtocolViolation

__all__ = ["SPAN", "TEXT", "THOUGHT", "TOOL", "Ledger"]

# What RUN_FINISHED names still open, kind by kind, in the order the 1.0 client checks them.
_AT_FINISH = (
    (TEXT, "text messages"),
    (THOUGHT, "reasoning messages"),
    (SPAN, "reasoning spans"),
    (TOOL, "tool calls"),
)


class Ledger:
    """The open entities, their owners and the open chunk streams of a stream's current run.

    Every method checks first and changes state last, so a refused event changes nothing.
    """

    def __init__(self, known_tool_call_ids: Iterable[str]) -> None:
        # Each open entity (and step and subagent, in `Scopes`) maps to the tick it opened at,
        # so the open blocks of every kind can be put back in their opening order. A plain
        # number, not an `itertools.count`, which Python 3.14 no longer copies.
        self.ticks = 0
        self.open: tuple[dict[str, int], ...] = ({}, {}, {}, {})
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
        # Dicts as sets, here and in the scopes: an empty set holds 216 bytes, an empty dict 64,
        # and every open stream holds a verifier.
        # Not `dict.fromkeys`: for an empty set it holds 224 bytes, this 64.
        self.known_calls: dict[str, None] = {call: None for call in known_tool_call_ids}  # noqa: C420
        # The current run's calls, started and answered: what its pendingToolCallIds may name.
        self.run_calls: dict[str, None] = {}
        self.run_answered: dict[str, None] = {}

    def tick(self) -> int:
        """The next tick, one past the last: when something opened, against the rest."""
        self.ticks += 1
        return self.ticks

    def reset(self) -> None:
        """Forget the previous run's entities and owners (a new run starts afresh)."""
        for opened in self.open:
            opened.clear()
        for owners in (*self.owners, self.activity_owners):
            owners.clear()
        self.lanes.clear()
        self.run_calls.clear()
        self.run_answered.clear()

    def snapshot(self) -> tuple[object, ...]:
        """Everything the ledger holds, copied."""
        return (
            tuple(tuple(opened) for opened in self.open),
            tuple(tuple(owners.items()) for owners in self.owners),
            tuple(self.activity_owners.items()),
            tuple(self.lanes.items()),
            frozenset(self.known_calls),
            tuple(self.run_calls),
            frozenset(self.run_answered),
        )

    def unheld(self, k: int) -> tuple[str, ...]:
        """Open entities of kind `k` that need an explicit end (no chunk stream holds them)."""
        held = {stream.entity_id for stream in self.lanes.values() if stream.kind == k}
        return tuple(entity_id for entity_id in self.open[k] if entity_id not in held)

    def check_closed(self) -> None:
        """Refuse a `RUN_FINISHED` while any entity still needs its explicit end."""
        if not any(self.open):  # nothing open, the common case: no set of held ids to build
            return
        for k, what in _AT_FINISH:
            if left := self.unheld(k):
                raise fail(
                    Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
                    f"Cannot send 'RUN_FINISHED' while {what} are still active: {', '.join(left)}",
                )

    # Explicit events.

    def text_start(self, e: ev.TextMessageStartEvent) -> None:
        """Open a text message."""
        self._start(TEXT, e.message_id, e.subagent_run_id, None)

    def thought_start(self, e: ev.ReasoningMessageStartEvent) -> None:
        """Open a reasoning message."""
        self._start(THOUGHT, e.message_id, e.subagent_run_id, None)

    def span_start(self, e: ev.ReasoningStartEvent) -> None:
        """Open a reasoning span."""
        self._start(SPAN, e.message_id, e.subagent_run_id, None)

    def tool_start(self, e: ev.ToolCallStartEvent) -> None:
        """Open a tool call."""
        self._start(TOOL, e.tool_call_id, e.subagent_run_id, e.parent_message_id)

    def _start(self, k: int, entity_id: str, tag: str | None, parent: str | None) -> None:
        closing = self.closing(tag) if self.lanes else None
        self.check_start(k, entity_id, tag, closing, parent)
        if closing is not None:
            self.close(tag)
        self.do_start(k, entity_id, tag, parent)

    def check_start(
        self, k: int, entity_id: str, tag: str | None, closing: Stream | None, parent: str | None
    ) -> None:
        kind = KINDS[k]
        if entity_id in self.open[k] and not holds(closing, k, entity_id):
            raise fail(
                kind.already,
                f"Cannot send '{kind.start}' event: A {kind.label} with ID '{entity_id}' is "
                f"already in progress. Complete it with '{kind.end}' first.",
            )
        if tag is not None:
            self._check_owner(kind.start, k, entity_id, tag)
        if parent is not None and parent in self.owners[TEXT]:
            self._check_parent(entity_id, tag, parent)
        # One set lookup, and only for a call: a message id may be reopened, its content appends.
        if k == TOOL and entity_id in self.known_calls and entity_id not in self.open[k]:
            raise _reused(entity_id)

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
            Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
            f"Cannot send 'TOOL_CALL_START': {problem} A tool call belongs to the message that "
            "carries it.",
        )

    def do_start(self, k: int, entity_id: str, tag: str | None, parent: str | None) -> None:
        self.open[k][entity_id] = self.tick()
        owners = self.owners[k]
        if entity_id not in owners:
            # The first opener owns the id for the run; an untagged call inherits the owner of
            # the message that carries it.
            inherited = self.owners[TEXT].get(parent) if parent is not None else None
            owners[entity_id] = tag if tag is not None else inherited
        if k == TOOL:
            self.known_calls[entity_id] = None
            self.run_calls[entity_id] = None

    # The methods below run for nearly every event of a stream. Each first tries the common
    # case, which `_touch` would accept without a change: no chunk stream open, no subagent
    # tag, the entity open. Anything else takes `_touch`, which checks it all.

    def text_content(self, e: ev.TextMessageContentEvent) -> None:
        """Continue an open text message."""
        if self.lanes or e.subagent_run_id is not None or e.message_id not in self.open_text:
            self._touch(e.type, TEXT, e.message_id, e.subagent_run_id, end=False)

    def thought_content(self, e: ev.ReasoningMessageContentEvent) -> None:
        """Continue an open reasoning message."""
        if self.lanes or e.subagent_run_id is not None or e.message_id not in self.open[THOUGHT]:
            self._touch(e.type, THOUGHT, e.message_id, e.subagent_run_id, end=False)

    def text_end(self, e: ev.TextMessageEndEvent) -> None:
        """Close an open text message."""
        self._end(TEXT, e)

    def thought_end(self, e: ev.ReasoningMessageEndEvent) -> None:
        """Close an open reasoning message."""
        self._end(THOUGHT, e)

    def span_end(self, e: ev.ReasoningEndEvent) -> None:
        """Close an open reasoning span."""
        self._end(SPAN, e)

    def _end(
        self, k: int, e: ev.TextMessageEndEvent | ev.ReasoningMessageEndEvent | ev.ReasoningEndEvent
    ) -> None:
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
        if entity_id not in self.open[k] or holds(closing, k, entity_id):
            raise not_open(k, type_, entity_id)
        if tag is not None:
            self._check_owner(type_, k, entity_id, tag)
        if closing is not None:
            self.close(tag)
        if end:
            del self.open[k][entity_id]

    def _check_owner(self, type_: str, k: int, entity_id: str, tag: str) -> None:
        owners = self.owners[k]
        if entity_id in owners and owners[entity_id] != tag:
            raise mismatch(type_, tag, KINDS[k].owner_label, entity_id, owners[entity_id])

    def tool_result(self, e: ev.ToolCallResultEvent) -> None:
        """Accept a result only for an ended call that this stream or its input knows about."""
        tag, call = e.subagent_run_id, e.tool_call_id
        closing = self.closing(tag) if self.lanes else None
        # Stricter than the 1.0 client, which checks no result: one that overtakes its END, or
        # answers a call nobody made, leaves the UI with a tool message it cannot place.
        if call in self.open[TOOL] and not holds(closing, TOOL, call):
            raise fail(
                Rule.TOOL_RESULT_BEFORE_END,
                f"Cannot send 'TOOL_CALL_RESULT' for tool call '{call}': the call is still in "
                "progress. Send its 'TOOL_CALL_END' before its result.",
            )
        if call not in self.known_calls:
            raise fail(
                Rule.TOOL_RESULT_UNKNOWN_CALL,
                f"Cannot send 'TOOL_CALL_RESULT' for tool call '{call}': no such call was started"
                " in this stream, sent in the run input, or declared known. A result answers a "
                "tool call.",
            )
        if closing is not None:
            self.close(tag)
        # The result mints a tool message under its own tag, replacing any earlier owner.
        self.owners[TEXT][e.message_id] = tag
        self.run_answered[call] = None

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
                    self.known_calls[call.id] = None
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
            raise mismatch(e.type, tag, "activity", e.message_id, owners[e.message_id])

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
            raise mismatch(e.type, tag, label, entity_id, owners[entity_id])

    # Lanes.

    def closing(self, lane: str | None) -> Stream | None:
        """The stream the event at hand closes in `lane`, once its synthesized END checks out."""
        stream = self.lanes.get(lane)
        if stream is not None:
            self.check_alive(lane, stream, KINDS[stream.kind].end)
        return stream

    def check_alive(self, lane: str | None, stream: Stream, type_: str) -> None:
        if stream.entity_id not in self.open[stream.kind]:
            raise not_open(stream.kind, type_, stream.entity_id, synthesized=True)
        if lane is not None:
            self._check_owner(type_, stream.kind, stream.entity_id, lane)

    def check_lanes(self) -> None:
        """Check the END a client synthesizes for every open chunk stream."""
        for lane, stream in self.lanes.items():
            self.check_alive(lane, stream, KINDS[stream.kind].end)

    def close(self, lane: str | None) -> None:
        """Close the chunk stream of `lane` (checked by `closing`)."""
        stream = self.lanes.pop(lane)
        del self.open[stream.kind][stream.entity_id]

    def drop_lanes(self) -> None:
        """Close every chunk stream, unchecked: the run's end closes them all."""
        for stream in self.lanes.values():
            self.open[stream.kind].pop(stream.entity_id, None)
        self.lanes.clear()


def _reused(call: str) -> ProtocolViolation:
    # The 1.0 client overwrites the earlier call in place: its name and arguments merge with
    # the new ones, so the UI shows one call made of two. A message id may be reused (its
    # content appends), a call id may not.
    return fail(
        Rule.TOOL_CALL_ID_REUSED,
        f"Cannot send 'TOOL_CALL_START': tool call '{call}' already exists (it was started "
        "earlier in this stream or is in the run input's history), and a client would overwrite "
        "that call with this one. Give each tool call an id of its own in the thread.",
    )
