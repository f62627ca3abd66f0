"""The chunk expansion: how a `*_CHUNK` event opens, continues or closes its lane's stream.

The official 1.0 client reads chunk events by expanding them into the explicit START, CONTENT
and END events they stand for, and agui checks the expansion, not the chunk. Each lane (the
parent agent, or one subagent) holds at most one open chunk stream. A chunk with an id continues
the stream that has that id open, in whichever lane (a `subagentRunId` it carries must agree);
an id-less chunk continues a stream of its kind in its lane: a tagged one its subagent's, an
untagged one the parent agent's, or else the one lane that has such a stream open (two make it
ambiguous). A continuation may repeat the fields its opener established (a message's role and
name, a call's name and parent message) but not change them. Any other chunk opens a stream:
it first closes its lane's open stream with the END a client would synthesize, then takes the
START's checks (the id not already open, the owner agreeing). A first chunk carries its id, and
a tool call's first chunk its name, since there is nothing to continue.

The books (what is open, who owns it, which stream each lane holds) are the ledger's; this
module only decides what a chunk does to them, and like the ledger checks everything first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import assert_never

from agui._protocol.rules import Rule
from agui.events import ReasoningMessageChunkEvent, TextMessageChunkEvent, ToolCallChunkEvent
from agui.verify._kinds import KINDS, TEXT, THOUGHT, TOOL, Stream, fail, who

if TYPE_CHECKING:
    from agui import events as ev
    from agui.verify._ledger import Ledger

__all__ = ["Chunks"]

_UNSAID = ((None, None), (None, None), ())  # a continuation chunk that repeats no field


class Chunks:
    """Expands the chunk events of a stream into checks and changes on its ledger."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def chunk(
        self, e: ev.TextMessageChunkEvent | ev.ToolCallChunkEvent | ev.ReasoningMessageChunkEvent
    ) -> None:
        """Expand a chunk of any kind."""
        match e:
            case TextMessageChunkEvent():
                self.text_chunk(e)
            case ToolCallChunkEvent():
                self.tool_chunk(e)
            case ReasoningMessageChunkEvent():
                self.thought_chunk(e)
            case _:
                assert_never(e)

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
        ledger = self._ledger
        lane = self._resolve_lane(k, entity_id, e.subagent_run_id)
        stream = ledger.lanes.get(lane)
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
            ledger.check_alive(lane, stream, KINDS[k].content)

    def _check_agreement(self, stream: Stream, incoming: tuple[str | None, ...]) -> None:
        kind = KINDS[stream.kind]
        for field, was, value in zip(kind.chunk_fields, stream.established, incoming, strict=True):
            if value is not None and value != was:
                shown = "(absent)" if was is None else f"'{was}'"
                raise fail(
                    Rule.CHUNK_CONFLICT,
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
        ledger = self._ledger
        kind = KINDS[k]
        if entity_id is None:
            # Also the fate of an id-less chunk after its stream was closed by an explicit
            # event of its lane, a CUSTOM say (`custom-closes-chunk-stream-fatal`): nothing is
            # left to continue, so it is a first chunk. With its id it would simply open the
            # message again, a legal reopen whose content appends.
            raise fail(Rule.CHUNK_MISSING_ID, f"First {kind.chunk} must have a {kind.id_field}")
        if k == TOOL and incoming[0] is None:
            raise fail(Rule.CHUNK_MISSING_NAME, "First TOOL_CALL_CHUNK must have a toolCallName")
        if closing is not None:
            ledger.check_alive(lane, closing, KINDS[closing.kind].end)
        parent = incoming[1] if k == TOOL else None
        ledger.check_start(k, entity_id, lane, closing, parent)
        if closing is not None:
            ledger.close(lane)
        ledger.do_start(k, entity_id, lane, parent)
        if k == TEXT and incoming[0] is None:
            incoming = ("assistant", incoming[1])  # the opener establishes the default role
        ledger.lanes[lane] = Stream(k, entity_id, incoming)

    def _resolve_lane(self, k: int, entity_id: str | None, tag: str | None) -> str | None:
        ledger = self._ledger
        if entity_id is not None:
            # An id continues wherever it is open, whoever sends it; a tag must agree.
            for lane, stream in ledger.lanes.items():
                if stream.kind == k and stream.entity_id == entity_id:
                    if tag is not None and tag != lane:
                        raise fail(
                            Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
                            f"Cannot continue {KINDS[k].label} '{entity_id}': chunk subagentRunId"
                            f" '{tag}' does not match the open stream's subagent '{who(lane)}'.",
                        )
                    return lane
            return tag
        parent = ledger.lanes.get(None)
        if tag is not None or (parent is not None and parent.kind == k):
            return tag
        lanes = [lane for lane, stream in ledger.lanes.items() if stream.kind == k]
        if len(lanes) > 1:
            kind = KINDS[k]
            raise fail(
                Rule.CHUNK_AMBIGUOUS,
                f"Ambiguous {kind.chunk}: it carries neither a {kind.id_field} nor a "
                f"subagentRunId, but {len(lanes)} lanes have an open {kind.label}. Attribute the "
                "chunk to the subagent it belongs to.",
            )
        return lanes[0] if lanes else None
