"""Benchmark: the generic bridge's CPU per event, as a ratio to a hand-written agui agent.

Run: `.venv/bin/python bench/bench_bridges.py [--rounds 11]` (with `PYTHONPATH=src` if agui is
not installed).

Workload: `workload.py`'s run without its 50 `STATE_DELTA` events (a bridge applies and
republishes foreign state, a different job from relaying; `bench_state.py` measures publishing),
so 15,002 events: `RUN_STARTED`, 200 text messages of 50 deltas, 200 tool calls of 20 argument
fragments with their results, `RUN_FINISHED`. Each contender is one whole run in a fresh
context (`RunContext.new`: the verifier live, the events queued), timed whole:

- agent, the reference: a hand-written agui agent that builds each event (its agui model, from
  the spec's fields) and sends it with `ctx.emit`, awaiting `ctx.writable()` after each, as a
  paced agent does; its run boundaries are the driver's, as any agent's are.
- bridge, the target: `from_events` over an adapter that builds each event as an `ag_ui.core`
  object, as a framework's adapter does; the bridge reads it, relays it by the rules, emits it
  and awaits `ctx.writable()`.
- emit, prebuilt: the reference without building its events.
- bridge, prebuilt / bridge, dicts: the bridge over prebuilt `ag_ui.core` objects, or wire
  dicts: its own cost, without the adapter's.

**Method.** One process and one event loop. Each contender runs once to warm up; a round then
runs each once, in an order that rotates from round to round, with `gc.collect()` before each
run and the collector on while timing. Times are the benchmark thread's CPU time
(`time.thread_time`). **Report.** For each round, the ratio of a contender's time to the
reference's; printed as the median over rounds with its min-max, and microseconds per event
for scale. **Target:** bridge within 1.5x of the agent.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import pydantic
from pydantic import JsonValue

sys.path.insert(0, str(Path(__file__).parent))

from workload import (
    agui_class,
    build_agui,
    build_official,
    official_class,
    wire_dicts,
    workload,
)

from agui import RunAgentInput, RunContext
from agui.bridges import from_events
from agui.events import Event

TARGET = 1.5
"""The bridge may cost at most this many times `ctx.emit` of the same events, per event."""

clock = time.thread_time
Contender = Callable[[RunContext[JsonValue]], Awaitable[object]]


def _context() -> RunContext[JsonValue]:
    return RunContext.new(RunAgentInput(thread_id="thread-1", run_id="run-1"))[0]


def contenders() -> tuple[dict[str, Contender], int]:
    """Each contender's run, and the number of events it relays."""
    specs = [spec for spec in workload() if spec[0] != "STATE_DELTA"]
    inner = specs[1:-1]  # an agui agent leaves its run boundaries to the driver
    built: list[Event] = build_agui(inner)
    objects: Sequence[object] = build_official(specs)
    dicts: Sequence[object] = wire_dicts(specs)

    async def agent(ctx: RunContext[JsonValue]) -> None:
        for kind, fields in inner:
            ctx.emit(agui_class(kind)(**fields))
            await ctx.writable()

    async def emitting(ctx: RunContext[JsonValue]) -> None:
        for event in built:
            ctx.emit(event)
            await ctx.writable()

    async def adapter(_input: object) -> AsyncIterator[object]:
        for kind, fields in specs:
            yield official_class(kind)(**fields)

    def prebuilt(items: Sequence[object]) -> Callable[[object], AsyncIterator[object]]:
        async def stream(_input: object) -> AsyncIterator[object]:
            for item in items:
                yield item

        return stream

    runs: dict[str, Contender] = {
        "agent": agent,
        "bridge": from_events(adapter).run,
        "emit, prebuilt": emitting,
        "bridge, prebuilt": from_events(prebuilt(objects)).run,
        "bridge, dicts": from_events(prebuilt(dicts)).run,
    }
    return runs, len(specs)


async def timed(run: Contender) -> float:
    ctx = _context()
    gc.collect()
    start = clock()
    await run(ctx)
    elapsed = clock() - start
    ctx.receiver.drain()
    return elapsed


async def measure(rounds: int) -> dict[str, list[float]]:
    runs, _ = contenders()
    names = list(runs)
    for name in names:
        await timed(runs[name])  # warm up
    times: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        order = names[index % len(names) :] + names[: index % len(names)]
        for name in order:
            times[name].append(await timed(runs[name]))
    return times


def report(times: dict[str, list[float]], events: int) -> bool:
    reference = times["agent"]
    print(f"{'contender':<18} {'x agent (median, min-max)':>28} {'us/event':>10}")
    for name, values in times.items():
        ratios = [value / base for value, base in zip(values, reference, strict=True)]
        spread = f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        per_event = statistics.median(values) / events * 1e6
        print(f"{name:<18} {spread:>28} {per_event:>10.2f}")
    bridged = [b / e for b, e in zip(times["bridge"], reference, strict=True)]
    met = statistics.median(bridged) <= TARGET
    print(f"target: bridge within {TARGET}x of the agent: {'met' if met else 'MISSED'}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description="the generic bridge's CPU per event")
    parser.add_argument("--rounds", type=int, default=11)
    rounds = parser.parse_args().rounds
    print(
        f"Python {platform.python_version()}, pydantic {pydantic.VERSION}, "
        f"{rounds} rounds, CPU time"
    )
    _, events = contenders()
    report(asyncio.run(measure(rounds)), events)


if __name__ == "__main__":
    main()
