"""The one way a run's events leave: transformers, then the verifier, then the queue.

```
ctx.emit, a handle's other events ──► Pipeline.send ──► transformers ──► Verifier.observe
                                          ▲                                    │
                                          │ not plain: the record's event      ▼
a handle's delta, plain text start, ──► Pipeline.send_record          track, EventReceiver.push
text or tool end                          │ plain
                                          └──► Verifier.observe(record) ──► push_record
                                                                                ▲
a handle's granted delta ───────────────────────────────────────────────────────┘
```

Every event a run emits goes through `send`: the run's transformers (in order), the verifier
(which refuses a broken rule and changes nothing), then the receiver's queue. After the verifier
the pipeline also notes what left that the run must know: the tool calls started and answered
(for `pendingToolCallIds`), the state events (so the state baseline follows what the client
holds), and a terminal event (after which every emit is refused). A `CUSTOM` value or `RAW`
event is checked to serialize before the verifier sees it: refused here, a payload the transport
could not write is the agent's `UsageError`, and the driver closes the open blocks before
`RUN_ERROR`, which it could not do for a failure found only at the transport. So is anything
that is not an agui event model, a transformer's output too: a dict, or another SDK's event,
which would serialize in its own form and not the wire's.

The record branch is the hot path. A handle's streamed delta, a text message's plain start and
a message's or tool call's end are nearly every event of a stream. While the run is *plain* (no
transformer needs the event model, the run is not cancelled and has not ended), the pipeline
hands the record (`agui._emit.record`) to the verifier as it is, which checks it on its fast path
(or as its event, when it must look closer), and queues the record: a tuple, which the SSE
writer turns into the very bytes the model would give, and which `drain()` turns into the very
model. Otherwise the record's event takes the full path. The branch skips nothing the full path
would do for these events: no transformer would change them, and a delta, a start or an end is
never tracked.

A delta the verifier accepted on its quickest check (its block open, the run active, no chunk
stream open) changed nothing there, so the block's next delta would be accepted the same way as
long as nothing has changed since: `send_record` hands the handle a grant, the verifier's
`revision`, and while the run stays plain and the revision stays put the handle queues its
next delta itself (`receiver.push_record`), the one step the branch would take. Any other event
accepted, a cancellation or the run's end withdraws every grant; the property tests run each
program with and without grants and compare everything.

A transformer that returns a record's event unchanged, and need not see it, says so with a
true class attribute `_records_pass` (the legacy-peer profile does: it rewrites subagent
events, attributed events, a cancelled outcome and results of parts, never a record's event).
A chain made only of such transformers keeps the run plain: the records skip the chain and
every other event goes through it. The marker is read once, when the pipeline is built.

The pipeline also keeps the blocks its handles hold open (`open`, `release`): one exclusive
block at a time, steps nested inside, closed innermost first when the run ends.

A subagent's invocation speaks through a view of its run's pipeline (`attributed`): the same
queue, verifier, books and open blocks, but every attributable event it sends carries the
invocation's `subagentRunId`, and it holds an exclusive block of its own, since the 1.0 rules
let the parent and each subagent have their own message or call open at once. The view's
events always take the full path: the root's record branch, which a run without subagents
uses for nearly every event, is untouched by it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from threading import get_ident
from typing import Generic, Protocol, TypeVar, cast

from agui._emit.record import Kind, Record, materialize
from agui._protocol.text import check_event, check_payload, check_text
from agui.cancellation import CancellationToken
from agui.errors import Cancelled, ProtocolViolation, UsageError
from agui.events import (
    AttributableEvent,
    CustomEvent,
    Event,
    RawEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.sink import EventReceiver
from agui.state import carries_state
from agui.transform import Transformer, apply_transformers, chain_refusal, checked_transformers
from agui.verify import Verifier

__all__ = ["Block", "Pipeline"]

_ENDS = frozenset((Kind.TEXT_END, Kind.TOOL_END))


class Block(Protocol):
    """What the pipeline needs of an open handle: its name, how it closes, whether it nests."""

    @property
    def kind(self) -> str:
        """What it is, for messages: `text message`, `tool call`, `step`, ..."""
        ...

    @property
    def nests(self) -> bool:
        """Whether blocks of its kind nest (steps) rather than exclude each other."""
        ...

    @property
    def opened_at(self) -> tuple[str, int]:
        """The file and line of the code that opened it."""
        ...

    def describe(self) -> str:
        """A short name for messages, such as `tool call 'r-call-1' (get_weather)`."""
        ...

    def close(self) -> None:
        """Emit the closing event, unless it has gone out already."""
        ...


B = TypeVar("B", bound=Block)


class Pipeline(Generic[B]):
    """A run's emit path and its open blocks; owned by one `RunContext`, never shared.

    `on_state` is called with every state event that leaves, after the verifier accepted it.
    """

    subagent_run_id: str | None = None
    """The invocation whose events this pipeline attributes (`None`: the run's own)."""
    last_text = ""
    """A subagent view's last text message, as it streamed: a delegated agent's answer."""

    def __init__(
        self,
        receiver: EventReceiver,
        verifier: Verifier,
        token: CancellationToken,
        *,
        transformers: Sequence[Transformer] = (),
        answered: set[str],
        on_state: Callable[[StateSnapshotEvent | StateDeltaEvent], None],
    ) -> None:
        self.receiver = receiver
        self.verifier = verifier
        self.owner_thread = get_ident()  # emitting is not thread-safe: refused from elsewhere
        self.terminated = False
        self.calls: list[str] = []
        self.answered = answered
        self._token = token
        self._transformers = checked_transformers(transformers)
        self._on_state = on_state
        self.plain = all(_passes_records(t) for t in self._transformers)
        """Whether a record may go out as it is: no transformer needs its model (none, or only
        ones that pass records unchanged), no cancellation needs raising (the token says when
        that starts), and the run has not ended (no emit is allowed then)."""
        token.on_cancel(self._not_plain)
        self._observe: Callable[[Event | Record], None] = verifier.observe
        self._exclusive: B | None = None
        self._open: list[B] = []
        self.parents: dict[str, str] = {}
        """The parent message of each tool call started with one (a subagent's spawner)."""

    # -- sending ---------------------------------------------------------------------------

    def send(self, event: Event, *, forced: bool = False) -> None:
        """Send one event the full way; `forced` sends it even once the run is cancelled."""
        if self.terminated:
            message = f"cannot emit {event.type}: the run has already ended"
            raise UsageError(message)
        if get_ident() != self.owner_thread:
            raise UsageError(_off_thread(event.type))
        if not forced and self._token.cancelled:
            raise Cancelled(self._token.reason)
        check_event(event)
        chain = self._transformers  # each output checked to be an event where it is returned
        for output in apply_transformers(chain, event) if chain else (event,):
            try:  # read by `type`: a pydantic class's `isinstance` costs about 75 ns if it misses
                if output.type in _PAYLOADS:
                    check_payload(cast("CustomEvent | RawEvent", output))
                check_text(output)
                self.verifier.observe(output)
            except (UsageError, ProtocolViolation) as error:
                if output is event:
                    raise
                raise chain_refusal(error, chain, event) from None
            if output.type in _TRACKED:
                self._track(output)
            self.receiver.push(output)

    def send_record(self, kind: Kind, entity_id: str, text: str = "") -> int:
        """Send a handle's delta, plain text start or end: as a record while the run is plain.

        The verifier checks the record (on its fast path, or as its event when it must look
        closer) and, accepted, it is queued as it is. Otherwise its event takes the full way
        (an end even once the run is cancelled). Returns the grant of a delta the verifier
        accepted changing nothing, its `revision` (see the module's notes), else -1.
        """
        if self.plain:
            if get_ident() != self.owner_thread:
                raise UsageError(_off_thread(materialize((kind, entity_id, text)).type))
            record: Record = (kind, entity_id, text)
            verifier = self.verifier
            before = verifier.revision
            self._observe(record)
            self.receiver.push_record(record)
            return before if verifier.revision == before else -1
        self.send(materialize((kind, entity_id, text)), forced=kind in _ENDS)
        return -1

    def _not_plain(self) -> None:
        self.plain = False

    def _track(self, event: Event) -> None:
        kind = event.type
        if kind == "TOOL_CALL_START":
            start = cast("ToolCallStartEvent", event)
            self.calls.append(start.tool_call_id)
            if start.parent_message_id is not None:
                self.parents[start.tool_call_id] = start.parent_message_id
        elif kind == "TOOL_CALL_RESULT":
            self.answered.add(cast("ToolCallResultEvent", event).tool_call_id)
        elif kind in _STATE:
            self._on_state(cast("StateSnapshotEvent | StateDeltaEvent", event))
        else:  # a terminal event
            self.terminated = True
            self.plain = False  # what follows is refused by `send`, which says why

    # -- open blocks -----------------------------------------------------------------------

    def open(self, block: B) -> None:
        """Hold `block` open: refused while an exclusive block is open, unless `block` nests."""
        if not block.nests and self._exclusive is not None:
            message = (
                f"cannot open a {block.kind}: {self._exclusive.describe()} is still open; "
                "leave its `with` block (or call end()) first, or use ctx.emit() to interleave"
            )
            raise UsageError(message)
        if self._token.cancelled:
            raise Cancelled(self._token.reason)
        if not block.nests:
            self._exclusive = block
        self._open.append(block)

    def release(self, block: B) -> None:
        """Forget `block`: it has closed (or never opened)."""
        if block is self._exclusive:
            self._exclusive = None
        if block in self._open:
            self._open.remove(block)

    def inner_step(self, block: B) -> B | None:
        """The innermost nesting block opened inside `block` and still open, if any."""
        inner = [b for b in self._open[self._open.index(block) + 1 :] if b.nests]
        return inner[-1] if inner else None

    @property
    def exclusive(self) -> B | None:
        """The exclusive block (message, reasoning, tool call) this pipeline's owner holds."""
        return self._exclusive

    def attributed(
        self,
        subagent_run_id: str,
        *,
        on_state: Callable[[StateSnapshotEvent | StateDeltaEvent], None],
    ) -> Pipeline[B]:
        """A view of this run's pipeline for a subagent invocation: its events carry its id.

        `on_state` is told of the state events the view sends, as the view's owner published
        them (before the id was stamped on).

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> view = ctx._pipeline.attributed("r-sub-1", on_state=print)
            >>> view.send_record(Kind.TEXT_START, "m1", "assistant")  # the full way: no grant
            -1
            >>> events.drain()[0].subagent_run_id
            'r-sub-1'
        """
        shared = (self._token, self._transformers, self._observe, self._open)
        return _Attributed(self, subagent_run_id, on_state, shared)

    @property
    def blocks(self) -> tuple[B, ...]:
        """The blocks held open, outermost first."""
        return tuple(self._open)

    def close_open(self) -> list[Exception]:
        """Close every open block, innermost first; returns the closes that failed.

        A block whose close fails is released all the same.
        """
        failures: list[Exception] = []
        while self._open:
            block = self._open[-1]
            try:
                block.close()
            except Exception as error:  # noqa: BLE001 - keep closing what can be closed
                failures.append(error)
                self.release(block)
        return failures


class _Attributed(Pipeline[B]):
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
        shared: tuple[
            CancellationToken, tuple[Transformer, ...], Callable[[Event | Record], None], list[B]
        ],
    ) -> None:
        # No `super().__init__`: every book is the root's, shared rather than made anew.
        self._root = root
        self.subagent_run_id = subagent_run_id
        self.receiver, self.verifier = root.receiver, root.verifier
        self.calls, self.answered, self.parents = root.calls, root.answered, root.parents
        self.terminated, self.owner_thread = False, root.owner_thread
        self._token, self._transformers, self._observe, self._open = shared
        self._on_state = on_state
        self.plain = False  # a view's events take the full path, and are stamped on it
        self._exclusive = None
        self._own: list[B] = []  # what it holds open of the run's blocks (`_open`, shared)
        self._sending: tuple[Event, Event] | None = None

    def send(self, event: Event, *, forced: bool = False) -> None:
        """Stamp the view's id on `event` (when attributable and untagged), then send it."""
        if isinstance(event, (RunStartedEvent, RunFinishedEvent, RunErrorEvent)):
            message = (
                f"cannot emit {event.type} from subagent '{self.subagent_run_id}': a run's "
                "boundaries are its own; leave the subagent's block to end the invocation"
            )
            raise UsageError(message)
        if (
            isinstance(event, (SubagentFinishedEvent, SubagentErrorEvent))
            and event.subagent_run_id == self.subagent_run_id
        ):
            # Sent from inside, the end leaves the handle open, and its own end is then refused.
            message = (
                f"cannot emit {event.type} for subagent '{self.subagent_run_id}' from inside it: "
                "its handle sends the invocation's one end; call finish(result=...) or leave "
                "the block"
            )
            raise UsageError(message)
        self.terminated = self._root.terminated
        if isinstance(event, TextMessageStartEvent):
            self.last_text = ""
        stamped = event
        if isinstance(event, AttributableEvent) and event.subagent_run_id is None:
            stamped = event.model_copy(update={"subagent_run_id": self.subagent_run_id})
        self._sending = (stamped, event)
        try:
            super().send(stamped, forced=forced)
        finally:
            self._sending = None

    def send_record(self, kind: Kind, entity_id: str, text: str = "") -> int:
        """Send a handle's record as its event, the full way, stamped."""
        if kind == Kind.TEXT_CONTENT:
            self.last_text += text
        self.send(materialize((kind, entity_id, text)), forced=kind in _ENDS)
        return -1

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


