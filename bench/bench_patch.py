"""Benchmark: `agui.patch.diff` against `jsonpatch.make_patch`, as ratios.

Run: `.venv/bin/python bench/bench_patch.py` (with `PYTHONPATH=src` if agui is not installed).

Both sides run in this one process, interleaved: each round times ours and theirs on every
workload, alternating which goes first, so drift in machine load hits both alike. The report
gives the median and the min-max over rounds of per-round ratios, never bare times, since
absolute times say more about the machine than about the code.

Workloads:
  (a) a 10,000-member object of scalars: one value changed, one member added, one removed;
  (b) a 10,000-item list of small task objects: one removed at the front, one edited in the
      middle, one appended;
  (c) an object of 100 objects of 100 members: a few edits, including type changes.
"""

from __future__ import annotations

import copy
import gc
import json
import statistics
import time
from collections.abc import Callable

import jsonpatch
from pydantic import JsonValue

from agui.patch import apply, diff, json_equal

ROUNDS = 15


def _members(value: JsonValue) -> dict[str, JsonValue]:
    """An object of a workload's document, to edit in place: the documents are any JSON."""
    assert isinstance(value, dict)
    return value


def workload_object() -> tuple[JsonValue, JsonValue]:
    old: dict[str, JsonValue] = {f"key{i}": (i if i % 2 else f"value {i}") for i in range(10_000)}
    new = dict(old)
    new["key5000"] = "changed"
    new["added"] = 1
    del new["key0"]
    return old, new


def workload_list() -> tuple[JsonValue, JsonValue]:
    old: list[JsonValue] = [{"id": i, "title": f"task {i}", "done": False} for i in range(10_000)]
    new = copy.deepcopy(old[1:])
    _members(new[4_999])["title"] = "edited"
    new.append({"id": 10_000, "title": "task 10000", "done": False})
    return old, new


def workload_nested() -> tuple[JsonValue, JsonValue]:
    old: dict[str, JsonValue] = {f"group{i}": {f"k{j}": j for j in range(100)} for i in range(100)}
    new = copy.deepcopy(old)
    _members(new["group3"])["k5"] = True
    _members(new["group50"])["k1"] = 1.0
    _members(new["group99"])["new"] = None
    del _members(new["group10"])["k0"]
    _members(new["group70"])["k7"] = [7]
    return old, new


def ours(old: JsonValue, new: JsonValue) -> list[dict[str, JsonValue]]:
    return diff(old, new)


def theirs(old: JsonValue, new: JsonValue) -> list[dict[str, JsonValue]]:
    return list(jsonpatch.make_patch(old, new))


def timed(
    function: Callable[[JsonValue, JsonValue], object], old: JsonValue, new: JsonValue
) -> int:
    start = time.perf_counter_ns()
    function(old, new)
    return time.perf_counter_ns() - start


def size(ops: object) -> int:
    return len(json.dumps(ops, separators=(",", ":")).encode())


def spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):7.1f}x  ({min(ratios):.1f}-{max(ratios):.1f})"


def main() -> None:
    workloads = {
        "(a) object, 10k members": workload_object(),
        "(b) list, 10k tasks": workload_list(),
        "(c) 100 x 100 nested": workload_nested(),
    }
    for old, new in workloads.values():
        patch = ours(old, new)
        assert json_equal(apply(old, patch), new), "our patch must rebuild the new document"
        assert json_equal(jsonpatch.apply_patch(old, patch), new), "jsonpatch must agree"

    speedups: dict[str, list[float]] = {name: [] for name in workloads}
    theirs_vs_dumps: dict[str, list[float]] = {name: [] for name in workloads}
    ours_vs_dumps: dict[str, list[float]] = {name: [] for name in workloads}

    def dumps(_old: JsonValue, new: JsonValue) -> str:  # the same shape as the diffs
        return json.dumps(new)

    gc.disable()
    try:
        for round_ in range(-1, ROUNDS):  # round -1 warms up and is dropped
            for name, (old, new) in workloads.items():
                order = [ours, theirs, dumps] if round_ % 2 else [dumps, theirs, ours]
                took = {function: timed(function, old, new) for function in order}
                if round_ < 0:
                    continue
                speedups[name].append(took[theirs] / took[ours])
                theirs_vs_dumps[name].append(took[theirs] / took[dumps])
                ours_vs_dumps[name].append(took[ours] / took[dumps])
            gc.collect()
    finally:
        gc.enable()

    print(f"agui.patch.diff vs jsonpatch {jsonpatch.__version__}.make_patch, {ROUNDS} rounds")
    print("ratios: median (min-max) over rounds\n")
    header = f"{'workload':26} {'speed-up':>22} {'bytes ours/theirs':>18}"
    print(f"{header} {'jsonpatch/dumps':>24} {'ours/dumps':>22}")
    for name, (old, new) in workloads.items():
        mine, their = size(ours(old, new)), size(theirs(old, new))
        print(
            f"{name:26} {spread(speedups[name]):>22} {mine / their:>13.2f} ({mine}/{their})"
            f" {spread(theirs_vs_dumps[name]):>24} {spread(ours_vs_dumps[name]):>22}"
        )
    print("\nspeed-up: jsonpatch time / ours. x/dumps: diff time / json.dumps(new) time.")
    print("targets: speed-up >= 10x on (a) and (b), 20x aimed for; bytes ours/theirs <= 1.10")


if __name__ == "__main__":
    main()
