"""Handles: each bracketed AG-UI construct as a context manager that cannot be left open.

A handle emits its opening event when it is created and its closing event when its `with` block
is left by any path, an exception included (which then propagates). A message, a reasoning block
and a tool call are exclusive: opening one while another is open raises `UsageError` naming the
open one, which is the Rust SDK's borrow-check error at runtime. Steps nest, and close innermost
first. Unordered events (state, custom, raw, activity) go out through any open handle.

A closed handle refuses every further call with `UsageError`, so a result can never follow a
finished call by accident.
"""

# pyright: reportPrivateUsage=false
# (handles and RunContext are one unit: handles drive the context's private pipeline)

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, TypeVar, cast, overload

import pydantic_core
from pydantic import JsonValue, TypeAdapter, ValidationError
from typing_extensions import Self

from agui._fast import text_start, tool_result, tool_start
from agui.errors import InvalidArguments, UsageError
from agui.events import (
    Event,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageStartEvent,
    ToolCallStartEvent,
)
from agui.types import ToolResultContent
from agui.verify._ledger import TEXT, THOUGHT, TOOL

if TYPE_CHECKING:
    from agui.context import RunContext

__all__ = ["Handle", "MessageHandle", "ReasoningHandle", "StepHandle", "ToolCallHandle"]

S = TypeVar("S")
T = TypeVar("T")
TextRole = Literal["assistant", "user", "system", "developer"]
_ROLES = frozenset(("assistant", "user", "system", "developer"))


class Handle(Generic[S]):
    """What every handle shares: the run's state, publishing it, raw emits, and `with`.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r", state={"n": 0}))
        >>> with ctx.message() as message:
        ...     message.state["n"] += 1
        ...     message.publish_state()
        >>> [event.type for event in events.drain()]
        ['TEXT_MESSAGE_START', 'STATE_SNAPSHOT', 'TEXT_MESSAGE_END']
    """

    kind: str = "block"

    def __init__(self, ctx: RunContext[S]) -> None:
        self._ctx = ctx
        self._open = True

    @property
    def closed(self) -> bool:
        """Whether the closing event has gone out."""
        return not self._open

    @property
    def state(self) -> S:
        """The run's live state (the same object as `ctx.state`)."""
        return self._ctx.state

    def publish_state(self) -> None:
        """Publish the run's state now, while this block is open (as `RunContext.publish_state`)."""
        self._check_open("publish_state")
        self._ctx.publish_state()

    def emit(self, event: Event) -> None:
        """Emit any event through the run's transformers and verifier."""
        self._check_open("emit")
        self._ctx.emit(event)

    def describe(self) -> str:
        """A short name for messages, such as `tool call 'r-call-1' (get_weather)`."""
        return self.kind

    def close(self) -> None:
        """Emit the closing event, unless it has gone out already."""
        if self._open:
            self._finish()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._open:
            return
        if exc is None:
            self._finish()
            return
        self._ctx._close_quietly(self)

    def _finish(self) -> None:
        raise NotImplementedError

    def _start(self, *events: Event, exclusive: bool = True) -> None:
        """Claim this block and send its opening events; a refused opening leaves nothing open."""
        ctx = self._ctx
        if exclusive:
            ctx._claim(self)
        else:
            ctx._push_step(self)
        try:
            self._send_opening(events)
        except BaseException:
            self._open = False
            ctx._release(self)
            raise

    def _send_opening(self, events: tuple[Event, ...]) -> None:
        """Send the opening events: only the first may be refused for cancellation."""
        for index, event in enumerate(events):
            self._ctx._send(event, forced=index > 0)

    def _check_open(self, action: str) -> None:
        if not self._open:
            self._refuse(action)

    def _refuse(self, action: str) -> NoReturn:
        message = (
            f"cannot call {action}() on {self.describe()}: it has ended; "
            "open a new block for more output"
        )
        raise UsageError(message)

    def _text(self, action: str, value: object) -> str:
        """What a delta's quick check left: refused on an ended block or non-text, else plain."""
        if not self._open:
            self._refuse(action)
        if not isinstance(value, str):
            message = (
                f"{action}() on {self.describe()} takes text (a str), not {type(value).__name__}"
            )
            raise UsageError(message)
        return str.__str__(value)  # a str subclass's text as a plain str, as the model makes it

    def _closed(self) -> None:
        self._open = False
        self._ctx._release(self)


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

    def __init__(self, ctx: RunContext[S], *, role: TextRole, name: str | None = None) -> None:
        super().__init__(ctx)
        self.id = ctx._new_message_id()
        self.role = role
        if name is None and type(cast("object", role)) is str and role in _ROLES:
            self._start()  # the start needs no model: see `_send_opening`
        else:
            self._start(_message_start(self.id, role, name))

    def describe(self) -> str:  # noqa: D102 - documented on Handle
        return f"text message '{self.id}'"

    def _send_opening(self, events: tuple[Event, ...]) -> None:
        if events:
            super()._send_opening(events)
        else:  # a plain role and no name: the context may queue it as a record
            self._ctx._send_start(self.id, self.role)

    def delta(self, text: str) -> None:
        """Append text; an empty delta sends nothing."""
        if type(text) is not str or not self._open:
            text = self._text("delta", text)
        if text:
            self._ctx._send_delta(TEXT, self.id, text)

    def end(self) -> None:
        """Close the message now (leaving the `with` block does the same)."""
        self._check_open("end")
        self._finish()

    def _finish(self) -> None:
        self._ctx._send_end(TEXT, self.id)
        self._closed()


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

    def __init__(self, ctx: RunContext[S]) -> None:
        super().__init__(ctx)
        self.id = ctx._new_message_id()
        self._start(
            ReasoningStartEvent(message_id=self.id), ReasoningMessageStartEvent(message_id=self.id)
        )

    def describe(self) -> str:  # noqa: D102 - documented on Handle
        return f"reasoning block '{self.id}'"

    def delta(self, text: str) -> None:
        """Append reasoning text; an empty delta sends nothing."""
        if type(text) is not str or not self._open:
            text = self._text("delta", text)
        if text:
            self._ctx._send_delta(THOUGHT, self.id, text)

    def encrypted_value(self, value: str) -> None:
        """Attach an opaque value the client stores on this reasoning message."""
        self._check_open("encrypted_value")
        event = ReasoningEncryptedValueEvent(
            subtype="message", entity_id=self.id, encrypted_value=value
        )
        self._ctx._send(event)

    def end(self) -> None:
        """Close the reasoning message and its span now."""
        self._check_open("end")
        self._finish()

    def _finish(self) -> None:
        self._ctx._send(ReasoningMessageEndEvent(message_id=self.id), forced=True)
        self._ctx._send(ReasoningEndEvent(message_id=self.id), forced=True)
        self._closed()


