"""The chunk expansion, checked: what a `*_CHUNK` event does to the ledger's books.

Where a chunk lands is the protocol's to say (`agui._protocol.chunk_lanes.place`, which the
fold uses too): it continues its lane's stream, opens one (closing the lane's other stream
first), or is refused. This module checks the START, CONTENT and END that the placement stands
for against the ledger, as the 1.0 client's verifier checks its expansion, and words each
refusal as that client does. The books (what is open, who owns it, which stream each lane
holds) are the ledger's; like the ledger, this checks everything first and changes state last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import assert_never

from agui._protocol.chunk_lanes import (
    TOOL,
    Ambiguous,
    Chunk,
    Conflict,
    Misattributed,
    MissingId,
    MissingName,
    Placement,
    Refusal,
    place,
)
from agui._protocol.rules import Rule
from agui.verify._kinds import KINDS, fail, who

if TYPE_CHECKING:
    from agui.errors import ProtocolViolation
    from agui.verify._ledger import Ledger

__all__ = ["check_chunk"]


def check_chunk(ledger: Ledger, e: Chunk) -> None:
    """Check a chunk's expansion on the ledger, then take it."""
    placed = place(ledger.lanes, e)
    if not isinstance(placed, Placement):
        raise _refusal(placed)
    lane, stream = placed.lane, placed.stream
    k = stream.kind
    if not placed.opens:
        if placed.content:
            ledger.check_alive(lane, stream, KINDS[k].content)
        return
    closing = placed.closing
    if closing is not None:
        ledger.check_alive(lane, closing, KINDS[closing.kind].end)
    parent = stream.established[1] if k == TOOL else None
    ledger.check_start(k, stream.entity_id, lane, closing, parent)
    if closing is not None:
        ledger.close(lane)
    ledger.do_start(k, stream.entity_id, lane, parent)
    ledger.lanes[lane] = stream


def _refusal(refusal: Refusal) -> ProtocolViolation:
    """The violation of a refused chunk, worded as the 1.0 client words it."""
    match refusal:
        case Misattributed(kind=k, entity_id=entity_id, tag=tag, lane=lane):
            return fail(
                Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
                f"Cannot continue {KINDS[k].label} '{entity_id}': chunk subagentRunId '{tag}' "
                f"does not match the open stream's subagent '{who(lane)}'.",
            )
        case Ambiguous(kind=k, lanes=count):
            kind = KINDS[k]
            return fail(
                Rule.CHUNK_AMBIGUOUS,
                f"Ambiguous {kind.chunk}: it carries neither a {kind.id_field} nor a "
                f"subagentRunId, but {count} lanes have an open {kind.label}. Attribute the "
                "chunk to the subagent it belongs to.",
            )
        case MissingId(kind=k):
            # Also the fate of an id-less chunk after its stream was closed by an explicit
            # event of its lane, a CUSTOM say (`custom-closes-chunk-stream-fatal`): nothing is
            # left to continue, so it is a first chunk. With its id it would simply open the
            # message again, a legal reopen whose content appends.
            kind = KINDS[k]
            return fail(Rule.CHUNK_MISSING_ID, f"First {kind.chunk} must have a {kind.id_field}")
        case MissingName():
            return fail(Rule.CHUNK_MISSING_NAME, "First TOOL_CALL_CHUNK must have a toolCallName")
        case Conflict(stream=stream, field=field, value=value):
            kind = KINDS[stream.kind]
            was = stream.established[kind.chunk_fields.index(field)]
            shown = "(absent)" if was is None else f"'{was}'"
            return fail(
                Rule.CHUNK_CONFLICT,
                f"Cannot continue {kind.label} '{stream.entity_id}': chunk {field} '{value}' "
                f"does not match the open stream's {field} {shown}.",
            )
        case _:
            assert_never(refusal)
