"""Type-strict JSON equality: the check under `agui.patch.json_equal`, shared with the aligner.

Python's `==` says `True == 1` and `1 == 1.0`; JSON does not. `same` settles what `==` leaves
open, so both the differ and the array aligner can skip it for plain scalars of one type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["SCALARS", "same"]

SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""The JSON scalar types: two values of one of these types that are `==` are the same."""
# bool first: it is a subclass of int, and JSON's true is not the number 1
_KINDS: Final[tuple[type, ...]] = (bool, int, float, str, dict, list)


def same(a: JsonValue, b: JsonValue) -> bool:
    """Whether `a == b` also holds with JSON's types: no `true` where `1` is, or `1` where `1.0`."""
    # Only called once a == b, which settles keys, lengths and values; what is left is that
    # no true stands where 1 is, or 1 where 1.0 is. The loops skip the call for plain scalars.
    kind = type(a)
    if kind is type(b) and kind in SCALARS:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        for key, value in a.items():
            other, kind = b[key], type(value)
            if value is not other and (kind is not type(other) or kind not in SCALARS):  # noqa: SIM102
                if not same(value, other):
                    return False
        return True
    if isinstance(a, list) and isinstance(b, list):
        for value, other in zip(a, b, strict=True):
            kind = type(value)
            if value is not other and (kind is not type(other) or kind not in SCALARS):  # noqa: SIM102
                if not same(value, other):
                    return False
        return True
    return _kind(a) is _kind(b)


def _kind(value: object) -> type:
    kind: type = type(value)
    return next((base for base in _KINDS if isinstance(value, base)), kind)
