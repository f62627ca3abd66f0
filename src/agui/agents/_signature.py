"""A tool's signature: the pydantic model that checks its arguments, and the schema it shows.

A backend tool is described to a model by a JSON Schema of its parameters, and the model's
arguments are checked against the same definition, so both come from one pydantic model built
from the function's signature: each parameter a field (aliased to the parameter's name, or to
the alias its `Field` gives, so the model validates the names the schema shows),
`Annotated[..., Field(...)]` and defaults as written, the docstring's parameter sections as
descriptions where the annotation gives none. A parameter annotated `RunContext[...]` is not an
argument: it is recorded so that the tool can be handed the run's context, and left out of the
schema.

Before any of that, `check_function` refuses what has no signature of a tool's: a value, a
`functools.partial` (its bound keywords would stay in the schema), a callable object (its
annotations are on its `__call__`), a generator function (a tool returns one result) and a class
method (nothing would bind its class); a static method is read as its function.

A call's argument text is read into an object first (`parse_arguments`), the one check a
client-side tool's call gets too, since the client parses what it is handed.

Building it imports the annotations, so it happens once, on first use (`BackendTool` caches it),
and fails with a `UsageError` that names the tool when the signature cannot have a schema: the
parameter, what is wrong with its type, and what to annotate instead. pydantic's own error would
name a model the user never wrote, and suggest `arbitrary_types_allowed`, which gives a type no
schema either.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model
from pydantic.errors import PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import SchemaError

from agui._util.wording import with_article
from agui.agents._docstring import read_docstring
from agui.context import RunContext
from agui.errors import InvalidArguments, UsageError
from agui.wire import json_kind

__all__ = ["Signature", "build_signature", "check_function", "parse_arguments"]

_CONFIG = ConfigDict(validate_by_alias=True, extra="forbid")
_NO_SCHEMA: dict[str, tuple[str, str]] = {  # pydantic's error code: what, and the fix
    "schema-for-unknown-type": (
        "pydantic cannot read that type from JSON",
        (
            "annotate it with JSON types (str, int, float, bool, list, dict), a pydantic model, "
            "a dataclass or a TypedDict; an object the model cannot send comes through a "
            "RunContext[...] parameter, or the tool's own instance (make the tool a method)"
        ),
    ),
    "typed-dict-version": (
        "it holds a typing.TypedDict, which pydantic reads only on Python 3.12 and later",
        "define the TypedDict with typing_extensions.TypedDict",
    ),
    "invalid-for-json-schema": (
        "JSON Schema cannot describe that type (a callable, say), so the model cannot send one",
        "take a JSON value that says what to do, such as a name, and choose in the tool",
    ),
    "class-not-fully-defined": (
        "a model it uses refers to a name that is not defined (a forward reference)",
        "define that name, then call model_rebuild() on the model",
    ),
}


class _NoFieldTitles(GenerateJsonSchema):
    # Titles repeat the parameter names; models read descriptions, and tokens cost money.
    def field_title_should_be_set(self, schema: object) -> bool:  # noqa: ARG002
        return False


@dataclasses.dataclass(frozen=True)
class Signature:
    model: type[BaseModel]
    parameters: dict[str, JsonValue]
    description: str
    names: tuple[tuple[str, str, bool], ...]  # (field, parameter, positional-only)
    context: tuple[str, bool] | None  # the RunContext parameter, and whether positional-only


def build_signature(fn: Callable[..., object], name: str) -> Signature:
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError as error:
        message = f"tool {name!r}: an annotation cannot be resolved ({error})"
        raise UsageError(message) from None
    summary, documented = read_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}  # create_model takes its fields as keywords of any type
    names: list[tuple[str, str, bool]] = []
    taken: dict[str, str] = {}  # argument name: the parameter that has it
    context: tuple[str, bool] | None = None
    for index, parameter in enumerate(signature.parameters.values()):
        positional_only = parameter.kind is inspect.Parameter.POSITIONAL_ONLY
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            message = f"tool {name!r}: *args and **kwargs have no schema; name each parameter"
            raise UsageError(message)
        annotation: object = hints.get(parameter.name, object)
        if _is_context(annotation):
            context = (parameter.name, positional_only)
            continue
        argument = _argument_name(name, parameter, annotation)
        if argument in taken:
            message = (
                f"tool {name!r}: parameters {taken[argument]!r} and {parameter.name!r} are both "
                f"the argument {argument!r}, and the model can send it only once; give one "
                "another alias"
            )
            raise UsageError(message)
        taken[argument] = parameter.name
        fields[f"p{index}"] = _field(parameter, annotation, argument, documented)
        names.append((f"p{index}", parameter.name, positional_only))
    parameters = [(field, p, hints.get(p, object)) for field, p, _ in names]
    model, schema = _model(name, fields, parameters)
    return Signature(model, schema, summary, tuple(names), context)


def _field(
    parameter: inspect.Parameter, annotation: object, argument: str, documented: dict[str, str]
) -> tuple[object, object]:
    default = parameter.default
    extra = Field(alias=argument)
    doc = documented.get(parameter.name)
    if doc is not None and not any(info.description for info in _infos(annotation, default)):
        extra = Field(alias=argument, description=doc)
    return (Annotated[annotation, extra], ... if default is inspect.Parameter.empty else default)


def _argument_name(tool: str, parameter: inspect.Parameter, annotation: object) -> str:
    """The name the model sends the parameter by: its own, or the alias its `Field` gives."""
    infos = _infos(annotation, parameter.default)
    aliases = [info.validation_alias for info in infos if info.validation_alias is not None]
    if not aliases:
        return parameter.name
    alias = aliases[-1]  # pydantic merges the Field()s in this order, the last one winning
    if isinstance(alias, str):
        return alias
    message = (
        f"tool {tool!r}: parameter {parameter.name!r} is read through {type(alias).__name__}, "
        "but a tool's schema shows one name for each argument, and the model sends that one; "
        "give the Field a string alias"
    )
    raise UsageError(message)


def _infos(annotation: object, default: object) -> list[FieldInfo]:
    """The `Field()`s of a parameter: those in its `Annotated[...]`, then its default."""
    infos = [*(typing.get_args(annotation)[1:] if _annotated(annotation) else ()), default]
    return [info for info in infos if isinstance(info, FieldInfo)]


def _model(
    name: str, fields: dict[str, Any], parameters: list[tuple[str, str, object]]
) -> tuple[type[BaseModel], dict[str, JsonValue]]:
    try:
        return _build(name, fields)
    except (PydanticUserError, SchemaError, TypeError) as error:
        raise _no_schema(name, fields, parameters, error) from None


def _no_schema(
    name: str,
    fields: dict[str, Any],
    parameters: list[tuple[str, str, object]],
    error: Exception,
) -> UsageError:
    """The error naming the parameter at fault: built alone, its field fails the same way."""
    culprit = next(((p, a) for f, p, a in parameters if _fails(name, {f: fields[f]})), None)
    where = (
        "a parameter"
        if culprit is None
        else f"parameter {culprit[0]!r} ({inspect.formatannotation(culprit[1])})"
    )
    if isinstance(error, PydanticUserError) and error.code in _NO_SCHEMA:
        what, fix = _NO_SCHEMA[error.code]
    else:
        detail = error.message if isinstance(error, PydanticUserError) else str(error)
        what = f"pydantic refuses it ({detail.splitlines()[-1].strip()})"
        fix = "change its annotation, or the Field(...) in it"
    return UsageError(f"tool {name!r}: {where} has no JSON Schema: {what}; {fix}")


def _build(name: str, fields: dict[str, Any]) -> tuple[type[BaseModel], dict[str, JsonValue]]:
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=_CONFIG, **fields)
    schema = typing.cast(
        "dict[str, JsonValue]", model.model_json_schema(schema_generator=_NoFieldTitles)
    )
    schema.pop("title", None)
    return model, schema


def _fails(name: str, fields: dict[str, Any]) -> bool:
    try:
        _build(name, fields)
    except (PydanticUserError, SchemaError, TypeError):
        return True
    return False


def check_function(fn: object) -> None:
    """A tool is a function that returns one result: not a value, not a generator.

    Examples:
        >>> check_function(len)
        >>> check_function(42)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: a tool is a function, plain or async, not an int
    """
    fn = _unwrap_static(fn)
    if not callable(fn):
        kind = type(fn).__name__
        message = f"a tool is a function, plain or async, not {with_article(kind)}"
        raise UsageError(message)
    if isinstance(fn, functools.partial):
        inner = _function_name(fn.func)
        message = (
            f"a tool is a function, plain or async, not a functools.partial of {inner}: it has "
            "no name or docstring of its own, and the keyword arguments it binds would stay in "
            f"the schema for the model to change; define a function that calls {inner} with "
            "them, and make that the tool"
        )
        raise UsageError(message)
    if not (inspect.isroutine(inspect.unwrap(fn)) or isinstance(fn, type)):
        # A callable object: its annotations are on its __call__, and it has no name to give.
        kind = type(fn).__qualname__
        message = (
            f"a tool is a function, plain or async, not a callable {kind} object; pass its "
            f"bound method, tool(name=...)(obj.__call__), or make a method of {kind} the tool "
            "with @tool"
        )
        raise UsageError(message)
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        name = getattr(fn, "__name__", "tool")
        message = (
            f"tool {name!r} is a generator function, and a tool returns one result: return "
            "the value (a list, for several items)"
        )
        raise UsageError(message)


def _unwrap_static(fn: object) -> object:
    """The function of a static method; a class method is refused, since nothing binds it."""
    if isinstance(fn, classmethod):
        name = _function_name(typing.cast("classmethod[object, ..., object]", fn).__func__)
        message = (
            f"tool {name!r} is a classmethod, and a tool is a function, plain or async, or a "
            "method bound to the instance it is read from; make it a @staticmethod that names "
            "its class, or a method"
        )
        raise UsageError(message)
    if isinstance(fn, staticmethod):
        return typing.cast("staticmethod[..., object]", fn).__func__
    return fn


def _function_name(fn: Callable[..., object]) -> str:
    return getattr(fn, "__name__", "its function")


def _is_context(annotation: object) -> bool:
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, RunContext)


def _annotated(annotation: object) -> bool:
    return typing.get_origin(annotation) is Annotated


def parse_arguments(
    name: str, arguments: str | Mapping[str, JsonValue], *, call_id: str = ""
) -> Mapping[str, JsonValue]:
    """A call's arguments as an object (blank text is none); raises `InvalidArguments` if not one.

    Examples:
        >>> parse_arguments("f", '{"a": 1}')
        {'a': 1}
        >>> parse_arguments("f", "[1]")
        Traceback (most recent call last):
        ...
        agui.errors.InvalidArguments: the arguments of tool 'f' must be a JSON object, not an array
    """
    where = f"the arguments of tool {name!r}"
    if isinstance(arguments, str):
        try:
            arguments = pydantic_core.from_json(arguments.strip() or "{}", allow_inf_nan=False)
        except ValueError as error:
            message = f"{where} are not JSON ({error})"
            raise InvalidArguments(message, tool_call_id=call_id, tool_name=name) from None
    if not isinstance(arguments, Mapping):
        message = f"{where} must be a JSON object, not {json_kind(arguments)}"
        raise InvalidArguments(message, tool_call_id=call_id, tool_name=name)
    return arguments
