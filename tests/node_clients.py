"""Finding node and the pinned client packages of tests/js, for the tests that run real clients.

A test that needs a client fails, saying how to install it, rather than skipping: a skipped
client test would count as passed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

JS_DIR = Path(__file__).parent / "js"


def node(package: str, tests: str) -> str:
    """The node executable, once `package` is installed in tests/js; else fail the test."""
    found = shutil.which("node")
    if found is None or not (JS_DIR / "node_modules" / package).is_dir():
        pytest.fail(
            f"{tests} need node (>= 20) and tests/js/node_modules: run `npm ci --prefix tests/js`"
        )
    return found
