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


def official_client_run(url: str) -> dict[str, Any]:
    """Run `client.test.mjs` (the official `HttpAgent`) against `url`; return what it ended with.

    The script fails on any error or warning the client reports; so does this, with its output.
    """
    found = node("@ag-ui/client", "the TypeScript client tests")
    with tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        env = {**os.environ, "AGUI_URL": url, "AGUI_RESULT_FILE": str(result_file)}
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [found, "--test", "client.test.mjs"],
            cwd=JS_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        ended: dict[str, Any] = json.loads(result_file.read_text())
    return ended
