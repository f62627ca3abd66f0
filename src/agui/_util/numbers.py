"""Reading the numbers options give: a finite real, or a whole count, and never a `bool`.

Python counts `True` as the integer 1, and NaN compares false with everything, so an option
checked as `value > 0` takes `True` for one second and lets NaN through one comparison and not
the next. The endpoint's options, the client's and the run logs' read their numbers here.
"""

from __future__ import annotations

import math

__all__ = ["duration", "real", "whole"]


def real(value: object) -> float | None:
    """A finite `int` or `float` as a float, or `None` for anything else (`bool`, NaN, inf).

    Examples:
        >>> real(2), real(0.5), real(True), real(float("nan")), real("1"), real(10**400)
        (2.0, 0.5, None, None, None, None)
    """
    if not isinstance(value, (int, float)) or type(value) is bool:
        return None
    try:
        number = float(value)
    except OverflowError:  # an int past the largest float
        return None
    return number if math.isfinite(number) else None


def duration(value: object, *, zero: bool = False) -> float | None:
    """A finite number of seconds above 0 (or 0 itself, with `zero`), or `None`.

    Examples:
        >>> duration(1.5), duration(0), duration(0, zero=True), duration(-1), duration(True)
        (1.5, None, 0.0, None, None)
    """
    number = real(value)
    return number if number is not None and (number > 0 or (zero and number == 0)) else None


def whole(value: object) -> int | None:
    """An `int` that is not a `bool`, or `None`.

    Examples:
        >>> whole(3), whole(True), whole(3.0)
        (3, None, None)
    """
    return value if isinstance(value, int) and type(value) is not bool else None
