"""A Griffe extension for the API reference: read `Example:` as the Google `Examples:` section.

agui's docstrings title their doctest sections `Example:`. Griffe's Google parser knows only the
plural, and renders the singular as an admonition whose `>>>` lines become Markdown prose. This
renames the title before the docstring is parsed, so the examples render as code.
"""

# ruff: noqa: INP001 - loaded by path from mkdocs.yml, not imported as a package

from __future__ import annotations

import re
from typing import Any

import griffe

_TITLE = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExamplesSection(griffe.Extension):
    """Rename every `Example:` section title to `Examples:` in the docstrings Griffe loads."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: ARG002, ANN401
        """Rewrite the object's docstring once it is loaded, before anything parses it."""
        if obj.docstring is not None:
            obj.docstring.value = _TITLE.sub(r"\1Examples:", obj.docstring.value)
