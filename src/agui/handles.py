"""Handles: each bracketed AG-UI construct as a context manager that cannot be left open.

A handle emits its opening event when it is created and its closing event when its `with` block
is left by any path, an exception included (which then propagates). A message, a reasoning block
and a tool call are exclusive: opening one while another is open raises `UsageError` naming the
open one, which is the Rust SDK's borrow-check error at runtime. Steps nest, and close innermost
first. Unordered events (state, custom, raw, activity) go out through any open handle.

A closed handle refuses every further call with `UsageError`, so a result can never follow a
finished call by accident. A handle still open when its run ends is closed by the run driver,
which reports it (`agui.errors.UnclosedHandleWarning`) at the line that opened it.

A handle talks to its run through two small seams: the run's pipeline (`agui._pipeline`), the
one way its events leave and where it is held open, and an `Owner`, the run's state and its
publishing (a `RunContext` is one). The context hands each handle its ids when it opens it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any, Generic, Literal, NoReturn, Protocol, TypeVar, cast, overload

import pydantic_core
from pydantic import JsonValue, TypeAdapter, ValidationError
from typing_extensions import Self

from agui._pipeline import Pipeline
from agui._record import Kind
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
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.patch import escape_pointer_token
from agui.types import ToolResultContent

__all__ = ["Handle", "MessageHandle", "Owner", "ReasoningHandle", "StepHandle", "ToolCallHandle"]

S = TypeVar("S")
S_co = TypeVar("S_co", covariant=True)
T = TypeVar("T")
TextRole = Literal["assistant", "user", "system", "developer"]
_ROLES = frozenset(("assistant", "user", "system", "developer"))
_log = logging.getLogger("agui")
_TEXT_CONTENT, _TOOL_ARGS, _REASONING = Kind.TEXT_CONTENT, Kind.TOOL_ARGS, Kind.REASONING_CONTENT
_TEXT_START, _TEXT_END, _TOOL_END = Kind.TEXT_START, Kind.TEXT_END, Kind.TOOL_END
_text_start = TextMessageStartEvent.trusted_builder("message_id", "role", "name")
_tool_start = ToolCallStartEvent.trusted_builder(
    "tool_call_id", "tool_call_name", "parent_message_id"
)
_tool_result = ToolCallResultEvent.trusted_builder("message_id", "tool_call_id", "content", "role")


class Owner(Protocol[S_co]):
    """What a handle needs of its run besides the pipeline: the state, and publishing it.

    A `RunContext` is one.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r", state={"n": 1}))
        >>> owner: Owner[object] = ctx
        >>> owner.state
        {'n': 1}
    """

    @property
    def state(self) -> S_co:
        """The run's live state."""
        ...

    def publish_state(self) -> None:
        """Send the state if it changed."""
        ...


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
    nests: bool = False
    """Whether blocks of this kind nest (steps) rather than exclude each other."""

    def __init__(self, owner: Owner[S], pipeline: Pipeline[Handle[S]]) -> None:
        self._owner = owner
        self._pipeline = pipeline
        self._open = True
        self._ending = False
        self.opened_at = _caller()
        """The file and line of the code that opened this block (for the unclosed warning)."""

    @property
    def closed(self) -> bool:
        """Whether the closing event has gone out."""
        return not self._open

    @property
    def state(self) -> S:
        """The run's live state (the same object as `ctx.state`)."""
        return self._owner.state

    def publish_state(self) -> None:
        """Publish the run's state now, while this block is open (as `RunContext.publish_state`)."""
        self._check_open("publish_state")
        self._owner.publish_state()

    def emit(self, event: Event) -> None:
        """Emit any event through the run's transformers and verifier."""
        self._check_open("emit")
        self._pipeline.send(event)

    def describe(self) -> str:
        """A short name for messages, such as `tool call 'r-call-1' (get_weather)`."""
        return self.kind

    def close(self) -> None:
        """Emit the closing event, unless it has gone out already."""
        if self._open:
            self._end_now()

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
            self._end_now()
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001 - the error already propagating must win
            _log.exception("closing %s failed while an error propagated", self.describe())
            self._pipeline.release(self)

    @property
    def abandoned(self) -> bool:
        """Whether the block is open and nothing ever tried to end it (the run driver warns).

        Examples:
            >>> from agui import RunAgentInput, RunContext
            >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> message = ctx.message()
            >>> message.abandoned
            True
            >>> message.end()
            >>> message.abandoned
            False
        """
        return self._open and not self._ending

    def _end_now(self) -> None:
        self._ending = True
        self._finish()

    def _finish(self) -> None:
        raise NotImplementedError

    def _start(self, *events: Event) -> None:
        """Hold this block open and send its opening events; a refused opening leaves it shut."""
        pipeline = self._pipeline
        pipeline.open(self)
        try:
            self._send_opening(events)
        except BaseException:
            self._open = False
            pipeline.release(self)
            raise

    def _send_opening(self, events: tuple[Event, ...]) -> None:
        """Send the opening events: only the first may be refused for cancellation."""
        for index, event in enumerate(events):
            self._pipeline.send(event, forced=index > 0)

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
        self._pipeline.release(self)


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
        if name is None and type(cast("object", role)) is str and role in _ROLES:
            self._start()  # the start needs no model: see `_send_opening`
        else:
            self._start(_message_start(self.id, role, name))

    def describe(self) -> str:  # noqa: D102 - documented on Handle
        return f"text message '{self.id}'"

    def _send_opening(self, events: tuple[Event, ...]) -> None:
        if events:
            super()._send_opening(events)
        else:  # a plain role and no name: the pipeline may queue it as a record
            self._pipeline.send_record(_TEXT_START, self.id, self.role)

    def delta(self, text: str) -> None:
        """Append text; an empty delta sends nothing."""
        if type(text) is not str or not self._open:
            text = self._text("delta", text)
        if text:
            self._pipeline.send_record(_TEXT_CONTENT, self.id, text)

    def end(self) -> None:
        """Close the message now (leaving the `with` block does the same)."""
        self._check_open("end")
        self._end_now()

    def _finish(self) -> None:
        self._pipeline.send_record(_TEXT_END, self.id)
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

    def __init__(self, owner: Owner[S], pipeline: Pipeline[Handle[S]], message_id: str) -> None:
        super().__init__(owner, pipeline)
        self.id = message_id
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
            self._pipeline.send_record(_REASONING, self.id, text)

    def encrypted_value(self, value: str) -> None:
        """Attach an opaque value the client stores on this reasoning message."""
        self._check_open("encrypted_value")
        event = ReasoningEncryptedValueEvent(
            subtype="message", entity_id=self.id, encrypted_value=value
        )
        self._pipeline.send(event)

    def end(self) -> None:
        """Close the reasoning message and its span now."""
        self._check_open("end")
        self._end_now()

    def _finish(self) -> None:
        self._pipeline.send(ReasoningMessageEndEvent(message_id=self.id), forced=True)
        self._pipeline.send(ReasoningEndEvent(message_id=self.id), forced=True)
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
    nests = True

    def __init__(self, owner: Owner[S], pipeline: Pipeline[Handle[S]], name: str) -> None:
        super().__init__(owner, pipeline)
        self.name = name
        self._start(StepStartedEvent(step_name=name))

    def describe(self) -> str:  # noqa: D102 - documented on Handle
        return f"step '{self.name}'"

    def end(self) -> None:
        """Finish the step now; inner steps must have finished first."""
        self._check_open("end")
        inner = self._pipeline.inner_step(self)
        if inner is not None:
            message = f"cannot end {self.describe()}: {inner.describe()} inside it is open"
            raise UsageError(message)
        self._end_now()

    def _finish(self) -> None:
        self._pipeline.send(StepFinishedEvent(step_name=self.name), forced=True)
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
        owner: Owner[S],
        pipeline: Pipeline[Handle[S]],
        name: str,
        *,
        call_id: str,
        result_message_id: str,
        parent_message_id: str | None = None,
    ) -> None:
        super().__init__(owner, pipeline)
        self.name = name
        self.id = call_id
        self.result_message_id = result_message_id
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
            self._pipeline.send_record(_TOOL_ARGS, self._wire_id, delta)

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
        self._pipeline.send(event)

    def end(self) -> None:
        """End the call without a result: the client executes it and answers next run."""
        self._check_open("end")
        self._end_now()

    def result(self, content: ToolResultContent) -> str:
        """End the call and send its result; returns the result's message id."""
        self._check_open("result")
        self._end_now()
        if type(content) is str:
            event = _tool_result(self.result_message_id, self._wire_id, content, "tool")
        else:
            event = ToolCallResultEvent(
                message_id=self.result_message_id,
                tool_call_id=self._wire_id,
                content=content,
                role="tool",
            )
        self._pipeline.send(event)
        return self.result_message_id

    def result_json(self, value: object) -> str:
        """End the call and send a value (dict, model, dataclass) as JSON text."""
        return self.result(_to_json_text(value, what=f"the result of {self.describe()}"))

    def _finish(self) -> None:
        self._pipeline.send_record(_TOOL_END, self._wire_id)
        self._closed()


