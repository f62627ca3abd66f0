"""Encode benchmark: build every event of one run and frame it as SSE bytes.

Three contenders encode the canonical workload (`workload.py`, about 15,000 events):

- official: build `ag_ui.core` models, `ag_ui.encoder.EventEncoder().encode(event)`, to bytes;
- agui: build agui models, `agui.sse.encode_sse(event)`;
- floor: `json.dumps(d, separators=(",", ":"), ensure_ascii=False)` of prebuilt wire dicts,
  framed as SSE bytes: no models, no validation; what a hand-rolled encoder costs.

All three run in one process, interleaved. A round encodes the whole workload once per
contender, slice by slice (`--slice` events at a time): for each slice the three contenders run
back to back, in an order that rotates from slice to slice. Each timed stretch is a few
milliseconds long, so a noisy neighbour or a frequency change lands on all three alike. A
round's figure is the ratio of two contenders' totals over that round; the report gives the
median over the rounds with its min-max, never bare times as the headline. The script also
checks that agui's frames are byte-identical to the official encoder's over the whole workload,
and exits non-zero if any differ.

Run: `.venv/bin/python bench/bench_encode.py [--rounds 11] [--slice 250] [--split]`
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pydantic
from ag_ui.core import BaseEvent
from ag_ui.encoder import EventEncoder
from workload import EventSpec, agui_class, official_class, wire_dicts, workload

from agui.events import Event
from agui.sse import encode_sse

TARGET_SPEEDUP = 2.5
"""agui should encode at least this many times faster than the official SDK."""

M = TypeVar("M")
Built = list[tuple[type[M], dict[str, Any]]]
"""Each event's model class, looked up before timing, and its keyword arguments."""


def resolve(specs: list[EventSpec], sdk: Callable[[str], type[M]]) -> Built[M]:
    """Look each event type's class up once, so the timed loops only build and encode."""
    return [(sdk(kind), fields) for kind, fields in specs]


def official_encode(items: Built[BaseEvent]) -> list[bytes]:
    """Build official models and frame them with the official encoder."""
    encode = EventEncoder().encode
    return [encode(cls(**fields)).encode() for cls, fields in items]


def agui_encode(items: Built[Event]) -> list[bytes]:
    """Build agui models and frame them with `encode_sse`."""
    return [encode_sse(cls(**fields)) for cls, fields in items]


