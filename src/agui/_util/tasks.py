"""Asking a task whether it is being cancelled: `Task.cancelling`, and what Python 3.10 can say.

A `CancelledError` may be the task's own cancellation (a shutdown, a client gone) or one that
code inside it raised or let through from something else it awaited. Python 3.11 counts the
cancellations requested of a task; 3.10 cannot tell them apart, so there every `CancelledError`
is taken as the task's own, the safe reading: it goes on rather than being contained.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["cancelling"]

cancelling: Callable[[asyncio.Task[object]], int] = getattr(asyncio.Task, "cancelling", lambda _: 1)
"""How many cancellations of `task` are pending (on Python 3.10, always 1).

Examples:
    >>> import asyncio
    >>> async def main():
    ...     return cancelling(asyncio.current_task())
    >>> asyncio.run(main())
    0
"""
