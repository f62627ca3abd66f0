"""The tool call handle: `TOOL_CALL_START` when opened, `ARGS` as they stream, `END` and `RESULT`.

The handle keeps the argument text it streamed, so the agent can read the call's arguments
(`parse_args`) from the same text the client saw, as JSON or as a type; a validation error names
each bad value by its JSON Pointer (RFC 6901, escaped).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar, cast, overload

import pydantic_core
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from agui._emit.pipeline import Pipeline
from agui._protocol.text import argument_problems, json_text
from agui.errors import InvalidArguments, UsageError
from agui.events import ToolCallResultEvent, ToolCallStartEvent
from agui.handles._handle import Handle, Owner, built
from agui.types import ToolResultContent

__all__ = ["ToolCallHandle", "result_event"]

S = TypeVar("S")
T = TypeVar("T")
_tool_start = ToolCallStartEvent.trusted_builder(
    "tool_call_id", "tool_call_name", "parent_message_id"
)
_tool_result = ToolCallResultEvent.trusted_builder("message_id", "tool_call_id", "content", "role")


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
        self._check_unicode(name, "the name given to ctx.tool_call()")
        self._check_unicode(call_id, "the call_id given to ctx.tool_call()")
        self._check_unicode(parent_message_id, "the parent_message_id given to ctx.tool_call()")
        start = _tool_call_start(self.id, name, parent_message_id)
        if not start.tool_call_name.strip():
            message = (
                f"ctx.tool_call() needs the tool's name, got {name!r}: the client finds the "
                "tool to run or render by it; pass the name, e.g. ctx.tool_call('get_weather')"
            )
            raise UsageError(message)
        # The id as the wire has it (a plain str), for the events built without validation.
        self._wire_id = start.tool_call_id
        self._start(start)

    def describe(self) -> str:
        return f"tool call '{self.id}' ({self.name})"

    @property
    def raw_args(self) -> str:
        """The argument text streamed so far."""
        return "".join(self._fragments)

    def args(self, delta: str) -> None:
        """Stream a fragment of the argument text; an empty fragment sends nothing."""
        if type(delta) is not str or not self._open:
            delta = self._text("args", delta)
        elif not delta.isascii():  # most text is ASCII, which is always valid UTF-8
            try:
                delta.encode()
            except UnicodeEncodeError:
                self._text("args", delta)  # refuses it, naming this handle
        if delta:
            self._fragments.append(delta)
            self._pipeline.tool_args(self._wire_id, delta)

    def args_json(self, value: object) -> None:
        """Send arguments given as a value (dict, pydantic model, dataclass) as one JSON text."""
        self.args(_to_json_text(value, what=f"the arguments of {self.describe()}"))

    @overload
    def parse_args(self, type: None = None) -> JsonValue: ...
    @overload
    def parse_args(self, type: type[T]) -> T: ...
    def parse_args(self, type: type[T] | None = None) -> T | JsonValue:  # noqa: A002 - pinned name
        """Read the arguments as JSON, or as `type` (pydantic model, dataclass, TypedDict).

        No argument text at all (or only whitespace) reads as `{}`, a call without arguments,
        as a backend tool's `run` reads it: a model calling a tool that takes none may stream
        nothing. Raises `InvalidArguments` naming the call while the text is partial or invalid.
        """
        return _parse(self.raw_args, type, self.id, self.name)

    def encrypted_value(self, value: str) -> None:
        """Attach an opaque value the client stores on this tool call."""
        self._send_encrypted("tool-call", self.id, value)

    def end(self) -> None:
        """End the call without a result: the client executes it and answers next run."""
        self._check_open("end")
        self._end_now()

    def result(self, content: ToolResultContent) -> str:
        """End the call and send its result; returns the result's message id.

        Text that is not valid Unicode is refused before anything is sent.
        """
        if not self._open:
            message = (
                f"cannot call result() on {self.describe()}: it has ended; give the result "
                f"inside its `with` block, or answer it later with ctx.tool_result({self.id!r}, "
                "...)"
            )
            raise UsageError(message)
        if type(content) is str:
            self._check_unicode(content, "the result given to {handle}")
            self._end_now()
            event = _tool_result(self.result_message_id, self._wire_id, content, "tool")
        else:
            call = f"result() on {self.describe()}"
            ids = (self.result_message_id, self._wire_id)
            event = result_event(call, "result_json(value)", *ids, content)
            for text in _texts(content):
                self._check_unicode(text, "the result given to {handle}")
            self._end_now()
        self._pipeline.send(event)
        return self.result_message_id

    def result_json(self, value: object) -> str:
        """End the call and send a value (dict, model, dataclass) as JSON text."""
        return self.result(_to_json_text(value, what=f"the result of {self.describe()}"))

    def _finish(self) -> None:
        self._pipeline.tool_end(self._wire_id)
        self._closed()


def _tool_call_start(call_id: object, name: object, parent: object) -> ToolCallStartEvent:
    if type(call_id) is str and type(name) is str and (parent is None or type(parent) is str):
        return _tool_start(call_id, name, parent)
    return built(
        ToolCallStartEvent,
        "ctx.tool_call()",
        {"tool_call_id": "call_id", "tool_call_name": "name"},
        tool_call_id=call_id,
        tool_call_name=name,
        parent_message_id=parent,
    )


def result_event(
    call: str, as_json: str, message_id: str, tool_call_id: object, content: object
) -> ToolCallResultEvent:
    """A tool result whose content is not a plain string: content parts, checked to fit.

    Anything but text or a list of parts is refused by name, with `as_json`: how `call`'s caller
    sends a value as JSON text instead.

    Examples:
        >>> result_event("result()", "result_json(value)", "m1", "c1", {"tempC": 21})
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: result() takes text (a str) or a list of content parts ...
    """
    if not isinstance(content, (str, list)):
        message = (
            f"{call} takes text (a str) or a list of content parts (agui.messages.TextPart, "
            f"ImagePart, ...), not {type(content).__name__}; send a value as JSON text with "
            f"{as_json}"
        )
        raise UsageError(message)
    return built(
        ToolCallResultEvent,
        call,
        {},
        message_id=message_id,
        tool_call_id=tool_call_id,
        content=cast("object", content),  # parts, checked by the model
        role="tool",
    )


def _texts(value: object) -> Iterator[str]:
    """Every string in a result's content parts, the names of their members too."""
    if type(value) is str:
        yield value
        return
    if isinstance(value, BaseModel):
        value = value.__dict__
    if isinstance(value, dict):
        for key, item in cast("dict[object, object]", value).items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in cast("list[object]", value):
            yield from _texts(item)


def _to_json_text(value: object, *, what: str) -> str:
    try:
        return json_text(value)
    except ValueError as error:
        message = (
            f"{what} cannot be serialized to JSON: {error}; pass JSON values only "
            "(finite numbers, strings, lists, dicts, pydantic models, dataclasses)"
        )
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
    if not raw.strip():
        raw = "{}"
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
        problems = argument_problems(error)
        listed = "; ".join(f"'{pointer}': {msg}" for pointer, msg in problems)
        message = (
            f"{where}: the arguments do not fit {getattr(target, '__name__', target)}: {listed}"
        )
        raise InvalidArguments(
            message, tool_call_id=call_id, tool_name=name, errors=problems
        ) from None
