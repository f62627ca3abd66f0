"""What the `agui` command costs before it does anything: `--version`, `--help`, against pydantic.

Each figure is the wall time of a fresh process: the installed console script for the `agui`
lines, `python -c` for the references, so nothing is cached in `sys.modules`. The candidates run
interleaved, round after round, so a busy machine slows them alike. Reported: the median and
min-max over the rounds, and the ratio of medians to `import pydantic`; `agui --version` is held
to at most 2x. `agui serve --help` is there for scale: it loads its command's layers (the ASGI
app), which `--version` and `--help` do not.

Run: `python bench/bench_cli.py [--rounds N]` (default 21).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

AGUI = str(Path(sys.executable).parent / "agui")
CANDIDATES = {
    "python (startup only)": [sys.executable, "-c", "pass"],
    "import pydantic": [sys.executable, "-c", "import pydantic"],
    "agui --version": [AGUI, "--version"],
    "agui --help": [AGUI, "--help"],
    "agui serve --help": [AGUI, "serve", "--help"],
}
REFERENCE = "import pydantic"


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)  # noqa: S603 - fixed commands
    return time.perf_counter() - start


def main() -> None:
    """Time every candidate, interleaved, and print medians, spreads and ratios."""
    parser = argparse.ArgumentParser(description="Time what the agui command costs to start.")
    parser.add_argument("--rounds", type=int, default=21)
    options = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in CANDIDATES}
    for _ in range(options.rounds):
        for name, command in CANDIDATES.items():
            times[name].append(_wall(command))
    reference = statistics.median(times[REFERENCE])
    print(f"{options.rounds} fresh processes each; ms: median (min-max), ratio to {REFERENCE!r}")
    for name, taken in times.items():
        median = statistics.median(taken)
        spread = f"({min(taken) * 1e3:6.1f}-{max(taken) * 1e3:6.1f})"
        print(f"{name:24} {median * 1e3:7.1f} {spread} {median / reference:5.2f}x")


if __name__ == "__main__":
    main()
