"""Reading a model's streamed response for `agui.agents.dispatch`: its text, calls, usage and stop.

Both dispatchers consume a response the same way; only what they do with its text differs, so
the loop over the deltas (and the streaming of native calls as they arrive) lives here once.
A model of the app's own that yields anything but a `ChatDelta` is refused with a `UsageError`
naming what it yielded, rather than read as a finish reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, Callable
from typing import Generic, TypeVar

from agui._util.wording import with_article
from agui.agents.models.base import (
    ChatDelta,
    FinishDelta,
    PartialToolCall,
    ReasoningDelta,
    TextDelta,
    ToolCallAssembler,
    ToolCallDelta,
    UsageDelta,
)
from agui.agents.turn import TurnWriter, own_call_id
from agui.errors import UsageError
from agui.events import ToolCallArgsEvent, ToolCallEndEvent, ToolCallStartEvent
from agui.types import TokenUsage

__all__ = ["CallStreamer", "Response", "read_response"]

S = TypeVar("S")


class CallStreamer(Generic[S]):
    """Streams calls to the client as their fragments arrive, interleaved, via `ctx.emit`."""

    def __init__(self, writer: TurnWriter[S]) -> None:
        self.writer = writer
        self.sent: dict[int, tuple[str, int]] = {}  # id(call) -> (call id, fragments sent)

    def update(self, position: int, call: PartialToolCall) -> None:
        """Send what is new of `call`: its START once it has a name, then its new fragments."""
        if not call.name.strip():
            return
        sent = self.sent.get(id(call))
        if sent is None:
            # The model's own id, unless the thread already has it (see `own_call_id`).
            call_id = own_call_id(self.writer.ctx, call.id) or self.writer.call_id(position)
            parent = self.writer.parent_id
            start = ToolCallStartEvent(
                tool_call_id=call_id, tool_call_name=call.name, parent_message_id=parent
            )
            self.writer.ctx.emit(start)
            count = 0
        else:
            call_id, count = sent
        for part in call.parts[count:]:
            self.writer.ctx.emit(ToolCallArgsEvent(tool_call_id=call_id, delta=part))
        self.sent[id(call)] = (call_id, len(call.parts))

    def end(self, call: PartialToolCall) -> str:
        """Send the END of a call that was started; return the id it went out with."""
        call_id, _ = self.sent[id(call)]
        self.writer.ctx.emit(ToolCallEndEvent(tool_call_id=call_id))
        return call_id


@dataclasses.dataclass
class Response:
    """A response read to its end: its assembled calls, its usage, and why it stopped."""

    calls: ToolCallAssembler
    usage: TokenUsage | None = None
    finish_reason: str | None = None


async def read_response(
    deltas: AsyncIterable[ChatDelta],
    writer: TurnWriter[S],
    on_text: Callable[[str], None],
    streamer: CallStreamer[S] | None,
) -> Response:
    """Read `deltas` to their end: text to `on_text`, reasoning to `writer`, calls assembled."""
    read = Response(ToolCallAssembler())
    async for delta in deltas:
        if isinstance(delta, TextDelta):
            on_text(delta.text)
        elif isinstance(delta, ReasoningDelta):
            writer.reasoning(delta.text)
            if delta.encrypted_value is not None:
                writer.reasoning_value(delta.encrypted_value)
        elif isinstance(delta, ToolCallDelta):
            call = read.calls.add(delta)
            if streamer is not None:
                streamer.update(read.calls.calls.index(call), call)
        elif isinstance(delta, UsageDelta):
            read.usage = delta.usage
        else:
            read.finish_reason = _finish_reason(delta)
    return read


def _finish_reason(item: object) -> str:
    # The type says FinishDelta, but a model of the app's own may yield anything.
    if isinstance(item, FinishDelta):
        return item.reason
    kind = type(item)
    builtin = kind.__module__ == "builtins"
    what = kind.__name__ if builtin else f"{kind.__module__}.{kind.__qualname__}"
    fix = "yield TextDelta(text) for text" if isinstance(item, str) else "yield one of those"
    message = (
        f"the model's stream() yielded {with_article(what)}, which is not a ChatDelta: a ChatModel "
        "yields the deltas of agui.agents.models (TextDelta, ReasoningDelta, ToolCallDelta, "
        f"UsageDelta, FinishDelta); {fix}"
    )
    raise UsageError(message)