def floor_encode(dicts: list[dict[str, Any]]) -> list[bytes]:
    """Frame prebuilt wire dicts with `json.dumps`: the reference floor."""
    dumps = json.dumps
    return [
        b"data: " + dumps(d, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"
        for d in dicts
    ]


Contender = Callable[[int, int], list[bytes]]
"""Runs one contender over the slice `[start, stop)` of the workload."""


def _contenders(specs: list[EventSpec]) -> dict[str, Contender]:
    """The three contenders, each as `run(start, stop)` over a slice of the workload."""
    official_items = resolve(specs, official_class)
    agui_items = resolve(specs, agui_class)
    dicts = wire_dicts(specs)
    return {
        "official": lambda start, stop: official_encode(official_items[start:stop]),
        "agui": lambda start, stop: agui_encode(agui_items[start:stop]),
        "floor": lambda start, stop: floor_encode(dicts[start:stop]),
    }


def _split_contenders(specs: list[EventSpec]) -> dict[str, Callable[[int, int], object]]:
    """Building alone, and encoding prebuilt models alone, for each SDK."""
    official_items = resolve(specs, official_class)
    agui_items = resolve(specs, agui_class)
    official_models = [cls(**fields) for cls, fields in official_items]
    agui_models = [cls(**fields) for cls, fields in agui_items]
    encode = EventEncoder().encode

    def official_frames(start: int, stop: int) -> list[bytes]:
        return [encode(m).encode() for m in official_models[start:stop]]

    def agui_frames(start: int, stop: int) -> list[bytes]:
        return [encode_sse(m) for m in agui_models[start:stop]]

    return {
        "official build": lambda start, stop: [c(**kw) for c, kw in official_items[start:stop]],
        "agui build": lambda start, stop: [c(**kw) for c, kw in agui_items[start:stop]],
        "official encode": official_frames,
        "agui encode": agui_frames,
    }


def interleave(
    contenders: dict[str, Callable[[int, int], object]], count: int, rounds: int, size: int
) -> dict[str, list[float]]:
    """Seconds per contender per round, interleaved slice by slice in a rotating order."""
    names = list(contenders)
    for run in contenders.values():  # warm-up: schema caches, allocator, branch predictors
        run(0, count)
    slices = [(start, min(start + size, count)) for start in range(0, count, size)]
    times: dict[str, list[float]] = {name: [] for name in names}
    turn = 0
    for _ in range(rounds):
        gc.collect()
        totals = dict.fromkeys(names, 0.0)
        for start, stop in slices:
            turn += 1
            shift = turn % len(names)
            for name in names[shift:] + names[:shift]:
                began = time.perf_counter()
                contenders[name](start, stop)
                totals[name] += time.perf_counter() - began
        for name in names:
            times[name].append(totals[name])
    return times


def identity_report(specs: list[EventSpec]) -> tuple[int, int]:
    """(agui frames differing from the official ones, floor frames differing from them)."""
    contenders = _contenders(specs)
    official = contenders["official"](0, len(specs))
    agui = contenders["agui"](0, len(specs))
    floor = contenders["floor"](0, len(specs))
    return (
        sum(a != o for a, o in zip(agui, official, strict=True)),
        sum(f != o for f, o in zip(floor, official, strict=True)),
    )


def _ratio_line(label: str, ratios: list[float]) -> str:
    return (
        f"{label:<36} median {statistics.median(ratios):5.2f}x"
        f"   (min {min(ratios):.2f}x, max {max(ratios):.2f}x)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="agui vs official SSE encoding, as ratios")
    parser.add_argument("--rounds", type=int, default=11, help="rounds (default 11)")
    parser.add_argument("--slice", type=int, default=250, help="events per timed slice")
    parser.add_argument(
        "--split", action="store_true", help="also time building and encoding separately"
    )
    args = parser.parse_args()

    specs = workload()
    count = len(specs)
    agui_mismatches, floor_mismatches = identity_report(specs)
    times = interleave(dict(_contenders(specs)), count, args.rounds, args.slice)
    rounds = list(zip(times["official"], times["agui"], times["floor"], strict=True))
    speedups = [official / agui for official, agui, _ in rounds]
    agui_floor = [agui / floor for _, agui, floor in rounds]
    official_floor = [official / floor for official, _, floor in rounds]

    print(
        f"encode workload: {count} events, {args.rounds} rounds interleaved by slices of "
        f"{args.slice}; Python {platform.python_version()}, pydantic {pydantic.VERSION}, "
        f"{platform.machine()}"
    )
    print(_ratio_line("speedup, official time / agui time", speedups))
    print(_ratio_line("agui time / json.dumps floor", agui_floor))
    print(_ratio_line("official time / json.dumps floor", official_floor))
    verdict = "meets" if statistics.median(speedups) >= TARGET_SPEEDUP else "MISSES"
    print(f"target: agui >= {TARGET_SPEEDUP}x faster than official: {verdict} it")
    print(
        f"byte-identical frames, agui vs official: {count - agui_mismatches}/{count} "
        f"({agui_mismatches} mismatches; expected 0)"
    )
    print(
        f"byte-identical frames, floor vs official: {count - floor_mismatches}/{count} "
        "(informational: the floor dicts share the wire key order)"
    )
    scale = ", ".join(
        f"{name} {statistics.median(values) / count * 1e6:.2f}" for name, values in times.items()
    )
    print(f"for scale only (machine-dependent), median us/event: {scale}")
    if args.split:
        parts = interleave(_split_contenders(specs), count, args.rounds, args.slice)
        for stage in ("build", "encode"):
            ratios = [
                o / a
                for o, a in zip(parts[f"official {stage}"], parts[f"agui {stage}"], strict=True)
            ]
            print(_ratio_line(f"{stage} only, official / agui", ratios))
    return 1 if agui_mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
