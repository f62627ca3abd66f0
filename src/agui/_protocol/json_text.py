r"""What is wrong with JSON text that pydantic-core refuses to read, told in terms of the fix.

`agui.wire.parse_json` reads JSON with pydantic-core, whose errors name the place and the
parser's view of the problem (`EOF while parsing an object at line 1 column 1`). They are passed
on as they are, with what the parser cannot see added: a body in UTF-16 or UTF-32, bytes that
are not UTF-8, NaN and Infinity, which JSON has no numbers for, or a whole number longer than
Python reads (pydantic-core's "number out of range", for valid JSON).

A lone surrogate, half of a UTF-16 surrogate pair without its other half, is the one thing of
valid JSON syntax that is refused: RFC 8259 (8.2) allows its escape (`"\ud800"`), and Python's
`json` and JavaScript's `JSON.parse` read it, but it is no Unicode character, so the UTF-8 that
AG-UI travels as cannot carry it, and pydantic-core does not read it (in words about hex
escapes, or, for a `str` holding one as it is, a `TypeError`). The message says that, and where
the first one is.
"""

from __future__ import annotations

import re

__all__ = ["lone_surrogate", "not_json"]

_AT = re.compile(r"line (\d+) column (\d+)$")
_NON_FINITE = re.compile(r"nan|infinity", re.IGNORECASE)
_UTF8 = "JSON travels as UTF-8 (RFC 8259): send it as UTF-8"
# pydantic-core's words for the escape of half a surrogate pair without its other half.
_SURROGATE_ERRORS = ("unexpected end of hex escape", "lone leading surrogate in hex escape")
# An escape (the hex digits of a surrogate's caught), or a surrogate as it is.
_ESCAPE = re.compile(
    r"\\(?:u([dD][89a-fA-F][0-9a-fA-F]{2})|u[0-9a-fA-F]{4}|.)|[\ud800-\udfff]", re.DOTALL
)


def not_json(data: str | bytes | bytearray, error: str) -> str:
    """What is wrong with JSON text pydantic-core refused: its own words, and why if we know.

    Examples:
        >>> not_json(b"{", "EOF while parsing an object at line 1 column 1")
        'the body is not valid JSON: EOF while parsing an object at line 1 column 1'
    """
    if error.startswith(_SURROGATE_ERRORS):
        return lone_surrogate(data)
    if error.startswith("number out of range"):
        return (
            f"the body holds a number too long to read ({error}): agui reads whole numbers of "
            "up to 4,300 digits, as Python does; send a longer one as a string"
        )
    if isinstance(data, (bytes, bytearray)):
        if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:4]:
            return f"the body is not UTF-8 (it looks like UTF-16 or UTF-32); {_UTF8}"
        try:
            data = bytes(data).decode()
        except UnicodeDecodeError as bad:
            return f"the body is not UTF-8 (byte {bad.start} is not); {_UTF8}"
    found = _AT.search(error)
    line, column = (int(found[1]), int(found[2])) if found is not None else (1, 1)
    # The column is 1-based, and points past a sign (`-Infinity`) or at the word's start.
    near = "".join(data.split("\n")[line - 1 : line])[max(column - 2, 0) : column + 9]
    if _NON_FINITE.search(near):
        return f"the body is not valid JSON: {error}; NaN and Infinity are not JSON numbers"
    return f"the body is not valid JSON: {error}"


def lone_surrogate(data: str | bytes | bytearray) -> str:
    r"""Why JSON text holding a lone surrogate is refused, and where the first one is.

    Examples:
        >>> print(lone_surrogate('{"a": "\\ud800"}'))
        the body holds a lone surrogate (\ud800 at line 1 column 8): half of a UTF-16 surrogate ...
    """
    text = data if isinstance(data, str) else bytes(data).decode(errors="replace")
    start = _first_lone(text)
    line = text.count("\n", 0, start) + 1
    column = start - text.rfind("\n", 0, start)
    shown = text[start : start + 6] if text[start] == "\\" else f"U+{ord(text[start]):04X}"
    return (
        f"the body holds a lone surrogate ({shown} at line {line} column {column}): half of a "
        "UTF-16 surrogate pair without its other half, which JSON's syntax allows but UTF-8 "
        "cannot carry, so agui does not read it; send the whole character (both halves of its "
        "pair), or U+FFFD in its place"
    )


def _first_lone(text: str) -> int:
    """Where the first surrogate of `text` without its other half starts, escaped or not."""
    high: int | None = None  # where an escaped first half starts, while its second may follow
    for escape in _ESCAPE.finditer(text):
        half = escape[1]
        second = half is not None and half[1] in "cdefCDEF"
        if high is not None and not (second and escape.start() == high + 6):
            return high
        if (high is None and second) or len(escape[0]) == 1:
            return escape.start()
        high = escape.start() if high is None and half is not None else None
    assert high is not None  # noqa: S101 - pydantic-core found one, and it ends the text
    return high
