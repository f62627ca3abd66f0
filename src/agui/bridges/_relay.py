"""The relay: one run of a foreign event stream, taken through agui's run context by its rules.

A bridge's agent reads the stream an adapter (or another endpoint) produces and passes each
event on through `ctx.emit`, so the verifier checks every one and interleaved blocks (parallel
calls, subagent lanes) pass as they came, foreign ids verbatim. The run's boundaries are agui's
own: the driver has sent `RUN_STARTED` and sends the one terminal event, so the foreign ones are
not passed on but read.

| foreign event | what the relay does |
| --- | --- |
| the first `RUN_STARTED` | swallowed; a thread or run id other than agui's is logged |
| a second `RUN_STARTED` | dropped (repair) or refused (strict, `nested-run-started`) |
| `RUN_FINISHED` | its outcome is the agent's; `result` and `usage` kept |
| `RUN_ERROR` | `agui.errors.UpstreamError` with its code; the message only in debug |
| anything after a terminal event | dropped, and logged |
| no terminal event at all | `agui.errors.UpstreamTruncated` (`UPSTREAM_TRUNCATED`) |
| `STATE_SNAPSHOT` / `STATE_DELTA` | set or applied to the run's state, then published |
| a `STATE_DELTA` that does not apply | a `STATE_SNAPSHOT` of the state it implies, or fatal |
| any other | `ctx.emit`, verified: a refusal is dropped and logged, or fatal (strict) |

Publishing the state sends the smaller of snapshot or delta against what the client holds (the
run's state manager, `agui.state`), so a client gets deltas where the adapter sends snapshots.

In repair mode the relay also mends a foreign `RUN_FINISHED` the verifier would refuse: it closes
the blocks left open (`RunContext.close_open`) and keeps of a success's `pendingToolCallIds`
only the calls this run started and did not answer. Every repair is logged (logger
`agui.bridges`, level WARNING) with the rule it mends, so a misbehaving adapter is heard of.
"""

from __future__ import annotations

import copy
import itertools
import logging
from typing import TYPE_CHECKING, cast, get_args

from pydantic import JsonValue
from typing_extensions import assert_never

from agui.errors import AguiError, PatchError, ProtocolViolation, UpstreamError, UpstreamTruncated
from agui.events import (
    Event,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
)
from agui.patch import apply, pointer_tokens
from agui.types import RunOutcome, SuccessOutcome
from agui.verify import Rule

if TYPE_CHECKING:
    from agui.context import RunContext

__all__ = ["Relay"]

_log = logging.getLogger("agui.bridges")


_PASSED = frozenset(
    cls
    for cls in get_args(get_args(Event)[0])
    if cls
    not in (RunStartedEvent, RunFinishedEvent, RunErrorEvent, StateSnapshotEvent, StateDeltaEvent)
)
"""The event types the relay sends on as they came: all but the run boundaries and state."""


