"""Tool calls written as text: the streaming parser that finds them in a model's answer.

Local models without native tool calling are told (in the system prompt, by
`agui.agents._xml_prompt`) how to write a call in their answer, and many wrap their reasoning
in `<think>...</think>`. What they write varies with the model and its training: the same
call arrives in `<tool_call>...</tool_call>` tags, as a bare JSON object, as a fenced `json`
block, or in the `<function=name>{...}</function>` form other templates teach. The parser
reads every one of these forms as the text streams, and sorts the text into answer text,
reasoning, and complete tool calls, without waiting for the response to end.

It is sans-IO: `feed(delta)` returns the pieces that are certain so far and `finish()` the rest.
Text is released as soon as it cannot be the start of a call: a suffix that could still become
an opening tag or a fence is held back, and so is a JSON object (or fenced block) until it
closes, because only then is it known to be a call; a brace followed by a character JSON cannot
hold outside its strings is prose, and text at once. A bare object or fenced block counts as a
call only when it has a `"name"` string and an `"arguments"` (or `"parameters"`) member, so a
plain JSON answer stays text. Inside a call the closing tag, and inside a fenced block the
closing fence, counts only outside JSON strings, so `{"q": "</tool_call>"}` stays one call and
so do arguments holding a Markdown code block. A JSON string holds no line break, so a quote in
prose hides a closing fence or tag only until the end of its line. A tag whose JSON does not make
a call becomes a `MalformedTag` for the caller to report (`agui.agents._xml_calls` reads the
JSON, and names what is wrong); nothing here raises on model output.

Splitting a response into deltas anywhere gives the same pieces once adjacent text (or
reasoning) pieces are joined; the tests check that property.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from agui.agents._xml_calls import (
    FENCE,
    FUNCTION_CLOSE,
    FUNCTION_PREFIX,
    THINK_CLOSE,
    THINK_OPEN,
    TOOL_CLOSE,
    TOOL_OPEN,
    MalformedTag,
    ReasoningPiece,
    TextPiece,
    ToolCallTag,
    XmlPiece,
    dump_json,
    fenced,
    function_call,
    loose_calls,
    render_call,
    tagged_call,
)

__all__ = [
    "FENCE",
    "THINK_CLOSE",
    "THINK_OPEN",
    "MalformedTag",
    "ReasoningPiece",
    "TextPiece",
    "ToolCallTag",
    "XmlPiece",
    "XmlStreamParser",
    "dump_json",
    "render_call",
]

_OPENERS = (TOOL_OPEN, THINK_OPEN, FENCE, "{")
_FUNCTION = re.compile(r"<function=([A-Za-z0-9_.:-]+)>")
_FUNCTION_PENDING = re.compile(r"<function=[A-Za-z0-9_.:-]*\Z")
# All JSON may hold outside its strings (Python's json also reads NaN and Infinity).
_JSON_CHARS = frozenset(" \t\n\r{}[]:,+-.0123456789eE" + "truefalsnull" + "NaNInfinity")

Mode = Literal["text", "think", "call", "function", "fence", "bare"]


class XmlStreamParser:
    r"""Sorts streamed text into answer text, reasoning and tool calls, in the order written.

    Examples:
        >>> parser = XmlStreamParser()
        >>> parser.feed("Let me check.<tool_")
        [TextPiece(text='Let me check.')]
        >>> parser.feed('call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool')
        []
        >>> parser.feed("_call> Done.")
        [ToolCallTag(name='get_weather', arguments='{"location":"Paris"}'),
         TextPiece(text=' Done.')]
        >>> parser.feed('```json\n{"name": "get_time", "arguments": {}}\n```')
        [ToolCallTag(name='get_time', arguments='{}')]
        >>> parser.feed('{"city": "Paris"}')
        [TextPiece(text='{"city": "Paris"}')]
        >>> parser.finish()
        []
    """

    def __init__(self) -> None:
        self._mode: Mode = "text"
        self._buffer = ""
        self._function = ""
        self._scan = 0
        self._depth = 0
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
        elif self._mode == "fence":
            _add_all(out, loose_calls(FENCE + rest, fenced(rest)))
        elif self._mode == "bare":
            _add_all(out, loose_calls(rest, rest))
        else:
            # A stop sequence may eat the closing tag; a body that is a whole call still counts.
            opener = TOOL_OPEN if self._mode == "call" else f"{FUNCTION_PREFIX}{self._function}>"
            piece = self._tagged(rest)
            if isinstance(piece, MalformedTag):
                reason = f"the response ended inside a {opener.removesuffix('>')}> tag"
                piece = MalformedTag(opener + rest, reason)
            out.append(piece)
        self._enter("text")
        return out

    def _enter(self, mode: Mode) -> None:
        self._mode = mode
        self._scan = self._depth = 0
        self._in_string = self._escaped = False

    def _step(self, out: list[XmlPiece]) -> bool:
        if self._mode == "text":
            return self._step_text(out)
        if self._mode == "think":
            return self._step_think(out)
        if self._mode == "fence":
            return self._step_fence(out)
        if self._mode == "bare":
            return self._step_bare(out)
        return self._step_call(out)

    def _step_text(self, out: list[XmlPiece]) -> bool:
        buffer = self._buffer
        found = [(buffer.find(tag), tag) for tag in _OPENERS if tag in buffer]
        function = _FUNCTION.search(buffer)
        if function is not None:
            found.append((function.start(), function.group()))
        if found:
            index, tag = min(found)
            _add(out, TextPiece(buffer[:index]))
            start = index if tag == "{" else index + len(tag)
            self._buffer = buffer[start:]
            if tag.startswith(FUNCTION_PREFIX):
                self._function = tag[len(FUNCTION_PREFIX) : -1]
            self._enter(_MODES.get(tag, "function"))
            return True
        keep = _held_back(buffer, (TOOL_OPEN, THINK_OPEN, FENCE, FUNCTION_PREFIX))
        pending = _FUNCTION_PENDING.search(buffer)
        if pending is not None:
            keep = max(keep, len(buffer) - pending.start())
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

    def _step_fence(self, out: list[XmlPiece]) -> bool:
        # As in a tag, the fence closes only outside JSON strings: arguments may hold one.
        buffer, index = self._buffer, self._scan
        while index < len(buffer):
            if not self._string_char(buffer[index]) and buffer[index] == "`":
                rest = buffer[index : index + len(FENCE)]
                if rest == FENCE:
                    body = buffer[:index]
                    _add_all(out, loose_calls(FENCE + body + FENCE, fenced(body)))
                    self._buffer = buffer[index + len(FENCE) :]
                    self._enter("text")
                    return True
                if FENCE.startswith(rest):
                    break  # the fence may be arriving; wait for more text
            index += 1
        self._scan = index
        return False

    def _step_bare(self, out: list[XmlPiece]) -> bool:
        buffer, index = self._buffer, self._scan
        while index < len(buffer):
            char = buffer[index]
            index += 1
            if self._string_char(char):
                continue
            if char not in _JSON_CHARS:
                # Prose, not JSON: the brace is text, and what follows it is read afresh.
                _add(out, TextPiece(buffer[:1]))
                self._buffer = buffer[1:]
                self._enter("text")
                return True
            if char in "{}":
                self._depth += 1 if char == "{" else -1
                if self._depth == 0:
                    _add_all(out, loose_calls(buffer[:index], buffer[:index]))
                    self._buffer = buffer[index:]
                    self._enter("text")
                    return True
        self._scan = index
        return False

    def _step_call(self, out: list[XmlPiece]) -> bool:
        close = TOOL_CLOSE if self._mode == "call" else FUNCTION_CLOSE
        buffer, index = self._buffer, self._scan
        while index < len(buffer):
            char = buffer[index]
            if not self._string_char(char) and char == "<":
                rest = buffer[index : index + len(close)]
                if rest == close:
                    out.append(self._tagged(buffer[:index]))
                    self._buffer = buffer[index + len(close) :]
                    self._enter("text")
                    return True
                if close.startswith(rest):
                    break  # the closing tag may be arriving; wait for more text
            index += 1
        self._scan = index
        return False

    def _string_char(self, char: str) -> bool:
        # Whether `char` is inside (or opens or closes) a JSON string.
        if self._in_string:
            if char == "\n":
                # A JSON string holds no line break: the quote was prose, so it hides no more.
                self._in_string = self._escaped = False
                return False
            if self._escaped:
                self._escaped = False
            elif char == "\\":
                self._escaped = True
            elif char == '"':
                self._in_string = False
            return True
        if char == '"':
            self._in_string = True
            return True
        return False

    def _tagged(self, body: str) -> ToolCallTag | MalformedTag:
        if self._mode == "call":
            return tagged_call(body)
        return function_call(self._function, body)


_MODES: dict[str, Mode] = {TOOL_OPEN: "call", THINK_OPEN: "think", FENCE: "fence", "{": "bare"}


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


def _add_all(out: list[XmlPiece], pieces: Sequence[TextPiece | ToolCallTag]) -> None:
    for piece in pieces:
        if isinstance(piece, TextPiece):
            _add(out, piece)
        else:
            out.append(piece)


def _held_back(buffer: str, tags: Sequence[str]) -> int:
    # The longest suffix that is the start of a tag and could still become it.
    for length in range(min(len(buffer), max(map(len, tags))), 0, -1):
        if any(tag.startswith(buffer[-length:]) for tag in tags):
            return length
    return 0
