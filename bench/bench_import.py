"""What `import agui` costs a process, against `import pydantic` in the same run.

Each figure comes from a fresh interpreter (`python -c ...`), so nothing is cached in
`sys.modules`; the candidates are interleaved round by round, so a busy machine slows them
alike. Two times per run: the whole process (interpreter start included) and the import alone
(timed inside the process). Reported: the median and min-max over the rounds, and the ratio of
medians to the reference, `import pydantic`.

`import pydantic` loads little by itself (pydantic resolves its names lazily); the second line,
`from pydantic import BaseModel`, is pydantic ready to define a model, which every agui process
needs before it can define the 31 event models.

`--tree PATH` times another checkout's `src` (say, a worktree of an earlier commit) as an extra
candidate, so before and after come from the same run.

Run: `python bench/bench_import.py [--rounds N] [--tree PATH]` (default 21 rounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REFERENCE = "import pydantic"
CANDIDATES: list[tuple[str, str, str | None]] = [
    ("python (start only)", "pass", None),
    (REFERENCE, "import pydantic", None),
    ("from pydantic import BaseModel", "from pydantic import BaseModel", None),
    ("import agui", "import agui", None),
    ("from agui import RunContext", "from agui import RunContext", None),
    ("import agui; agui.asgi_app", "import agui; agui.asgi_app", None),
    ("import agui.testing", "import agui.testing", None),
]
_TIMED = "import time; _t = time.perf_counter(); {code}; print(time.perf_counter() - _t)"


def _run(code: str, src: str | None) -> tuple[float, float]:
    """One fresh interpreter: (whole process, import alone), in seconds."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    start = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - this interpreter, on a fixed program
        [sys.executable, "-c", _TIMED.format(code=code)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return time.perf_counter() - start, float(done.stdout)


def _show(times: list[float], reference: float) -> str:
    median = statistics.median(times)
    spread = f"({min(times) * 1e3:6.1f}-{max(times) * 1e3:6.1f})"
    return f"{median * 1e3:7.1f} {spread} {median / reference:5.2f}x"


def main() -> None:
    """Time every candidate, interleaved, and print medians, spreads and ratios."""
    parser = argparse.ArgumentParser(description="Time `import agui` against `import pydantic`.")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--tree", type=Path, help="another checkout to time `import agui` from")
    options = parser.parse_args()
    candidates = list(CANDIDATES)
    if options.tree is not None:
        other = str(options.tree.resolve() / "src")
        candidates.append((f"import agui ({options.tree})", "import agui", other))
    wall: dict[str, list[float]] = {name: [] for name, _, _ in candidates}
    alone: dict[str, list[float]] = {name: [] for name, _, _ in candidates}
    for _ in range(options.rounds):
        for name, code, src in candidates:
            process, imported = _run(code, src)
            wall[name].append(process)
            alone[name].append(imported)
    ref_wall = statistics.median(wall[REFERENCE])
    ref_alone = statistics.median(alone[REFERENCE])
    print(f"{options.rounds} fresh interpreters each; ms: median (min-max), ratio to {REFERENCE!r}")
    print(f"{'':42} {'whole process':>29}   {'import alone':>29}")
    for name, _, _ in candidates:
        print(f"{name:42} {_show(wall[name], ref_wall)}   {_show(alone[name], ref_alone)}")


if __name__ == "__main__":
    main()
