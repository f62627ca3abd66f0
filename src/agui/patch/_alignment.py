"""Aligning two JSON arrays for `agui.patch.diff`: which runs of items stay, which change.

The differ needs only the hunks, `(i1, i2, j1, j2)` spans of `old[i1:i2]` that become
`new[j1:j2]`; how they are found (Myers' greedy diff, with a patience diff past a work budget)
is this module's concern, described in `agui.patch`'s docstring.

Following a run of equal items (a "snake") is where the time goes on long arrays that mostly did not
change. Once a snake's first item matches, the rest of the run is measured in C: slices of doubling
length are compared with `==`, then the slice that differs is halved down to the first item that
does, so a run of n items costs about log(n) slice comparisons rather than n Python steps. A strict
alignment then confirms the run with `agui.patch._equality.equal_exactly` (`==` would pair `1` with
`true`), and steps item by item with `agui.patch._equality.same` where that cannot tell.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Final, NamedTuple, TypeAlias

from agui.patch._equality import equal_exactly, same

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["Hunk", "alignment"]

Hunk: TypeAlias = tuple[int, int, int, int]
"""`(i1, i2, j1, j2)`: the items `old[i1:i2]` become `new[j1:j2]`."""

_Arr: TypeAlias = "list[JsonValue]"

_WORK_PER_ITEM: Final = 4
_WORK_MIN: Final = 4_096


def alignment(old: _Arr, new: _Arr, *, strict: bool = True) -> list[Hunk]:
    """The hunks that turn `old` into `new`, in order; items between them are unchanged.

    `strict=False` pairs items that are `==` without asking whether they are the same JSON.
    """
    ends = (len(old), len(new))
    start = _snake(old, new, 0, 0, ends, strict=strict)
    tail = _Run(old, new, len(old) - 1, len(new) - 1, -1).measure(min(ends) - start, strict=strict)
    old_end, new_end = ends[0] - tail, ends[1] - tail
    hunks = [(start, old_end, start, new_end)]
    if start < old_end and start < new_end:
        ends = (old_end, new_end)
        aligned = _myers(old, new, start, ends, strict=strict) or _patience(
            old, new, start, ends, strict=strict
        )
        # An alignment can take more operations than pairing every item by position
        if sum(max(i2 - i1, j2 - j1) for i1, i2, j1, j2 in aligned) <= max(ends) - start:
            hunks = aligned
    return hunks


def _equal(a: JsonValue, b: JsonValue, *, strict: bool) -> bool:
    return a is b or (a == b and (not strict or same(a, b)))


def _snake(old: _Arr, new: _Arr, x: int, y: int, ends: tuple[int, int], *, strict: bool) -> int:
    """Where the run of equal items from `old[x]` and `new[y]` ends, in `old`."""
    return x + _Run(old, new, x, y, 1).measure(min(ends[0] - x, ends[1] - y), strict=strict)


class _Run(NamedTuple):
    """Items of `old` and `new` taken in step from `old[x]` and `new[y]`, forwards or back."""

    old: _Arr
    new: _Arr
    x: int
    y: int
    way: int  # 1 or -1

    def items(self, lo: int, hi: int) -> tuple[_Arr, _Arr]:
        """The items `lo` to `hi` (exclusive) steps away, both in the arrays' own order."""
        if self.way > 0:
            return self.old[self.x + lo : self.x + hi], self.new[self.y + lo : self.y + hi]
        old_end, new_end = self.x + 1 - lo, self.y + 1 - lo
        return self.old[old_end - hi + lo : old_end], self.new[new_end - hi + lo : new_end]

    def measure(self, limit: int, *, strict: bool) -> int:
        """How many items in step are equal, at most `limit`."""
        if limit <= 0 or not _equal(self.old[self.x], self.new[self.y], strict=strict):
            return 0
        run, step = 1, 1
        while run < limit:
            end = min(run + step, limit)
            old, new = self.items(run, end)
            if old != new:
                while end - run > 1:  # the first item that differs is in there: halve it
                    middle = (run + end) // 2
                    old, new = self.items(run, middle)
                    run, end = (middle, end) if old == new else (run, middle)
                break
            run, step = end, step * 2
        if not strict or run == 1:
            return run
        old, new = self.items(1, run)
        if equal_exactly(old, new):
            return run
        # == cannot tell 1 from true: find the first pair that is not the same JSON
        pairs = zip(old[:: self.way], new[:: self.way], strict=True)
        return next((at for at, (a, b) in enumerate(pairs, 1) if not same(a, b)), run)


def _myers(
    old: _Arr, new: _Arr, lo: int, ends: tuple[int, int], *, strict: bool
) -> list[Hunk] | None:
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
            furthest[k] = end = _snake(old, new, x, x - k, ends, strict=strict)
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


def _patience(old: _Arr, new: _Arr, lo: int, ends: tuple[int, int], *, strict: bool) -> list[Hunk]:
    # For many edits: items found once in each list (by repr, then confirmed strictly) anchor
    # the alignment, and the longest chain of anchors in the same order in both splits the rest
    # into hunks. O(N log N), where Myers' diff would be quadratic.
    once_old, once_new = _once(old, lo, ends[0]), _once(new, lo, ends[1])
    anchors = [
        (i, j)
        for key, j in once_new.items()
        if j >= 0
        and once_old.get(key, -1) >= 0
        and _equal(old[i := once_old[key]], new[j], strict=strict)
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
