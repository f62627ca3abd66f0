"""The walk behind `agui.patch.diff`: where two JSON documents differ, as RFC 6902 operations.

Objects are walked member by member and arrays aligned (`agui.patch._alignment`), so each change is
one `add`, `remove` or `replace` where it happened; `agui.patch` describes the result.

An object's members are looked up once each (`dict.get`), and a member that is the very object
on both sides is skipped before any comparison: documents that share their unchanged parts, as a
state and its last published copy do, cost one lookup per member. Added keys are searched for
from the end of the new object, where `dict` puts them, and only as many as there are.

A strict `Differ` is `agui.patch.diff`: equal means the same JSON, so `1` is not `true` or
`1.0`. A loose one trusts `==`, which misses exactly the changes of JSON type that Python calls
equal: `agui.state` uses it and proves the result another way (the patched document must
serialize to the state's own bytes), falling back to the strict diff when it does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import filterfalse, islice
from typing import TYPE_CHECKING, Final, TypeAlias, cast

from agui.patch._alignment import Hunk, alignment
from agui.patch._equality import SCALARS, same

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["Differ", "copy_json", "dumps", "escape"]

_Obj: TypeAlias = "dict[str, JsonValue]"
_Arr: TypeAlias = "list[JsonValue]"
_Ops: TypeAlias = "list[dict[str, JsonValue]]"

_REPLACE_SIZE: Final = len('{"op":"replace","path":"","value":}')
_MISSING: Final = cast("JsonValue", object())
"""What `dict.get` gives for a member the other object lacks; equal to nothing else."""


def escape(token: str) -> str:
    """Escape an object key as one JSON Pointer token (RFC 6901: `~` first, then `/`)."""
    return token.replace("~", "~0").replace("/", "~1")


def copy_json(value: JsonValue) -> JsonValue:
    """A copy of a JSON document: new containers, the same (immutable) scalars."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def dumps(value: object) -> str:
    """Compact JSON text, with `repr` for anything JSON has no form for (messages only)."""
    return json.dumps(value, ensure_ascii=False, default=repr, separators=(",", ":"))


class Differ:
    """One diff under way: the operations found so far, and how equality is judged.

    Examples:
        >>> differ = Differ(strict=True)
        >>> differ.value("", {"a": [1, 2]}, {"a": [1, True]})
        >>> differ.ops
        [{'op': 'replace', 'path': '/a/1', 'value': True}]
    """

    def __init__(self, *, strict: bool) -> None:
        self.strict = strict
        """Whether equal means the same JSON (`1` is not `true`), or just `==`."""
        self.ops: _Ops = []

    def equal(self, a: JsonValue, b: JsonValue) -> bool:
        """Whether the walk may skip `a` against `b`."""
        if a is b:
            return True
        if not self.strict:
            return a == b
        return a == b and same(a, b)

    def value(self, path: str, old: JsonValue, new: JsonValue) -> None:
        """Add the operations that turn `old`, found at `path`, into `new`."""
        if isinstance(old, dict) and isinstance(new, dict):
            self._object(path, old, new)
        elif isinstance(old, list) and isinstance(new, list):
            for hunk in alignment(old, new, strict=self.strict):
                self._emit(path, old, new, hunk)
        elif not self.equal(old, new):
            self.ops.append({"op": "replace", "path": path, "value": copy_json(new)})

    def _object(self, path: str, old: _Obj, new: _Obj) -> None:
        kept = self._members(path, old.items(), new)
        for key in _added(old, new, len(new) - kept):
            value = copy_json(new[key])
            self.ops.append({"op": "add", "path": f"{path}/{escape(key)}", "value": value})

    def _members(self, path: str, members: Iterable[tuple[str, JsonValue]], new: _Obj) -> int:
        """Diff these members of an object with `new`; how many of them `new` has."""
        strict, get, kept = self.strict, new.get, 0
        for key, value in members:
            other = get(key, _MISSING)
            # equal() inlined, as this runs once per member of every object compared
            if value is other:
                kept += 1
            elif other is _MISSING:
                self.ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
            else:
                kept += 1
                kind = type(value)
                if value != other or (
                    strict
                    and not (kind is type(other) and kind in SCALARS)
                    and not same(value, other)
                ):
                    self.value(f"{path}/{escape(key)}", value, other)
        return kept

    def _emit(self, path: str, old: _Arr, new: _Arr, hunk: Hunk) -> None:
        # Earlier hunks are applied by now, so old[i1] sits at index j1 of the patched array.
        i1, i2, j1, j2 = hunk
        paired = min(i2 - i1, j2 - j1)
        for offset in range(paired):
            at, item = f"{path}/{j1 + offset}", new[j1 + offset]
            inside = Differ(strict=self.strict)
            inside.value(at, old[i1 + offset], item)
            ops = inside.ops
            # Paired items may be unrelated: replace one whole when that is shorter than its diff
            if len(ops) > 1 and len(dumps(ops)) > len(dumps(item)) + len(at) + _REPLACE_SIZE:
                ops = [{"op": "replace", "path": at, "value": copy_json(item)}]
            self.ops.extend(ops)
        # The highest index first, so each removal leaves the indices of the next ones valid
        for index in range(j1 + i2 - i1 - 1, j1 + paired - 1, -1):
            self.ops.append({"op": "remove", "path": f"{path}/{index}"})
        for index in range(j1 + paired, j2):
            self.ops.append(
                {"op": "add", "path": f"{path}/{index}", "value": copy_json(new[index])}
            )


def _added(old: _Obj, new: _Obj, count: int) -> list[str]:
    """The `count` keys of `new` that `old` lacks, in order: new keys are mostly the last ones."""
    return list(islice(filterfalse(old.__contains__, reversed(new)), count))[::-1]
