"""The suite's root: the code blocks of the docs as tests, and the corpus the tests need.

The Python code blocks of the README and of every page under docs/ run as tests; a test marked
`corpus` fails before its body, in one line, when the external conformance corpus is absent; and
a report sent from a pytest-xdist worker has its lone surrogates escaped, since the channel
writes UTF-8 and a test of text handling may fail with one in its message.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, settings
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

import corpus  # tests/corpus.py: pytest puts tests/ on sys.path (pyproject's `pythonpath`)

# `scripts/check` runs the properties on two workers under coverage, where a run's timing is
# noise: the same examples, with no deadline and no too-slow health check.
settings.register_profile("check", deadline=None, suppress_health_check=[HealthCheck.too_slow])

# The bridges' frameworks need Python 3.11 (the `dev` extra installs them from there on): below
# it their tests, modules, docs and examples are not collected; from it on, a missing framework
# fails their collection.
collect_ignore_glob = (
    []
    if sys.version_info >= (3, 11)
    else [
        "tests/test_bridges_*.py",
        "tests/openai_agents_worker.py",
        "src/agui/bridges/_openai_*.py",
        "src/agui/bridges/_pydantic_ai.py",
        "src/agui/bridges/_langgraph*.py",
        "docs/guides/bridges-frameworks.md",
        "examples/bridges/*",
    ]
)

pytest_collect_file = Sybil(
    parsers=[PythonCodeBlockParser()],
    # Path.match: `*` is one path segment, so each docs/ depth is listed.
    patterns=["README.md", "docs/*.md", "docs/*/*.md"],
).pytest()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    """A test marked `corpus` fails before its body when the corpus is absent, saying so."""
    if item.get_closest_marker("corpus") is not None:
        corpus.require()


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(
    config: pytest.Config, report: pytest.CollectReport | pytest.TestReport
) -> Generator[None, Any, Any]:
    """The report as sent between processes, with every string encodable as UTF-8."""
    del config, report
    data = yield
    return _encodable(data)


def _encodable(value: object) -> object:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        members = cast("dict[object, object]", value)
        return {key: _encodable(item) for key, item in members.items()}
    if isinstance(value, (list, tuple)):
        items = cast("list[object] | tuple[object, ...]", value)
        return type(items)(_encodable(item) for item in items)
    return value
