"""The run lifecycle as a transition table: which event type moves which phase to which.

A stream is a sequence of runs. Before its first `RUN_STARTED` it is `IDLE` (and may still fail
at once with `RUN_ERROR`); a run is `RUNNING` until its `RUN_FINISHED` (`FINISHED`) or
`RUN_ERROR` (`ERRORED`), and from either a new `RUN_STARTED` begins the next run. As in h11's
`_state.py`, the phases are named and the moves are data: `TRANSITIONS` lists, for each phase,
the event types it admits and the phase each one leads to (`ANY` stands for every event type
that is not a run boundary), and `REFUSALS` names the rule an event type that a phase does not
admit breaks. The verifier compiles each phase's row (`ROWS` is the table with every event type
spelled out) into the dispatch table it uses in that phase, once per process and shared by every
verifier, so the lifecycle costs an event no more than its lookup: a missing move is refused
before any other check runs, and a move is taken only after every check of its event has
passed, so a refused event leaves the phase as it was.

The checks a run boundary makes beyond its move (the ids it names, its interrupts, the pending
calls of a success, read against the calls the ledger kept) are here too, and so is the end of
the stream, which only a phase after a terminal event allows; what RUN_FINISHED finds still open
is the ledger's and the scopes' to say.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from agui._protocol.rules import Rule
from agui.events import EventType
from agui.types import InterruptOutcome, SuccessOutcome
from agui.verify._kinds import fail

if TYPE_CHECKING:
    from agui import events as ev
    from agui.errors import ProtocolViolation

__all__ = [
    "ANY",
    "REFUSALS",
    "ROWS",
    "TRANSITIONS",
    "Phase",
    "check_ended",
    "check_finished",
    "check_interrupts",
    "check_new_run",
    "check_pending",
    "check_thread",
    "dispatch",
    "refusal",
]


class Phase(str, Enum):
    """Where a stream is in the lifecycle of its runs (a `str` enum: it hashes at C speed)."""

    IDLE = "idle"  # no run has started yet
    RUNNING = "running"
    FINISHED = "finished"
    ERRORED = "errored"


ANY = "*"
"""In `TRANSITIONS`, every event type that is not a run boundary."""

_IDLE, _RUNNING, _FINISHED, _ERRORED = Phase
_BOUNDARIES = frozenset({"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"})

TRANSITIONS: Mapping[Phase, Mapping[str, Phase]] = {
    _IDLE: {"RUN_STARTED": _RUNNING, "RUN_ERROR": _ERRORED},
    _RUNNING: {ANY: _RUNNING, "RUN_FINISHED": _FINISHED, "RUN_ERROR": _ERRORED},
    _FINISHED: {"RUN_STARTED": _RUNNING, "RUN_ERROR": _ERRORED},
    _ERRORED: {"RUN_STARTED": _RUNNING},
}

# What an event type a phase does not admit breaks, and how the 1.0 client words it.
REFUSALS: Mapping[Phase, tuple[Rule, str]] = {
    _IDLE: (
        Rule.FIRST_EVENT_NOT_RUN_STARTED,
        "First event must be 'RUN_STARTED' (or 'RUN_ERROR'), not '{type}'.",
    ),
    _RUNNING: (
        Rule.NESTED_RUN_STARTED,
        (
            "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be "
            "finished with 'RUN_FINISHED' before starting a new run (run '{run}' is active)."
        ),
    ),
    _FINISHED: (
        Rule.EVENT_AFTER_RUN_FINISHED,
        (
            "Cannot send event type '{type}': The run has already finished with 'RUN_FINISHED'. "
            "Start a new run with 'RUN_STARTED'."
        ),
    ),
    _ERRORED: (
        Rule.EVENT_AFTER_RUN_ERROR,
        (
            "Cannot send event type '{type}': The run has already errored with 'RUN_ERROR'. No "
            "further events can be sent."
        ),
    ),
}


def _row(phase: Phase) -> dict[str, Phase | None]:
    moves = TRANSITIONS[phase]
    row: dict[str, Phase | None] = {}
    for member in EventType:
        type_ = member.value
        key = type_ if type_ in _BOUNDARIES else ANY
        row[type_] = moves.get(key)
    return row


ROWS: Mapping[Phase, Mapping[str, Phase | None]] = {phase: _row(phase) for phase in Phase}
"""`TRANSITIONS` with every event type spelled out; `None` where the phase refuses the type."""

_KEPT = {
    phase: tuple(t for t, after in row.items() if after is phase) for phase, row in ROWS.items()
}
_REFUSED = {
    phase: tuple(t for t, after in row.items() if after is None) for phase, row in ROWS.items()
}
_LEAVES = {
    phase: tuple((t, after) for t, after in row.items() if after is not None and after is not phase)
    for phase, row in ROWS.items()
}


_H = TypeVar("_H")


def dispatch(
    phase: Phase, checks: Mapping[str, _H], refuse: _H, move: Callable[[_H, Phase], _H]
) -> dict[str, _H]:
    """`phase`'s row of the table as a dispatch table over `checks`, each event type's checks.

    A type the phase keeps gets its checks as they are; a type the phase refuses gets `refuse`;
    a type that leaves the phase gets `move(check, after)`, a handler that runs the checks and
    then takes the move, so a refused event never moves the phase. The verifier builds the four
    tables once per process and every verifier shares them.
    """
    table = dict.fromkeys(checks, refuse)
    table.update({type_: checks[type_] for type_ in _KEPT[phase]})
    for type_, after in _LEAVES[phase]:
        table[type_] = move(checks[type_], after)
    return table


def refusal(phase: Phase, type_: str, run_id: str | None) -> ProtocolViolation:
    """The violation of an event of `type_` that `phase` does not admit."""
    rule, template = REFUSALS[phase]
    return fail(rule, template.format(type=type_, run=run_id))


def check_thread(stream_thread: str | None, e: ev.RunStartedEvent) -> None:
    """Refuse a `RUN_STARTED` for a thread other than the stream's."""
    if stream_thread is not None and e.thread_id != stream_thread:
        raise fail(
            Rule.THREAD_ID_MISMATCH,
            f"Cannot send 'RUN_STARTED' for thread '{e.thread_id}': this stream belongs to "
            f"thread '{stream_thread}'. Every run on a stream carries the input's threadId.",
        )


