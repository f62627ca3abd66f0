"""Benchmark: `publish_state()` on typed states, as ratios to one `json.dumps` of the snapshot.

Run: `.venv/bin/python bench/bench_state.py [--rounds 21] [--repeats 3] [--clock cpu|wall]
[--ablate]` (with `PYTHONPATH=src` if agui is not installed).

Workloads, each a pydantic model the run's state is typed as:
  (a) a 10,000-key dict of ints and strings (`dict[str, int | str]`): one member changed, one
      added, one removed;
  (b) a 10,000-item list of small dicts (`list[Task]`, a `TypedDict`): one item removed at the
      front, one edited in the middle, one appended;
  (c) a small typical state: a status, a counter, an owner, ten tasks and a few notes, one to
      three of them changed, as an agent does between steps (about 600 bytes of JSON, under the
      4 KiB from which the state manager takes its shortcuts).
(a) and (b) are `bench_patch.py`'s workloads. Each round builds a fresh context and publishes
once (a snapshot, timed as *first publish*), then `--repeats` times (ten times as many for the
small state, whose publishes are short): a change, untimed; a publish, timed whole as a server
runs it (serialize the typed state, decide, diff, verify, queue, drain, `encode_sse`); a second
publish of the now unchanged state, which must send nothing; and the reference, a stdlib
`json.dumps(snapshot, separators=(",", ":"), ensure_ascii=False).encode()`, before or after the
publishes in turn. A round's figure is a publish's total time over the reference's; the report
gives the median and min-max over rounds.

`--ablate` measures what each of the state manager's shortcuts earns: the same rounds again with
one switched off at a time (each found by name; a shortcut the code under test does not have is
reported as absent). The shortcuts are:
  mirror: an unchanged state is proven by an exact copy kept at the last publish, not serialized;
  loose:  a changed state is diffed trusting `==`, and the patch checked against the state's bytes;
  copy:   the new published value is a copy of the live state checked against its bytes, not the
          bytes parsed.
and "any shortcut" switches all three off: a publish serializes, compares bytes, parses them and
diffs strictly.

Times are the benchmark thread's CPU time (`time.thread_time`; `--clock wall` for
`time.perf_counter`); the garbage collector stays on.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pydantic
from pydantic import BaseModel, JsonValue
from typing_extensions import TypedDict

from agui import RunAgentInput, RunContext
from agui.sse import encode_sse

TARGET_PUBLISH = 1.5
"""A publish after a change should cost at most this many `json.dumps` of the snapshot."""
TARGET_UNCHANGED = 0.3
"""A publish of an unchanged state should cost at most this many `json.dumps` of the snapshot."""

clock = time.thread_time


class Task(TypedDict):
    id: int
    title: str
    done: bool


class ObjectState(BaseModel):
    members: dict[str, int | str] = {}


class ListState(BaseModel):
    tasks: list[Task] = []


class SmallState(BaseModel):
    status: str = "idle"
    counter: int = 0
    owner: str | None = None
    tasks: list[Task] = []
    notes: dict[str, str | None] = {}


def object_state() -> ObjectState:
    return ObjectState(members={f"key{i}": (i if i % 2 else f"value {i}") for i in range(10_000)})


def list_state() -> ListState:
    return ListState(tasks=[{"id": i, "title": f"task {i}", "done": False} for i in range(10_000)])


def small_state() -> SmallState:
    tasks: list[Task] = [{"id": i, "title": f"task {i}", "done": i < 3} for i in range(10)]
    return SmallState(owner="me", tasks=tasks, notes={"plan": "draft the outline", "n0": None})


def change_object(state: ObjectState, turn: int) -> None:
    """One member changed, one added, one removed (and back on the next turn)."""
    members = state.members
    members["key5000"] = f"changed {turn}"
    if turn % 2:
        members["added"] = turn
        del members["key0"]
    else:
        members.pop("added", None)
        members["key0"] = "value 0"


def change_list(state: ListState, turn: int) -> None:
    """One item removed at the front, one edited in the middle, one appended."""
    tasks = state.tasks
    del tasks[0]
    tasks[len(tasks) // 2]["title"] = f"edited {turn}"
    tasks.append({"id": 10_000 + turn, "title": f"task {10_000 + turn}", "done": False})


def change_small(state: SmallState, turn: int) -> None:
    """One to three members changed, like the canonical run's state deltas."""
    step = turn % 3
    if step == 0:
        state.status = f"step {turn}"
    elif step == 1:
        task = state.tasks[turn % len(state.tasks)]
        task["done"] = not task["done"]
        state.owner = None if state.owner else "me"
    else:
        state.notes.pop(f"n{turn - 3}", None)
        state.notes[f"n{turn}"] = None
        state.counter = turn


