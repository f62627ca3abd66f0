"""A tool's signature: the pydantic model that checks its arguments, and the schema it shows.

A backend tool is described to a model by a JSON Schema of its parameters, and the model's
arguments are checked against the same definition, so both come from one pydantic model built
from the function's signature: each parameter a field (aliased to the parameter's name, so the
model validates the names the schema shows), `Annotated[..., Field(...)]` and defaults as
written, the docstring's `Args:` section as descriptions where the annotation gives none. A
parameter annotated `RunContext[...]` is not an argument: it is recorded so that the tool can be
handed the run's context, and left out of the schema.

A call's argument text is read into an object first (`parse_arguments`), the one check a
client-side tool's call gets too, since the client parses what it is handed.

Building it imports the annotations, so it happens once, on first use (`BackendTool` caches it),
and fails with a `UsageError` that names the tool when the signature cannot have a schema.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema

from agui.context import RunContext
from agui.errors import InvalidArguments, UsageError
from agui.wire import json_kind

__all__ = ["Signature", "build_signature", "parse_arguments"]

_SECTIONS = re.compile(
    r"^(Args|Arguments|Parameters|Returns?|Raises|Yields?|Examples?|Notes?|Warnings?):\s*$"
)
_ARG_LINE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


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
    summary, documented = _read_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}  # create_model takes its fields as keywords of any type
    names: list[tuple[str, str, bool]] = []
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
        default = parameter.default
        extra = Field(alias=parameter.name)
        doc = documented.get(parameter.name)
        if doc is not None and not _has_description(annotation, default):
            extra = Field(alias=parameter.name, description=doc)
        field = f"p{index}"
        fields[field] = (
            Annotated[annotation, extra],
            ... if default is inspect.Parameter.empty else default,
        )
        names.append((field, parameter.name, positional_only))
    model: type[BaseModel] = create_model(
        f"{name}_arguments", __config__=ConfigDict(validate_by_alias=True, extra="forbid"), **fields
    )
    schema = typing.cast(
        "dict[str, JsonValue]", model.model_json_schema(schema_generator=_NoFieldTitles)
    )
    schema.pop("title", None)
    return Signature(model, schema, summary, tuple(names), context)


def _is_context(annotation: object) -> bool:
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, RunContext)


def _has_description(annotation: object, default: object) -> bool:
    infos = [default, *(typing.get_args(annotation)[1:] if _annotated(annotation) else ())]
    return any(isinstance(info, FieldInfo) and info.description for info in infos)


def _annotated(annotation: object) -> bool:
    return typing.get_origin(annotation) is Annotated


def _read_docstring(doc: str) -> tuple[str, dict[str, str]]:
    summary: list[str] = []
    documented: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        header = _SECTIONS.match(line)
        if header is not None:
            section, current = header.group(1), None
            continue
        if section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters") and line.strip():
            match = _ARG_LINE.match(line.strip())
            if match is not None and line.startswith(" " * 4) and not line.startswith(" " * 5):
                current = str(match.group(1))
                documented[current] = match.group(2).strip()
            elif current is not None:
                documented[current] = f"{documented[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), documented


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
