"""The ordering verifier: every event agui emits is checked before it leaves the server.

A malformed AG-UI stream usually fails far from its cause: the browser's client rejects an event
three hops downstream, with the agent's stack long gone. agui checks each event on the server as
it is emitted, so a broken rule is named where it was broken, in the call that broke it.

`Verifier` is sans-IO, like h11: `observe(event)` accepts the event and updates its state, or raises
`agui.errors.ProtocolViolation` naming one `Rule` and leaves its state exactly as it was (every
check runs before anything changes), so the run driver can still end the run with `RUN_ERROR`.
`finish()` checks the end of the stream. The rules mirror the official 1.0 TypeScript client
(`verifyEvents` after its chunk expansion, which `agui.verify._ledger` models), and where that
client has an error text, our message contains it verbatim. We are stricter on purpose in three
places: a stream must end with a terminal event; a `RUN_FINISHED` must name the run and thread of
its `RUN_STARTED` (and all runs of a stream one thread); a `TOOL_CALL_RESULT` must follow its call's
`TOOL_CALL_END` and answer a call that this stream, the run input or the caller
(`known_tool_call_ids`) knows, so a resumed run may still answer an earlier run's call.

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
| open-blocks-at-run-finished | No RUN_FINISHED over open steps, messages or calls. |
| duplicate-interrupt-id | The interrupts of a RUN_FINISHED have distinct ids. |
| truncated | A stream ends after its last run's terminal event. |
| message-already-open | No TEXT_MESSAGE_START for a message still open. |
| message-not-open | Text content and ends need an open text message. |
| tool-call-already-open | No TOOL_CALL_START for a tool call still open. |
| tool-call-not-open | Tool call args and ends need an open tool call. |
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
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn

from agui.errors import ProtocolViolation
from agui.types import InterruptOutcome
from agui.verify._ledger import SPAN, TEXT, THOUGHT, TOOL, Ledger, fail

if TYPE_CHECKING:
    from agui import events as ev

__all__ = ["Rule", "Verifier"]


class Rule(str, Enum):
    """The closed set of rules the verifier enforces; each value is a stable kebab-case name.

    Examples:
        >>> Rule.TOOL_RESULT_BEFORE_END.value
        'tool-result-before-end'
        >>> Rule("truncated") is Rule.TRUNCATED
        True
    """

    FIRST_EVENT_NOT_RUN_STARTED = "first-event-not-run-started"
    NESTED_RUN_STARTED = "nested-run-started"
    EVENT_AFTER_RUN_FINISHED = "event-after-run-finished"
    EVENT_AFTER_RUN_ERROR = "event-after-run-error"
    RUN_ID_MISMATCH = "run-id-mismatch"
    THREAD_ID_MISMATCH = "thread-id-mismatch"
    OPEN_BLOCKS_AT_RUN_FINISHED = "open-blocks-at-run-finished"
    DUPLICATE_INTERRUPT_ID = "duplicate-interrupt-id"
    TRUNCATED = "truncated"
    MESSAGE_ALREADY_OPEN = "message-already-open"
    MESSAGE_NOT_OPEN = "message-not-open"
    TOOL_CALL_ALREADY_OPEN = "tool-call-already-open"
    TOOL_CALL_NOT_OPEN = "tool-call-not-open"
    TOOL_RESULT_BEFORE_END = "tool-result-before-end"
    TOOL_RESULT_UNKNOWN_CALL = "tool-result-unknown-call"
    STEP_ALREADY_OPEN = "step-already-open"
    STEP_NOT_OPEN = "step-not-open"
    STEP_OWNER_MISMATCH = "step-owner-mismatch"
    REASONING_ALREADY_OPEN = "reasoning-already-open"
    REASONING_NOT_OPEN = "reasoning-not-open"
    REASONING_MESSAGE_ALREADY_OPEN = "reasoning-message-already-open"
    REASONING_MESSAGE_NOT_OPEN = "reasoning-message-not-open"
    CHUNK_MISSING_ID = "chunk-missing-id"
    CHUNK_MISSING_NAME = "chunk-missing-name"
    CHUNK_CONFLICT = "chunk-conflict"
    CHUNK_AMBIGUOUS = "chunk-ambiguous"
    SUBAGENT_ALREADY_ACTIVE = "subagent-already-active"
    SUBAGENT_ID_REUSED = "subagent-id-reused"
    SUBAGENT_PARENT_NOT_STARTED = "subagent-parent-not-started"
    SUBAGENT_NOT_ACTIVE = "subagent-not-active"
    SUBAGENT_ACTIVE_AT_RUN_FINISHED = "subagent-active-at-run-finished"
    SUBAGENT_ATTRIBUTION_MISMATCH = "subagent-attribution-mismatch"

    @property
    def description(self) -> str:
        """What the rule requires, in one line (the module docstring's table lists them all).

        Examples:
            >>> print(Rule.NESTED_RUN_STARTED.description)
            No RUN_STARTED while a run is still active.
        """
        return _DESCRIPTIONS[self]


_DESCRIPTIONS: dict[Rule, str] = {
    Rule.FIRST_EVENT_NOT_RUN_STARTED: "A stream opens with RUN_STARTED, or with RUN_ERROR.",
    Rule.NESTED_RUN_STARTED: "No RUN_STARTED while a run is still active.",
    Rule.EVENT_AFTER_RUN_FINISHED: "After RUN_FINISHED, only RUN_ERROR or RUN_STARTED.",
    Rule.EVENT_AFTER_RUN_ERROR: "After RUN_ERROR, only a new RUN_STARTED.",
    Rule.RUN_ID_MISMATCH: "RUN_FINISHED names the runId of its RUN_STARTED.",
    Rule.THREAD_ID_MISMATCH: "Every run boundary of a stream names one threadId.",
    Rule.OPEN_BLOCKS_AT_RUN_FINISHED: "No RUN_FINISHED over open steps, messages or calls.",
    Rule.DUPLICATE_INTERRUPT_ID: "The interrupts of a RUN_FINISHED have distinct ids.",
    Rule.TRUNCATED: "A stream ends after its last run's terminal event.",
    Rule.MESSAGE_ALREADY_OPEN: "No TEXT_MESSAGE_START for a message still open.",
    Rule.MESSAGE_NOT_OPEN: "Text content and ends need an open text message.",
    Rule.TOOL_CALL_ALREADY_OPEN: "No TOOL_CALL_START for a tool call still open.",
    Rule.TOOL_CALL_NOT_OPEN: "Tool call args and ends need an open tool call.",
    Rule.TOOL_RESULT_BEFORE_END: "A tool call's result comes after its TOOL_CALL_END.",
    Rule.TOOL_RESULT_UNKNOWN_CALL: "A result answers a call the stream or input knows.",
    Rule.STEP_ALREADY_OPEN: "No STEP_STARTED for a step its owner has open.",
    Rule.STEP_NOT_OPEN: "STEP_FINISHED needs an open step of that name.",
    Rule.STEP_OWNER_MISMATCH: "A step is finished by whoever started it.",
    Rule.REASONING_ALREADY_OPEN: "No REASONING_START for a span still open.",
    Rule.REASONING_NOT_OPEN: "REASONING_END needs an open reasoning span.",
    Rule.REASONING_MESSAGE_ALREADY_OPEN: "No REASONING_MESSAGE_START for one still open.",
    Rule.REASONING_MESSAGE_NOT_OPEN: "Reasoning content and ends need an open message.",
    Rule.CHUNK_MISSING_ID: "The first chunk of a stream carries its id.",
    Rule.CHUNK_MISSING_NAME: "A call's first TOOL_CALL_CHUNK carries its name.",
    Rule.CHUNK_CONFLICT: "A continuation chunk agrees with its opener.",
    Rule.CHUNK_AMBIGUOUS: "An id-less, untagged chunk fits one open lane.",
    Rule.SUBAGENT_ALREADY_ACTIVE: "No SUBAGENT_STARTED for a subagent still active.",
    Rule.SUBAGENT_ID_REUSED: "A subagent id is started once per run.",
    Rule.SUBAGENT_PARENT_NOT_STARTED: "A parent subagent starts before its child.",
    Rule.SUBAGENT_NOT_ACTIVE: "A subagent's terminal event needs it active.",
    Rule.SUBAGENT_ACTIVE_AT_RUN_FINISHED: "No RUN_FINISHED while a subagent is active.",
    Rule.SUBAGENT_ATTRIBUTION_MISMATCH: "A subagentRunId agrees with its entity's owner.",
}

_NONE, _RUNNING, _FINISHED, _ERRORED = range(4)
_FREE = frozenset({"RUN_STARTED", "RUN_ERROR"})  # the events a run that is not active may see
_AT_FINISH = (
    (TEXT, "text messages"),
    (THOUGHT, "reasoning messages"),
    (SPAN, "reasoning spans"),
    (TOOL, "tool calls"),
)


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
        self._phase = _NONE
        self._stream_thread: str | None = None
        self._thread_id: str | None = None
        self._run_id: str | None = None
        self._ledger = Ledger(known_tool_call_ids)
        self._steps: dict[tuple[str | None, str], None] = {}
        self._subagents: dict[str, None] = {}
        self._ended_subagents: set[str] = set()
        self._handlers: dict[str, Callable[[Any], None]] = self._dispatch_table()
        if started is not None:
            self._begin(*started)

    def observe(self, event: ev.Event) -> None:
        """Accept `event`, or refuse it and leave the verifier exactly as it was.

        Raises:
            ProtocolViolation: `event` breaks a rule; `.rule` names it, `.event` is `event`.

        Examples:
            >>> from agui.events import RunFinishedEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(RunFinishedEvent(thread_id="t", run_id="r"))
            >>> verifier.running
            False
        """
        try:
            if self._phase != _RUNNING and event.type not in _FREE:
                self._outside_run(event.type)
            self._handlers[event.type](event)
        except ProtocolViolation as violation:
            violation.rule = Rule(violation.rule)  # the ledger names rules by value
            violation.event = event
            raise

    def admits_delta(self, kind: int, entity_id: str) -> bool:
        """Whether a streamed delta is accepted without a change: the run active, its block open.

        `kind` is the block's ledger index (`TEXT`, `TOOL`, `THOUGHT`, see `agui._record`).
        When this is `True`, observing the delta's event would accept it and change nothing, so
        the run context may queue the delta as a record; otherwise it observes the event.

        Examples:
            >>> from agui.events import TextMessageStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.admits_delta(0, "m1")
            False
            >>> verifier.observe(TextMessageStartEvent(message_id="m1"))
            >>> verifier.admits_delta(0, "m1")
            True
        """
        ledger = self._ledger
        return self._phase == _RUNNING and not ledger.lanes and entity_id in ledger.open[kind]

    def accept_start(self, entity_id: str) -> bool:
        """Open a text message in the common case, or change nothing.

        The common case is a handle's `TEXT_MESSAGE_START`: the run active, no chunk stream
        open, no subagent, the id not open. Then this does what observing the event would and
        returns `True`; otherwise it returns `False`, and the event must be observed.

        Examples:
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.accept_start("m1"), verifier.open_messages
            (True, ('m1',))
            >>> verifier.accept_start("m1")
            False
        """
        ledger = self._ledger
        opened = ledger.open_text
        if self._phase != _RUNNING or ledger.lanes or entity_id in opened:
            return False
        opened[entity_id] = None
        ledger.owners[TEXT].setdefault(entity_id, None)
        return True

    def accept_end(self, kind: int, entity_id: str) -> bool:
        """Close an open text message or tool call in the common case, or change nothing.

        The common case is the one a handle's closing event is in: the run active, the block
        open, no chunk stream open. Then this does what observing its `TEXT_MESSAGE_END` or
        `TOOL_CALL_END` would (`kind` is `TEXT` or `TOOL`) and returns `True`; otherwise it
        returns `False`, and the event must be observed.

        Examples:
            >>> from agui.events import ToolCallStartEvent
            >>> verifier = Verifier(started=("t", "r"))
            >>> verifier.observe(ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"))
            >>> verifier.accept_end(1, "c1"), verifier.open_tool_calls
            (True, ())
            >>> verifier.accept_end(1, "c1")
            False
        """
        ledger = self._ledger
        opened = ledger.open[kind]
        if self._phase != _RUNNING or ledger.lanes or entity_id not in opened:
            return False
        del opened[entity_id]
        return True

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
        if self._phase == _RUNNING:
            what = f"run '{self._run_id}' is still active"
        elif self._phase == _NONE:
            what = "no run was started"
        else:
            return
        raise fail(
            Rule.TRUNCATED,
            f"The stream ended without a terminal event: {what}. End every run with "
            "'RUN_FINISHED' or 'RUN_ERROR'.",
        )

    @property
    def running(self) -> bool:
        """Whether a run has started and not yet ended with `RUN_FINISHED` or `RUN_ERROR`.

        Examples:
            >>> Verifier().running, Verifier(started=("t", "r")).running
            (False, True)
        """
        return self._phase == _RUNNING

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
        return tuple((name, owner) for owner, name in self._steps)

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
        return tuple(self._subagents)

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
        chunk_types = ("TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK")
        lanes = self._ledger.lanes.items()
        return tuple((lane, chunk_types[s.kind], s.entity_id) for lane, s in lanes)

    def _snapshot(self) -> tuple[object, ...]:
        """Everything the verifier holds, copied, so tests can compare it across a rejection."""
        return (
            self._phase, self._stream_thread, self._thread_id, self._run_id,
            tuple(self._steps), tuple(self._subagents), frozenset(self._ended_subagents),
            self._ledger.snapshot(),
        )  # fmt: skip

    def _dispatch_table(self) -> dict[str, Callable[[Any], None]]:
        ledger = self._ledger
        return {
            "TEXT_MESSAGE_START": partial(ledger.message_start, TEXT),
            "TEXT_MESSAGE_CONTENT": ledger.text_content,
            "TEXT_MESSAGE_END": partial(ledger.message_end, TEXT),
            "TEXT_MESSAGE_CHUNK": ledger.text_chunk,
            "TOOL_CALL_START": ledger.tool_start,
            "TOOL_CALL_ARGS": ledger.tool_args,
            "TOOL_CALL_END": ledger.tool_end,
            "TOOL_CALL_CHUNK": ledger.tool_chunk,
            "TOOL_CALL_RESULT": ledger.tool_result,
            "STATE_SNAPSHOT": ledger.lane_event,
            "STATE_DELTA": ledger.lane_event,
            "MESSAGES_SNAPSHOT": ledger.messages_snapshot,
            "ACTIVITY_SNAPSHOT": ledger.activity_snapshot,
            "ACTIVITY_DELTA": ledger.activity_delta,
            "RAW": _stand_aside,
            "CUSTOM": ledger.lane_event,
            "RUN_STARTED": self._run_started,
            "RUN_FINISHED": self._run_finished,
            "RUN_ERROR": self._run_error,
            "STEP_STARTED": self._step_started,
            "STEP_FINISHED": self._step_finished,
            "REASONING_START": partial(ledger.message_start, SPAN),
            "REASONING_MESSAGE_START": partial(ledger.message_start, THOUGHT),
            "REASONING_MESSAGE_CONTENT": partial(ledger.message_content, THOUGHT),
            "REASONING_MESSAGE_END": partial(ledger.message_end, THOUGHT),
            "REASONING_MESSAGE_CHUNK": ledger.thought_chunk,
            "REASONING_END": partial(ledger.message_end, SPAN),
            "REASONING_ENCRYPTED_VALUE": ledger.encrypted_value,
            "SUBAGENT_STARTED": self._subagent_started,
            "SUBAGENT_FINISHED": self._subagent_ended,
            "SUBAGENT_ERROR": self._subagent_ended,
        }

    # The run lifecycle. Each handler checks everything first and changes state only at its end.

    def _outside_run(self, type_: str) -> NoReturn:
        if self._phase == _ERRORED:
            raise fail(
                Rule.EVENT_AFTER_RUN_ERROR,
                f"Cannot send event type '{type_}': The run has already errored with 'RUN_ERROR'."
                " No further events can be sent.",
            )
        if self._phase == _FINISHED:
            raise fail(
                Rule.EVENT_AFTER_RUN_FINISHED,
                f"Cannot send event type '{type_}': The run has already finished with "
                "'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.",
            )
        raise fail(
            Rule.FIRST_EVENT_NOT_RUN_STARTED,
            f"First event must be 'RUN_STARTED' (or 'RUN_ERROR'), not '{type_}'.",
        )

    def _begin(self, thread_id: str, run_id: str) -> None:
        self._phase = _RUNNING
        self._thread_id, self._run_id = thread_id, run_id
        if self._stream_thread is None:
            self._stream_thread = thread_id

    def _run_started(self, e: ev.RunStartedEvent) -> None:
        if self._phase == _RUNNING:
            raise fail(
                Rule.NESTED_RUN_STARTED,
                "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be "
                f"finished with 'RUN_FINISHED' before starting a new run (run '{self._run_id}' is "
                "active).",
            )
        if self._stream_thread is not None and e.thread_id != self._stream_thread:
            raise fail(
                Rule.THREAD_ID_MISMATCH,
                f"Cannot send 'RUN_STARTED' for thread '{e.thread_id}': this stream belongs to "
                f"thread '{self._stream_thread}'. Every run on a stream carries the input's "
                "threadId.",
            )
        self._ledger.reset()
        self._steps.clear()
        self._subagents.clear()
        self._ended_subagents.clear()
        self._begin(e.thread_id, e.run_id)
        if e.input is not None:
            self._ledger.seed(e.input.messages, authoritative=False)

    def _run_finished(self, e: ev.RunFinishedEvent) -> None:
        self._ledger.check_lanes()
        if e.run_id != self._run_id:
            raise fail(
                Rule.RUN_ID_MISMATCH,
                f"Cannot send 'RUN_FINISHED' for run '{e.run_id}': the run that is open is "
                f"'{self._run_id}'. A run's 'RUN_STARTED' and 'RUN_FINISHED' must agree on their "
                "runId.",
            )
        if e.thread_id != self._thread_id:
            raise fail(
                Rule.THREAD_ID_MISMATCH,
                f"Cannot send 'RUN_FINISHED' for thread '{e.thread_id}': run '{e.run_id}' was "
                f"started on thread '{self._thread_id}'. A run's 'RUN_STARTED' and 'RUN_FINISHED'"
                " must agree on their threadId.",
            )
        self._check_all_closed()
        if isinstance(e.outcome, InterruptOutcome):
            ids = [interrupt.id for interrupt in e.outcome.interrupts]
            if len(set(ids)) < len(ids):
                twice = next(i for n, i in enumerate(ids) if i in ids[:n])
                raise fail(
                    Rule.DUPLICATE_INTERRUPT_ID,
                    f"Cannot send 'RUN_FINISHED' with two interrupts carrying the id '{twice}'. "
                    "An interrupt id is unique within the run: a resume entry answers it by id.",
                )
        self._ledger.drop_lanes()
        self._phase = _FINISHED

    def _check_all_closed(self) -> None:
        steps = [name if sub is None else f"{name} (subagent '{sub}')" for sub, name in self._steps]
        if steps:
            raise fail(
                Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
                f"Cannot send 'RUN_FINISHED' while steps are still active: {', '.join(steps)}",
            )
        for k, what in _AT_FINISH:
            if left := self._ledger.unheld(k):
                raise fail(
                    Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
                    f"Cannot send 'RUN_FINISHED' while {what} are still active: {', '.join(left)}",
                )
        if self._subagents:
            raise fail(
                Rule.SUBAGENT_ACTIVE_AT_RUN_FINISHED,
                "Cannot send 'RUN_FINISHED' while subagents are still active: "
                f"{', '.join(self._subagents)}",
            )

    def _run_error(self, e: ev.RunErrorEvent) -> None:
        if self._phase == _ERRORED:
            self._outside_run(e.type)
        # A run may fail at any point, over anything still open: RUN_ERROR is the driver's last
        # resort, so the chunk streams it closes are not checked and it is never refused.
        self._ledger.drop_lanes()
        self._phase = _ERRORED

    # Steps (keyed by owner and name) and subagents.

    def _step_started(self, e: ev.StepStartedEvent) -> None:
        tag = e.subagent_run_id
        closing = self._ledger.closing(tag) if self._ledger.lanes else None
        if (tag, e.step_name) in self._steps:
            where = "" if tag is None else f" in subagent '{tag}'"
            raise fail(
                Rule.STEP_ALREADY_OPEN,
                f"Step \"{e.step_name}\" is already active for 'STEP_STARTED'{where}",
            )
        if closing is not None:
            self._ledger.close(tag)
        self._steps[tag, e.step_name] = None

    def _step_finished(self, e: ev.StepFinishedEvent) -> None:
        tag, name = e.subagent_run_id, e.step_name
        closing = self._ledger.closing(tag) if self._ledger.lanes else None
        if (tag, name) not in self._steps:
            others = [sub for sub, open_name in self._steps if open_name == name]
            if not others:
                raise fail(
                    Rule.STEP_NOT_OPEN,
                    f"Cannot send 'STEP_FINISHED' for step \"{name}\" that was not started",
                )
            raise fail(
                Rule.STEP_OWNER_MISMATCH,
                f"Cannot send 'STEP_FINISHED' for step \"{name}\" attributed to {_agent(tag)}: "
                f"that step is open under {_agent(others[0])}. A step must be finished by whoever"
                " started it.",
            )
        if closing is not None:
            self._ledger.close(tag)
        del self._steps[tag, name]

    def _subagent_started(self, e: ev.SubagentStartedEvent) -> None:
        run, parent = e.subagent_run_id, e.parent_subagent_run_id
        if run in self._subagents:
            rule, problem = Rule.SUBAGENT_ALREADY_ACTIVE, f"subagent '{run}' is already active. "
            problem += "Finish it with 'SUBAGENT_FINISHED' first."
        elif run in self._ended_subagents:
            rule, problem = Rule.SUBAGENT_ID_REUSED, f"subagent '{run}' has already finished in "
            problem += "this run. Subagent IDs are per-invocation and cannot be reused."
        elif parent is not None and parent not in self._ended_subagents | self._subagents.keys():
            rule = Rule.SUBAGENT_PARENT_NOT_STARTED
            problem = f"parentSubagentRunId '{parent}' has not been started in this run."
        else:
            self._subagents[run] = None
            return
        raise fail(rule, f"Cannot send 'SUBAGENT_STARTED': {problem}")

    def _subagent_ended(self, e: ev.SubagentFinishedEvent | ev.SubagentErrorEvent) -> None:
        run = e.subagent_run_id
        closing = self._ledger.closing(run) if self._ledger.lanes else None
        if run not in self._subagents:
            raise fail(
                Rule.SUBAGENT_NOT_ACTIVE,
                f"Cannot send '{e.type}': no active subagent found with ID '{run}'. A "
                "'SUBAGENT_STARTED' event must be sent first.",
            )
        if closing is not None:
            self._ledger.close(run)
        del self._subagents[run]
        self._ended_subagents.add(run)


def _stand_aside(_event: ev.RawEvent) -> None:
    """RAW takes part in nothing but the run's lifecycle, which `observe` checks."""


def _agent(owner: str | None) -> str:
    return "the parent agent" if owner is None else f"subagent '{owner}'"
