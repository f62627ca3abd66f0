"""The suite's root: the code blocks of the docs as tests, and the corpus the tests need.

The Python code blocks of the README and of every page under docs/ run as tests; a test marked
`corpus` fails before its body, in one line, when the external conformance corpus is absent.
"""

import pytest
from hypothesis import HealthCheck, settings
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

import corpus  # tests/corpus.py: pytest puts tests/ on sys.path (pyproject's `pythonpath`)

# `scripts/check` runs the properties on two workers under coverage, where a run's timing is
# noise: the same examples, with no deadline and no too-slow health check.
settings.register_profile("check", deadline=None, suppress_health_check=[HealthCheck.too_slow])

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