@dataclass
class Workload:
    make: Callable[[], BaseModel]
    change: Callable[[Any, int], None]
    scale: int = 1
    """How many times `--repeats` changes a round makes."""


WORKLOADS: dict[str, Workload] = {
    "(a) model holding a 10k-key dict": Workload(object_state, change_object),
    "(b) model holding 10k small dicts": Workload(list_state, change_list),
    "(c) small typical state": Workload(small_state, change_small, scale=10),
}


def _dumps(value: JsonValue) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _publish(ctx: RunContext[Any]) -> list[bytes]:
    """One whole publish as a server runs it: publish, drain, frame."""
    ctx.publish_state()
    return [encode_sse(event) for event in ctx.receiver.drain()]


@dataclass
class Figures:
    """Per-round ratios to one `json.dumps` of the full snapshot, and what the publishes sent."""

    changed: list[float] = field(default_factory=list[float])
    unchanged: list[float] = field(default_factory=list[float])
    first: list[float] = field(default_factory=list[float])
    kinds: set[str] = field(default_factory=set[str])


def one_round(workload: Workload, turn: int, repeats: int) -> tuple[dict[str, float], set[str]]:
    """Seconds of one round on a fresh context: a first publish, then `repeats` changes."""
    state = workload.make()
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), state=type(state))
    ctx.state = state
    took: dict[str, float] = dict.fromkeys(("dumps", "first", "changed", "unchanged"), 0.0)
    sent: set[str] = set()
    began = clock()
    _publish(ctx)
    took["first"] = (clock() - began) * repeats
    for repeat in range(repeats):
        workload.change(ctx.state, turn * repeats + repeat)
        snapshot = ctx.state.model_dump(mode="json")
        reference_first = (turn + repeat) % 2 == 0
        if reference_first:
            began = clock()
            _dumps(snapshot)
            took["dumps"] += clock() - began
        began = clock()
        frames = _publish(ctx)
        middle = clock()
        unchanged = _publish(ctx)
        ended = clock()
        took["changed"] += middle - began
        took["unchanged"] += ended - middle
        if not reference_first:
            began = clock()
            _dumps(snapshot)
            took["dumps"] += clock() - began
        sent.update(json.loads(frame[len(b"data: ") :])["type"] for frame in frames)
        assert unchanged == [], "an unchanged state sends nothing"
        assert frames, "a changed state sends an event"
    return took, sent


def measure(rounds: int, repeats: int) -> dict[str, Figures]:
    """Per workload, each round's publish times as ratios to its `json.dumps` time."""
    figures: dict[str, Figures] = {}
    for name, workload in WORKLOADS.items():
        found = figures[name] = Figures()
        for turn in range(-1, rounds):  # the first round warms up and is dropped
            gc.collect()
            took, sent = one_round(workload, turn, repeats * workload.scale)
            found.kinds |= sent
            if turn >= 0:
                found.changed.append(took["changed"] / took["dumps"])
                found.unchanged.append(took["unchanged"] / took["dumps"])
                found.first.append(took["first"] / took["dumps"])
    return figures


# -- switching a shortcut off --------------------------------------------------------------------


def _state_module() -> ModuleType:
    """Whichever agui is on the path: its shortcuts are found by name, and may be absent."""
    return importlib.import_module("agui.state")