class StepHandle(Handle[S]):
    """A named step: `STEP_STARTED` now, `STEP_FINISHED` when left; steps nest.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.step("plan"), ctx.step("search"):
        ...     pass
        >>> [(event.type, event.step_name) for event in events.drain()]
        [('STEP_STARTED', 'plan'), ('STEP_STARTED', 'search'),
         ('STEP_FINISHED', 'search'), ('STEP_FINISHED', 'plan')]
    """

    kind = "step"

    def __init__(self, ctx: RunContext[S], name: str) -> None:
        super().__init__(ctx)
        self.name = name
        self._start(StepStartedEvent(step_name=name), exclusive=False)

    def describe(self) -> str:  # noqa: D102 - documented on Handle
        return f"step '{self.name}'"

    def end(self) -> None:
        """Finish the step now; inner steps must have finished first."""
        self._check_open("end")
        self._ctx._check_innermost_step(self)
        self._finish()

    def _finish(self) -> None:
        self._ctx._send(StepFinishedEvent(step_name=self.name), forced=True)
        self._closed()


class ToolCallHandle(Handle[S]):
    """A tool call: START now, ARGS as they stream, END (and RESULT) when answered or left.

    `raw_args` buffers the argument text; `parse_args` reads it once it is complete.
    `end()` leaves the call to the client (no result); `result()` sends END then RESULT.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.tool_call("get_weather") as call:
        ...     call.args('{"city":')
        ...     call.args('"Seoul"}')
        ...     city = call.parse_args()["city"]
        ...     call.result_json({"tempC": 21})
        'r-msg-1'
        >>> city, [event.type for event in events.drain()]
        ('Seoul', ['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_ARGS', 'TOOL_CALL_END',
                   'TOOL_CALL_RESULT'])
    """

    kind = "tool call"

    def __init__(
        self,
        ctx: RunContext[S],
        name: str,
        *,
        call_id: str | None = None,
        parent_message_id: str | None = None,
    ) -> None:
        super().__init__(ctx)
        self.name = name
        self.id = call_id if call_id is not None else ctx._new_call_id()
        self.result_message_id = ctx._new_message_id()
        self._fragments: list[str] = []
        start = _tool_call_start(self.id, name, parent_message_id)
        # The id as the wire has it (a plain str), for the events built without validation.
        self._wire_id = start.tool_call_id
        self._start(start)

    def describe(self) -> str:  # noqa: D102 - documented on Handle
        return f"tool call '{self.id}' ({self.name})"

    @property
    def raw_args(self) -> str:
        """The argument text streamed so far."""
        return "".join(self._fragments)

    def args(self, delta: str) -> None:
        """Stream a fragment of the argument text; an empty fragment sends nothing."""
        if type(delta) is not str or not self._open:
            delta = self._text("args", delta)
        if delta:
            self._fragments.append(delta)
            self._ctx._send_delta(TOOL, self._wire_id, delta)

    def args_json(self, value: object) -> None:
        """Send arguments given as a value (dict, pydantic model, dataclass) as one JSON text."""
        self.args(_to_json_text(value, what=f"the arguments of {self.describe()}"))

    @overload
    def parse_args(self, type: None = None) -> JsonValue: ...
    @overload
    def parse_args(self, type: type[T]) -> T: ...
    def parse_args(self, type: type[T] | None = None) -> T | JsonValue:  # noqa: A002 - pinned name
        """Read the arguments as JSON, or as `type` (pydantic model, dataclass, TypedDict).

        Raises `InvalidArguments` naming the call while the text is partial or invalid.
        """
        return _parse(self.raw_args, type, self.id, self.name)

    def encrypted_value(self, value: str) -> None:
        """Attach an opaque value the client stores on this tool call."""
        self._check_open("encrypted_value")
        event = ReasoningEncryptedValueEvent(
            subtype="tool-call", entity_id=self.id, encrypted_value=value
        )
        self._ctx._send(event)

    def end(self) -> None:
        """End the call without a result: the client executes it and answers next run."""
        self._check_open("end")
        self._finish()

    def result(self, content: ToolResultContent) -> str:
        """End the call and send its result; returns the result's message id."""
        self._check_open("result")
        self._finish()
        if type(content) is str:
            event = tool_result(self.result_message_id, self._wire_id, content)
            self._ctx._send(event)
        else:
            self._ctx.tool_result(self._wire_id, content, message_id=self.result_message_id)
        return self.result_message_id

    def result_json(self, value: object) -> str:
        """End the call and send a value (dict, model, dataclass) as JSON text."""
        return self.result(_to_json_text(value, what=f"the result of {self.describe()}"))

    def _finish(self) -> None:
        self._ctx._send_end(TOOL, self._wire_id)
        self._closed()


