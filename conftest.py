"""Runs the Python code blocks of the README and of every page under docs/ as tests."""

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser()],
    # Path.match: `*` is one path segment, so each docs/ depth is listed.
    patterns=["README.md", "docs/*.md", "docs/*/*.md"],
).pytest()