class Relay:
    """One run's relay: takes the foreign events in order, then gives the run's outcome."""

    def __init__(self, ctx: RunContext[JsonValue], *, strict: bool) -> None:
        self._ctx = ctx
        self._strict = strict
        self._started = False
        self.terminal: RunFinishedEvent | RunErrorEvent | None = None
        self.taken = 0

    def take(self, event: Event) -> None:
        """Pass one foreign event on by the rules (see the module's table)."""
        self.taken += 1
        if self.terminal is not None:
            self._late(event, self.terminal)
        elif type(event) in _PASSED:
            self.emit(event)  # the bulk of a stream, sent on at once
        else:
            match event:
                case RunFinishedEvent() | RunErrorEvent():
                    self.terminal = event
                case RunStartedEvent():
                    self._run_started(event)
                case _:  # what _PASSED leaves of the event types is the state's two
                    self._state(cast("StateSnapshotEvent | StateDeltaEvent", event))

    def _late(self, event: Event, terminal: RunFinishedEvent | RunErrorEvent) -> None:
        failed = isinstance(terminal, RunErrorEvent)
        rule = Rule.EVENT_AFTER_RUN_ERROR if failed else Rule.EVENT_AFTER_RUN_FINISHED
        _log.warning(
            "dropped %s from the upstream of run %s: it came after the upstream's terminal "
            "event (rule %s)",
            event.type,
            self._ctx.run_id,
            rule.value,
        )

    def emit(self, event: Event) -> None:
        """Emit `event`, verified; a refusal is repaired by dropping it, or fails the run."""
        try:
            self._ctx.emit(event)
        except ProtocolViolation as violation:
            self.refuse(event.type, violation.rule.value, violation)

    def refuse(self, what: str, rule: str, error: AguiError) -> None:
        """Drop what breaks `rule` and log it (repair), or fail the run with `error` (strict)."""
        if self._strict:
            raise error
        _log.warning(
            "dropped %s from the upstream of run %s: it breaks rule %s: %s",
            what,
            self._ctx.run_id,
            rule,
            error,
        )

    def _run_started(self, event: RunStartedEvent) -> None:
        ctx = self._ctx
        if self._started:
            message = (
                f"the upstream started a second run ({event.run_id!r}) inside run {ctx.run_id!r}"
                "; an AG-UI stream holds one run at a time"
            )
            rule = Rule.NESTED_RUN_STARTED
            self.refuse(event.type, rule.value, ProtocolViolation(message, rule=rule))
            return
        self._started = True
        if (event.thread_id, event.run_id) != (ctx.thread_id, ctx.run_id):
            _log.warning(
                "the upstream of run %s started thread %r run %r; agui's thread %r and run %r "
                "are kept",
                ctx.run_id,
                event.thread_id,
                event.run_id,
                ctx.thread_id,
                ctx.run_id,
            )

    def _state(self, event: StateSnapshotEvent | StateDeltaEvent) -> None:
        ctx = self._ctx
        if event.subagent_run_id is not None:
            self.emit(event)  # a subagent's own state: passed on as it is
            return
        match event:
            case StateSnapshotEvent():
                ctx.state = event.snapshot
            case StateDeltaEvent():
                ops = [op.model_dump(mode="json", by_alias=True) for op in event.delta]
                try:
                    ctx.state = apply(ctx.state, ops)
                except PatchError as error:
                    self._resync(ops, error)
                    return
            case _:
                assert_never(event)
        ctx.publish_state()

    def _resync(self, ops: list[dict[str, JsonValue]], error: PatchError) -> None:
        """A foreign delta that does not apply: fatal (strict), or a snapshot in its place.

        Dropping it would leave the client on a state the upstream no longer builds on, each
        later delta drifting further, so the client gets a `STATE_SNAPSHOT` of the state the
        delta implies where that is known (`_implied`), else of the state the run holds.
        """
        if self._strict:
            raise error
        ctx = self._ctx
        implied = _implied(ctx.state, ops)
        _log.warning(
            "replaced a STATE_DELTA from the upstream of run %s that breaks rule %s (%s) with a "
            "STATE_SNAPSHOT of %s",
            ctx.run_id,
            error.code,
            error,
            "the state it implies" if implied is not None else "the run's state",
        )
        if implied is not None:
            ctx.state = implied
        self.emit(StateSnapshotEvent(snapshot=ctx.state))

    def outcome(self) -> RunOutcome | None:
        """The run's outcome, from the upstream's terminal event.

        Raises:
            UpstreamError: the upstream ended with `RUN_ERROR`.
            UpstreamTruncated: the upstream ended with no terminal event.
        """
        ctx, terminal = self._ctx, self.terminal
        if terminal is None:
            message = (
                f"the upstream's stream of run {ctx.run_id!r} ended after {self.taken} events "
                "without a terminal event; an AG-UI run ends with RUN_FINISHED or RUN_ERROR"
            )
            raise UpstreamTruncated(message)
        ctx.usage.extend(terminal.usage or ())
        if isinstance(terminal, RunErrorEvent):
            raise UpstreamError(terminal.message, wire_code=terminal.code)
        if terminal.result is not None:
            ctx.result = terminal.result
        if self._strict:
            return terminal.outcome
        return self._mended(terminal.outcome)

    def _mended(self, outcome: RunOutcome | None) -> RunOutcome | None:
        ctx = self._ctx
        if any(block.closing is not None for block in ctx.verifier.open_blocks):
            _log.warning(
                "closed the blocks the upstream of run %s left open at its RUN_FINISHED (rule %s)",
                ctx.run_id,
                Rule.OPEN_BLOCKS_AT_RUN_FINISHED.value,
            )
            if failures := ctx.close_open():
                raise failures[0]
        if isinstance(outcome, SuccessOutcome) and outcome.pending_tool_call_ids:
            pending = ctx.pending_tool_call_ids
            kept = [call for call in outcome.pending_tool_call_ids if call in pending]
            if kept != outcome.pending_tool_call_ids:
                _log.warning(
                    "kept of the upstream's pendingToolCallIds %s only the calls run %s started "
                    "and did not answer (rule %s)",
                    outcome.pending_tool_call_ids,
                    ctx.run_id,
                    Rule.PENDING_CALL_UNKNOWN.value,
                )
                return SuccessOutcome(pending_tool_call_ids=kept or None)
        return outcome


def _implied(state: JsonValue, ops: list[dict[str, JsonValue]]) -> JsonValue | None:
    """The state a delta that does not apply was meant to make, where that is plain; else `None`.

    The deltas adapters get wrong are ones written against a state with more in it: a
    `replace` of a member that is not there yet, an `add` below a member that is not there
    (`/todos/-` before any todo). Each operation is applied in turn, and one that fails is
    read the way it was meant: a `replace` or `add` adds its value, making the members on its
    path (an array where the next token is `-` or an index), and a `remove` of what is absent
    leaves it absent. What else fails (a `test`, a `move` from nowhere) says no more.
    """
    for op in ops:
        try:
            state = apply(state, [op])
            continue
        except PatchError:
            pass
        if op["op"] == "remove":
            continue
        if op["op"] not in ("add", "replace"):
            return None
        made = _with_path(state, cast("str", op["path"]))
        try:
            state = apply(made, [{"op": "add", "path": op["path"], "value": op["value"]}])
        except PatchError:
            return None  # a member on the path that is not a container
    return state


def _with_path(state: JsonValue, path: str) -> JsonValue:
    """A copy of `state` with the objects and arrays on `path` up to its last token made."""
    copied = copy.deepcopy(state)
    tokens = pointer_tokens(path)
    node: JsonValue = copied
    for token, after in itertools.pairwise(tokens):
        if isinstance(node, dict):
            empty: JsonValue = [] if after == "-" or after.isdigit() else {}
            node = node.setdefault(token, empty)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            break  # the add then fails, and says why
    return copied
