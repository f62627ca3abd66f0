"""A tool's docstring, read as the model should see it: a description, and each parameter's text.

The description a model reads is the docstring's prose; the parameter sections are not prose but
the text of each parameter, which belongs in the schema next to the parameter it describes, not
in the description, where it would be sent twice, or once under the wrong heading. Three styles
are read, since each is common in code a tool wraps:

- Google: an `Args:` (or `Arguments:`, `Parameters:`, `Keyword Args:`, ...) header, then items
  `name: text` or `name (type): text`, indented by any amount (the first item sets it), with
  deeper lines continuing the item;
- numpy: a `Parameters` header underlined with dashes, then items `name : type` (or
  `a, b : type`) with their text on the deeper lines below;
- Sphinx: fields `:param name: text` or `:param type name: text`, continued on deeper lines.

Every other section (`Returns:`, `Raises`, `:rtype:`, ...) is left out of both: what a tool
returns reaches the model as the result itself. The description is what precedes the first
section or field.
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["read_docstring"]

_PARAMETER_SECTIONS = frozenset(
    {
        "Args",
        "Arguments",
        "Parameters",
        "Params",
        "Keyword Args",
        "Keyword Arguments",
        "Other Parameters",
    }
)
_OTHER_SECTIONS = frozenset(
    {
        "Attributes",
        "Example",
        "Examples",
        "Methods",
        "Note",
        "Notes",
        "Raises",
        "References",
        "Return",
        "Returns",
        "See Also",
        "Todo",
        "Warning",
        "Warnings",
        "Warns",
        "Yield",
        "Yields",
    }
)
_SECTIONS = _PARAMETER_SECTIONS | _OTHER_SECTIONS
_SPHINX_PARAMETERS = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
_SPHINX_FIELDS = _SPHINX_PARAMETERS | {
    *("type", "raises", "raise", "except", "exception", "returns", "return", "rtype"),
    *("yields", "yield", "ytype", "var", "ivar", "cvar", "vartype", "meta"),
}
_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ITEM = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+(?:\s*,\s*\w+)*)\s*(?::.*)?$")
_SPHINX_FIELD = re.compile(r"^:(\w+)([^:]*):\s*(.*)$")


def read_docstring(doc: str) -> tuple[str, dict[str, str]]:
    r"""The description and the text of each documented parameter, of a cleaned docstring.

    Examples:
        >>> read_docstring('''Get a forecast.
        ...
        ... Parameters
        ... ----------
        ... city : str
        ...     The city name.
        ... ''')
        ('Get a forecast.', {'city': 'The city name.'})
        >>> read_docstring("Get a forecast.\n\n:param str city: The city name.\n:returns: it")
        ('Get a forecast.', {'city': 'The city name.'})
    """
    reader = _Reader()
    lines = doc.splitlines()
    for index, line in enumerate(lines):
        reader.read(line, lines[index + 1] if index + 1 < len(lines) else "")
    described = {name: text for name, text in reader.documented.items() if text}
    return "\n".join(reader.summary).strip(), described


@dataclasses.dataclass
class _Reader:
    summary: list[str] = dataclasses.field(default_factory=list[str])
    documented: dict[str, str] = dataclasses.field(default_factory=dict[str, str])
    style: str = ""  # "" while in the description; else google, numpy, sphinx, or skip
    indent: int | None = None  # the indent of the section's items, set by its first line
    current: list[str] = dataclasses.field(default_factory=list[str])  # what the lines describe
    underline: bool = False  # the next line underlines a numpy header

    def read(self, line: str, following: str) -> None:
        if self.underline:
            self.underline = False
            return
        title = line.strip().removesuffix(":")
        numpy = _UNDERLINE.match(following) is not None
        google = line.rstrip().endswith(":") and not line[0].isspace()
        if title in _SECTIONS and (numpy or google):
            parameters = title in _PARAMETER_SECTIONS
            self._start(("numpy" if numpy else "google") if parameters else "skip")
            self.underline = numpy
            return
        field = _SPHINX_FIELD.match(line)
        if field is not None and field.group(1) in _SPHINX_FIELDS:
            self._start("sphinx")
            kind, words, text = field.groups()
            if kind in _SPHINX_PARAMETERS and words.split():
                self.current = [words.split()[-1]]
                self.documented[self.current[0]] = text.strip()
            return
        if not self.style:
            self.summary.append(line)
        elif line.strip() and self.style != "skip":
            self._item(line)

    def _start(self, style: str) -> None:
        self.style, self.indent, self.current = style, None, []

    def _item(self, line: str) -> None:
        indent = len(line) - len(line.lstrip())
        if self.indent is None:
            self.indent = 0 if self.style == "sphinx" else indent
        if indent > self.indent:
            for name in self.current:
                self.documented[name] = f"{self.documented[name]} {line.strip()}".strip()
        elif indent < self.indent:
            self._start("skip")  # dedented past the items: the section ended
        elif self.style == "google" and (item := _GOOGLE_ITEM.match(line.strip())) is not None:
            self.current = [item.group(1)]
            self.documented[item.group(1)] = item.group(2).strip()
        elif self.style == "numpy" and (item := _NUMPY_ITEM.match(line.strip())) is not None:
            self.current = [name.strip() for name in item.group(1).split(",")]
            self.documented.update(dict.fromkeys(self.current, ""))
        else:
            self.current = []  # a line the parser does not read, such as a bulleted list
