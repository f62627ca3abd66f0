"""Aligning two JSON arrays for `agui.patch.diff`: which runs of items stay, which change.

The differ needs only the hunks, `(i1, i2, j1, j2)` spans of `old[i1:i2]` that become
`new[j1:j2]`; how they are found (Myers' greedy diff, with a patience diff past a work budget)
is this module's concern, described in `agui.patch`'s docstring.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Final, TypeAlias

from agui._equality import same

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["Hunk", "alignment"]

Hunk: TypeAlias = tuple[int, int, int, int]
"""`(i1, i2, j1, j2)`: the items `old[i1:i2]` become `new[j1:j2]`."""

_Arr: TypeAlias = "list[JsonValue]"

_WORK_PER_ITEM: Final = 4
_WORK_MIN: Final = 4_096


def alignment(old: _Arr, new: _Arr) -> list[Hunk]:
    """The hunks that turn `old` into `new`, in order; items between them are unchanged."""
    start = _snake(old, new, 0, 0, (len(old), len(new)))
    old_end, new_end = len(old), len(new)
    while old_end > start and new_end > start and _equal(old[old_end - 1], new[new_end - 1]):
        old_end -= 1
        new_end -= 1
    hunks = [(start, old_end, start, new_end)]
    if start < old_end and start < new_end:
        ends = (old_end, new_end)
        aligned = _myers(old, new, start, ends) or _patience(old, new, start, ends)
        # An alignment can take more operations than pairing every item by position
        if sum(max(i2 - i1, j2 - j1) for i1, i2, j1, j2 in aligned) <= max(ends) - start:
            hunks = aligned
    return hunks


def _equal(a: JsonValue, b: JsonValue) -> bool:
    return a is b or (a == b and same(a, b))


def _snake(old: _Arr, new: _Arr, x: int, y: int, ends: tuple[int, int]) -> int:
    x_end, y_end = ends
    while x < x_end and y < y_end and ((a := old[x]) is (b := new[y]) or (a == b and same(a, b))):
        x += 1
        y += 1
    return x


def _myers(old: _Arr, new: _Arr, lo: int, ends: tuple[int, int]) -> list[Hunk] | None:
    # Myers' forward pass: furthest[k] is the furthest x reached on diagonal k = x - y with
    # d edits so far; a copy per round lets _hunks walk the path back.
    furthest, d = {1: lo}, 0
    trace: list[dict[int, int]] = []
    budget = _WORK_PER_ITEM * (ends[0] + ends[1] - 2 * lo) + _WORK_MIN
    while budget >= 0:
        trace.append(furthest.copy())
        budget -= d + 1
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and furthest[k - 1] < furthest[k + 1]):
                x = furthest[k + 1]
            else:
                x = furthest[k - 1] + 1
            furthest[k] = end = _snake(old, new, x, x - k, ends)
            budget -= end - x
            if end >= ends[0] and end - k >= ends[1]:
                return _hunks(trace, end, end - k, lo, ends)
        d += 1
    return None


def _hunks(
    trace: list[dict[int, int]], x: int, y: int, lo: int, ends: tuple[int, int]
) -> list[Hunk]:
    runs: list[tuple[int, int, int]] = []  # (x, y, length) of each run of equal items, last first
    for d in range(len(trace) - 1, 0, -1):
        furthest, k = trace[d], x - y
        down = k == -d or (k != d and furthest[k - 1] < furthest[k + 1])
        prev_k = k + 1 if down else k - 1
        prev_x = furthest[prev_k]
        run_x = prev_x if down else prev_x + 1
        runs.append((run_x, run_x - k, x - run_x))
        x, y = prev_x, prev_x - prev_k
    runs.append((lo, lo, x - lo))
    # The hunks are the gaps between runs; an empty one, before a first run at lo, is harmless
    hunks: list[Hunk] = []
    x = y = lo
    for run_x, run_y, length in reversed(runs):
        if length:
            hunks.append((x, run_x, y, run_y))
            x, y = run_x + length, run_y + length
    hunks.append((x, ends[0], y, ends[1]))
    return hunks


def _patience(old: _Arr, new: _Arr, lo: int, ends: tuple[int, int]) -> list[Hunk]:
    # For many edits: items found once in each list (by repr, then confirmed strictly) anchor
    # the alignment, and the longest chain of anchors in the same order in both splits the rest
    # into hunks. O(N log N), where Myers' diff would be quadratic.
    once_old, once_new = _once(old, lo, ends[0]), _once(new, lo, ends[1])
    anchors = [
        (i, j)
        for key, j in once_new.items()
        if j >= 0 and once_old.get(key, -1) >= 0 and _equal(old[i := once_old[key]], new[j])
    ]
    hunks: list[Hunk] = []
    x = y = lo
    for i, j in _increasing(anchors):
        if i > x or j > y:
            hunks.append((x, i, y, j))
        x, y = i + 1, j + 1
    hunks.append((x, ends[0], y, ends[1]))
    return hunks


def _once(items: _Arr, lo: int, hi: int) -> dict[str, int]:
    """The index of each item by its repr, or -1 for an item found more than once."""
    index: dict[str, int] = {}
    for at in range(lo, hi):
        key = repr(items[at])
        index[key] = -1 if key in index else at
    return index


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest chain of `pairs` (sorted by their second item) rising in their first."""
    tails: list[int] = []  # tails[n]: the least first item that ends a chain of n + 1
    last: list[int] = []  # last[n]: the position in pairs of that chain's last pair
    before: list[int] = []  # before[p]: the position of the pair before pairs[p] in its chain
    for position, (i, _) in enumerate(pairs):
        n = bisect.bisect_left(tails, i)
        tails[n : n + 1], last[n : n + 1] = [i], [position]
        before.append(last[n - 1] if n else -1)
    chain: list[tuple[int, int]] = []
    at = last[-1] if last else -1
    while at >= 0:
        chain.append(pairs[at])
        at = before[at]
    return chain[::-1]
