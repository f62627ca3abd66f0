"""Server-core benchmark: the canonical run emitted through the handles, to SSE bytes.

Handles to SSE bytes. The canonical workload (`workload.py`) is driven the way an agent
drives agui: `RUN_STARTED`; each text message as `ctx.message()` and 50 `message.delta(text)`; each
tool call as `ctx.tool_call(name, parent_message_id=...)`, 20 `call.args(fragment)` and
`call.result(content)`; each `STATE_DELTA` of the workload as a change to the run's state and
`ctx.publish_state()`; `RUN_FINISHED`. The verifier is on (it always is). Each slice's queue is
taken as the endpoint takes it, items and all, and framed as one body by the emit core's writer
(`agui._emit.frames.encode_items`). That is
14,877 events: the workload's 15,052 less its 175 empty argument fragments, which a handle does not
send (and without the workload's timestamps, which handles do not set). Against it, the official SDK
(ag-ui-protocol 1.0.0) builds the same events, the ones agui sent, from snake_case keyword arguments
and frames them with its `EventEncoder`. A third side is the test path, what a user's unit test
runs: the same constructs on a `RunContext.new` harness, `drain()` (records built as their event
models) and `encode_sse` per event (the harness is already in the run: no RUN_STARTED). An
informational fourth side, the ceiling, makes the same events as real agui instances the cheapest
way (trusted construction) and frames them with `encode_sse`: no handle, context, verifier or
queue, what any path keeping pydantic instances costs at least. All run in one process. By
default each side plays the whole run in its turn, the sides' order rotating from round to
round, as `bench_served.py` alternates whole requests: each side runs warm, as it does in a
user's process. `--interleave slice` interleaves the sides slice by slice instead (in a rotating
order, or `--order shuffle`: shuffled per slice, since rotating keeps each side's predecessor,
see `_ordered`), which charges every side for the caches its neighbours left cold, the quicker
side most (see `bench/README.md`). A round's figure is the ratio of two sides' totals over the
whole run, and the report gives the median and min-max over rounds. Every side's frames are
checked to be byte-identical over the whole run (the script exits 1 otherwise). `--split` also
times the test path's three steps apart.

State publishing on large typed states is `bench_state.py`'s subject, and the differ alone
against `jsonpatch.make_patch` is `bench_patch.py`'s.

Times are the benchmark thread's CPU time (`time.thread_time`; `--clock wall` for
`time.perf_counter`), so the time a loaded machine gives other processes is not counted;
the garbage collector stays on.

Run: `.venv/bin/python bench/bench_core.py [--rounds 21] [--slice 5] [--clock cpu|wall]
[--interleave run|slice] [--order rotate|shuffle] [--split]`
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import pydantic
from ag_ui.core import BaseEvent
from ag_ui.encoder import EventEncoder
from pydantic import BaseModel, JsonValue
from pydantic.alias_generators import to_snake
from workload import EventSpec, official_class, workload

from agui import RunAgentInput, RunContext
from agui._emit.frames import encode_items
from agui._emit.receiver import run_receiver
from agui.events import Event, RunFinishedEvent, RunStartedEvent
from agui.sink import EventReceiver
from agui.sse import encode_sse, event_json

TARGET_HANDLES = 6.0
"""The handles-to-SSE path should be at least this many times faster than the official SDK."""

THREAD, RUN = "thread-1", "run-1"
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
clock = time.thread_time

# -- part 1: the canonical run through the handles ---------------------------------------------


@dataclass
class Unit:
    """One construct of the run: what the agent does for it, as data."""

    kind: str  # "start", "message", "tool", "state", "finish"
    texts: list[str] = field(default_factory=list[str])
    name: str = ""
    content: str = ""
    index: int = 0


def units_of(specs: list[EventSpec]) -> list[Unit]:
    """The workload's events regrouped as the constructs an agent opens and fills."""
    units: list[Unit] = []
    for kind, fields in specs:
        if kind == "RUN_STARTED":
            units.append(Unit("start"))
        elif kind == "RUN_FINISHED":
            units.append(Unit("finish"))
        elif kind == "TEXT_MESSAGE_START":
            units.append(Unit("message"))
        elif kind == "TOOL_CALL_START":
            units.append(Unit("tool", name=fields["tool_call_name"]))
        elif kind in {"TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS"}:
            units[-1].texts.append(fields["delta"])
        elif kind == "TOOL_CALL_RESULT":
            units[-1].content = fields["content"]
        elif kind == "STATE_DELTA":
            units.append(Unit("state", index=len(units)))
    return units


def change_state(state: dict[str, Any], index: int) -> None:
    """A change of 1 to 3 members, like the workload's STATE_DELTA operations."""
    step = index % 3
    if step == 0:
        state["status"] = f"step {index}"
    elif step == 1:
        state["tasks"].append({"id": index, "done": False})
        state["owner"] = None if state["owner"] else "me"
    else:
        state["notes"][f"n{index}"] = None
        state.pop("draft", None)
        state["counter"] = index


