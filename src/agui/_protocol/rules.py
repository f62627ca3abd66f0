"""The closed set of ordering rules the verifier enforces, below everything that names them.

`ProtocolViolation.rule` is a `Rule`, so `agui.errors` must import the enum, and the verifier
raises `ProtocolViolation`, so `agui.verify` imports `agui.errors`. Had the enum stayed in
`agui.verify`, either module would import the other (importing a submodule of `agui.verify` runs
its `__init__`, which imports `agui.errors`), a cycle even when only the type checker follows it.
This module imports nothing of agui, so `agui.errors`, the verifier and its ledger all import it
and the graph stays one-way. It is private because a rule has one public name:
`agui.verify.Rule`, re-exported there next to the `Verifier` that enforces it, with the table of
every rule in that module's docstring.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Rule"]


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
    RUN_ID_REUSED = "run-id-reused"
    OPEN_BLOCKS_AT_RUN_FINISHED = "open-blocks-at-run-finished"
    DUPLICATE_INTERRUPT_ID = "duplicate-interrupt-id"
    PENDING_CALL_UNKNOWN = "pending-call-unknown"
    PENDING_CALL_ANSWERED = "pending-call-answered"
    TRUNCATED = "truncated"
    MESSAGE_ALREADY_OPEN = "message-already-open"
    MESSAGE_NOT_OPEN = "message-not-open"
    TOOL_CALL_ALREADY_OPEN = "tool-call-already-open"
    TOOL_CALL_NOT_OPEN = "tool-call-not-open"
    TOOL_CALL_ID_REUSED = "tool-call-id-reused"
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
        """What the rule requires, in one line (`agui.verify`'s docstring tables them all).

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
    Rule.RUN_ID_REUSED: "No RUN_STARTED for a runId the stream has already run.",
    Rule.OPEN_BLOCKS_AT_RUN_FINISHED: "No RUN_FINISHED over open steps, messages or calls.",
    Rule.DUPLICATE_INTERRUPT_ID: "The interrupts of a RUN_FINISHED have distinct ids.",
    Rule.PENDING_CALL_UNKNOWN: "pendingToolCallIds lists only calls this run started.",
    Rule.PENDING_CALL_ANSWERED: "pendingToolCallIds lists no call this run answered.",
    Rule.TRUNCATED: "A stream ends after its last run's terminal event.",
    Rule.MESSAGE_ALREADY_OPEN: "No TEXT_MESSAGE_START for a message still open.",
    Rule.MESSAGE_NOT_OPEN: "Text content and ends need an open text message.",
    Rule.TOOL_CALL_ALREADY_OPEN: "No TOOL_CALL_START for a tool call still open.",
    Rule.TOOL_CALL_NOT_OPEN: "Tool call args and ends need an open tool call.",
    Rule.TOOL_CALL_ID_REUSED: "No TOOL_CALL_START for a call id the stream or input has.",
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
