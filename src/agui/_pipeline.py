"""The one way a run's events leave: transformers, then the verifier, then the queue.

```
ctx.emit, a handle's other events ──► Pipeline.send ──► transformers ──► Verifier.observe
                                          ▲                                    │
                                          │ not plain: the record's event      ▼
a handle's delta, plain text start, ──► Pipeline.send_record          track, EventReceiver.push
text or tool end                          │ plain
                                          └──► Verifier.observe(record) ──► push_record
```

Every event a run emits goes through `send`: the run's transformers (in order), the verifier
(which refuses a broken rule and changes nothing), then the receiver's queue. After the verifier
the pipeline also notes what left that the run must know: the tool calls started and answered
(for `pendingToolCallIds`), the state events (so the state baseline follows what the client
holds), and a terminal event (after which every emit is refused). A `CUSTOM` value or `RAW`
event is checked to serialize before the verifier sees it: refused here, a payload the transport
could not write is the agent's `UsageError`, and the driver closes the open blocks before
`RUN_ERROR`, which it could not do for a failure found only at the transport.

The record branch is the hot path. A handle's streamed delta, a text message's plain start and
a message's or tool call's end are nearly every event of a stream. While the run is *plain* (no
transformer needs the event model, the run is not cancelled and has not ended), the pipeline
hands the record (`agui._record`) to the verifier as it is, which checks it on its fast path
(or as its event, when it must look closer), and queues the record: a tuple, which the SSE
writer turns into the very bytes the model would give, and which `drain()` turns into the very
model. Otherwise the record's event takes the full path. The branch skips nothing the full path
would do for these events: there is no transformer, and a delta, a start or an end is never
tracked.

The pipeline also keeps the blocks its handles hold open (`open`, `release`): one exclusive
block at a time, steps nested inside, closed innermost first when the run ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar, get_args

from pydantic_core import to_json

from agui._record import Kind, Record, materialize
from agui.cancellation import CancellationToken
from agui.errors import Cancelled, UsageError
from agui.events import (
    CustomEvent,
    Event,
    RawEvent,
    RunErrorEvent,
    RunFinishedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.sink import EventReceiver
from agui.transform import Transformer, apply_transformers
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
        self.terminated = False
        self.calls: list[str] = []
        self.answered = answered
        self._token = token
        self._transformers = tuple(transformers)
        self._on_state = on_state
        # Whether a record may go out as it is: no transformer needs its model, no
        # cancellation needs raising (the token says when that starts), and the run has not
        # ended (no emit is allowed then).
        self._plain = not self._transformers
        token.on_cancel(self._not_plain)
        self._observe = verifier.observe
        self._exclusive: B | None = None
        self._open: list[B] = []

    # -- sending ---------------------------------------------------------------------------

    def send(self, event: Event, *, forced: bool = False) -> None:
        """Send one event the full way; `forced` sends it even once the run is cancelled."""
        if self.terminated:
            message = f"cannot emit {event.type}: the run has already ended"
            raise UsageError(message)
        if not forced and self._token.cancelled:
            raise Cancelled(self._token.reason)
        if self._transformers:
            for output in apply_transformers(self._transformers, event):
                if isinstance(output, (CustomEvent, RawEvent)):
                    _check_payload(output)
                self.verifier.observe(output)
                self._track(output)
                self.receiver.push(output)
            return
        if isinstance(event, (CustomEvent, RawEvent)):
            _check_payload(event)
        self.verifier.observe(event)
        if type(event) not in _UNTRACKED:
            self._track(event)
        self.receiver.push(event)

    def send_record(self, kind: Kind, entity_id: str, text: str = "") -> None:
        """Send a handle's delta, plain text start or end: as a record while the run is plain.

        The verifier checks the record (on its fast path, or as its event when it must look
        closer) and, accepted, it is queued as it is. Otherwise its event takes the full way
        (an end even once the run is cancelled).
        """
        if self._plain:
            record: Record = (kind, entity_id, text)
            self._observe(record)
            self.receiver.push_record(record)
        else:
            self.send(materialize((kind, entity_id, text)), forced=kind in _ENDS)

    def _not_plain(self) -> None:
        self._plain = False

    def _track(self, event: Event) -> None:
        if isinstance(event, ToolCallStartEvent):
            self.calls.append(event.tool_call_id)
        elif isinstance(event, ToolCallResultEvent):
            self.answered.add(event.tool_call_id)
        elif isinstance(event, (StateSnapshotEvent, StateDeltaEvent)):
            self._on_state(event)
        elif isinstance(event, (RunFinishedEvent, RunErrorEvent)):
            self.terminated = True
            self._plain = False  # what follows is refused by `send`, which says why

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


def _check_payload(event: CustomEvent | RawEvent) -> None:
    """Refuse a payload the transport could not write, here, where the agent wrote it.

    Refused late, at the transport, it would end the stream with the agent's blocks still
    open; refused here, it is the agent's error like any other, and the driver closes the
    blocks first. A string holding a lone surrogate (U+D800 to U+DFFF, unpaired) is the one way
    a `JsonValue` fails.
    """
    if isinstance(event, CustomEvent):
        field, value, name = "value", event.value, f" {event.name!r}"
    else:
        field, value, name = "event", event.event, ""
    try:
        to_json(value)
    except ValueError as error:
        message = (
            f"cannot emit {event.type}{name}: its {field} cannot be serialized as JSON ({error}); "
            "pass only JSON values, with strings of valid Unicode (no lone surrogates)"
        )
        raise UsageError(message) from None


_UNTRACKED: frozenset[type] = frozenset(
    cls
    for cls in get_args(get_args(Event)[0])
    if not issubclass(
        cls,
        (
            ToolCallStartEvent,
            ToolCallResultEvent,
            StateSnapshotEvent,
            StateDeltaEvent,
            RunFinishedEvent,
            RunErrorEvent,
        ),
    )
)
"""The event classes `_track` has nothing to do for (exact types: a subclass is tracked)."""
