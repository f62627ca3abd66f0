"""Runs the Python code blocks of the README (and later docs/) as tests."""

from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

pytest_collect_file = Sybil(parsers=[PythonCodeBlockParser()], patterns=["README.md"]).pytest()
