"""A run's cancellation token: tripped by the server or by a client that went away.

Cancelling is cooperative and visible: once the token trips, every emit raises `Cancelled`, so
agent code unwinds at its next emit with no cancellation code of its own, and
`RunContext.until_cancelled` stops an await (a model call, a tool) as soon as the token trips.

Whoever cancels (a transport whose client left, the run driver) goes on to stop the run's task
right after, so `cancel()` never raises for a callback: every callback runs, and one that fails
is logged on the `agui` log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import cast

from agui.errors import UsageError

__all__ = ["CancellationToken"]

_log = logging.getLogger("agui")


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
        """Trip the token and wake everything waiting on it; later calls change nothing.

        A callback that raises is logged, and the others still run.

        Examples:
            >>> token = CancellationToken()
            >>> token.on_cancel(lambda: 1 / 0)
            >>> token.on_cancel(lambda: print("still told"))
            >>> token.cancel()
            still told
        """
        if not isinstance(cast("object", reason), str):
            message = (
                f"a cancellation reason is text, got a {type(reason).__name__}; it becomes the "
                "message of the Cancelled that every emit raises; pass str(reason)"
            )
            raise UsageError(message)
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
            try:
                callback()
            except Exception:  # noqa: BLE001 - the canceller must go on to stop the run
                _log.exception(
                    "a cancellation callback failed; the token is cancelled all the same"
                )

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
