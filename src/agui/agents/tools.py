"""Backend tools: ordinary Python functions a model can call.

`@tool` turns a function (plain or async; a method, bound when read from its instance; a static
method, read alike from its class and instances) into a `BackendTool`: its JSON Schema comes
from the signature through pydantic (`Annotated[..., Field(description=...)]`, defaults, nested
models, the docstring's parameter section in the Google, numpy or Sphinx style), and its
description from the rest of the docstring. The function itself is untouched and still callable
directly. A `functools.partial`, a callable object or a class method is refused, saying what to
pass instead: the first two have no name or docstring of their own, and a partial's bound
keywords would stay in the schema.

Running a tool (`BackendTool.run`) never fails the run for something the model can fix or read:
arguments that do not fit the signature give an error result listing the fields, and an
exception in the tool gives an error result without the exception's text (unless the tool opts
in with `expose_errors=True`; the server log always has the traceback). An `InvalidArguments`
the tool raises itself is the exception: its text is written for the model, to correct its
arguments by, so the model reads it. Only agui's own errors (`Cancelled`, `AgentError`, a misuse
of the run context) and task cancellation propagate. An awaitable the function returns is
awaited once, whether the function is async or not. Synchronous tools run in a worker thread so
they cannot stall the event loop, except those that take the `RunContext`: emitting is not
thread-safe, and such tools change run state in place.

A `Toolbox` holds tools by name and gives the `Tool` specs a provider request carries.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import re
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar, overload

from pydantic import JsonValue, ValidationError
from typing_extensions import ParamSpec, Self

from agui._protocol.text import argument_problems
from agui.agents._result_content import content, exception_text
from agui.agents._signature import Signature, build_signature, check_function, parse_arguments
from agui.context import RunContext
from agui.errors import AguiError, InvalidArguments, UsageError
from agui.types import Tool

__all__ = ["BackendTool", "ToolResult", "Toolbox", "tool"]

P = ParamSpec("P")
R_co = TypeVar("R_co", covariant=True)
S = TypeVar("S")
_log = logging.getLogger("agui")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """What a tool call gives back to the model: content, and whether it is an error.

    Examples:
        >>> ToolResult("sunny, 21 C")
        ToolResult(content='sunny, 21 C', ok=True)
    """

    content: str
    ok: bool = True


class BackendTool(Generic[P, R_co]):
    """A function the model may call, with its schema; build one with `@tool`.

    Calling the object calls the function; `run()` is what the tool loop uses.

    Examples:
        >>> import asyncio
        >>> @tool
        ... def get_weather(location: str) -> str:
        ...     '''Get the current weather for a city.'''
        ...     return f"sunny in {location}"
        >>> get_weather.description
        'Get the current weather for a city.'
        >>> get_weather.parameters
        {'additionalProperties': False, 'properties': {'location': {'type': 'string'}},
         'required': ['location'], 'type': 'object'}
        >>> asyncio.run(get_weather.run({"location": "Paris"})).content
        'sunny in Paris'
    """

    def __init__(
        self,
        fn: Callable[P, R_co],
        *,
        name: str | None = None,
        description: str | None = None,
        requires_approval: bool = False,
        expose_errors: bool = False,
    ) -> None:
        check_function(fn)
        # A static method is its function, read alike from the class and from an instance.
        self._static = isinstance(fn, staticmethod)
        if self._static:
            fn = typing.cast("staticmethod[P, R_co]", fn).__func__
        self._fn = fn
        self.name: str = name if name is not None else getattr(fn, "__name__", "tool")
        if not _NAME.match(self.name):
            message = (
                f"tool name {self.name!r} is not allowed: use 1 to 64 letters, digits, '_' or '-' "
                "(what provider APIs accept); pass @tool(name=...) to choose another"
            )
            raise UsageError(message)
        self.requires_approval = requires_approval
        self.expose_errors = expose_errors
        self._description = description
        self._signature: Signature | None = None
        self._attribute: str | None = None
        functools.update_wrapper(self, fn)

    @property
    def fn(self) -> Callable[P, R_co]:
        """The decorated function."""
        return self._fn

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co:
        """Call the function itself (no validation, no result conversion)."""
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<BackendTool {self.name!r}>"

    def __set_name__(self, owner: type[object], name: str) -> None:
        self._attribute = name

    @overload
    def __get__(self, instance: None, owner: type[object] | None = None) -> Self: ...
    @overload
    def __get__(
        self, instance: object, owner: type[object] | None = None
    ) -> BackendTool[..., R_co]: ...
    def __get__(
        self, instance: object | None, owner: type[object] | None = None
    ) -> Self | BackendTool[..., R_co]:
        if instance is None or self._static:
            return self
        method: Callable[..., R_co] = types.MethodType(self._fn, instance)
        bound: BackendTool[..., R_co] = BackendTool(
            method,
            name=self.name,
            description=self._description,
            requires_approval=self.requires_approval,
            expose_errors=self.expose_errors,
        )
        if self._attribute is not None and hasattr(instance, "__dict__"):
            # Cache on the instance, so the schema is built once per object, not per access.
            vars(instance)[self._attribute] = bound
        return bound

    # -- schema ----------------------------------------------------------------------------

    def _sig(self) -> Signature:
        if self._signature is None:
            self._signature = build_signature(self._fn, self.name)
        return self._signature

    @property
    def description(self) -> str:
        """What the model reads about the tool: `description=`, or the docstring's summary."""
        if self._description is not None:
            return self._description
        return self._sig().description

    @property
    def parameters(self) -> dict[str, JsonValue]:
        """The JSON Schema of the arguments (the `RunContext` parameter is left out)."""
        return self._sig().parameters

    @property
    def spec(self) -> Tool:
        """The tool as a provider request (and AG-UI) describes it."""
        return Tool(name=self.name, description=self.description, parameters=self.parameters)

    # -- calling ---------------------------------------------------------------------------

    def validate(
        self, arguments: str | Mapping[str, JsonValue], *, call_id: str = ""
    ) -> dict[str, object]:
        """Check arguments (JSON text or a mapping) against the signature; return them by name.

        Raises `InvalidArguments` listing every field that does not fit.
        """
        where = f"the arguments of tool {self.name!r}"
        arguments = parse_arguments(self.name, arguments, call_id=call_id)
        signature = self._sig()
        try:
            model = signature.model.model_validate(arguments)
        except ValidationError as error:
            problems = argument_problems(error)
            listed = "; ".join(f"{pointer!r}: {msg}" for pointer, msg in problems)
            message = f"{where} do not fit its signature: {listed}"
            raise InvalidArguments(
                message, tool_call_id=call_id, tool_name=self.name, errors=problems
            ) from None
        return {parameter: getattr(model, field) for field, parameter, _ in signature.names}

    async def run(
        self,
        arguments: str | Mapping[str, JsonValue],
        *,
        ctx: RunContext[S] | None = None,
        call_id: str = "",
    ) -> ToolResult:
        """Validate, run the function, and turn its return value (or failure) into a result.

        `ctx` is passed to a parameter annotated `RunContext[...]`; `call_id` names the call in
        error messages.
        """
        try:
            values = self.validate(arguments, call_id=call_id)
            value = await self._invoke(values, ctx)
        except InvalidArguments as error:
            # Shown even without expose_errors: the validation's text, or the tool's own refusal
            # of its arguments, is written for the model to correct them by.
            return ToolResult(f"Error: {error}", ok=False)
        except AguiError:
            raise
        except Exception as error:  # noqa: BLE001 - a failing tool is a result the model reads
            _log.exception("tool %r (call %r) failed", self.name, call_id)
            detail = f": {exception_text(error)}" if self.expose_errors else ""
            return ToolResult(f"Error: the tool {self.name!r} failed{detail}", ok=False)
        try:
            return ToolResult(content(value))
        except ValueError as error:
            _log.error(
                "tool %r (call %r) returned no readable result: %s", self.name, call_id, error
            )
            return ToolResult(
                f"Error: the tool {self.name!r} returned no readable result", ok=False
            )

    async def _invoke(self, values: dict[str, object], ctx: RunContext[S] | None) -> object:
        signature = self._sig()
        positional: list[object] = []
        keywords: dict[str, object] = {}
        for _, parameter, positional_only in signature.names:
            if positional_only:
                positional.append(values[parameter])
            else:
                keywords[parameter] = values[parameter]
        if signature.context is not None:
            parameter, positional_only = signature.context
            if ctx is None:
                message = f"tool {self.name!r} takes the RunContext; pass ctx= to run()"
                raise UsageError(message)
            if positional_only:
                positional.insert(0, ctx)
            else:
                keywords[parameter] = ctx
        fn = typing.cast("Callable[..., object]", self._fn)
        if inspect.iscoroutinefunction(fn):
            result = await typing.cast("Awaitable[object]", fn(*positional, **keywords))
        elif signature.context is not None:
            result = fn(*positional, **keywords)
        else:
            result = await asyncio.to_thread(_call_in_thread, fn, *positional, **keywords)
        if inspect.isawaitable(result):
            # What the function returns is awaited once, async or not (a sync wrapper of an
            # async function returns its coroutine); an awaitable that gives in turn is refused.
            result = await result
        return result


