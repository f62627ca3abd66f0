"""Reading AG-UI values from JSON: leniently, but never silently.

AG-UI 1.0 separates *unknown* material from *malformed* material. A member or union arm the
protocol does not describe is stripped with a warning (`agui.errors.UnknownMemberWarning`) and
processing goes on; a known field of the wrong shape is fatal, reported with a JSON Pointer to
the field.
An event type the protocol does not define raises `UnknownEventType`, which a consumer may
catch to drop the event.

Validation runs first on the data as given; only when it fails do we look at the errors, strip
what is unknown and try again. The common case, a clean event, costs one pydantic-core pass.

Nulls: an optional field of an event sent as `null`, at any depth, is malformed (as on the 1.0
client) bar the legacy ones it reads as absent (`agui._protocol.nulls` lists them). A
`RunAgentInput` reads any optional `null` as absent.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from typing import TypeVar, cast

import pydantic_core
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from agui import events as ev
from agui._protocol.json_text import lone_surrogate, not_json
from agui._protocol.nulls import (
    NESTED_LEGACY,
    NO_LEGACY,
    drop_legacy_nulls,
    may_hold_null,
    null_below,
)
from agui.errors import (
    DecodeError,
    InvalidInput,
    MalformedEvent,
    UnknownEventType,
    UnknownMemberWarning,
)
from agui.patch import escape_pointer_token
from agui.types import RunAgentInput

__all__ = ["json_kind", "misfits", "parse_event", "parse_input", "parse_json"]

ModelT = TypeVar("ModelT", bound=BaseModel)

_EVENT_CLASSES: dict[str, type[BaseModel]] = {
    cls.model_fields["type"].default: cls
    for cls in cast("tuple[type[BaseModel], ...]", ev.Event.__origin__.__args__)  # type: ignore[attr-defined]
}
_RETIRED = frozenset(
    {
        "THINKING_START",
        "THINKING_END",
        "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
    }
)
_MEDIA_KINDS = ("image", "audio", "video")
_JSON_OBJECT: TypeAdapter[dict[str, object]] = TypeAdapter(dict[str, object])


def parse_json(data: str | bytes | bytearray) -> object:
    """Parse JSON text strictly: no `NaN`/`Infinity`, no lone surrogate, at most 200 levels deep.

    A lone surrogate is valid JSON syntax, and no character UTF-8 can carry.

    Examples:
        >>> parse_json(b'{"a": [1, null]}')
        {'a': [1, None]}
        >>> parse_json("{")
        Traceback (most recent call last):
        ...
        agui.errors.DecodeError: the body is not valid JSON: EOF while parsing an object ...
        >>> parse_json('{"a": NaN}')
        Traceback (most recent call last):
        ...
        agui.errors.DecodeError: ... at line 1 column 7; NaN and Infinity are not JSON numbers
    """
    try:
        return pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as error:
        if str(error).startswith("recursion limit exceeded"):
            message = (
                f"the JSON nests deeper than {_DEPTH_LIMIT} levels, which agui does not read "
                f"({error}); send a flatter document"
            )
        else:
            message = not_json(data, str(error))
        raise DecodeError(message, path="") from None
    except TypeError:  # a str that UTF-8, so pydantic-core, cannot encode: a lone surrogate
        if not isinstance(data, str):
            raise
        raise DecodeError(lone_surrogate(data), path="") from None


def json_kind(value: object) -> str:
    """What kind of JSON value `value` is, as an error message names it.

    Examples:
        >>> json_kind([1]), json_kind("x"), json_kind(None), json_kind(2), json_kind({})
        ('an array', 'a string', 'null', 'a number or boolean', 'an object')
    """
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else "a number or boolean"


def parse_event(data: Mapping[str, object] | str | bytes | bytearray) -> ev.Event:
    """Read one AG-UI event from a JSON object, its text, or its UTF-8 bytes.

    Raises `UnknownEventType` for a type AG-UI 1.0 does not define (including the retired
    `THINKING_*`), `MalformedEvent` naming the field for a known event of the wrong shape, and
    warns `UnknownMemberWarning` for each unknown member it strips.

    Examples:
        >>> event = parse_event('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hi"}')
        >>> type(event).__name__, event.delta
        ('TextMessageContentEvent', 'Hi')
        >>> parse_event({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": 5})
        Traceback (most recent call last):
        ...
        agui.errors.MalformedEvent: TEXT_MESSAGE_CONTENT: field '/delta': Input should be ...
    """
    raw = parse_json(data) if isinstance(data, (str, bytes, bytearray)) else data
    if not isinstance(raw, Mapping):
        message = f"an event must be a JSON object, not {json_kind(raw)}"
        raise MalformedEvent(message, path="")
    obj = cast("Mapping[str, object]", raw)
    kind = obj.get("type")
    if not isinstance(kind, str) or not kind:
        message = "the event carries no event type: 'type' must be a non-empty string"
        raise MalformedEvent(message, path="/type")
    cls = _EVENT_CLASSES.get(kind)
    if cls is None:
        raise UnknownEventType(_unknown_type_message(kind), path="/type")
    model, problems = _validate(cls, drop_legacy_nulls(kind, cls, obj), kind)
    if model is not None:
        # The 1.0 client's compatibility boundary passes message history, not a tool result.
        legacy = NO_LEGACY if kind == "TOOL_CALL_RESULT" else NESTED_LEGACY
        null = null_below(model, legacy) if may_hold_null(data) else None
        if null is None:
            return cast("ev.Event", model)
        problems = [(null, "null is not allowed on an optional field; omit it")]
    pointer, detail = problems[0]
    message = f"{kind}: field '{pointer}': {detail}"
    raise MalformedEvent(message, path=pointer)


def parse_input(data: Mapping[str, object] | str | bytes | bytearray) -> RunAgentInput:
    """Read a `RunAgentInput` leniently: 0.x or 1.0, camelCase or snake_case, legacy nulls.

    Raises `InvalidInput` listing every problem as `(json_pointer, message)`.

    Examples:
        >>> parse_input(b'{"threadId": "t", "runId": "r", "messages": []}').run_id
        'r'
        >>> parse_input({"threadId": "t"}).run_id
        Traceback (most recent call last):
        ...
        agui.errors.InvalidInput: the run input is invalid: '/runId': Field required
    """
    raw = parse_json(data) if isinstance(data, (str, bytes, bytearray)) else data
    if not isinstance(raw, Mapping):
        message = f"the run input must be a JSON object, not {json_kind(raw)}"
        raise InvalidInput(message, errors=[("", message)])
    model, problems = _validate(RunAgentInput, cast("Mapping[str, object]", raw), "RunAgentInput")
    if model is None:
        listed = "; ".join(f"'{pointer}': {detail}" for pointer, detail in problems)
        message = f"the run input is invalid: {listed}"
        raise InvalidInput(message, errors=problems)
    return model


def misfits(data: Mapping[str, object], error: ValidationError) -> list[tuple[str, str]]:
    """Where `data` does not fit the model that refused it: `(JSON Pointer, message)` pairs.

    One pair per place, pointing into `data` as given (its own keys, no union arm or tag), the
    places a union arm that fits the data's type complains of, as `parse_input` reports them.

    Examples:
        >>> from pydantic import ValidationError
        >>> from agui.events import ToolCallResultEvent
        >>> fields = {"message_id": "m1", "tool_call_id": "c1", "content": [{"type": "text"}]}
        >>> try:
        ...     ToolCallResultEvent(**fields)
        ... except ValidationError as error:
        ...     misfits(fields, error)
        [('/content/0/text', 'Field required')]
    """
    problems: dict[str, str] = {}
    for item in _relevant(data, error):
        problems.setdefault(_pointer(_data_path(data, item["loc"])[0]), item["msg"])
    return list(problems.items())


def _unknown_type_message(kind: str) -> str:
    if kind in _RETIRED:
        return (
            f"'{kind}' was retired in AG-UI 1.0: agui reads 1.0 streams only; "
            "a 0.x producer should send REASONING_* events instead"
        )
    return f"unknown event type '{kind}': AG-UI 1.0 does not define it (a consumer drops it)"


def _validate(
    cls: type[ModelT], data: Mapping[str, object], label: str
) -> tuple[ModelT | None, list[tuple[str, str]]]:
    working: object = data
    stripped: set[str] = set()
    # Each pass strips at least one member, so the loop ends: at the latest when nothing
    # unknown is left and the remaining errors (if any) are reported.
    while True:
        try:
            return cls.model_validate(working), []
        except ValidationError as error:
            removals, problems = _classify(working, error, stripped)
            # Strip first: errors from the other arms of a union holding unknown material
            # vanish once it is gone, and real problems are reported on the next pass.
            if not removals:
                return None, problems
            working = _strip(working if stripped else copy.deepcopy(working), removals, label)
            stripped.update(pointer for pointer, _ in removals)


_Removal = tuple[str, tuple[object, ...]]


def _classify(
    data: object, error: ValidationError, stripped: set[str]
) -> tuple[list[_Removal], list[tuple[str, str]]]:
    removals: dict[str, tuple[object, ...]] = {}
    problems: dict[str, str] = {}
    for item in _relevant(data, error):
        path, _ = _data_path(data, item["loc"])
        pointer = _pointer(path)
        if item["type"] in ("extra_forbidden", "union_tag_invalid"):
            removals.setdefault(pointer, path)
        elif item["type"] == "missing" and pointer in stripped:
            problems.setdefault(pointer, "an unrecognised value was removed from a required field")
        elif item["type"] in _TOO_DEEP:
            problems.setdefault(pointer, _TOO_DEEP_TO_VALIDATE)
        else:
            problems.setdefault(pointer, item["msg"])
    return list(removals.items()), list(problems.items())


# pydantic-core names this error differently across versions.
_TOO_DEEP = frozenset({"recursion_loop", "recursion_depth_exceeded"})
_DEPTH_LIMIT = 200  # pydantic-core's JSON parser stops there
_TOO_DEEP_TO_VALIDATE = (
    "nested too deeply: past the depth pydantic validates (JSON text is refused past "
    f"{_DEPTH_LIMIT} levels); send a flatter value"
)


def _relevant(data: object, error: ValidationError) -> list[ErrorDetails]:
    """The errors from union arms that fit the data, or all of them when none fits."""
    errors = error.errors(include_url=False)
    fitting = [item for item in errors if _data_path(data, item["loc"])[1]]
    return fitting or errors


def _data_path(data: object, loc: tuple[int | str, ...]) -> tuple[tuple[object, ...], bool]:
    """Map a pydantic error location onto keys of the data.

    Union-tag and union-arm components are not keys and are skipped. The flag says whether
    every arm on the way fits the data's JSON type: an error from a `str` arm about a value
    that is a list says nothing useful about that list.
    """
    path: list[object] = []
    fits = True
    node = data
    last = len(loc) - 1
    for position, part in enumerate(loc):
        if isinstance(node, Mapping):
            mapping = cast("Mapping[object, object]", node)
            # A tag is never the last component (the error is inside its arm). A tag value may
            # also be a key ("text" on TextPart): it is the tag when the next component
            # addresses this same object.
            if (
                isinstance(part, str)
                and position < last
                and _is_tag_of(mapping, part)
                and (part not in mapping or loc[position + 1] in mapping)
            ):
                continue
            if part in mapping:
                path.append(part)
                node = mapping[part]
            elif isinstance(part, str) and _is_arm_label(part):
                fits = fits and _arm_fits(part, mapping)
            else:
                path.extend(loc[position:])  # a missing key: nothing below it to map
                break
        elif isinstance(node, list):
            items = cast("list[object]", node)
            if isinstance(part, int):
                path.append(part)
                node = items[part]
            else:
                fits = fits and _arm_fits(part, items)
        else:
            fits = fits and _arm_fits(str(part), node)
    return tuple(path), fits


_SCALAR_ARMS = {"str": str, "int": int, "float": float, "bool": bool, "none": type(None)}
_CONTAINER_ARMS = frozenset({"list", "dict"})  # the arms of `JsonValue`


def _is_arm_label(part: str) -> bool:
    return part in _SCALAR_ARMS or part in _CONTAINER_ARMS or "[" in part


def _arm_fits(label: str, node: object) -> bool:
    if label in _SCALAR_ARMS:
        return type(node) is _SCALAR_ARMS[label]
    if label == "list" or label.startswith(("list[", "tuple[")):
        return isinstance(node, list)
    return isinstance(node, Mapping)


def _is_tag_of(mapping: Mapping[object, object], part: str) -> bool:
    return any(mapping.get(key) == part for key in ("type", "role", "op"))


def _pointer(path: tuple[object, ...]) -> str:
    return "".join("/" + escape_pointer_token(str(part)) for part in path)


def _strip(data: object, removals: list[_Removal], label: str) -> object:
    # Deepest and last first, so a list deletion never shifts an index still to be used.
    for pointer, path in sorted(removals, key=_sort_key, reverse=True):
        parent = cast("dict[object, object] | list[object]", _resolve(data, path[:-1]))
        key = cast("int", path[-1])
        upgraded = _upgrade_binary_part(parent[key])
        if upgraded is not None:
            parent[key] = upgraded
            _warn(f"Converted the deprecated binary content part at '{pointer}' on {label}")
            continue
        del parent[key]
        _warn(f"Removed unrecognised material at '{pointer}' on {label}")
    return data


def _sort_key(removal: _Removal) -> tuple[tuple[int, int, str], ...]:
    return tuple(
        (len(removal[1]), p, "") if isinstance(p, int) else (0, 0, str(p)) for p in removal[1]
    )


def _upgrade_binary_part(value: object) -> dict[str, object] | None:
    """The 0.x `binary` part becomes the 1.0 media part a 1.0 client would have sent."""
    if not isinstance(value, dict):
        return None
    part = cast("dict[str, object]", value)
    mime = part.get("mimeType")
    if part.get("type") != "binary" or not isinstance(mime, str):
        return None
    if isinstance(part.get("data"), str):
        source: dict[str, object] = {"type": "data", "value": part["data"], "mimeType": mime}
    elif isinstance(part.get("url"), str):
        source = {"type": "url", "value": part["url"], "mimeType": mime}
    elif isinstance(part.get("id"), str):
        source = {"type": "file", "value": part["id"], "mimeType": mime}
    else:
        return None
    kind = mime.split("/", 1)[0]
    return {"type": kind if kind in _MEDIA_KINDS else "document", "source": source}


def _resolve(data: object, path: tuple[object, ...]) -> object:
    node = data
    for part in path:
        node = (
            cast("list[object]", node)[cast("int", part)]
            if isinstance(node, list)
            else cast("dict[object, object]", node)[part]
        )
    return node


def _warn(message: str) -> None:
    warnings.warn(UnknownMemberWarning(message), stacklevel=4)