def check_new_run(run_ids: Collection[str], e: ev.RunStartedEvent) -> None:
    """Refuse a `RUN_STARTED` for a run the stream has already started: a runId names one run."""
    if e.run_id in run_ids:
        raise fail(
            Rule.RUN_ID_REUSED,
            f"Cannot send 'RUN_STARTED' for run '{e.run_id}': this stream has already run it. "
            "Each run on a thread has a runId of its own; give the new run a new one.",
        )


def check_finished(e: ev.RunFinishedEvent, run_id: str | None, thread_id: str | None) -> None:
    """Refuse a `RUN_FINISHED` that names another run or thread than the one it ends."""
    if e.run_id != run_id:
        raise fail(
            Rule.RUN_ID_MISMATCH,
            f"Cannot send 'RUN_FINISHED' for run '{e.run_id}': the run that is open is "
            f"'{run_id}'. A run's 'RUN_STARTED' and 'RUN_FINISHED' must agree on their runId.",
        )
    if e.thread_id != thread_id:
        raise fail(
            Rule.THREAD_ID_MISMATCH,
            f"Cannot send 'RUN_FINISHED' for thread '{e.thread_id}': run '{e.run_id}' was "
            f"started on thread '{thread_id}'. A run's 'RUN_STARTED' and 'RUN_FINISHED' must "
            "agree on their threadId.",
        )


def check_interrupts(e: ev.RunFinishedEvent) -> None:
    """Refuse a `RUN_FINISHED` whose interrupts share an id: a resume answers them by id."""
    if isinstance(e.outcome, InterruptOutcome):
        ids = [interrupt.id for interrupt in e.outcome.interrupts]
        if len(set(ids)) < len(ids):
            twice = next(i for n, i in enumerate(ids) if i in ids[:n])
            raise fail(
                Rule.DUPLICATE_INTERRUPT_ID,
                f"Cannot send 'RUN_FINISHED' with two interrupts carrying the id '{twice}'. "
                "An interrupt id is unique within the run: a resume entry answers it by id.",
            )


def check_pending(
    e: ev.RunFinishedEvent, started: Collection[str], answered: Collection[str]
) -> None:
    """Refuse a success whose `pendingToolCallIds` names a call the run did not leave open.

    The client takes a non-empty list on trust (it derives the list itself only when the list
    is absent): it would wait for a result to a call nobody made, or run again a call the run
    already answered. `started` and `answered` are the run's calls (the ledger keeps them).
    """
    if not isinstance(e.outcome, SuccessOutcome):
        return
    for call in e.outcome.pending_tool_call_ids or ():
        if call not in started:
            raise fail(
                Rule.PENDING_CALL_UNKNOWN,
                f"Cannot send 'RUN_FINISHED' with '{call}' in pendingToolCallIds: this run "
                "started no tool call of that id. List only the calls this run started and "
                "left for the client, or leave the list out and the client derives it.",
            )
        if call in answered:
            raise fail(
                Rule.PENDING_CALL_ANSWERED,
                f"Cannot send 'RUN_FINISHED' with '{call}' in pendingToolCallIds: this run "
                "already sent that call's TOOL_CALL_RESULT. List only the calls left without "
                "a result, or leave the list out and the client derives it.",
            )


def check_ended(phase: Phase, run_id: str | None) -> None:
    """Refuse the end of a stream that never started a run, or whose last run is still active."""
    if phase is _RUNNING:
        what = f"run '{run_id}' is still active"
    elif phase is _IDLE:
        what = "no run was started"
    else:
        return
    raise fail(
        Rule.TRUNCATED,
        f"The stream ended without a terminal event: {what}. End every run with "
        "'RUN_FINISHED' or 'RUN_ERROR'.",
    )
