"""Benchmark: what the ordering verifier holds per run, and what it costs per event.

Run: `.venv/bin/python bench/bench_verify.py` (with `PYTHONPATH=src` if agui is not installed).

Memory: `N` verifiers are created and each is fed the start of a token stream (`RUN_STARTED`,
a text message's start and a few deltas), as many concurrent streams hold them; tracemalloc
counts what the `N` verifiers hold, per verifier. CPU: one verifier observes whole token
streams (a run of a message of `DELTAS` deltas and a tool call of as many argument chunks);
the report gives the CPU time per event as a ratio to the same events' `model_dump()`, measured
interleaved in the same rounds, since an absolute time says more about the machine than the
code. Medians and min-max over rounds.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence

from agui.events import (
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agui.verify import Verifier

DELTAS = 100
ROUNDS = 15
STREAMS = 2_000


def stream(run: int) -> list[Event]:
    """One run: a message of `DELTAS` deltas and a tool call of as many argument chunks."""
    message, call = f"m{run}", f"c{run}"
    return [
        RunStartedEvent(thread_id="t", run_id=f"r{run}"),
        TextMessageStartEvent(message_id=message),
        *(TextMessageContentEvent(message_id=message, delta="tok ") for _ in range(DELTAS)),
        TextMessageEndEvent(message_id=message),
        ToolCallStartEvent(tool_call_id=call, tool_call_name="search"),
        *(ToolCallArgsEvent(tool_call_id=call, delta='{"q"') for _ in range(DELTAS)),
        ToolCallEndEvent(tool_call_id=call),
        RunFinishedEvent(thread_id="t", run_id=f"r{run}"),
    ]


def held_per_verifier(streams: int) -> float:
    """Bytes that each of `streams` verifiers holds, mid-message in a token stream."""
    opening = stream(0)[:5]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    verifiers: list[Verifier] = []
    for _ in range(streams):
        verifier = Verifier()
        for event in opening:
            verifier.observe(event)
        verifiers.append(verifier)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    held = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return held / len(verifiers)


def _timed(work: Callable[[], None]) -> float:
    # CPU time of this process: on a shared machine, wall time counts the other processes too.
    start = time.process_time()
    work()
    return time.process_time() - start


def cpu_ratios(rounds: int) -> list[float]:
    """Per round: the verifier's time over a stream, over the same stream's `model_dump()`."""
    runs = [stream(run) for run in range(20)]
    events: Sequence[Event] = [event for run in runs for event in run]

    def verify() -> None:
        verifier = Verifier()
        for event in events:
            verifier.observe(event)

    def dump() -> None:
        for event in events:
            event.model_dump()

    ratios: list[float] = []
    for index in range(rounds):
        first, second = (verify, dump) if index % 2 else (dump, verify)
        times = {first: _timed(first), second: _timed(second)}
        ratios.append(times[verify] / times[dump])
    return ratios


def main() -> None:
    """Print the held bytes per verifier and the CPU ratio."""
    parser = argparse.ArgumentParser(description="The verifier per run: memory and CPU.")
    parser.add_argument("--streams", type=int, default=STREAMS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    held = held_per_verifier(args.streams)
    print(f"memory: {held / 1024:.2f} KiB held per verifier ({args.streams} streams)")
    ratios = cpu_ratios(args.rounds)
    print(
        f"cpu: observe / model_dump per event {statistics.median(ratios):.3f}x "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {args.rounds} rounds)"
    )


if __name__ == "__main__":
    main()
