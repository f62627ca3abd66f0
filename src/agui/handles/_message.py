"""The text message handle: `TEXT_MESSAGE_START` when opened, `CONTENT` per delta, `END` when left.

A message with a plain role and no name opens as a queue record, like its deltas and its end
(see `agui._emit.record`): the commonest construct of a stream builds no event model on its way out.
"""

from __future__ import annotations

from typing import Literal, TypeVar, cast

from agui._emit.pipeline import Pipeline
from agui.errors import UsageError
from agui.events import Event, TextMessageStartEvent
from agui.handles._handle import Handle, Owner, built

__all__ = ["MessageHandle", "TextRole"]

S = TypeVar("S")
TextRole = Literal["assistant", "user", "system", "developer"]
_ROLES = frozenset(("assistant", "user", "system", "developer"))
_text_start = TextMessageStartEvent.trusted_builder("message_id", "role", "name")


class MessageHandle(Handle[S]):
    """A text message: `TEXT_MESSAGE_START` now, `CONTENT` per delta, `END` when left.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.message() as message:
        ...     message.delta("Hello, ")
        ...     message.delta("")
        ...     message.delta("world")
        >>> [(event.type, getattr(event, "delta", None)) for event in events.drain()]
        [('TEXT_MESSAGE_START', None), ('TEXT_MESSAGE_CONTENT', 'Hello, '),
         ('TEXT_MESSAGE_CONTENT', 'world'), ('TEXT_MESSAGE_END', None)]
    """

    kind = "text message"

    def __init__(
        self,
        owner: Owner[S],
        pipeline: Pipeline[Handle[S]],
        message_id: str,
        *,
        role: TextRole,
        name: str | None = None,
    ) -> None:
        super().__init__(owner, pipeline)
        self.id = message_id
        self.role = role
        if type(cast("object", message_id)) is not str or not message_id.strip():
            message = (
                "ctx.message(message_id=...) takes the id of a message as text, not "
                f"{message_id!r}; leave it out for a new message"
            )
            raise UsageError(message)
        self._check_unicode(message_id, "the message_id given to ctx.message()")
        self._check_unicode(name, "the name given to ctx.message()")
        if name is None and type(cast("object", role)) is str and role in _ROLES:
            self._start()  # the start needs no model: see `_send_opening`
        else:
            self._start(_message_start(self.id, role, name))

    def describe(self) -> str:
        return f"text message '{self.id}'"

    def _send_opening(self, events: tuple[Event, ...]) -> None:
        if events:
            super()._send_opening(events)
        else:  # a plain role and no name: the pipeline may queue it as a record
            self._pipeline.text_start(self.id, self.role)

    def delta(self, text: str) -> None:
        r"""Append text; an empty delta sends nothing; text that is not valid Unicode is refused.

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> from agui.errors import UsageError
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> with ctx.message() as message:
            ...     try:
            ...         message.delta("\ud800")
            ...     except UsageError as error:
            ...         print(str(error).split(";")[0])
            the text given to delta() on text message 'r-msg-1' is not valid Unicode: a lone
            surrogate (U+D800) at index 0
        """
        if type(text) is not str or not self._open:
            text = self._text("delta", text)
        elif not text.isascii():  # most text is ASCII, which is always valid UTF-8
            try:
                text.encode()
            except UnicodeEncodeError:
                self._text("delta", text)  # refuses it, naming this handle
        if text:
            self._pipeline.text_delta(self.id, text)

    def end(self) -> None:
        """Close the message now (leaving the `with` block does the same)."""
        self._check_open("end")
        self._end_now()

    def _finish(self) -> None:
        self._pipeline.text_end(self.id)
        self._closed()


def _message_start(message_id: str, role: object, name: object) -> TextMessageStartEvent:
    if type(role) is str and role in _ROLES and (name is None or type(name) is str):
        return _text_start(message_id, role, name)
    return built(
        TextMessageStartEvent, "ctx.message()", {}, message_id=message_id, role=role, name=name
    )
