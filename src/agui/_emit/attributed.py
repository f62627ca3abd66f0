"""A subagent's view of its run's pipeline: the same books, its own id and exclusive block.

A subagent's invocation speaks through a view of its run's pipeline: the same queue, verifier,
books and open blocks, but every attributable event it sends carries the invocation's
`subagentRunId`, and it holds an exclusive block of its own, since the 1.0 rules let the parent
and each subagent have their own message or call open at once. The view's events always take
the full path: the root's record branch is untouched by it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from agui._emit.block import Block
from agui._emit.pipeline import Pipeline
from agui._emit.record import Kind, materialize
from agui.errors import UsageError
from agui.events import (
    AttributableEvent,
    Event,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    TextMessageStartEvent,
)
from agui.state import carries_state

__all__ = ["Attributed", "attributed"]

B = TypeVar("B", bound=Block)
_ENDS = frozenset((Kind.TEXT_END, Kind.TOOL_END))


def attributed(
    root: Pipeline[B],
    subagent_run_id: str,
    *,
    on_state: Callable[[StateSnapshotEvent | StateDeltaEvent], None],
) -> Pipeline[B]:
    """A view of a run's pipeline for a subagent invocation: its events carry its id.

    `on_state` is told of the state events the view sends, as the view's owner published them
    (before the id was stamped on).

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> view = attributed(ctx._pipeline, "r-sub-1", on_state=print)
        >>> view.text_start("m1", "assistant")  # the full way, stamped
        >>> events.drain()[0].subagent_run_id
        'r-sub-1'
    """
    return Attributed(root, subagent_run_id, on_state)


class Attributed(Pipeline[B]):
    """A subagent's view of its run's pipeline: shared books, its own id and exclusive block.

    It shares everything with the run's pipeline (`root`) but the exclusive slot and what it
    stamps: each attributable event without a `subagentRunId` gets the view's. Run boundaries
    are the run's own, never a subagent's, and are refused here.
    """

    def __init__(
        self,
        root: Pipeline[B],
        subagent_run_id: str,
        on_state: Callable[[StateSnapshotEvent | StateDeltaEvent], None],
    ) -> None:
        # No `super().__init__`: every book is the root's, shared rather than made anew.
        shared = (root._token, root._transformers, root._observe, root._open)  # noqa: SLF001 - a view shares its root's books
        self._root = root
        self.subagent_run_id = subagent_run_id
        self.receiver, self.verifier = root.receiver, root.verifier
        self.calls, self.answered, self.parents = root.calls, root.answered, root.parents
        self.terminated, self.owner_thread = False, root.owner_thread
        self._token, self._transformers, self._observe, self._open = shared
        self._on_state = on_state
        self.plain = False  # a view's events take the full path, and are stamped on it
        self._exclusive, self._granted, self._grant = None, None, -1
        self._own: list[B] = []  # what it holds open of the run's blocks (`_open`, shared)
        self._sending: tuple[Event, Event] | None = None

    def send(self, event: Event, *, forced: bool = False) -> None:
        """Stamp the view's id on `event` (when attributable and untagged), then send it."""
        match event:
            case RunStartedEvent() | RunFinishedEvent() | RunErrorEvent():
                message = (
                    f"cannot emit {event.type} from subagent '{self.subagent_run_id}': a run's "
                    "boundaries are its own; leave the subagent's block to end the invocation"
                )
                raise UsageError(message)
            case SubagentFinishedEvent() | SubagentErrorEvent() if (
                event.subagent_run_id == self.subagent_run_id
            ):
                # Sent from inside, the end leaves the handle open, and its own end is then
                # refused.
                message = (
                    f"cannot emit {event.type} for subagent '{self.subagent_run_id}' from "
                    "inside it: its handle sends the invocation's one end; call "
                    "finish(result=...) or leave the block"
                )
                raise UsageError(message)
            case TextMessageStartEvent():
                self.last_text = ""
            case _:
                pass  # every other event is the subagent's to send, stamped below
        self.terminated = self._root.terminated
        stamped = event
        if isinstance(event, AttributableEvent) and event.subagent_run_id is None:
            stamped = event.model_copy(update={"subagent_run_id": self.subagent_run_id})
        self._sending = (stamped, event)
        try:
            super().send(stamped, forced=forced)
        finally:
            self._sending = None

    def _record(self, kind: Kind, entity_id: str, text: str) -> None:
        """Send a construct as its event, the full way, stamped."""
        if kind == Kind.TEXT_CONTENT:
            self.last_text += text
        self.send(materialize((kind, entity_id, text)), forced=kind in _ENDS)

    def open(self, block: B) -> None:
        """Hold `block` open among the run's blocks, and as one of this invocation's."""
        super().open(block)
        self._own.append(block)

    def release(self, block: B) -> None:
        """Forget `block`, in the run's blocks and this invocation's."""
        super().release(block)
        self._own = [held for held in self._own if held is not block]

    @property
    def blocks(self) -> tuple[B, ...]:
        """The blocks this invocation holds open (not the parent's), outermost first."""
        return tuple(self._own)

    def _track(self, event: Event) -> None:
        sending = self._sending
        if sending is not None and carries_state(event, sending[1]):
            # The owner compares what left with what it published, which had no id stamped
            # (nor went through a transformer that copied it, as the legacy profile does).
            self._on_state(cast("StateSnapshotEvent | StateDeltaEvent", sending[1]))
            return
        super()._track(event)
