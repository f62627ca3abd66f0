"""What a tool's return value, or its exception, reads as for the model.

A result is text: a string as it is, anything else as JSON. What JSON cannot hold is refused
with a `ValueError` saying why, which the tool turns into an error result the model can read:
text with a lone surrogate (UTF-8 cannot encode it), NaN or an infinity. A pydantic model is
written by its own serializer, which turns NaN into `null` (`ser_json_inf_nan`): the model would
read a changed value as if the tool had returned it, so a model is refused as a dict holding the
same number is. A coroutine the tool loop did not await (it awaits a returned awaitable once) is
closed before it is refused, so that Python does not warn later that it was never awaited.
"""

from __future__ import annotations

import inspect
import math
from typing import cast

from pydantic import BaseModel

from agui._protocol.text import json_text, unicode_problem

__all__ = ["content", "exception_text"]

_NON_FINITE = "it holds NaN or an infinity, which JSON has no value for"


def content(value: object) -> str:
    """The text of a tool's return value; `ValueError` saying why when it has none.

    Examples:
        >>> content("sunny"), content({"temp": 21})
        ('sunny', '{"temp":21}')
        >>> content({"temp": float("nan")})
        Traceback (most recent call last):
        ...
        ValueError: it holds NaN or an infinity, which JSON has no value for
    """
    if isinstance(value, str):
        problem = unicode_problem(value)
        if problem is not None:
            message = f"it holds {problem}, which UTF-8 cannot encode"
            raise ValueError(message)
        return value
    if isinstance(value, BaseModel):
        text = value.model_dump_json()
        # Only text that could hold a number written in its place pays for the second look.
        spelled = "null" in text or "NaN" in text or "Infinity" in text
        if spelled and _non_finite(value.model_dump()):
            raise ValueError(_NON_FINITE)
        return text
    if inspect.iscoroutine(value):
        value.close()
        message = (
            "it is a coroutine, what awaiting the tool's result gave, and a result is awaited "
            "only once; await it inside the tool"
        )
        raise ValueError(message)
    return json_text(value)


def _non_finite(value: object) -> bool:
    """Whether a model's dump holds NaN or an infinity, anywhere in it."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            pending.extend(cast("dict[object, object]", item).values())
        elif isinstance(item, list | tuple | set | frozenset):
            pending.extend(cast("list[object]", item))
    return False


def exception_text(error: Exception) -> str:
    """`Type: text` of a tool's exception for the model, or its type alone if `str()` fails.

    Examples:
        >>> exception_text(ValueError("no such city"))
        'ValueError: no such city'
    """
    kind = type(error).__name__
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - a broken __str__ (common in wrapped SDK errors) still says its type
        return kind
    # A surrogate (a file name decoded with surrogateescape) is shown as its escape: the result
    # must be text the wire can carry.
    return f"{kind}: {text.encode(errors='backslashreplace').decode()}"
