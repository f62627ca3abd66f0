"""What is emitted must be an agui event, its text valid Unicode, its payload JSON: refused there.

An event model from elsewhere (the official SDK's `ag_ui.core`, a dict) has no place on the
stream: it would serialize in its own form, not the wire's (the official models write snake_case
without their encoder), so the pipeline (`agui._emit.pipeline`) refuses it, naming the conversion
(`check_event`). A lone surrogate (U+D800 to U+DFFF, unpaired) cannot be encoded as UTF-8, so a
stream holding one fails at the transport, after the event was queued, with the agent's blocks
still open. The handles refuse it in their text; the pipeline checks every other event's text
fields here before the verifier sees it, so the agent gets a `UsageError` and the driver closes
the open blocks before `RUN_ERROR`. A `CUSTOM` value or `RAW` event is checked whole, by
serializing it (`check_payload`), for the same reason. The text check costs a dictionary lookup
and one `isascii` per text field, since an event sent the full way pays it; ids are not checked
(agui makes them, or the agent's own ids are ASCII in practice), nor JSON values other than a
`CUSTOM` or `RAW` one.

A value an agent hands over as JSON (tool arguments, a tool's result) is serialized by `json_text`,
which refuses NaN and the infinities: pydantic-core writes them as the bare words `NaN` and
`Infinity`, which no JSON parser reads, so a client's `JSON.parse` of the arguments would fail
after the call was streamed. `read_json` reads what a model wrote as JSON the same strict way:
Python's `json` module takes those words too, and would hand a tool a NaN the wire cannot carry.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import NoReturn, cast, get_args, overload

from pydantic import BaseModel, JsonValue, ValidationError
from pydantic_core import to_json

from agui._protocol.json_value import json_problem
from agui.errors import UsageError
from agui.events import BaseEvent, CustomEvent, Event, RawEvent
from agui.patch import escape_pointer_token

__all__ = [
    "JsonAttribute",
    "argument_problems",
    "check_event",
    "check_json",
    "check_payload",
    "check_text",
    "json_text",
    "read_json",
    "unicode_problem",
]

_CLASSES = cast("tuple[type, ...]", get_args(get_args(Event)[0]))
_EVENTS = frozenset(_CLASSES)


def check_event(value: object) -> None:
    """Refuse what is not an agui event model, saying how to make one of it.

    Examples:
        >>> from agui.events import StepStartedEvent
        >>> check_event(StepStartedEvent(step_name="plan"))
        >>> check_event({"type": "STEP_STARTED", "stepName": "plan"})
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: cannot emit a dict: agui emits its own event models ...
    """
    if type(value) in _EVENTS or isinstance(value, _CLASSES):
        return
    kind = type(value)
    what = (
        f"a {kind.__name__}"
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    rule = "agui emits its own event models (agui.events), whose JSON is the AG-UI wire form"
    if isinstance(value, Mapping):
        fix = "read a dict of the wire form with agui.parse_event(value)"
    elif isinstance(value, BaseEvent):  # the envelope, or a type of the app's own on it
        rule = "it is none of the event types AG-UI defines"
        fix = "an event of the app's own kind is a CUSTOM one: agui.events.CustomEvent(name=...)"
    elif isinstance(value, BaseModel):
        fix = (
            "convert another SDK's event with "
            "agui.parse_event(event.model_dump(mode='json', by_alias=True, exclude_none=True))"
        )
    else:
        fix = "build one, such as agui.events.CustomEvent(name=..., value=...)"
    message = f"cannot emit {what}: {rule}; {fix}"
    raise UsageError(message)


def check_text(event: Event) -> None:
    r"""Refuse text that is not valid Unicode (a lone surrogate) where it was emitted.

    Every field that holds text other than an id is checked (a tool result's parts too); the
    fields are found once per class, and ASCII text costs one test.

    Examples:
        >>> from agui.events import StepStartedEvent
        >>> check_text(StepStartedEvent(step_name="plan"))
        >>> check_text(StepStartedEvent(step_name="plan \ud800"))
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: cannot emit STEP_STARTED: its step_name is not valid Unicode ...
    """
    members = event.__dict__
    fields = _TEXT_FIELDS.get(type(event))
    for name in _text_fields(type(event)) if fields is None else fields:
        value = members[name]
        if isinstance(value, str):
            if not value.isascii():
                _check_unicode(event, name, value)
        elif isinstance(value, list):
            for part in cast("list[object]", value):
                text = getattr(part, "text", None)
                if isinstance(text, str) and not text.isascii():
                    _check_unicode(event, name, text)


def _check_unicode(event: Event, name: str, text: str) -> None:
    try:
        text.encode()
    except UnicodeEncodeError as error:
        where = f"U+{ord(text[error.start]):04X} at index {error.start}"
        message = (
            f"cannot emit {event.type}: its {name} is not valid Unicode (a lone surrogate, "
            f"{where}); decode its source with errors='replace', or drop the surrogate"
        )
        raise UsageError(message) from None


def check_payload(event: CustomEvent | RawEvent) -> None:
    r"""Refuse a payload the transport could not write, here, where the agent wrote it.

    Refused late, at the transport, it would end the stream with the agent's blocks still
    open; refused here, it is the agent's error like any other, and the driver closes the
    blocks first. A string holding a lone surrogate (U+D800 to U+DFFF, unpaired) is the one way
    a `JsonValue` fails.

    Examples:
        >>> check_payload(CustomEvent(name="ping", value={"n": 1}))
        >>> check_payload(CustomEvent(name="ping", value="\ud800"))
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: cannot emit CUSTOM 'ping': its value cannot be serialized ...
    """
    if isinstance(event, CustomEvent):
        field, value, name = "value", event.value, f" {event.name!r}"
    else:
        field, value, name = "event", event.event, ""
    try:
        to_json(value)
    except ValueError as error:
        message = (
            f"cannot emit {event.type}{name}: its {field} cannot be serialized as JSON ({error}); "
            "pass only JSON values, with strings of valid Unicode (no lone surrogates)"
        )
        raise UsageError(message) from None


_TEXT_FIELDS: dict[type, tuple[str, ...]] = {}


def _text_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    fields = cls.model_fields.items()
    found = tuple(
        name
        for name, f in fields
        if str in (f.annotation, *get_args(f.annotation)) and not name.endswith("_id")
    )
    _TEXT_FIELDS[cls] = found
    return found


def json_text(value: object) -> str:
    """The JSON text of `value`; `ValueError` if it is not JSON or holds NaN or an infinity.

    Examples:
        >>> json_text({"city": "Lisbon", "days": [1, 2.5]})
        '{"city":"Lisbon","days":[1,2.5]}'
        >>> json_text({"ratio": float("nan")})
        Traceback (most recent call last):
        ...
        ValueError: it holds NaN or an infinity, which JSON has no value for
    """
    data = to_json(value)
    # Only text that could hold one of the words pays a second serialization to tell a
    # number from a string that spells it.
    if (b"NaN" in data or b"Infinity" in data) and to_json(value, inf_nan_mode="null") != data:
        message = "it holds NaN or an infinity, which JSON has no value for"
        raise ValueError(message)
    return data.decode()


def read_json(text: str) -> JsonValue:
    """Parse JSON text as `json.loads` does, refusing `NaN` and the infinities with `ValueError`.

    Examples:
        >>> read_json('{"days": [1, 2.5]}')
        {'days': [1, 2.5]}
        >>> read_json('{"ratio": NaN}')
        Traceback (most recent call last):
        ...
        ValueError: NaN is not JSON: JSON has no value for NaN or an infinity
        >>> read_json('{"ratio": 1e400}')
        Traceback (most recent call last):
        ...
        ValueError: 1e400 is too large for a JSON number a client can read
    """
    value: JsonValue = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    return value


def _finite(digits: str) -> float:
    number = float(digits)
    if not math.isfinite(number):  # `1e400`: valid JSON text, but no double holds it
        message = f"{digits} is too large for a JSON number a client can read"
        raise ValueError(message)
    return number


def _no_constant(word: str) -> JsonValue:
    message = f"{word} is not JSON: JSON has no value for NaN or an infinity"
    raise ValueError(message)


def argument_problems(error: ValidationError) -> list[tuple[str, str]]:
    """Each value of `error` that does not fit: its JSON Pointer (RFC 6901) and what is wrong.

    Examples:
        >>> from pydantic import TypeAdapter
        >>> try:
        ...     TypeAdapter(dict[str, int]).validate_python({"a/b": "x"})
        ... except ValidationError as error:
        ...     argument_problems(error)
        [('/a~1b', 'Input should be a valid integer, unable to parse string as an integer')]
    """
    return [
        ("".join("/" + escape_pointer_token(str(part)) for part in item["loc"]), item["msg"])
        for item in error.errors(include_url=False)
    ]


def check_json(value: object, what: str) -> None:
    """Refuse, naming `what`, a value an event's JSON field would not take or the wire not carry.

    Examples:
        >>> check_json({"city": "Paris", "days": [1, 2]}, "ctx.result")
        >>> check_json({"tags": {"a", "b"}}, "ctx.result")
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: ctx.result must be a JSON value, but /tags is a set; pass ...
    """
    problem = json_problem(value)
    if problem is not None:
        _refuse_json(what, problem)
    try:
        to_json(value)
    except ValueError:  # what the walk passes fails only for a lone surrogate in its text
        _refuse_json(what, "it holds text that is not valid Unicode (a lone surrogate)")


def _refuse_json(what: str, problem: str) -> NoReturn:
    message = (
        f"{what} must be a JSON value, but {problem}; pass dicts with text keys, lists, str, "
        "finite numbers, bool or None (a pydantic model: model.model_dump(mode='json'))"
    )
    raise UsageError(message)


class JsonAttribute:
    """An attribute that holds JSON, `None` until set: a value no JSON can hold is refused.

    Refused where the agent sets it, not later, when the event that carries it is built.

    Examples:
        >>> class Run:
        ...     result = JsonAttribute("run.result")
        >>> run = Run()
        >>> run.result is None, type(Run.result).__name__
        (True, 'JsonAttribute')
        >>> run.result = {"city": "Paris"}
        >>> run.result
        {'city': 'Paris'}
        >>> run.result = float("nan")
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: run.result must be a JSON value, but the root is NaN or an ...
    """

    def __init__(self, label: str) -> None:
        self._label = label
        self._slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}_json"

    @overload
    def __get__(self, instance: None, owner: type) -> JsonAttribute: ...
    @overload
    def __get__(self, instance: object, owner: type) -> JsonValue | None: ...
    def __get__(self, instance: object, owner: type) -> JsonAttribute | JsonValue | None:
        if instance is None:
            return self
        return cast("JsonValue | None", vars(instance).get(self._slot))

    def __set__(self, instance: object, value: object) -> None:
        check_json(value, self._label)
        vars(instance)[self._slot] = value


def unicode_problem(text: object) -> str | None:
    r"""Why `text` is not valid Unicode (where its first lone surrogate is), or `None` if it is.

    Examples:
        >>> unicode_problem("héllo") is None
        True
        >>> unicode_problem("ab\ud800")
        'a lone surrogate (U+D800) at index 2'
    """
    if not isinstance(text, str) or text.isascii():
        return None  # not text at all: the event model's validation says what is wrong
    try:
        text.encode()
    except UnicodeEncodeError as error:
        return f"a lone surrogate (U+{ord(text[error.start]):04X}) at index {error.start}"
    return None