@overload
def tool(fn: Callable[P, R_co], /) -> BackendTool[P, R_co]: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    expose_errors: bool = False,
) -> Callable[[Callable[P, R_co]], BackendTool[P, R_co]]: ...
def tool(
    fn: Callable[P, R_co] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
    expose_errors: bool = False,
) -> BackendTool[P, R_co] | Callable[[Callable[P, R_co]], BackendTool[P, R_co]]:
    """Make a function a tool the model can call: `@tool` or `@tool(name=..., ...)`.

    `requires_approval=True` asks a human before each call (the tool loop interrupts the run);
    `expose_errors=True` lets the model read the text of the tool's exceptions.

    Examples:
        >>> from typing import Annotated
        >>> from pydantic import Field
        >>> @tool(name="find_restaurants")
        ... async def search_restaurants(
        ...     location: Annotated[str, Field(description="A city")], cuisine: str = "any"
        ... ) -> list[str]:
        ...     '''Find restaurants in a city.'''
        ...     return ["Chez Paul"]
        >>> search_restaurants.name, search_restaurants.parameters["required"]
        ('find_restaurants', ['location'])
    """

    def decorate(function: Callable[P, R_co]) -> BackendTool[P, R_co]:
        return BackendTool(
            function,
            name=name,
            description=description,
            requires_approval=requires_approval,
            expose_errors=expose_errors,
        )

    return decorate(fn) if fn is not None else decorate