def _passes_records(transformer: Transformer) -> bool:
    """Whether `transformer` returns every record's event unchanged and need not see it.

    Only a true `_records_pass` counts: a transformer without the marker (any user's) gets
    every event, deltas included, as its model.

    Examples:
        >>> class Downgrade:
        ...     _records_pass = True
        ...     def transform(self, event):
        ...         return [event]
        >>> from agui.transform import FilterToolCalls
        >>> _passes_records(Downgrade()), _passes_records(FilterToolCalls(()))
        (True, False)
    """
    return getattr(transformer, "_records_pass", False) is True


_PAYLOADS = frozenset(("CUSTOM", "RAW"))
"""The events whose payload is checked to serialize before they are sent."""
_STATE = frozenset(("STATE_SNAPSHOT", "STATE_DELTA"))


def _off_thread(what: str) -> str:
    return (
        f"cannot emit {what} from another thread than the run's: a run's events, state and "
        "blocks are not thread-safe; emit from the event loop's thread (return the value from "
        "asyncio.to_thread(...) and emit it there)"
    )


_TRACKED = frozenset(("TOOL_CALL_START", "TOOL_CALL_RESULT", *_STATE, "RUN_FINISHED", "RUN_ERROR"))
"""The event types `_track` notes something of; `send` passes it no other."""
