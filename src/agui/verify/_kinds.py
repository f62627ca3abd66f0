"""The four kinds of bracketed entity the ledger tracks, and the refusals they share.

A text message, a tool call, a reasoning message and a reasoning span are each opened, continued
and closed by id, and differ only in data: their event types, the rules they break, the words an
error names them by and, for the three that have a chunk form, the fields a continuation chunk
must agree on. `KINDS` holds that data, indexed by `TEXT`, `TOOL`, `THOUGHT` and `SPAN`, so the
ledger has one code path for all four. Those indexes are plain ints because the ledger keys its
tuples by them on the hot path (`agui._emit.record` reuses them as the kinds of its delta records).

The messages built here are the official 1.0 client's where it has one (kept verbatim), so the
ledger's checks and the chunk expansion word the same refusal the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from agui._protocol.chunk_lanes import FIELDS, TEXT, THOUGHT, TOOL
from agui._protocol.rules import Rule
from agui.errors import ProtocolViolation

if TYPE_CHECKING:
    from agui._protocol.chunk_lanes import Stream

__all__ = [
    "KINDS",
    "SPAN",
    "TEXT",
    "THOUGHT",
    "TOOL",
    "Kind",
    "fail",
    "holds",
    "mismatch",
    "not_open",
    "who",
]

SPAN = 3  # after the three kinds a chunk stream may be (`agui._protocol.chunk_lanes`)
_PARENT = "(the parent agent)"


class Kind(NamedTuple):
    """A kind of bracketed entity: its events, its rules, and (for chunks) its agreed fields."""

    label: str
    owner_label: str
    start: str
    content: str
    end: str
    already: Rule
    not_open: Rule
    chunk: str
    id_field: str
    chunk_fields: tuple[str, ...]


KINDS = (
    Kind("text message", "message", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
         "TEXT_MESSAGE_END", Rule.MESSAGE_ALREADY_OPEN, Rule.MESSAGE_NOT_OPEN,
         "TEXT_MESSAGE_CHUNK", "messageId", FIELDS[TEXT]),
    Kind("tool call", "tool call", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
         Rule.TOOL_CALL_ALREADY_OPEN, Rule.TOOL_CALL_NOT_OPEN, "TOOL_CALL_CHUNK", "toolCallId",
         FIELDS[TOOL]),
    Kind("reasoning message", "reasoning message", "REASONING_MESSAGE_START",
         "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", Rule.REASONING_MESSAGE_ALREADY_OPEN,
         Rule.REASONING_MESSAGE_NOT_OPEN, "REASONING_MESSAGE_CHUNK", "messageId", FIELDS[THOUGHT]),
    Kind("reasoning span", "reasoning message", "REASONING_START", "", "REASONING_END",
         Rule.REASONING_ALREADY_OPEN, Rule.REASONING_NOT_OPEN, "", "messageId", ()),
)  # fmt: skip


def holds(stream: Stream | None, k: int, entity_id: str) -> bool:
    """Whether closing `stream` (before the event at hand) ends entity `entity_id` of kind `k`."""
    return stream is not None and stream.kind == k and stream.entity_id == entity_id


def fail(rule: Rule, message: str) -> ProtocolViolation:
    """The violation of `rule`, with the fact, the rule and the fix."""
    return ProtocolViolation(message, rule=rule)


def who(owner: str | None) -> str:
    """An owner as the 1.0 client's messages name it."""
    return _PARENT if owner is None else owner


def not_open(k: int, type_: str, entity_id: str, *, synthesized: bool = False) -> ProtocolViolation:
    """The refusal of `type_` for entity `entity_id` of kind `k`, which is not open."""
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


def mismatch(
    type_: str, tag: str, label: str, entity_id: str, owner: str | None
) -> ProtocolViolation:
    """The refusal of `type_` tagged `tag` for an entity that `owner` opened."""
    return fail(
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        f"Cannot send '{type_}': subagentRunId '{tag}' does not match the {label} '{entity_id}' "
        f"opener's subagent '{who(owner)}'.",
    )
