"""A run's cancellation token: tripped by the server or by a client that went away.

Cancelling is cooperative and visible: once the token trips, every emit raises `Cancelled`, so
agent code unwinds at its next emit with no cancellation code of its own, and
`RunContext.until_cancelled` stops an await (a model call, a tool) as soon as the token trips.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["CancellationToken"]


class CancellationToken:
    """A one-way flag with waiters; `cancel()` is idempotent.

    Examples:
        >>> token = CancellationToken()
        >>> token.cancelled
        False
        >>> token.cancel("the client disconnected")
        >>> token.cancelled, token.reason
        (True, 'the client disconnected')
    """

    def __init__(self) -> None:
        self._cancelled = False
        self._reason = ""
        self._waiters: list[asyncio.Future[None]] = []
        self._callbacks: list[Callable[[], object]] = []

    @property
    def cancelled(self) -> bool:
        """Whether the token has tripped."""
        return self._cancelled

    @property
    def reason(self) -> str:
        """Why it tripped (empty until then)."""
        return self._reason

    def cancel(self, reason: str = "the run was cancelled") -> None:
        """Trip the token and wake everything waiting on it; later calls change nothing."""
        if self._cancelled:
            return
        self._cancelled = True
        self._reason = reason
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], object]) -> None:
        """Call `callback()` when the token trips, or at once if it has; kept until then.

        Examples:
            >>> token = CancellationToken()
            >>> token.on_cancel(lambda: print("stopping"))
            >>> token.cancel()
            stopping
            >>> token.on_cancel(lambda: print("already stopped"))
            already stopped
        """
        if self._cancelled:
            callback()
        else:
            self._callbacks.append(callback)

    async def wait(self) -> None:
        """Return once the token has tripped."""
        if self._cancelled:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
