"""Tool calls written as text: the streaming `<tool_call>`/`<think>` parser and its prompt.

Local models without native tool calling are told (in the system prompt) to write
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in their answer, and many wrap their
reasoning in `<think>...</think>`. The parser reads the text as it streams and sorts it into
answer text, reasoning, and complete tool calls, without waiting for the response to end.

It is sans-IO: `feed(delta)` returns the pieces that are certain so far and `finish()` the rest.
Text is released as soon as it cannot be the start of a tag: only the suffix from the last `<`,
when it is still a prefix of a tag, is held back. Inside a call the closing tag counts only
outside JSON strings, so `{"q": "</tool_call>"}` stays one call. A tag whose JSON does not make a
call becomes a `MalformedTag` for the caller to report; nothing here raises on model output.

Splitting a response into deltas anywhere gives the same pieces once adjacent text (or
reasoning) pieces are joined; the tests check that property.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Literal

from pydantic import JsonValue

from agui.types import Tool

__all__ = [
    "MalformedTag",
    "ReasoningPiece",
    "TextPiece",
    "ToolCallTag",
    "XmlPiece",
    "XmlStreamParser",
    "prompt_instructions",
    "render_call",
    "render_result",
]

TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


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
    """A complete `<tool_call>`: the tool's name and its arguments as compact JSON text."""

    name: str
    arguments: str


@dataclasses.dataclass(frozen=True)
class MalformedTag:
    """A `<tool_call>` that does not make a call; `raw` is the tag as the model wrote it."""

    raw: str
    reason: str


XmlPiece = TextPiece | ReasoningPiece | ToolCallTag | MalformedTag


class XmlStreamParser:
    """Sorts streamed text into answer text, reasoning and `<tool_call>` tags.

    Examples:
        >>> parser = XmlStreamParser()
        >>> parser.feed("Let me check.<tool_")
        [TextPiece(text='Let me check.')]
        >>> parser.feed('call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool')
        []
        >>> parser.feed("_call> Done.")
        [ToolCallTag(name='get_weather', arguments='{"location":"Paris"}'),
         TextPiece(text=' Done.')]
        >>> parser.finish()
        []
    """

    def __init__(self) -> None:
        self._mode: Literal["text", "think", "call"] = "text"
        self._buffer = ""
        self._scan = 0
        self._in_string = False
        self._escaped = False

    def feed(self, delta: str) -> list[XmlPiece]:
        """Read one delta; return the pieces it completes, in order."""
        self._buffer += delta
        out: list[XmlPiece] = []
        while self._step(out):
            pass
        return out

    def finish(self) -> list[XmlPiece]:
        """End of the response: release what is held back, and report an unclosed call."""
        out: list[XmlPiece] = []
        rest, self._buffer = self._buffer, ""
        if self._mode == "text":
            _add(out, TextPiece(rest))
        elif self._mode == "think":
            _add(out, ReasoningPiece(rest))
        else:
            # A stop sequence may eat the closing tag; a body that is a whole call still counts.
            piece = _parse_call(rest)
            if isinstance(piece, MalformedTag):
                piece = MalformedTag(
                    TOOL_OPEN + rest, "the response ended inside a <tool_call> tag"
                )
            out.append(piece)
        self._enter("text")
        return out

    def _enter(self, mode: Literal["text", "think", "call"]) -> None:
        self._mode = mode
        self._scan = 0
        self._in_string = self._escaped = False

    def _step(self, out: list[XmlPiece]) -> bool:
        if self._mode == "text":
            return self._step_text(out)
        if self._mode == "think":
            return self._step_think(out)
        return self._step_call(out)

    def _step_text(self, out: list[XmlPiece]) -> bool:
        buffer = self._buffer
        found = [(buffer.find(tag), tag) for tag in (TOOL_OPEN, THINK_OPEN) if tag in buffer]
        if found:
            index, tag = min(found)
            _add(out, TextPiece(buffer[:index]))
            self._buffer = buffer[index + len(tag) :]
            self._enter("call" if tag == TOOL_OPEN else "think")
            return True
        keep = _held_back(buffer, (TOOL_OPEN, THINK_OPEN))
        _add(out, TextPiece(buffer[: len(buffer) - keep]))
        self._buffer = buffer[len(buffer) - keep :]
        return False

    def _step_think(self, out: list[XmlPiece]) -> bool:
        buffer = self._buffer
        index = buffer.find(THINK_CLOSE)
        if index >= 0:
            _add(out, ReasoningPiece(buffer[:index]))
            self._buffer = buffer[index + len(THINK_CLOSE) :]
            self._enter("text")
            return True
        keep = _held_back(buffer, (THINK_CLOSE,))
        _add(out, ReasoningPiece(buffer[: len(buffer) - keep]))
        self._buffer = buffer[len(buffer) - keep :]
        return False

    def _step_call(self, out: list[XmlPiece]) -> bool:
        buffer, index = self._buffer, self._scan
        while index < len(buffer):
            char = buffer[index]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char == "<":
                rest = buffer[index : index + len(TOOL_CLOSE)]
                if rest == TOOL_CLOSE:
                    out.append(_parse_call(buffer[:index]))
                    self._buffer = buffer[index + len(TOOL_CLOSE) :]
                    self._enter("text")
                    return True
                if TOOL_CLOSE.startswith(rest):
                    break  # the closing tag may be arriving; wait for more text
            index += 1
        self._scan = index
        return False