def _message_start(message_id: str, role: object, name: object) -> TextMessageStartEvent:
    if type(role) is str and role in _ROLES and (name is None or type(name) is str):
        return text_start(message_id, role, name)
    return TextMessageStartEvent(message_id=message_id, role=role, name=name)  # type: ignore[arg-type]


def _tool_call_start(call_id: object, name: object, parent: object) -> ToolCallStartEvent:
    if type(call_id) is str and type(name) is str and (parent is None or type(parent) is str):
        return tool_start(call_id, name, parent)
    return ToolCallStartEvent(
        tool_call_id=call_id,  # type: ignore[arg-type]
        tool_call_name=name,  # type: ignore[arg-type]
        parent_message_id=parent,  # type: ignore[arg-type]
    )


def _to_json_text(value: object, *, what: str) -> str:
    try:
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError as error:
        message = f"{what} cannot be serialized to JSON: {error}"
        raise UsageError(message) from None


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def _adapter(target: type[T]) -> TypeAdapter[T]:
    # Building a TypeAdapter costs far more than a validation; keep one per target type.
    adapter = _ADAPTERS.get(target)
    if adapter is None:
        adapter = _ADAPTERS.setdefault(target, TypeAdapter(target))
    return adapter


def _parse(raw: str, target: type[T] | None, call_id: str, name: str) -> T | JsonValue:
    where = f"tool call '{call_id}' ({name})"
    if target is None:
        try:
            value: JsonValue = pydantic_core.from_json(raw, allow_inf_nan=False)
        except ValueError as error:
            message = f"{where}: the argument text is not complete JSON ({error}): {raw!r}"
            raise InvalidArguments(message, tool_call_id=call_id, tool_name=name) from None
        return value
    try:
        return _adapter(target).validate_json(raw)
    except ValidationError as error:
        problems = [
            ("/" + "/".join(str(part) for part in item["loc"]), item["msg"])
            for item in error.errors(include_url=False)
        ]
        listed = "; ".join(f"'{pointer}': {msg}" for pointer, msg in problems)
        message = (
            f"{where}: the arguments do not fit {getattr(target, '__name__', target)}: {listed}"
        )
        raise InvalidArguments(
            message, tool_call_id=call_id, tool_name=name, errors=problems
        ) from None
