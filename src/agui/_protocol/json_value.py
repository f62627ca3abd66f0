"""What a JSON value is, checked all the way down, with where it stops being one.

A value an agent hands over as JSON (a run's result, a state to fold) must be what a client's
`JSON.parse` could have produced: dicts with text keys, lists, text, numbers, booleans and null.
pydantic's own `JsonValue` check says so too, but it names the place by the union's arms
(`/dict/k`), not by a JSON Pointer, and it lets NaN through. One walk, used wherever agui
checks such a value, gives the pointer (RFC 6901) of the first member that is not JSON.
"""

from __future__ import annotations

import math
from typing import cast

from agui._util.wording import with_article
from agui.patch import escape_pointer_token

__all__ = ["json_problem"]


def json_problem(value: object) -> str | None:
    """Where and why `value` is not JSON, or `None` when it is (finite numbers only).

    Examples:
        >>> json_problem({"days": [1, 2.5], "city": "Oslo", "ok": True, "note": None}) is None
        True
        >>> json_problem({"tags": {"a"}})
        '/tags is a set'
        >>> json_problem([1, float("nan")])
        '/1 is NaN or an infinity, which JSON has no value for'
        >>> json_problem({1: "x"})
        'the root has the key 1, which is not text'
    """
    pending: list[tuple[str, object]] = [("", value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, dict):
            members: list[tuple[str, object]] = []
            for key, member in cast("dict[object, object]", item).items():
                if type(key) is not str:
                    return f"{_place(where)} has the key {key!r}, which is not text"
                members.append((f"{where}/{escape_pointer_token(key)}", member))
            pending += reversed(members)  # popped from the end: the first member first
        elif isinstance(item, list):
            listed = cast("list[object]", item)
            pending += ((f"{where}/{i}", listed[i]) for i in reversed(range(len(listed))))
        elif isinstance(item, float) and not math.isfinite(item):
            return f"{_place(where)} is NaN or an infinity, which JSON has no value for"
        elif item is not None and not isinstance(item, str | int | float):
            name = type(item).__name__
            return f"{_place(where)} is {with_article(name)}"
    return None


def _place(where: str) -> str:
    return where or "the root"
