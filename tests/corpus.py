"""The official AG-UI conformance corpus the tests replay, found outside this repository.

The corpus is public data of the AG-UI protocol's own repository (ag-ui-protocol/ag-ui): the
streams of `spec/1.1/conformance` (with the few 1.0 streams 1.1 dropped) and the SDKs' golden
`sdks/fixtures/null-omission.json`, laid out as `spec-1.1/streams/`, `spec-1.0-partial/streams/`
and `null-omission.json`. It is not copied into this repository: the setting
`AGUI_CONFORMANCE_DIR` names its folder, by default `../shared/conformance` from the repository
root.

When the folder is not there, collection still succeeds: `streams()` and `json()` give one
placeholder in place of the fixtures, and every test marked `corpus` fails before it runs with
the one line `missing()` returns, saying what is missing and where it comes from (the hook is in
the root `conftest.py`). Never a skip: a check that did not run must not look like one that
passed.
"""

from __future__ import annotations

import json as _json
import os
from pathlib import Path
from typing import Any

import pytest

__all__ = ["DIRECTORY", "PLACEHOLDER", "json", "missing", "path", "require", "streams"]

ROOT = Path(__file__).resolve().parents[1]
DIRECTORY = Path(os.environ.get("AGUI_CONFORMANCE_DIR") or ROOT.parent / "shared" / "conformance")
"""Where the corpus is: `AGUI_CONFORMANCE_DIR`, or `../shared/conformance` from the root."""

PLACEHOLDER = "conformance-corpus-missing"
"""The name that stands for the fixtures when the corpus is absent (a test id, a fixture name)."""

_NEEDED = ("spec-1.1/streams", "spec-1.0-partial/streams", "null-omission.json")


def missing() -> str | None:
    """The one line that says the corpus is absent, or `None` when it is there."""
    absent = [part for part in _NEEDED if not (DIRECTORY / part).exists()]
    if not absent:
        return None
    return (
        f"the AG-UI conformance corpus is missing: {DIRECTORY} has no {', '.join(absent)}; "
        "it comes from the official ag-ui repository (ag-ui-protocol/ag-ui, its "
        "spec/1.1/conformance and sdks/fixtures): put a copy there, or point "
        "AGUI_CONFORMANCE_DIR at one"
    )


def require() -> Path:
    """The corpus folder; when it is absent, the calling test fails with `missing()`."""
    message = missing()
    if message is not None:
        pytest.fail(message, pytrace=False)
    return DIRECTORY


def path(*parts: str) -> Path:
    """A path inside the corpus folder (it may not exist: `require()` says so)."""
    return DIRECTORY.joinpath(*parts)


def streams() -> list[Path]:
    """Every stream fixture, 1.1 first; one placeholder path when the corpus is absent."""
    if missing() is not None:
        return [path("spec-1.1", "streams", f"{PLACEHOLDER}.json")]
    return sorted(path("spec-1.1", "streams").glob("*.json")) + sorted(
        path("spec-1.0-partial", "streams").glob("*.json")
    )


def json(*parts: str) -> Any:
    """A corpus file's JSON; when the corpus is absent, a fixture with one placeholder case."""
    if missing() is not None:
        nothing: dict[str, object] = {}
        case = {
            "name": PLACEHOLDER,
            "producedBy": ["python"],
            "input": nothing,
            "expected": nothing,
        }
        return {"name": PLACEHOLDER, "stream": [case], "expect": nothing}
    return _json.loads(path(*parts).read_text(encoding="utf-8"))
