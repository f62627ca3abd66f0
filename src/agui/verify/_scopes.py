"""The steps and subagents of a run: the scopes other events are attributed to.

A step is open from its `STEP_STARTED` to its `STEP_FINISHED` and belongs to whoever started it:
the parent agent, or the subagent its `subagentRunId` names, so two owners may each have a step
of one name open, and each must finish its own. A subagent is active from its `SUBAGENT_STARTED`
to its `SUBAGENT_FINISHED` or `SUBAGENT_ERROR`; its id names one invocation, so it is never
started twice in a run, and a parent subagent starts before its children. Each of these events
also closes the chunk stream of its own lane, as the 1.0 client does, once the END it
synthesizes checks out. Every method checks first and changes state last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agui._protocol.rules import Rule
from agui.verify._kinds import fail

if TYPE_CHECKING:
    from agui import events as ev
    from agui.verify._ledger import Ledger

__all__ = ["Scopes"]


def _agent(owner: str | None) -> str:
    return "the parent agent" if owner is None else f"subagent '{owner}'"


class Scopes:
    """The open steps, keyed by owner and name, and the subagents of a stream's current run."""

    def __init__(self, ledger: Ledger) -> None:
        # Each open step and active subagent maps to the ledger's tick at its start.
        self.steps: dict[tuple[str | None, str], int] = {}
        self.active: dict[str, int] = {}
        self.ended: dict[str, None] = {}
        self._ledger = ledger

    def reset(self) -> None:
        """Forget the previous run's steps and subagents (a new run starts afresh)."""
        self.steps.clear()
        self.active.clear()
        self.ended.clear()

    def snapshot(self) -> tuple[object, ...]:
        """Everything the scopes hold, copied."""
        return tuple(self.steps), tuple(self.active), frozenset(self.ended)

    def check_steps_closed(self) -> None:
        """Refuse a `RUN_FINISHED` while a step is open."""
        steps = [name if sub is None else f"{name} (subagent '{sub}')" for sub, name in self.steps]
        if steps:
            raise fail(
                Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
                f"Cannot send 'RUN_FINISHED' while steps are still active: {', '.join(steps)}",
            )

    def check_subagents_closed(self) -> None:
        """Refuse a `RUN_FINISHED` while a subagent is active."""
        if self.active:
            raise fail(
                Rule.SUBAGENT_ACTIVE_AT_RUN_FINISHED,
                "Cannot send 'RUN_FINISHED' while subagents are still active: "
                f"{', '.join(self.active)}",
            )

    def step_started(self, e: ev.StepStartedEvent) -> None:
        """Open a step for its owner."""
        tag, ledger = e.subagent_run_id, self._ledger
        closing = ledger.closing(tag) if ledger.lanes else None
        if (tag, e.step_name) in self.steps:
            where = "" if tag is None else f" in subagent '{tag}'"
            raise fail(
                Rule.STEP_ALREADY_OPEN,
                f"Step \"{e.step_name}\" is already active for 'STEP_STARTED'{where}",
            )
        if closing is not None:
            ledger.close(tag)
        self.steps[tag, e.step_name] = ledger.tick()

    def step_finished(self, e: ev.StepFinishedEvent) -> None:
        """Close a step its owner has open."""
        tag, name, ledger = e.subagent_run_id, e.step_name, self._ledger
        closing = ledger.closing(tag) if ledger.lanes else None
        if (tag, name) not in self.steps:
            others = [sub for sub, open_name in self.steps if open_name == name]
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
            ledger.close(tag)
        del self.steps[tag, name]

    def subagent_started(self, e: ev.SubagentStartedEvent) -> None:
        """Activate a subagent: a fresh id, under a parent already started in this run."""
        run, parent = e.subagent_run_id, e.parent_subagent_run_id
        if run in self.active:
            rule, problem = Rule.SUBAGENT_ALREADY_ACTIVE, f"subagent '{run}' is already active. "
            problem += "Finish it with 'SUBAGENT_FINISHED' first."
        elif run in self.ended:
            rule, problem = Rule.SUBAGENT_ID_REUSED, f"subagent '{run}' has already finished in "
            problem += "this run. Subagent IDs are per-invocation and cannot be reused."
        elif parent is not None and parent not in self.ended.keys() | self.active.keys():
            rule = Rule.SUBAGENT_PARENT_NOT_STARTED
            problem = f"parentSubagentRunId '{parent}' has not been started in this run."
        else:
            self.active[run] = self._ledger.tick()
            return
        raise fail(rule, f"Cannot send 'SUBAGENT_STARTED': {problem}")

    def subagent_ended(self, e: ev.SubagentFinishedEvent | ev.SubagentErrorEvent) -> None:
        """End an active subagent, with `SUBAGENT_FINISHED` or `SUBAGENT_ERROR`."""
        run, ledger = e.subagent_run_id, self._ledger
        closing = ledger.closing(run) if ledger.lanes else None
        if run not in self.active:
            raise fail(
                Rule.SUBAGENT_NOT_ACTIVE,
                f"Cannot send '{e.type}': no active subagent found with ID '{run}'. A "
                "'SUBAGENT_STARTED' event must be sent first.",
            )
        if closing is not None:
            ledger.close(run)
        del self.active[run]
        self.ended[run] = None
