"""The ordering verifier: every event agui emits is checked before it leaves the server.

A malformed AG-UI stream usually fails far from its cause: the browser's client rejects an event
three hops downstream, with the agent's stack long gone. agui checks each event on the server as
it is emitted, so a broken rule is named where it was broken, in the call that broke it.

`Verifier` is sans-IO, like h11: `observe(event)` accepts the event and updates its state, or raises
`agui.errors.ProtocolViolation` naming one `Rule` and leaves its state exactly as it was (every
check runs before anything changes), so the run driver can still end the run with `RUN_ERROR`.
`finish()` checks the end of the stream. The rules mirror the official 1.0 TypeScript client
(`verifyEvents` after its chunk expansion, `agui._protocol.chunk_lanes`), and where that
client has an error text, our message contains it verbatim. We are stricter on purpose in six
places: a stream must end with a terminal event; a `RUN_FINISHED` must name the run and thread of
its `RUN_STARTED` (and all runs of a stream one thread); a `RUN_STARTED` may not name a run the
stream has already run (the protocol never reuses a runId on a thread); a `TOOL_CALL_RESULT` must
follow its call's `TOOL_CALL_END` and answer a call that this stream, the run input or the caller
(`known_tool_call_ids`) knows, so a resumed run may still answer an earlier run's call; and a
`TOOL_CALL_START` may not reuse the id of one of those calls, where the client only warns ("tool
call '...' already exists") and overwrites the earlier call with the new one. A message id may be
reused: the client appends to that message. And the `pendingToolCallIds` of a success must name
calls this run started and did not answer: the client takes a non-empty list on trust.

Each concern has its module: the run lifecycle is a transition table in the h11 style, consulted
first for every event (`_lifecycle`); messages, tool calls and reasoning are kept in a ledger
(`_ledger`, with `_kinds` and the chunk expansion checked, `_chunks`); steps and subagents are
`_scopes`. Which of them checks each event type is one exhaustive `match` (`_checks`), compiled
with the lifecycle table into dispatch tables once per process, so a verifier builds none.
`Rule` sits below `agui.errors` (`agui._protocol.rules`, so `ProtocolViolation.rule` is a `Rule`
with no import cycle); this module is its public home.

The protocol's `null` rules (`subagentRunId: null` and other optionals), missing required fields
(`SUBAGENT_STARTED` without a `name`) and malformed outcomes cannot exist on a typed event: the
models refuse them when an event is built or parsed (`agui.errors.MalformedEvent`).

| rule | description |
| --- | --- |
| first-event-not-run-started | A stream opens with RUN_STARTED, or with RUN_ERROR. |
| nested-run-started | No RUN_STARTED while a run is still active. |
| event-after-run-finished | After RUN_FINISHED, only RUN_ERROR or RUN_STARTED. |
| event-after-run-error | After RUN_ERROR, only a new RUN_STARTED. |
| run-id-mismatch | RUN_FINISHED names the runId of its RUN_STARTED. |
| thread-id-mismatch | Every run boundary of a stream names one threadId. |
| run-id-reused | No RUN_STARTED for a runId the stream has already run. |
| open-blocks-at-run-finished | No RUN_FINISHED over open steps, messages or calls. |
| duplicate-interrupt-id | The interrupts of a RUN_FINISHED have distinct ids. |
| pending-call-unknown | pendingToolCallIds lists only calls this run started. |
| pending-call-answered | pendingToolCallIds lists no call this run answered. |
| truncated | A stream ends after its last run's terminal event. |
| message-already-open | No TEXT_MESSAGE_START for a message still open. |
| message-not-open | Text content and ends need an open text message. |
| tool-call-already-open | No TOOL_CALL_START for a tool call still open. |
| tool-call-not-open | Tool call args and ends need an open tool call. |
| tool-call-id-reused | No TOOL_CALL_START for a call id the stream or input has. |
| tool-result-before-end | A tool call's result comes after its TOOL_CALL_END. |
| tool-result-unknown-call | A result answers a call the stream or input knows. |
| step-already-open | No STEP_STARTED for a step its owner has open. |
| step-not-open | STEP_FINISHED needs an open step of that name. |
| step-owner-mismatch | A step is finished by whoever started it. |
| reasoning-already-open | No REASONING_START for a span still open. |
| reasoning-not-open | REASONING_END needs an open reasoning span. |
| reasoning-message-already-open | No REASONING_MESSAGE_START for one still open. |
| reasoning-message-not-open | Reasoning content and ends need an open message. |
| chunk-missing-id | The first chunk of a stream carries its id. |
| chunk-missing-name | A call's first TOOL_CALL_CHUNK carries its name. |
| chunk-conflict | A continuation chunk agrees with its opener. |
| chunk-ambiguous | An id-less, untagged chunk fits one open lane. |
| subagent-already-active | No SUBAGENT_STARTED for a subagent still active. |
| subagent-id-reused | A subagent id is started once per run. |
| subagent-parent-not-started | A parent subagent starts before its child. |
| subagent-not-active | A subagent's terminal event needs it active. |
| subagent-active-at-run-finished | No RUN_FINISHED while a subagent is active. |
| subagent-attribution-mismatch | A subagentRunId agrees with its entity's owner. |
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from agui._protocol.rules import Rule
from agui.errors import ProtocolViolation
from agui.verify._blocks import OpenBlock, open_blocks
from agui.verify._checks import Runs, tables
from agui.verify._kinds import KINDS, SPAN, TEXT, THOUGHT, TOOL
from agui.verify._ledger import Ledger
from agui.verify._lifecycle import (
    Phase,
    check_ended,
    check_finished,
    check_interrupts,
    check_new_run,
    check_pending,
    check_thread,
    refusal,
)
from agui.verify._scopes import Scopes

if TYPE_CHECKING:
    from agui import events as ev

__all__ = ["OpenBlock", "Rule", "Verifier"]

_IDLE, _RUNNING = Phase.IDLE, Phase.RUNNING  # module globals: the fast paths compare them often


class Verifier:
    """Checks an AG-UI event stream, one event at a time, against every `Rule`.

    Args:
        started: `(thread_id, run_id)` of a `RUN_STARTED` to take as already observed, for a run
            checked without it (the `RunContext.new` unit-test harness).
        known_tool_call_ids: Tool calls a `TOOL_CALL_RESULT` may answer without their start in
            this stream; with `started`, pass the calls of the run input's messages here, since
            the `RUN_STARTED` that would carry them is not observed.

    Examples:
        >>> from agui.events import RunStartedEvent, TextMessageContentEvent
        >>> verifier = Verifier()
        >>> verifier.observe(RunStartedEvent(thread_id="t", run_id="r"))
        >>> try:
        ...     verifier.observe(TextMessageContentEvent(message_id="m1", delta="Hi"))
        ... except ProtocolViolation as violation:
        ...     print(violation.rule.value)
        message-not-open
        >>> verifier.running
        True
    """

    def __init__(
        self, *, started: tuple[str, str] | None = None, known_tool_call_ids: Iterable[str] = ()
    ) -> None:
        self._phase = _IDLE
        self._stream_thread: str | None = None
        self._thread_id: str | None = None
        self._run_id: str | None = None
        self._run_ids: dict[str, None] = {}  # every run the stream has started
        self._ledger = ledger = Ledger(known_tool_call_ids)
        self._scopes = scopes = Scopes(ledger)
        # The parts each event type is checked on (`_checks.check_of`), by index; the verifier
        # itself is part 0 (`RUNS`).
        self._parts = (self, ledger, scopes)
        if started is not None:
            self._begin(*started)
        self._enter(_IDLE if started is None else _RUNNING)

    def observe(self, event: ev.Event) -> None:
        """Accept an event, or refuse it and leave the verifier exactly as it was.

        Raises:
            ProtocolViolation: the event breaks a rule; `.rule` names it, `.event` is the event.

        Examples:
            >>> from agui.events import RunFinishedEvent, TextMessageEndEvent
            >>> from agui.events import TextMessageContentEvent, TextMessageStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(TextMessageStartEvent(message_id="m1"))
            >>> verifier.observe(TextMessageContentEvent(message_id="m1", delta="Hi"))
            >>> verifier.open_messages
            ('m1',)
            >>> verifier.observe(TextMessageEndEvent(message_id="m1"))
            >>> verifier.observe(RunFinishedEvent(thread_id="t", run_id="r"))
            >>> verifier.running
            False
        """
        part, check = self._handlers[event.type]
        try:
            check(self._parts[part], event)
        except ProtocolViolation as violation:
            violation.event = event
            raise

    def finish(self) -> None:
        """Check that the stream may end here: a run did start, and none is still active.

        Raises:
            ProtocolViolation: with `Rule.TRUNCATED`, when the stream would end without a
                terminal event.

        Examples:
            >>> try:
            ...     Verifier(started=("t", "r")).finish()
            ... except ProtocolViolation as violation:
            ...     print(violation.rule.value, "-", str(violation).split(":")[0])
            truncated - The stream ended without a terminal event
        """
        check_ended(self._phase, self._run_id)

    @property
    def running(self) -> bool:
        """Whether a run has started and not yet ended with `RUN_FINISHED` or `RUN_ERROR`.

        Examples:
            >>> Verifier().running, Verifier(started=("t", "r")).running
            (False, True)
        """
        return self._phase is _RUNNING

    @property
    def open_messages(self) -> tuple[str, ...]:
        """Text messages that need a `TEXT_MESSAGE_END`, in the order they opened.

        A message assembled from chunks is in `open_chunks` instead: its chunk stream ends it.

        Examples:
            >>> from agui.events import TextMessageStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(TextMessageStartEvent(message_id="m1"))
            >>> verifier.open_messages
            ('m1',)
        """
        return self._ledger.unheld(TEXT)

    def knows_tool_call(self, call_id: str) -> bool:
        """Whether `call_id` is taken: in the run input's history or started in this stream.

        A tool call's id is unique in its thread (rule `tool-call-id-reused`); the tool loop
        asks this before it sends a call under the id a model gave it.

        Examples:
            >>> from agui.events import ToolCallStartEvent
            >>> verifier = Verifier(started=("t", "r"), known_tool_call_ids=["c0"])
            >>> verifier.observe(ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"))
            >>> [verifier.knows_tool_call(call) for call in ("c0", "c1", "c2")]
            [True, True, False]
        """
        return call_id in self._ledger.known_calls

    @property
    def open_tool_calls(self) -> tuple[str, ...]:
        """Tool calls that need a `TOOL_CALL_END`, in the order they opened.

        Examples:
            >>> from agui.events import ToolCallStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"))
            >>> verifier.open_tool_calls
            ('c1',)
        """
        return self._ledger.unheld(TOOL)

    @property
    def open_reasoning(self) -> tuple[str, ...]:
        """Reasoning spans that need a `REASONING_END`, in the order they opened.

        Examples:
            >>> from agui.events import ReasoningStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(ReasoningStartEvent(message_id="s1"))
            >>> verifier.open_reasoning
            ('s1',)
        """
        return self._ledger.unheld(SPAN)

    @property
    def open_reasoning_messages(self) -> tuple[str, ...]:
        """Reasoning messages that need a `REASONING_MESSAGE_END`, in the order they opened.

        Examples:
            >>> from agui.events import ReasoningMessageStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(ReasoningMessageStartEvent(message_id="r1"))
            >>> verifier.open_reasoning_messages
            ('r1',)
        """
        return self._ledger.unheld(THOUGHT)

    @property
    def open_steps(self) -> tuple[tuple[str, str | None], ...]:
        """Open steps as `(step_name, subagent_run_id)` pairs, in the order they opened.

        Examples:
            >>> from agui.events import StepStartedEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(StepStartedEvent(step_name="plan"))
            >>> verifier.open_steps
            (('plan', None),)
        """
        return tuple((name, owner) for owner, name in self._scopes.steps)

    @property
    def active_subagents(self) -> tuple[str, ...]:
        """Subagents started and not yet finished or errored, in the order they started.

        Examples:
            >>> from agui.events import SubagentStartedEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(SubagentStartedEvent(subagent_run_id="s1", name="researcher"))
            >>> verifier.active_subagents
            ('s1',)
        """
        return tuple(self._scopes.active)

    @property
    def open_chunks(self) -> tuple[tuple[str | None, str, str], ...]:
        """Open chunk streams as `(subagent_run_id, chunk_type, id)`; one per lane at most.

        Examples:
            >>> from agui.events import TextMessageChunkEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(TextMessageChunkEvent(message_id="m1", delta="Hi"))
            >>> verifier.open_chunks
            ((None, 'TEXT_MESSAGE_CHUNK', 'm1'),)
        """
        lanes = self._ledger.lanes.items()
        return tuple((lane, KINDS[s.kind].chunk, s.entity_id) for lane, s in lanes)

    @property
    def open_blocks(self) -> tuple[OpenBlock, ...]:
        """The active run's open blocks of every kind, in opening order, with what closes each.

        Examples:
            >>> from agui.events import StepStartedEvent, TextMessageStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(StepStartedEvent(step_name="plan"))
            >>> verifier.observe(TextMessageStartEvent(message_id="m1"))
            >>> [(block.id, block.closing.type) for block in verifier.open_blocks]
            [('plan', 'STEP_FINISHED'), ('m1', 'TEXT_MESSAGE_END')]
        """
        return open_blocks(self._ledger, self._scopes) if self._phase is _RUNNING else ()

    def _snapshot(self) -> tuple[object, ...]:
        """Everything the verifier holds, copied, so tests can compare it across a rejection."""
        return (
            self._phase, self._stream_thread, self._thread_id, self._run_id,
            self._scopes.snapshot(), self._ledger.snapshot(),
        )  # fmt: skip

    # The lifecycle table, compiled: each phase's row is a dispatch table built once per process
    # (`_TABLES`, at the end of the class), shared by every verifier.

    def _enter(self, phase: Phase) -> None:
        self._phase, self._handlers = phase, self._TABLES[phase]

    def _refuse(self, event: ev.Event) -> None:
        raise refusal(self._phase, event.type, self._run_id)

    def _move(self, event: ev.Event, *, check: Callable[[Any, Any], None], after: Phase) -> None:
        check(self, event)
        self._enter(after)

    # The run boundaries: each checks everything first and changes state only at its end.

    def _begin(self, thread_id: str, run_id: str) -> None:
        self._thread_id, self._run_id = thread_id, run_id
        self._run_ids[run_id] = None
        if self._stream_thread is None:
            self._stream_thread = thread_id

    def _run_started(self, e: ev.RunStartedEvent) -> None:
        check_thread(self._stream_thread, e)
        check_new_run(self._run_ids, e)
        self._ledger.reset()
        self._scopes.reset()
        self._begin(e.thread_id, e.run_id)
        if e.input is not None:
            self._ledger.seed(e.input.messages, authoritative=False)

    def _run_finished(self, e: ev.RunFinishedEvent) -> None:
        self._ledger.check_lanes()
        check_finished(e, self._run_id, self._thread_id)
        self._scopes.check_steps_closed()
        self._ledger.check_closed()
        self._scopes.check_subagents_closed()
        check_interrupts(e)
        check_pending(e, self._ledger.run_calls, self._ledger.run_answered)
        self._ledger.drop_lanes()

    def _run_error(self, _event: ev.RunErrorEvent) -> None:
        # A run may fail at any point, over anything still open: RUN_ERROR is the driver's last
        # resort, so the chunk streams it closes are not checked and it is never refused.
        self._ledger.drop_lanes()

    _TABLES = tables(Runs(_run_started, _run_finished, _run_error, _refuse, _move))
