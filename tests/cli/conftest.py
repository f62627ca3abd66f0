"""Fixtures of the command line's tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agui_command import AGENT_FILE, LAZY_FILE


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding `agents.py`, made the working directory; sys.path is restored."""
    (tmp_path / "agents.py").write_text(AGENT_FILE)
    (tmp_path / "broken.py").write_text("raise RuntimeError('this module fails on import')\n")
    (tmp_path / "exits.py").write_text("raise SystemExit(3)\n")
    (tmp_path / "boom.py").write_text(
        "class Boom(BaseException):\n    pass\n\nraise Boom('bang')\n"
    )
    (tmp_path / "interrupts.py").write_text("raise KeyboardInterrupt\n")
    (tmp_path / "lazy.py").write_text(LAZY_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("agents", "broken", "exits", "boom", "interrupts", "lazy"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path
