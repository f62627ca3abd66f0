"""The turn writer: one model turn's text and reasoning, streamed to the client as it arrives.

A model's response interleaves answer text, reasoning and tool calls. The client should see the
text as one assistant message and the reasoning as reasoning blocks, opened only when there is
something to show (a blank start opens nothing) and closed as soon as the other kind begins,
because a run allows one open text or reasoning block at a time. `TurnWriter` keeps that
bookkeeping for both dispatchers and names the ids the turn's tool calls hang on; it knows
nothing of how calls are written (that is `agui.agents.dispatch`).

Answer text loses its blank start, which only the eye would see. Reasoning keeps every
character: a provider may sign it (Anthropic's thinking `signature`), the client returns the
text with the signature in the history, and a text that differs by one space voids the
signature and fails the next request. So a blank start of reasoning is held, not dropped, and
goes out with the block when it opens.

Output a dispatcher had to skip (a malformed tag, a call without a name) is not fatal: it is
logged and reported to the client as an `agui.warning` CUSTOM event (`emit_warning`).
"""

from __future__ import annotations

import logging
from typing import Generic, TypeVar

from pydantic import JsonValue

from agui.context import RunContext
from agui.events import CustomEvent
from agui.handles import MessageHandle, ReasoningHandle

__all__ = ["WARNING_EVENT", "TurnWriter", "emit_warning", "own_call_id"]

S = TypeVar("S")
_log = logging.getLogger("agui")

WARNING_EVENT = "agui.warning"
"""The name of the CUSTOM event that reports model output agui had to skip."""


def own_call_id(ctx: RunContext[S], given: str | None) -> str | None:
    """The id a model's call goes out under: the model's own, unless the thread already has it.

    Models number their calls per response (`call_0`, again in every turn, for some local
    models), and a call id reused in a thread would overwrite the earlier call in a client.
    `None` lets the context mint one (`{run_id}-call-N`).

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.tool_call("f", call_id="call_0") as call:
        ...     call.result_json(1)
        'r-msg-1'
        >>> own_call_id(ctx, "call_1"), own_call_id(ctx, "call_0"), own_call_id(ctx, None)
        ('call_1', None, None)
    """
    if given is None or ctx.verifier.knows_tool_call(given):
        return None
    return given


def emit_warning(ctx: RunContext[S], message: str, **detail: JsonValue) -> None:
    """Report something skipped but not fatal: a log line and an `agui.warning` CUSTOM event.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> emit_warning(ctx, "skipped a malformed tool call", raw="<tool_call>{</tool_call>")
        >>> event = events.drain()[0]
        >>> event.type, event.name, event.value["raw"]
        ('CUSTOM', 'agui.warning', '<tool_call>{</tool_call>')
    """
    _log.warning("run %s: %s", ctx.run_id, message)
    ctx.emit(CustomEvent(name=WARNING_EVENT, value={"message": message, **detail}))


class TurnWriter(Generic[S]):
    r"""Streams one model turn's text and reasoning to the client, opening blocks lazily.

    Text goes into one assistant message, opened at the first non-blank text; reasoning into a
    reasoning block. Switching between the two closes the open one.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> writer = TurnWriter(ctx, turn=1)
        >>> writer.reasoning("Paris, then.")
        >>> writer.text("\n\nIt is sunny.")
        >>> writer.close()
        >>> writer.text_so_far, [event.type for event in events.drain()][-3:]
        ('It is sunny.', ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END'])
    """

    def __init__(self, ctx: RunContext[S], *, turn: int) -> None:
        self.ctx = ctx
        self.turn = turn
        self._message: MessageHandle[S] | None = None
        self._reasoning: ReasoningHandle[S] | None = None
        self._message_id: str | None = None
        self._texts: list[str] = []
        self._held = ""  # blank reasoning not yet shown: the start of a block not yet open

    @property
    def text_so_far(self) -> str:
        """The answer text sent so far in this turn."""
        return "".join(self._texts)

    @property
    def parent_id(self) -> str:
        """The assistant message the turn's tool calls belong to: one per turn.

        It is the turn's text message when text came first; with no text yet, a synthetic id,
        which the turn's text then continues (`ctx.message(message_id=...)`), so a turn whose
        calls stream before, between or after its text is still one assistant message.
        """
        if self._message_id is None:
            self._message_id = f"{self.ctx.run_id}-turn-{self.turn}"
        return self._message_id

    def text(self, delta: str) -> None:
        """Append answer text; a blank start is dropped rather than opening a message."""
        if not delta:
            return
        self._end_reasoning()
        if self._message is None:
            delta = delta.lstrip()
            if not delta:
                return
            self._message = self.ctx.message(message_id=self._message_id)
            self._message_id = self._message.id
        self._message.delta(delta)
        self._texts.append(delta)

    def reasoning(self, delta: str) -> None:
        r"""Append reasoning exactly as given, whitespace included.

        A blank start is held rather than opening a block: it goes out, unchanged, in front of
        the first non-blank delta, or with the block's signature (`reasoning_value`), which the
        held text is part of. A block that ends blank and unsigned (by answer text or `close`)
        opens nothing: it shows nothing and, unsigned, never goes back to the provider.

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> writer = TurnWriter(ctx, turn=1)
            >>> writer.reasoning("\n\n")
            >>> writer.reasoning("Paris, then. ")
            >>> writer.close()
            >>> [e.delta for e in events.drain() if e.type == "REASONING_MESSAGE_CONTENT"]
            ['\n\nParis, then. ']
        """
        if not delta:
            return
        self._end_message()
        if self._reasoning is None:
            if delta.isspace():
                self._held += delta
                return
            delta, self._held = self._held + delta, ""
            self._reasoning = self.ctx.reasoning()
        self._reasoning.delta(delta)

    def reasoning_value(self, value: str) -> None:
        r"""End the reasoning block with the provider's opaque value for it (a signature).

        A block that showed no text (redacted reasoning) is opened for the value to land on,
        with the blank text it held, if any, since the value signs that text too.

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> writer = TurnWriter(ctx, turn=1)
            >>> writer.reasoning(" ")
            >>> writer.reasoning_value("sig-1")
            >>> [(e.type, getattr(e, "delta", None)) for e in events.drain()][1:4]
            [('REASONING_MESSAGE_START', None), ('REASONING_MESSAGE_CONTENT', ' '),
             ('REASONING_ENCRYPTED_VALUE', None)]
        """
        self._end_message()
        if self._reasoning is None:
            self._reasoning = self.ctx.reasoning()
            self._reasoning.delta(self._held)
        self._reasoning.encrypted_value(value)
        self._end_reasoning()

    def warn(self, message: str, **detail: JsonValue) -> None:
        """Report model output that was skipped (see `emit_warning`)."""
        emit_warning(self.ctx, message, **detail)

    def call_id(self, position: int) -> str:
        """An id for a streamed call the provider gave none (unique within the run)."""
        return f"{self.ctx.run_id}-turn-{self.turn}-call-{position}"

    def close(self) -> None:
        """Close whatever is open."""
        self._end_message()
        self._end_reasoning()

    def _end_message(self) -> None:
        if self._message is not None:
            self._message.end()
            self._message = None

    def _end_reasoning(self) -> None:
        self._held = ""
        if self._reasoning is not None:
            self._reasoning.end()
            self._reasoning = None