@contextlib.contextmanager
def _replaced(owner: object, name: str, value: object) -> Generator[None, None, None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _without_mirror() -> contextlib.AbstractContextManager[None] | None:
    module = _state_module()
    manager = module.StateManager
    if hasattr(module, "_SHORTCUTS_FROM"):
        # One flag allows every shortcut here: only the proof is switched off (a copy is still
        # made when the bytes match, so this errs against the mirror)
        def never(_self: object, _live: object) -> bool:
            return False

        return _replaced(manager, "_unchanged", never)
    encode: Callable[[object], tuple[bytes, bool]] | None = getattr(manager, "_encode", None)
    if encode is None:
        return None

    # Bytes that came with a warning keep no copy, so the next publish serializes and compares
    def warned(self: object) -> tuple[bytes, bool]:
        return encode(self)[0], False

    return _replaced(manager, "_encode", warned)


def _without_loose() -> contextlib.AbstractContextManager[None] | None:
    manager = _state_module().StateManager
    if not hasattr(manager, "_follow"):
        return None

    def nothing(_self: object, _live: object, _encoded: bytes) -> None:
        return None

    return _replaced(manager, "_follow", nothing)


def _without_copy() -> contextlib.AbstractContextManager[None] | None:
    module = _state_module()
    name = "writes" if hasattr(module, "writes") else "_writes"
    writes: Callable[[JsonValue, bytes], bool] | None = getattr(module, name, None)
    if writes is None or not hasattr(module.StateManager, "_follow"):
        return None

    def parse_instead(value: JsonValue, encoded: bytes) -> bool:
        # Only publish's own use: the loose diff's check is another shortcut's. The frame comes
        # from `sys._getframe`, as `inspect.currentframe` would add a call to the timed publish
        caller = sys._getframe(1).f_code.co_name  # noqa: SLF001  # pyright: ignore[reportPrivateUsage]
        return caller == "_follow" and writes(value, encoded)

    return _replaced(module, name, parse_instead)


class _NoMirror:
    @staticmethod
    def of(_value: object, *, copy: bool = True) -> None:  # noqa: ARG004 - Mirror.of's shape
        return None


def _without_all() -> contextlib.AbstractContextManager[None] | None:
    module = _state_module()
    if not hasattr(module, "Mirror"):
        return None
    # Every shortcut starts from a mirror of the live state: without one, a publish serializes,
    # compares the bytes, parses them and diffs strictly
    return _replaced(module, "Mirror", _NoMirror)


SWITCHES: dict[str, Callable[[], contextlib.AbstractContextManager[None] | None]] = {
    "mirror": _without_mirror,
    "loose": _without_loose,
    "copy": _without_copy,
    "any shortcut": _without_all,
}


# -- the report ----------------------------------------------------------------------------------


def _ratio_line(label: str, ratios: list[float], width: int = 50) -> str:
    return (
        f"{label:<{width}} median {statistics.median(ratios):5.2f}x"
        f"   (min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
    )


def _verdict(met: bool) -> str:  # noqa: FBT001 - a plain predicate
    return "meets it" if met else "MISSES it"


def report(figures: dict[str, Figures], *, targets: bool) -> None:
    for name, found in figures.items():
        sent = "/".join(sorted(found.kinds))
        print(name)
        print(_ratio_line(f"  publish after a change (sent {sent})", found.changed))
        print(_ratio_line("  publish of an unchanged state (sends nothing)", found.unchanged))
        print(_ratio_line("  first publish (a snapshot)", found.first))
        if targets and WORKLOADS[name].scale == 1:
            changed = statistics.median(found.changed) <= TARGET_PUBLISH
            unchanged = statistics.median(found.unchanged) <= TARGET_UNCHANGED
            print(
                f"  targets: a publish <= {TARGET_PUBLISH}x: {_verdict(changed)}; "
                f"unchanged <= {TARGET_UNCHANGED}x: {_verdict(unchanged)}"
            )


def main() -> int:
    global clock  # noqa: PLW0603 - chosen once, from the command line
    parser = argparse.ArgumentParser(description="agui publish_state vs json.dumps, as ratios")
    parser.add_argument("--rounds", type=int, default=21, help="rounds per workload")
    parser.add_argument("--repeats", type=int, default=3, help="changes per round")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="what is timed")
    parser.add_argument("--ablate", action="store_true", help="also switch each shortcut off")
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter

    print(
        f"Python {platform.python_version()}, pydantic {pydantic.VERSION}, {platform.machine()}; "
        f"{args.clock} time"
    )
    print(
        f"publish_state() / one json.dumps of the full snapshot; {args.rounds} rounds "
        f"of {args.repeats} changes (x10 for the small state)"
    )
    print("\nall shortcuts on")
    report(measure(args.rounds, args.repeats), targets=True)
    if args.ablate:
        for name, switch in SWITCHES.items():
            off = switch()
            if off is None:
                print(f"\nwithout {name}: absent from the code under test")
                continue
            print(f"\nwithout {name}")
            with off:
                report(measure(args.rounds, args.repeats), targets=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
