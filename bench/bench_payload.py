"""Payload check benchmark: what refusing an unserializable CUSTOM or RAW payload at emit costs.

`ctx.emit` checks that a `CustomEvent.value` (or a `RawEvent.event`) serializes, so that a lone
surrogate is refused where the agent wrote it instead of breaking the stream at the transport.
The check is one `pydantic_core.to_json` of the payload. Measured in one process, per round:

- `emit`: `ctx.emit(CustomEvent(...))` on a `RunContext.new` harness, check included, then
  the queue taken as it is and framed by the emit core's writer (what the endpoint does with it);
- `check`: the check alone, `to_json(value)`, on the same payloads.

The figure is `check / emit`: the share of a CUSTOM event's path spent on the check. Payloads:
a small one (`{"progress": 0.5, "label": "..."}`) and a 4 KiB one (a list of 64 small dicts).
The report gives the median and min-max over rounds. Times are the thread's CPU time.

Run: `.venv/bin/python bench/bench_payload.py [--rounds 11] [--events 2000]`
"""

from __future__ import annotations

import argparse
import statistics
import time

from pydantic import JsonValue
from pydantic_core import to_json

from agui import RunAgentInput, RunContext
from agui._emit.frames import encode_items
from agui._emit.receiver import run_receiver
from agui.events import CustomEvent

SMALL: JsonValue = {"progress": 0.5, "label": "searching the catalogue"}
LARGE: JsonValue = [{"id": i, "title": f"task {i}", "done": i % 2 == 0} for i in range(64)]


def _emit(value: JsonValue, events: int) -> float:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    start = time.thread_time()
    for _ in range(events):
        ctx.emit(CustomEvent(name="progress", value=value))
    encode_items(run_receiver(receiver).items())
    return time.thread_time() - start


def _check(value: JsonValue, events: int) -> float:
    start = time.thread_time()
    for _ in range(events):
        to_json(value)
    return time.thread_time() - start


def main() -> None:
    """Print the check's share of a CUSTOM event's emit-to-bytes path, per payload."""
    parser = argparse.ArgumentParser(description="the payload check's share of emit")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--events", type=int, default=2000)
    options = parser.parse_args()
    for label, value in (("small", SMALL), ("4 KiB", LARGE)):
        ratios: list[float] = []
        per_event: list[float] = []
        for _ in range(options.rounds):
            emitted = _emit(value, options.events)
            checked = _check(value, options.events)
            ratios.append(checked / emitted)
            per_event.append(checked / options.events * 1e6)
        print(
            f"{label:>6}: check / emit {statistics.median(ratios):.3f} "
            f"({min(ratios):.3f}-{max(ratios):.3f}); "
            f"check {statistics.median(per_event):.2f} us per event"
        )


if __name__ == "__main__":
    main()
