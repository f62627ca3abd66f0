"""Finding node and the pinned client packages of tests/js, for the tests that run real clients.

A test that needs a client fails, saying how to install it, rather than skipping: a skipped
client test would count as passed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

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


def run_script(found: str, argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run `node ARGV` in tests/js with `env` added; return what it wrote to its result file.

    The script fails on any error or warning the client reports; so does this, with its output.
    """
    with tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [found, *argv],
            cwd=JS_DIR,
            env={**os.environ, **env, "AGUI_RESULT_FILE": str(result_file)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        result: dict[str, Any] = json.loads(result_file.read_text())
    return result


def official_client_run(url: str) -> dict[str, Any]:
    """Run `client.test.mjs` (the official `HttpAgent`) against `url`; return what it ended with."""
    found = node("@ag-ui/client", "the TypeScript client tests")
    return run_script(found, ["--test", "client.test.mjs"], {"AGUI_URL": url})