def _initial_state() -> dict[str, Any]:
    return {"status": "idle", "tasks": [], "owner": "me", "notes": {}, "draft": "", "counter": 0}


class AguiRun:
    """One run of the workload through a `RunContext`, played construct by construct."""

    def __init__(self) -> None:
        self.ctx: RunContext[JsonValue] = RunContext(
            RunAgentInput(thread_id=THREAD, run_id=RUN, state=_initial_state())
        )
        self.parent = ""

    def play(self, units: list[Unit]) -> bytes:
        """Emit the units' events, then frame everything they queued as one body, as the
        endpoint does for a batch."""
        self.act(units)
        return encode_items(run_receiver(self.ctx.receiver).items())

    def emitted(self, units: list[Unit]) -> list[Event]:
        """The events the units emit, unframed."""
        self.act(units)
        return self.ctx.receiver.drain()

    def act(self, units: list[Unit]) -> None:
        """What an agent does: open, fill and close each construct."""
        ctx = self.ctx
        for unit in units:
            if unit.kind == "message":
                with ctx.message() as message:
                    for text in unit.texts:
                        message.delta(text)
                self.parent = message.id
            elif unit.kind == "tool":
                with ctx.tool_call(unit.name, parent_message_id=self.parent) as call:
                    for fragment in unit.texts:
                        call.args(fragment)
                    call.result(unit.content)
            elif unit.kind == "state":
                state = ctx.state
                assert isinstance(state, dict)
                change_state(state, unit.index)
                ctx.publish_state()
            elif unit.kind == "start":
                self.start()
            else:
                ctx.emit(RunFinishedEvent(thread_id=THREAD, run_id=RUN))

    def start(self) -> None:
        """What the driver does first: RUN_STARTED, then the state decoded from the input."""
        self.ctx.emit(RunStartedEvent(thread_id=THREAD, run_id=RUN, protocol_version="1.0"))
        self.ctx.init_state()


class TestPathRun(AguiRun):
    """The same run as a user's unit test plays it: `RunContext.new`, then `drain()` and
    `encode_sse` per event (the harness starts in a run, so RUN_STARTED is not emitted)."""

    events: EventReceiver

    def __init__(self) -> None:
        request = RunAgentInput(thread_id=THREAD, run_id=RUN, state=_initial_state())
        self.ctx, self.events = RunContext.new(request)
        self.parent = ""

    def start(self) -> None:
        """Nothing: `RunContext.new` is already in the run, its state decoded."""

    def play(self, units: list[Unit]) -> bytes:
        """Emit the units' events, drain them as events and frame each with `encode_sse`."""
        self.act(units)
        return b"".join([encode_sse(event) for event in self.events.drain()])


Built = list[tuple[type[BaseEvent], dict[str, Any]]]
"""Each event's official class, looked up before timing, and its keyword arguments."""


def official_inputs(events: list[Event]) -> Built:
    """Each event as its official class and the snake_case keyword arguments an app would pass."""
    built: Built = []
    for event in events:
        wire = json.loads(event_json(event))
        kind = wire.pop("type")
        built.append((official_class(kind), {to_snake(key): value for key, value in wire.items()}))
    return built


def official_encode(items: Built) -> list[bytes]:
    """Build official models and frame them with the official encoder."""
    encode = EventEncoder().encode
    return [encode(cls(**fields)).encode() for cls, fields in items]


Prebuilt = list[tuple[Callable[..., Event], tuple[object, ...]]]
"""Each event's trusted builder (for the fields it sets) and their values: what the ceiling
contender builds from."""


def prebuilt(events: list[Event]) -> Prebuilt:
    builders: dict[tuple[type[Event], tuple[str, ...]], Callable[..., Event]] = {}
    items: Prebuilt = []
    for event in events:
        names = tuple(name for name in type(event).model_fields if name in event.model_fields_set)
        key = (type(event), names)
        if key not in builders:
            builders[key] = _builder(type(event), names)
        items.append((builders[key], tuple(event.__dict__[name] for name in names)))
    return items


def _builder(cls: type[M], names: tuple[str, ...]) -> Callable[..., M]:
    """The class's trusted builder; `model_construct` for a tree from before trusted builders."""
    trusted: Callable[..., Callable[..., M]] | None = getattr(cls, "trusted_builder", None)
    if trusted is not None:
        return trusted(*names)
    return lambda *values: cls.model_construct(**dict(zip(names, values, strict=True)))


def ceiling_encode(items: Prebuilt) -> list[bytes]:
    """Real event instances made the cheapest way (`trusted_builder`), framed; nothing else."""
    return [encode_sse(build(*values)) for build, values in items]


