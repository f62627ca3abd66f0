"""Tool calls written as text: the forms a call takes, and what the JSON inside one makes.

`agui.agents._xml` finds where a call starts and ends as the text streams; this module names the
forms (the tags and the fence) and decides what the JSON between them makes. A tag's JSON makes
a `ToolCallTag` or a `MalformedTag` saying why it is none, in words the model can act on, since
the model is told. A bare object or a fenced block that is no call stays text, since a JSON
answer is an answer. Nothing here raises on model output.

Arguments holding the escape of a lone surrogate, which Python's `json` reads but UTF-8 cannot
carry, stay escaped (`dump_json`), so the tool refuses them as it refuses a native call's: the
model reads why.
"""

from __future__ import annotations

import dataclasses
import json
import re

from pydantic import JsonValue

from agui._protocol.text import read_json, unicode_problem

__all__ = [
    "FENCE",
    "FUNCTION_CLOSE",
    "FUNCTION_PREFIX",
    "THINK_CLOSE",
    "THINK_OPEN",
    "TOOL_CLOSE",
    "TOOL_OPEN",
    "MalformedTag",
    "ReasoningPiece",
    "TextPiece",
    "ToolCallTag",
    "XmlPiece",
    "dump_json",
    "fenced",
    "function_call",
    "loose_calls",
    "render_call",
    "tagged_call",
]

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
FUNCTION_PREFIX, FUNCTION_CLOSE = "<function=", "</function>"
FENCE = "```"

NOT_JSON_STRING = '"arguments" is a string that does not hold JSON'
NOT_JSON_TAG = "the tag does not hold JSON"
NO_NAME = 'the tag must hold an object with a "name" string'
_LANGUAGE = re.compile(r"[A-Za-z0-9_+-]*\n")


@dataclasses.dataclass(frozen=True)
class TextPiece:
    """Answer text outside any tag."""

    text: str


@dataclasses.dataclass(frozen=True)
class ReasoningPiece:
    """Text inside `<think>...</think>`."""

    text: str


@dataclasses.dataclass(frozen=True)
class ToolCallTag:
    """A complete call, in any form: the tool's name and its arguments as compact JSON text."""

    name: str
    arguments: str


@dataclasses.dataclass(frozen=True)
class MalformedTag:
    """A `<tool_call>` that does not make a call; `raw` is the tag as the model wrote it."""

    raw: str
    reason: str


XmlPiece = TextPiece | ReasoningPiece | ToolCallTag | MalformedTag


def fenced(body: str) -> str:
    """A fenced block's JSON: after the first line, when that line names a language."""
    language = _LANGUAGE.match(body)
    return body[language.end() :] if language is not None else body


def loose_calls(raw: str, body: str) -> list[TextPiece | ToolCallTag]:
    """The calls an untagged object (or a list of them) makes, or the text as it was."""
    try:
        value: JsonValue = read_json(body)
    except ValueError:
        return [TextPiece(raw)]
    items = value if isinstance(value, list) and value else [value]
    calls: list[TextPiece | ToolCallTag] = []
    for item in items:
        if not isinstance(item, dict) or not ({"arguments", "parameters"} & item.keys()):
            return [TextPiece(raw)]
        call = _from_object(raw, item)
        if not isinstance(call, ToolCallTag):
            return [TextPiece(raw)]
        calls.append(call)
    return calls


def tagged_call(body: str) -> ToolCallTag | MalformedTag:
    """The call the body of a `<tool_call>` tag makes, or why it makes none."""
    raw = TOOL_OPEN + body + TOOL_CLOSE
    try:
        value: JsonValue = read_json(body)
    except ValueError as error:
        return MalformedTag(raw, _not_json(body, error))
    if not isinstance(value, dict):
        return MalformedTag(raw, NO_NAME)
    return _from_object(raw, value)


def function_call(name: str, body: str) -> ToolCallTag | MalformedTag:
    """The call a `<function=name>` tag makes of its body (the arguments), or why it makes none."""
    raw = f"{FUNCTION_PREFIX}{name}>{body}{FUNCTION_CLOSE}"
    return _call(raw, name, body.strip() or "{}", not_json=NOT_JSON_TAG)


def _not_json(body: str, error: ValueError) -> str:
    # The two mistakes small models make inside the tag, named so the model can fix them.
    if THINK_OPEN in body:
        return f"{NOT_JSON_TAG}: it holds a {THINK_OPEN} block, and a call holds only its JSON"
    if body.strip().startswith(FENCE):
        return f"{NOT_JSON_TAG}: it holds a {FENCE} block, and a call holds only its JSON"
    return f"{NOT_JSON_TAG} ({error})"


def _from_object(raw: str, value: dict[str, JsonValue]) -> ToolCallTag | MalformedTag:
    name = value.get("name")
    if not isinstance(name, str) or not name.strip():
        return MalformedTag(raw, NO_NAME)
    if unicode_problem(name) is not None:
        # An escaped lone surrogate: no tool has that name, and the wire could not carry it.
        return MalformedTag(raw, '"name" holds a lone surrogate, which is not valid Unicode')
    arguments: JsonValue = value.get("arguments", value.get("parameters"))
    if isinstance(arguments, str):
        # Some models write the arguments as a JSON string, as the native APIs carry them.
        return _call(raw, name, arguments)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return MalformedTag(raw, '"arguments" must be an object')
    return ToolCallTag(name, _compact(arguments))


def _call(
    raw: str, name: str, arguments: str, *, not_json: str = NOT_JSON_STRING
) -> ToolCallTag | MalformedTag:
    try:
        parsed: JsonValue = read_json(arguments)
    except ValueError:
        return MalformedTag(raw, not_json)
    if not isinstance(parsed, dict):
        return MalformedTag(raw, '"arguments" must be an object')
    return ToolCallTag(name, _compact(parsed))


def _compact(value: JsonValue) -> str:
    return dump_json(value, separators=(",", ":"))


def dump_json(value: JsonValue, *, separators: tuple[str, str] | None = None) -> str:
    r"""JSON text as a model writes it: other scripts as they are, a lone surrogate escaped.

    Python's `json` reads the escape of a lone surrogate (`"\ud800"`, which a model may write)
    into a string UTF-8 cannot encode. A value holding one is written all in ASCII escapes, as
    the model wrote it: the text can then travel, and a tool's strict reading of its arguments
    refuses it with an error result the model reads, as it refuses a native call's.

    Examples:
        >>> dump_json({"city": "Zürich"})
        '{"city": "Zürich"}'
        >>> print(dump_json({"city": "Zürich\ud800"}))
        {"city": "Z\u00fcrich\ud800"}
    """
    text = json.dumps(value, ensure_ascii=False, separators=separators)
    return text if unicode_problem(text) is None else json.dumps(value, separators=separators)


def render_call(name: str, arguments: str) -> str:
    """A tool call in the tag form, as a model that writes `<tool_call>` tags writes it.

    Examples:
        >>> render_call("get_time", "")
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    """
    try:
        parsed: JsonValue = read_json(arguments or "{}")
    except ValueError:
        parsed = arguments
    return TOOL_OPEN + dump_json({"name": name, "arguments": parsed}) + TOOL_CLOSE
