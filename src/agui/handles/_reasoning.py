"""The reasoning handle: the span and its message opened together, closed in the 1.0 order.

AG-UI 1.0 brackets reasoning twice (`REASONING_START` around `REASONING_MESSAGE_START`); a
handle opens both and closes both, message first, so no order can be got wrong.
"""

from __future__ import annotations

from typing import TypeVar

from agui._emit.pipeline import Pipeline
from agui.events import (
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
)
from agui.handles._handle import Handle, Owner

__all__ = ["ReasoningHandle"]

S = TypeVar("S")


class ReasoningHandle(Handle[S]):
    """A reasoning block: span and message opened now, closed in the 1.0 order when left.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.reasoning() as thinking:
        ...     thinking.delta("Paris is in France.")
        >>> [event.type for event in events.drain()]
        ['REASONING_START', 'REASONING_MESSAGE_START', 'REASONING_MESSAGE_CONTENT',
         'REASONING_MESSAGE_END', 'REASONING_END']
    """

    kind = "reasoning block"

    def __init__(self, owner: Owner[S], pipeline: Pipeline[Handle[S]], message_id: str) -> None:
        super().__init__(owner, pipeline)
        self.id = message_id
        self._start(
            ReasoningStartEvent(message_id=self.id), ReasoningMessageStartEvent(message_id=self.id)
        )

    def describe(self) -> str:
        return f"reasoning block '{self.id}'"

    def delta(self, text: str) -> None:
        """Append reasoning text; an empty delta sends nothing; non-Unicode text is refused."""
        if type(text) is not str or not self._open:
            text = self._text("delta", text)
        elif not text.isascii():  # most text is ASCII, which is always valid UTF-8
            try:
                text.encode()
            except UnicodeEncodeError:
                self._text("delta", text)  # refuses it, naming this handle
        if text:
            self._pipeline.reasoning_delta(self.id, text)

    def encrypted_value(self, value: str) -> None:
        """Attach an opaque value the client stores on this reasoning message."""
        self._send_encrypted("message", self.id, value)

    def end(self) -> None:
        """Close the reasoning message and its span now."""
        self._check_open("end")
        self._end_now()

    def _finish(self) -> None:
        self._pipeline.send(ReasoningMessageEndEvent(message_id=self.id), forced=True)
        self._pipeline.send(ReasoningEndEvent(message_id=self.id), forced=True)
        self._closed()
