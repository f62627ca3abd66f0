"""The one way a run's events leave: transformers, then the verifier, then the queue.

```
ctx.emit, a handle's other events ──► Pipeline.send ──► transformers ──► Verifier.observe
                                          ▲                                    │
                                          │ not plain: the record's event      ▼
text_start, text_delta, text_end,         │                       track, EventReceiver.push
tool_args, tool_end, reasoning_delta ──► record
                                          │ plain
                                          └──► RunVerifier.observe_record ──► push_record
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
a message's or tool call's end are nearly every event of a stream; a handle sends each with the
one pipeline method of its construct (`text_delta`, `tool_end`, ...), and never touches the
queue. While the run is *plain* (no transformer needs the event model, the run is not
cancelled and has not ended), the pipeline hands the record (`agui._emit.record`) to the run's
verifier (`agui._emit.verifier`), which checks it as its event would be checked, and queues the
record: a tuple, which the core's writer (`agui._emit.frames`) turns into the very bytes the
model would give, and which `drain()` turns into the very model. Otherwise the record's event
takes the full path. The branch skips nothing the full path would do for these events: no
transformer would change them, and a delta, a start or an end is never tracked.

A delta the verifier accepted on its quickest check (its block open, the run active, no chunk
stream open) changed nothing there, so the block's next delta is accepted the same way as long
as nothing has changed since: the pipeline keeps a grant, the block's id and the verifier's
`revision`, and while the run stays plain and the revision stays put it queues the block's next
delta at once. Any other event accepted, a cancellation or the run's end withdraws the grant.
It is kept because the served burst needs it (`bench/bench_served.py`: without it a served
event costs about a third more); it lives here, never in a handle.

A transformer that returns a record's event unchanged, and need not see it, says so with a
true class attribute `_records_pass` (the legacy-peer profile does: it rewrites subagent
events, attributed events, a cancelled outcome and results of parts, never a record's event).
A chain made only of such transformers keeps the run plain: the records skip the chain and
every other event goes through it. The marker is read once, when the pipeline is built.

The pipeline also keeps the blocks its handles hold open (`open`, `release`): one exclusive
block at a time, steps nested inside, closed innermost first when the run ends.

A subagent's invocation speaks through a view of its run's pipeline (`agui._emit.attributed`):
the same queue, verifier, books and open blocks, its own id stamped and its own exclusive block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from threading import get_ident
from typing import Generic, TypeVar, cast

from agui._emit.block import Block
from agui._emit.receiver import RunReceiver
from agui._emit.record import Kind, Record, materialize
from agui._emit.verifier import RunVerifier
from agui._protocol.text import check_event, check_payload, check_text
from agui.cancellation import CancellationToken
from agui.errors import Cancelled, ProtocolViolation, UsageError
from agui.events import (
    CustomEvent,
    Event,
    RawEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.transform import Transformer, apply_transformers, chain_refusal, checked_transformers

__all__ = ["Pipeline"]

_ENDS = frozenset((Kind.TEXT_END, Kind.TOOL_END))
_TEXT_START, _TEXT_CONTENT, _TEXT_END = Kind.TEXT_START, Kind.TEXT_CONTENT, Kind.TEXT_END
_TOOL_ARGS, _TOOL_END, _REASONING_CONTENT = Kind.TOOL_ARGS, Kind.TOOL_END, Kind.REASONING_CONTENT


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
        verifier: RunVerifier,
        token: CancellationToken,
        *,
        transformers: Sequence[Transformer] = (),
        answered: dict[str, None],
        on_state: Callable[[StateSnapshotEvent | StateDeltaEvent], None],
    ) -> None:
        self.receiver = RunReceiver()
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
        self._observe: Callable[[Record], None] = verifier.observe_record
        self._granted: str | None = None
        self._grant = -1
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

    # One method per construct a handle sends as a record: nearly every event of a stream.

    def text_start(self, message_id: str, role: str) -> None:
        """Send a text message's `TEXT_MESSAGE_START` with a plain role and no name."""
        self._record(_TEXT_START, message_id, role)

    def text_delta(self, message_id: str, delta: str) -> None:
        """Send a text message's `TEXT_MESSAGE_CONTENT`."""
        if message_id is self._granted and self._grant == self.verifier.revision and self.plain:
            self.receiver.push_record((_TEXT_CONTENT, message_id, delta))
        else:
            self._record(_TEXT_CONTENT, message_id, delta)

    def text_end(self, message_id: str) -> None:
        """Send a text message's `TEXT_MESSAGE_END`, even once the run is cancelled."""
        self._record(_TEXT_END, message_id, "")

    def tool_args(self, tool_call_id: str, delta: str) -> None:
        """Send a tool call's `TOOL_CALL_ARGS`."""
        if tool_call_id is self._granted and self._grant == self.verifier.revision and self.plain:
            self.receiver.push_record((_TOOL_ARGS, tool_call_id, delta))
        else:
            self._record(_TOOL_ARGS, tool_call_id, delta)

    def tool_end(self, tool_call_id: str) -> None:
        """Send a tool call's `TOOL_CALL_END`, even once the run is cancelled."""
        self._record(_TOOL_END, tool_call_id, "")

    def reasoning_delta(self, message_id: str, delta: str) -> None:
        """Send a reasoning message's `REASONING_MESSAGE_CONTENT`."""
        if message_id is self._granted and self._grant == self.verifier.revision and self.plain:
            self.receiver.push_record((_REASONING_CONTENT, message_id, delta))
        else:
            self._record(_REASONING_CONTENT, message_id, delta)

    def _record(self, kind: Kind, entity_id: str, text: str) -> None:
        """Send a construct as a record while the run is plain, else its event the full way.

        The run's verifier checks the record as its event would be checked and, accepted, it
        is queued as it is. Otherwise its event takes the full way (an end even once the run is
        cancelled).
        """
        if self.plain:
            if get_ident() != self.owner_thread:
                raise UsageError(_off_thread(materialize((kind, entity_id, text)).type))
            record: Record = (kind, entity_id, text)
            verifier = self.verifier
            before = verifier.revision
            self._observe(record)
            self.receiver.push_record(record)
            if verifier.revision == before:  # a delta accepted on the quickest check: a grant
                self._granted, self._grant = entity_id, before
            return
        self.send(materialize((kind, entity_id, text)), forced=kind in _ENDS)

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
            self.answered[cast("ToolCallResultEvent", event).tool_call_id] = None
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