@dataclass
class HandleFigures:
    """Per-round speedups and seconds, and the byte-identity check."""

    count: int
    mismatches: int
    speedups: list[float] = field(default_factory=list[float])
    test_path: list[float] = field(default_factory=list[float])
    ceiling: list[float] = field(default_factory=list[float])
    agui: list[float] = field(default_factory=list[float])
    official: list[float] = field(default_factory=list[float])


def _ordered(sides: list[T], turn: int, index: int, order: str) -> list[T]:
    """The sides' order for one slice: rotated, or shuffled (seeded by round and slice).

    Rotating keeps the cyclic order, so each side always runs after the same one: the ceiling
    right after the official SDK, whose run leaves the caches cold (an A/A run, one tree against
    a copy of itself, showed the side in that place about 8% slower), and the handles right
    after the test path, which has just run the same handle code. Shuffling spreads both.
    """
    if order == "rotate":
        shift = (turn + index) % len(sides)
        return sides[shift:] + sides[:shift]
    shuffled = list(sides)
    random.Random(turn * 100_003 + index).shuffle(shuffled)  # noqa: S311 - an order, no secret
    return shuffled


Steps = list[list[tuple[str, Callable[[], object]]]]
"""Per slice, each side's name and its work on the slice, in the sides' cyclic order."""


def handles_part(
    rounds: int, size: int, order: str = "rotate", interleave: str = "run"
) -> HandleFigures:
    """The whole run per round on every side, in slices of `size` constructs: each side's whole
    run in its turn (`interleave="run"`), or each slice on every side in turn (`"slice"`)."""
    units = units_of(workload())
    slices = [units[start : start + size] for start in range(0, len(units), size)]
    probe = AguiRun()
    events = [probe.emitted(part) for part in slices]
    inputs = [official_inputs(part) for part in events]
    bare = [prebuilt(part) for part in events]

    check = AguiRun()
    # agui writes each slice's frames as one body; split it back into frames to compare.
    ours = [frame + b"\n\n" for part in slices for frame in check.play(part).split(b"\n\n")[:-1]]
    theirs = [frame for built in inputs for frame in official_encode(built)]
    floor = [frame for items in bare for frame in ceiling_encode(items)]
    test = TestPathRun()
    tested = [frame + b"\n\n" for part in slices for frame in test.play(part).split(b"\n\n")[:-1]]
    figures = HandleFigures(
        count=len(ours),
        mismatches=sum(a != b for a, b in zip(ours, theirs, strict=True))
        + sum(a != b for a, b in zip(floor, theirs, strict=True))
        + sum(a != b for a, b in zip(tested, theirs[1:], strict=True)),  # no RUN_STARTED
    )

    for turn in range(-1, rounds):  # the first round warms up and is dropped
        gc.collect()
        run, tests = AguiRun(), TestPathRun()
        steps: Steps = [
            [
                ("agui", partial(run.play, part)),
                ("official", partial(official_encode, built)),
                ("ceiling", partial(ceiling_encode, items)),
                ("test", partial(tests.play, part)),
            ]
            for part, built, items in zip(slices, inputs, bare, strict=True)
        ]
        if interleave == "run":
            totals = _whole_runs(steps, turn)
        else:
            totals = _slice_by_slice(steps, turn, order)
        if turn >= 0:
            figures.agui.append(totals["agui"])
            figures.official.append(totals["official"])
            figures.speedups.append(totals["official"] / totals["agui"])
            figures.test_path.append(totals["official"] / totals["test"])
            figures.ceiling.append(totals["official"] / totals["ceiling"])
    return figures


def _whole_runs(steps: Steps, turn: int) -> dict[str, float]:
    """Each side's whole run timed in its turn, the sides' order rotated by round."""
    count = len(steps[0])
    totals: dict[str, float] = {}
    for offset in range(count):
        index = (turn + offset) % count
        gc.collect()  # each side starts from the same collector
        began = clock()
        for sides in steps:
            sides[index][1]()
        totals[steps[0][index][0]] = clock() - began
    return totals


def _slice_by_slice(steps: Steps, turn: int, order: str) -> dict[str, float]:
    """Each slice timed on every side in turn, in an order rotated or shuffled per slice."""
    totals = dict.fromkeys((name for name, _ in steps[0]), 0.0)
    for index, sides in enumerate(steps):
        for name, side in _ordered(sides, turn, index, order):
            began = clock()
            side()
            totals[name] += clock() - began
    return totals