def _add(out: list[XmlPiece], piece: TextPiece | ReasoningPiece) -> None:
    if not piece.text:
        return
    last = out[-1] if out else None
    if isinstance(piece, TextPiece) and isinstance(last, TextPiece):
        out[-1] = TextPiece(last.text + piece.text)
    elif isinstance(piece, ReasoningPiece) and isinstance(last, ReasoningPiece):
        out[-1] = ReasoningPiece(last.text + piece.text)
    else:
        out.append(piece)


def _held_back(buffer: str, tags: Sequence[str]) -> int:
    # Tags hold one `<`, at their start, so only the suffix from the last `<` can become one.
    start = buffer.rfind("<")
    if start < 0:
        return 0
    suffix = buffer[start:]
    return len(suffix) if any(tag.startswith(suffix) for tag in tags) else 0


def _parse_call(body: str) -> ToolCallTag | MalformedTag:
    raw = TOOL_OPEN + body + TOOL_CLOSE
    try:
        value: JsonValue = json.loads(body)
    except ValueError as error:
        return MalformedTag(raw, f"the tag does not hold JSON ({error})")
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"]:
        return MalformedTag(raw, 'the tag must hold an object with a "name" string')
    arguments: JsonValue = value.get("arguments", value.get("parameters"))
    if isinstance(arguments, str):
        # Some models write the arguments as a JSON string, as the native APIs carry them.
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return MalformedTag(raw, '"arguments" is a string that does not hold JSON')
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return MalformedTag(raw, '"arguments" must be an object')
    return ToolCallTag(str(value["name"]), _compact(arguments))


def _compact(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render_call(name: str, arguments: str) -> str:
    """A tool call as the model is told to write it (for echoing history back to it)."""
    try:
        parsed: JsonValue = json.loads(arguments or "{}")
    except ValueError:
        parsed = arguments
    body = json.dumps({"name": name, "arguments": parsed}, ensure_ascii=False)
    return TOOL_OPEN + body + TOOL_CLOSE


def render_result(name: str, content: str, *, ok: bool) -> str:
    """A tool's result as a `<tool_result>` block for the model to read."""
    status = "ok" if ok else "error"
    return f'<tool_result name={json.dumps(name)} status="{status}">{content}</tool_result>'


def prompt_instructions(tools: Sequence[Tool]) -> str:
    """The system-prompt text that teaches a model the tag format and lists the tools."""
    if not tools:
        return ""
    lines = [
        (
            "You can call tools. To call one, write a tag holding a JSON object with the "
            "tool's name and its arguments, like this:"
        ),
        TOOL_OPEN + '{"name": "tool_name", "arguments": {"argument": "value"}}' + TOOL_CLOSE,
        (
            "You may write several tool calls in one reply. Then stop and wait: the results "
            'come back in a user message as <tool_result name="..." status="ok|error">...'
            "</tool_result> blocks. Call a tool only when you need its result; otherwise "
            "answer directly."
        ),
        "",
        "Available tools:",
    ]
    for tool in tools:
        parameters: JsonValue = {"type": "object"} if tool.parameters is None else tool.parameters
        description = f": {tool.description}" if tool.description else ""
        lines.append(f"- {tool.name}{description}")
        lines.append(f"  arguments (JSON Schema): {_compact(parameters)}")
    return "\n".join(lines)