class Toolbox:
    """The backend tools of an agent, by name; plain functions are wrapped with `@tool`.

    Examples:
        >>> def get_time(city: str) -> str:
        ...     '''The local time in a city.'''
        ...     return "12:00"
        >>> toolbox = Toolbox([get_time])
        >>> "get_time" in toolbox, [spec.name for spec in toolbox.specs()]
        (True, ['get_time'])
    """

    def __init__(self, tools: Iterable[Callable[..., object]] = ()) -> None:
        self._tools: dict[str, BackendTool[..., object]] = {}
        for item in tools:
            self.add(item)

    def add(self, item: Callable[..., object]) -> BackendTool[..., object]:
        """Add a tool (or a function, wrapped with `@tool`); names must be unique."""
        backend = typing.cast("BackendTool[..., object]", item) if _is_tool(item) else tool(item)
        if backend.name in self._tools:
            message = f"two tools are named {backend.name!r}; pass @tool(name=...) to rename one"
            raise UsageError(message)
        backend.spec  # noqa: B018 - build the schema now, so a bad signature fails at startup
        self._tools[backend.name] = backend
        return backend

    def get(self, name: str) -> BackendTool[..., object] | None:
        """The tool of that name, or `None`."""
        return self._tools.get(name)

    def specs(self) -> list[Tool]:
        """Every tool's spec, in the order the tools were added."""
        return [backend.spec for backend in self._tools.values()]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[BackendTool[..., object]]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def _call_in_thread(fn: Callable[..., object], /, *args: object, **kwargs: object) -> object:
    try:
        return fn(*args, **kwargs)
    except StopIteration as error:
        # An asyncio future refuses a StopIteration, so the await would never end; Python turns
        # one leaving an async tool into a RuntimeError the same way (PEP 479).
        message = "the tool raised StopIteration"
        raise RuntimeError(message) from error


def _is_tool(item: object) -> bool:
    return isinstance(item, BackendTool)
