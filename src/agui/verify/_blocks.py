"""The blocks a run holds open, in the order they opened, each with the event that closes it.

A run that fails or is cancelled must close what it opened before its terminal event, and not
only what its handles hold: an agent that speaks through `ctx.emit` (a bridge relaying another
framework's stream, interleaved parallel calls) opens blocks no handle knows of. The verifier
knows them all, so it is the one to list them. Every open entity, step and subagent carries the
tick of its start (`Ledger.tick`), which puts the kinds back in one order; closing them in the
reverse of it closes innermost first.

What closes each: a text message `TEXT_MESSAGE_END`, a tool call `TOOL_CALL_END`, a reasoning
message `REASONING_MESSAGE_END`, a reasoning span `REASONING_END`, a step `STEP_FINISHED`, an
active subagent `SUBAGENT_ERROR`, each attributed to the subagent that opened the block. A block
that a chunk stream holds has no event of its own: the protocol closes a chunk stream with the
end of its lane (its subagent's `SUBAGENT_ERROR`) or the run's terminal event, and an explicit
end would be refused, since the END a client synthesizes for the stream comes first.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from agui._protocol.chunk_lanes import end_of
from agui.events import Event, ReasoningEndEvent, StepFinishedEvent, SubagentErrorEvent
from agui.verify._kinds import KINDS, SPAN

if TYPE_CHECKING:
    from agui.verify._ledger import Ledger
    from agui.verify._scopes import Scopes

__all__ = ["SUBAGENT_ENDED_BY_RUN", "OpenBlock", "open_blocks"]

SUBAGENT_ENDED_BY_RUN = "the run ended while the subagent was still active"
"""The message of the `SUBAGENT_ERROR` that closes a subagent its run leaves active."""


class OpenBlock(NamedTuple):
    """A block a run opened and has not closed, and the event that closes it.

    Examples:
        >>> from agui.events import TextMessageEndEvent
        >>> block = OpenBlock("TEXT_MESSAGE_START", "m1", TextMessageEndEvent(message_id="m1"))
        >>> block.opened_by, block.id, block.closing.type
        ('TEXT_MESSAGE_START', 'm1', 'TEXT_MESSAGE_END')
    """

    opened_by: str
    """The type of the event that opened it: a `*_START`, `STEP_STARTED`, `SUBAGENT_STARTED`,
    or a `*_CHUNK` for a block a chunk stream holds."""
    id: str
    """The message or tool call id, the step name, or the subagent run id."""
    closing: Event | None
    """The event that closes it; `None` for a chunk stream, which the end of its lane closes
    (its subagent's end, or the run's terminal event)."""


def _closing(k: int, entity_id: str, owner: str | None) -> Event:
    if k == SPAN:
        return ReasoningEndEvent(message_id=entity_id, subagent_run_id=owner)
    return end_of(k, entity_id, owner)  # the kinds a chunk stream may be


def open_blocks(ledger: Ledger, scopes: Scopes) -> tuple[OpenBlock, ...]:
    """Every block the run holds open, in the order they opened."""
    held = {(stream.kind, stream.entity_id) for stream in ledger.lanes.values()}
    found: list[tuple[int, OpenBlock]] = []
    for k, opened in enumerate(ledger.open):
        kind, owners = KINDS[k], ledger.owners[k]
        for entity_id, tick in opened.items():
            if (k, entity_id) in held:
                found.append((tick, OpenBlock(kind.chunk, entity_id, None)))
            else:
                closing = _closing(k, entity_id, owners.get(entity_id))
                found.append((tick, OpenBlock(kind.start, entity_id, closing)))
    for (owner, name), tick in scopes.steps.items():
        closing = StepFinishedEvent(step_name=name, subagent_run_id=owner)
        found.append((tick, OpenBlock("STEP_STARTED", name, closing)))
    for run, tick in scopes.active.items():
        closing = SubagentErrorEvent(subagent_run_id=run, message=SUBAGENT_ENDED_BY_RUN)
        found.append((tick, OpenBlock("SUBAGENT_STARTED", run, closing)))
    found.sort(key=itemgetter(0))
    return tuple(block for _, block in found)
