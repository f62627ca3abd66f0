"""Which part of the verifier checks each event type: one exhaustive `match` over `EventType`.

The verifier keeps its books in parts (the ledger of messages, calls and reasoning, which the
chunk expansion is checked on too; the scopes of steps and subagents; the run boundaries it
keeps itself), and every event type is checked by one function of one part. `check_of` says
which, as a `match` that ends in `assert_never`, so a new event type is a type error here until
it is given its checks. The verifier compiles these pairs with the lifecycle table into four
dispatch tables, once per process (`tables`): a table entry is a part's index and a plain
function of that part and the event, so no verifier builds a table or a bound method of its own,
and an event costs one lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from typing_extensions import assert_never

from agui.events import EventType
from agui.verify._chunks import check_chunk
from agui.verify._ledger import Ledger
from agui.verify._lifecycle import Phase, dispatch
from agui.verify._scopes import Scopes

__all__ = ["LEDGER", "RUNS", "SCOPES", "Check", "Runs", "check_of", "tables"]

RUNS, LEDGER, SCOPES = range(3)
"""The index of each part in a verifier's parts; `RUNS`, 0, is the verifier itself."""

Check = tuple[int, Callable[[Any, Any], None]]
"""A part's index and the function that checks an event on that part."""


class Runs(NamedTuple):
    """The verifier's own checks: the run boundaries, a refusal, and a move of its phase."""

    started: Callable[[Any, Any], None]
    finished: Callable[[Any, Any], None]
    error: Callable[[Any, Any], None]
    refuse: Callable[[Any, Any], None]
    move: Callable[..., None]
    """Called `move(verifier, event, check=..., after=...)`: the checks, then the move."""


def _stand_aside(_runs: object, _event: object) -> None:
    """RAW takes part in nothing but the run's lifecycle, which the table checks."""


def check_of(kind: EventType, runs: Runs) -> Check:  # noqa: C901, PLR0911, PLR0912 - a case a type
    """The part that checks an event of `kind`, and how."""
    match kind:
        case EventType.TEXT_MESSAGE_START:
            return LEDGER, Ledger.text_start
        case EventType.TEXT_MESSAGE_CONTENT:
            return LEDGER, Ledger.text_content
        case EventType.TEXT_MESSAGE_END:
            return LEDGER, Ledger.text_end
        case EventType.TOOL_CALL_START:
            return LEDGER, Ledger.tool_start
        case EventType.TOOL_CALL_ARGS:
            return LEDGER, Ledger.tool_args
        case EventType.TOOL_CALL_END:
            return LEDGER, Ledger.tool_end
        case EventType.TOOL_CALL_RESULT:
            return LEDGER, Ledger.tool_result
        case EventType.REASONING_START:
            return LEDGER, Ledger.span_start
        case EventType.REASONING_END:
            return LEDGER, Ledger.span_end
        case EventType.REASONING_MESSAGE_START:
            return LEDGER, Ledger.thought_start
        case EventType.REASONING_MESSAGE_CONTENT:
            return LEDGER, Ledger.thought_content
        case EventType.REASONING_MESSAGE_END:
            return LEDGER, Ledger.thought_end
        case EventType.REASONING_ENCRYPTED_VALUE:
            return LEDGER, Ledger.encrypted_value
        case EventType.STATE_SNAPSHOT | EventType.STATE_DELTA | EventType.CUSTOM:
            return LEDGER, Ledger.lane_event
        case EventType.MESSAGES_SNAPSHOT:
            return LEDGER, Ledger.messages_snapshot
        case EventType.ACTIVITY_SNAPSHOT:
            return LEDGER, Ledger.activity_snapshot
        case EventType.ACTIVITY_DELTA:
            return LEDGER, Ledger.activity_delta
        case (
            EventType.TEXT_MESSAGE_CHUNK
            | EventType.TOOL_CALL_CHUNK
            | EventType.REASONING_MESSAGE_CHUNK
        ):
            return LEDGER, check_chunk
        case EventType.STEP_STARTED:
            return SCOPES, Scopes.step_started
        case EventType.STEP_FINISHED:
            return SCOPES, Scopes.step_finished
        case EventType.SUBAGENT_STARTED:
            return SCOPES, Scopes.subagent_started
        case EventType.SUBAGENT_FINISHED | EventType.SUBAGENT_ERROR:
            return SCOPES, Scopes.subagent_ended
        case EventType.RUN_STARTED:
            return RUNS, runs.started
        case EventType.RUN_FINISHED:
            return RUNS, runs.finished
        case EventType.RUN_ERROR:
            return RUNS, runs.error
        case EventType.RAW:
            return RUNS, _stand_aside
        case _:
            assert_never(kind)


def tables(runs: Runs) -> dict[Phase, dict[str, Check]]:
    """Each phase's dispatch table: its row of the lifecycle table over every type's checks."""
    checks = {kind.value: check_of(kind, runs) for kind in EventType}

    def move(check: Check, after: Phase) -> Check:
        # Every move is a run boundary's, which the verifier itself checks.
        return RUNS, partial(runs.move, check=check[1], after=after)

    return {phase: dispatch(phase, checks, (RUNS, runs.refuse), move) for phase in Phase}
