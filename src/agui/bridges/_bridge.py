"""`from_events`: any AG-UI adapter's async iterator of events, served as an agui agent.

The factory is called once per run with the official `ag_ui.core.RunAgentInput` (agui's input,
converted through its wire form) and returns the adapter's async iterator. The iterator is read
under `aclosing`: when the run is cancelled, its client leaves or the server shuts down, the
iterator is closed, so the adapter's own cleanup (`finally` blocks, the framework's cancel) runs
and nothing reads it again, and the run ends `cancelled`. Between two events the bridge awaits
`ctx.writable()`, so a slow client slows the adapter down instead of filling memory.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Literal, cast

from pydantic import JsonValue

from agui.bridges._foreign import ForeignReader
from agui.bridges._relay import Relay
from agui.errors import DecodeError, UsageError
from agui.types import RunOutcome

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput as ForeignInput

    from agui.context import RunContext
    from agui.events import Event
    from agui.types import RunAgentInput

__all__ = ["BridgeMode", "EventBridge", "EventFactory", "RawEvents", "from_events", "relay"]

BridgeMode = Literal["repair", "strict"]
"""What a bridge does with an event agui refuses: drop it and log the rule, or fail the run."""

RawEvents = Literal["drop", "keep"]
"""Whether a bridge passes on `RAW` events and `rawEvent` payloads, or drops them."""

EventFactory = Callable[
    ["ForeignInput"], "AsyncIterator[object] | Awaitable[AsyncIterator[object]]"
]
"""`factory(input)`: the adapter's events for one run, `ag_ui.core` objects or wire dicts."""


class EventBridge:
    """An agui agent that relays the events an AG-UI adapter yields; see `from_events`.

    Examples:
        >>> async def adapter(input):
        ...     yield {"type": "RUN_STARTED", "threadId": input.thread_id, "runId": input.run_id}
        ...     yield {"type": "RUN_FINISHED", "threadId": input.thread_id, "runId": input.run_id}
        >>> EventBridge(adapter).mode
        'repair'
    """

    def __init__(
        self, factory: EventFactory, *, mode: BridgeMode = "repair", raw: RawEvents = "drop"
    ) -> None:
        _check(factory, mode, raw)
        self.factory = factory
        self.mode: BridgeMode = mode
        self.raw: RawEvents = raw

    async def run(self, ctx: RunContext[JsonValue]) -> RunOutcome | None:
        """Relay one run: the factory's events through `ctx`, then their outcome."""
        made = self.factory(foreign_input(ctx.input))
        source = await made if inspect.isawaitable(made) else made
        reader = ForeignReader(ctx.run_id, keep_raw=self.raw == "keep")
        return await relay(ctx, _checked(source), reader.read, strict=self.mode == "strict")


def from_events(
    factory: EventFactory, *, mode: BridgeMode = "repair", raw: RawEvents = "drop"
) -> EventBridge:
    """Serve an AG-UI adapter's events as an agui agent, with agui's guarantees around them.

    `factory(input)` gets the official `ag_ui.core.RunAgentInput` of each run and returns an
    async iterator (or an awaitable of one) of `ag_ui.core` events or dicts in wire form. Each
    event is read by agui's own lenient reader and emitted through `ctx.emit`, verified; the
    rules for the foreign run's boundaries, state, `THINKING_*`, `RAW` and refused events are
    in the bridges guide. `mode="strict"` fails the run on an event agui refuses, where
    `"repair"` drops (or mends) it and logs the rule; `raw="keep"` passes `RAW` events and
    `rawEvent` payloads on. Needs the `bridges` extra (`ag-ui-protocol`).

    Examples:
        >>> import asyncio
        >>> from agui import RunAgentInput, run
        >>> async def adapter(input):
        ...     yield {"type": "RUN_STARTED", "threadId": input.thread_id, "runId": input.run_id}
        ...     yield {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hi"}
        ...     yield {"type": "RUN_FINISHED", "threadId": input.thread_id, "runId": input.run_id}
        >>> async def main():
        ...     stream = run(from_events(adapter), RunAgentInput(thread_id="t", run_id="r"))
        ...     return [event.type async for event in stream]
        >>> asyncio.run(main())
        ['RUN_STARTED', 'TEXT_MESSAGE_CHUNK', 'RUN_FINISHED']
    """
    foreign_input_type()  # the extra is needed now, not at the first run
    return EventBridge(factory, mode=mode, raw=raw)


async def relay(
    ctx: RunContext[JsonValue],
    source: AsyncIterator[object],
    read: Callable[[object], Event | None],
    *,
    strict: bool,
) -> RunOutcome | None:
    """Read `source` to its end under `aclosing`, each item through `read` and the relay."""
    rules = Relay(ctx, strict=strict)
    take = rules.take
    writable = ctx.receiver.writable  # what `ctx.writable()` awaits, one call fewer an event
    closing = getattr(source, "aclose", None)
    async with contextlib.AsyncExitStack() as stack:
        if closing is not None:
            stack.push_async_callback(closing)
        async for item in source:
            try:
                event = read(item)
            except DecodeError as error:
                rules.refuse(_named(item), error.code, error)
                continue
            if event is not None:
                take(event)
            await writable()
    return rules.outcome()


def foreign_input_type() -> type[ForeignInput]:
    """`ag_ui.core.RunAgentInput`, imported when a bridge is built (the `bridges` extra)."""
    try:
        from ag_ui.core import RunAgentInput as Foreign  # noqa: PLC0415 - the bridges extra
    except ImportError as error:
        message = (
            "agui.bridges.from_events needs the official AG-UI models: install the bridges "
            'extra (pip install "agui-server[bridges]")'
        )
        raise ImportError(message) from error
    return Foreign


def foreign_input(input: RunAgentInput) -> ForeignInput:  # noqa: A002 - the protocol's name
    """The run's input as the official `ag_ui.core.RunAgentInput`, through its wire form.

    What a `from_events` factory is given; a framework's adapter takes it as it is.

    Examples:
        >>> from agui import RunAgentInput
        >>> official = foreign_input(RunAgentInput(thread_id="t", run_id="r", state={"n": 1}))
        >>> type(official).__module__.startswith("ag_ui"), official.state
        (True, {'n': 1})
    """
    wire = input.model_dump(mode="json", by_alias=True, exclude_none=True)
    return foreign_input_type().model_validate(wire)


def _check(factory: object, mode: object, raw: object) -> None:
    problems: list[str] = []
    if not callable(factory):
        problems.append(f"the factory must be callable, not a {type(factory).__name__}")
    if mode not in ("repair", "strict"):
        problems.append(f"mode is 'repair' or 'strict', not {mode!r}")
    if raw not in ("drop", "keep"):
        problems.append(f"raw is 'drop' or 'keep', not {raw!r}")
    if problems:
        raise UsageError("from_events: " + "; ".join(problems))


def _checked(source: object) -> AsyncIterator[object]:
    if not hasattr(source, "__anext__"):
        message = (
            f"a from_events factory returns an async iterator of events, not a "
            f"{type(source).__name__}: write it as an async generator (async def with yield), "
            "or return the adapter's run(input)"
        )
        raise UsageError(message)
    return cast("AsyncIterator[object]", source)


def _named(item: object) -> str:
    named = f"a {type(item).__name__}"
    if isinstance(item, Mapping):
        kind = cast("Mapping[str, object]", item).get("type")
    else:
        kind = getattr(item, "type", None)
    return f"a {kind}" if isinstance(kind, str) else named