def _message_start(message_id: str, role: object, name: object) -> TextMessageStartEvent:
    if type(role) is str and role in _ROLES and (name is None or type(name) is str):
        return _text_start(message_id, role, name)
    return TextMessageStartEvent(message_id=message_id, role=role, name=name)  # type: ignore[arg-type]


def _tool_call_start(call_id: object, name: object, parent: object) -> ToolCallStartEvent:
    if type(call_id) is str and type(name) is str and (parent is None or type(parent) is str):
        return _tool_start(call_id, name, parent)
    return ToolCallStartEvent(
        tool_call_id=call_id,  # type: ignore[arg-type]
        tool_call_name=name,  # type: ignore[arg-type]
        parent_message_id=parent,  # type: ignore[arg-type]
    )


_OPENERS = frozenset((__name__, "agui.context"))
"""The modules whose frames open a handle for its caller: the handles' own and the context's."""


_frame_at: Callable[[int], FrameType] = vars(sys)["_getframe"]
"""`sys._getframe`: it reaches an outer frame directly, where `inspect.currentframe()` and
`f_back` would make an object of every frame in between, several times the cost on every open."""


def _caller() -> tuple[str, int]:
    """The file and line of the code that opened a handle: the first frame outside `_OPENERS`.

    Called from `Handle.__init__`, whose caller is a handle's own `__init__`, whose caller is an
    opener (`ctx.message()`) or the code itself: the search starts there.
    """
    try:
        frame = _frame_at(3)
    except (
        ValueError
    ):  # pragma: no cover - only from a program's outermost frame (a subprocess test)
        frame = _frame_at(2)
    while frame.f_back is not None and frame.f_globals.get("__name__") in _OPENERS:
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


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
            ("".join("/" + escape_pointer_token(str(part)) for part in item["loc"]), item["msg"])
            for item in error.errors(include_url=False)
        ]
        listed = "; ".join(f"'{pointer}': {msg}" for pointer, msg in problems)
        message = (
            f"{where}: the arguments do not fit {getattr(target, '__name__', target)}: {listed}"
        )
        raise InvalidArguments(
            message, tool_call_id=call_id, tool_name=name, errors=problems
        ) from None