def test_path_split(rounds: int, size: int, interleave: str) -> dict[str, list[float]]:
    """The test path's three steps timed apart, slice by slice through a whole run.

    Per round, official time over each step's time: emitting through the handles, `drain()`
    building the models, `encode_sse` writing them (the drained list freed with it). The
    official SDK's run is timed whole before or after the test path's (`interleave="run"`,
    alternating by round), or slice by slice, right before each slice's three steps.
    """
    units = units_of(workload())
    slices = [units[start : start + size] for start in range(0, len(units), size)]
    probe = AguiRun()
    inputs = [official_inputs(probe.emitted(part)) for part in slices]
    ratios: dict[str, list[float]] = {"handles": [], "drain": [], "encode_sse": []}
    for turn in range(-1, rounds):
        totals = dict.fromkeys(("official", *ratios), 0.0)
        whole = interleave == "run"
        if whole and turn % 2:
            totals["official"] = _official_run(inputs)
        gc.collect()
        test = TestPathRun()
        for part, built in zip(slices, inputs, strict=True):
            if not whole:
                began = clock()
                official_encode(built)
                totals["official"] += clock() - began
            acted = clock()
            test.act(part)
            drained = clock()
            events = test.events.drain()
            encoded = clock()
            b"".join([encode_sse(event) for event in events])
            del events
            ended = clock()
            totals["handles"] += drained - acted
            totals["drain"] += encoded - drained
            totals["encode_sse"] += ended - encoded
        if whole and not turn % 2:
            totals["official"] = _official_run(inputs)
        if turn >= 0:
            for name, values in ratios.items():
                values.append(totals["official"] / totals[name])
    return ratios


def _official_run(inputs: list[Built]) -> float:
    """The official SDK's whole run, slice by slice, timed as one."""
    gc.collect()
    began = clock()
    for built in inputs:
        official_encode(built)
    return clock() - began


# -- the report ---------------------------------------------------------------------------------


def _ratio_line(label: str, ratios: list[float], width: int = 50) -> str:
    return (
        f"{label:<{width}} median {statistics.median(ratios):5.2f}x"
        f"   (min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
    )


def _verdict(met: bool) -> str:  # noqa: FBT001 - a plain predicate
    return "meets it" if met else "MISSES it"


def main() -> int:
    global clock  # noqa: PLW0603 - chosen once, from the command line
    parser = argparse.ArgumentParser(description="agui server core vs official SDK, as ratios")
    parser.add_argument("--rounds", type=int, default=21, help="handle rounds (default 21)")
    parser.add_argument("--slice", type=int, default=5, help="constructs per timed slice")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="what is timed")
    parser.add_argument(
        "--interleave",
        choices=("run", "slice"),
        default="run",
        help="each side's whole run in turn (default), or each slice on every side in turn",
    )
    parser.add_argument(
        "--order",
        choices=("shuffle", "rotate"),
        default="rotate",
        help="with --interleave slice: the sides' order per slice, rotated or a seeded shuffle",
    )
    parser.add_argument(
        "--split", action="store_true", help="also time the test path's three steps apart"
    )
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter

    print(
        f"Python {platform.python_version()}, pydantic {pydantic.VERSION}, {platform.machine()}; "
        f"{args.clock} time"
    )
    handles = handles_part(args.rounds, args.slice, args.order, args.interleave)
    how = (
        "each side's whole run in turn, order rotated by round"
        if args.interleave == "run"
        else f"interleaved slice by slice, order {args.order}d"
    )
    print(
        f"\nhandles -> SSE: {handles.count} events, verifier on; {args.rounds} rounds in slices "
        f"of {args.slice} constructs, {how}"
    )
    print(_ratio_line("speedup, official build+encode / agui handles", handles.speedups))
    met = statistics.median(handles.speedups) >= TARGET_HANDLES
    print(f"target: agui >= {TARGET_HANDLES}x faster than official: {_verdict(met)}")
    print(
        _ratio_line("test path: official / RunContext.new + drain + encode_sse", handles.test_path)
        + " (informational: no target)"
    )
    print(
        _ratio_line("ceiling: official / instances + encode_sse alone", handles.ceiling)
        + " (informational)"
    )
    print(
        f"byte-identical frames, agui, test path and ceiling vs official: {handles.count} events, "
        f"{handles.mismatches} mismatches (expected 0)"
    )
    print(
        "for scale only (machine-dependent), median us/event: "
        f"official {statistics.median(handles.official) / handles.count * 1e6:.2f}, "
        f"agui {statistics.median(handles.agui) / handles.count * 1e6:.2f}"
    )

    if args.split:
        print("\ntest path, its steps timed apart (official / step; the steps add as 1/x):")
        for name, values in test_path_split(args.rounds, args.slice, args.interleave).items():
            print(_ratio_line(f"  {name}", values))
    print("\npublish_state() on large states, strategy by strategy: bench/bench_state.py")
    print("\nthe differ alone vs jsonpatch.make_patch: bench/bench_patch.py")
    return 1 if handles.mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
