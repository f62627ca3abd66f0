"""A run's cancellation token: tripped by the server or by a client that went away.

Cancelling is cooperative and visible: once the token trips, every emit raises `Cancelled`, so
agent code unwinds at its next emit with no cancellation code of its own, and
`RunContext.until_cancelled` stops an await (a model call, a tool) as soon as the token trips.

That await runs in a task of its own, beside a wait on the token, and two things asyncio does to
a task are undone for it. A `SystemExit` or `KeyboardInterrupt` leaving a task is re-raised out
of the event loop, past the run's driver, which would stop the whole server over one tool that
calls `sys.exit()`: it is carried out of the task and raised in the awaiting one instead, where
the driver ends the run with `RUN_ERROR`. And a task stopped because its awaiter was cancelled
(the client went away) often ends with an exception of its own (its next emit raises
`Cancelled`); nobody awaits it then, so asyncio would log "Task exception was never retrieved"
with a traceback: the outcome is read when it ends, and only logged (at debug level) when it is
not the cancellation itself.

Whoever cancels (a transport whose client left, the run driver) goes on to stop the run's task
right after, so `cancel()` never raises for a callback: every callback runs, and one that fails
is logged on the `agui` log.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

from agui.errors import Cancelled, UsageError

__all__ = ["CancellationToken"]

_log = logging.getLogger("agui")

T = TypeVar("T")


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

    async def until_cancelled(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, but stop it and raise `Cancelled` as soon as the token trips.

        Examples:
            >>> async def slow():
            ...     await asyncio.sleep(10)
            >>> async def main():
            ...     token = CancellationToken()
            ...     asyncio.get_running_loop().call_later(0.01, token.cancel, "enough")
            ...     try:
            ...         await token.until_cancelled(slow())
            ...     except Cancelled as error:
            ...         return str(error)
            >>> asyncio.run(main())
            'enough'
        """
        if self._cancelled:
            if inspect.iscoroutine(awaitable):
                awaitable.close()
            raise Cancelled(self._reason)
        work = asyncio.ensure_future(_carrying(awaitable))
        stop = asyncio.ensure_future(self.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, stop):
                if not task.done():
                    task.cancel()
                    task.add_done_callback(_read_outcome)
        if work.done() and not work.cancelled():
            try:
                return work.result()
            except _Carried as carried:
                raise carried.error from None
        await asyncio.gather(work, return_exceptions=True)
        raise Cancelled(self._reason)


class _Carried(Exception):
    """A `SystemExit` or `KeyboardInterrupt`, carried out of a task (see the module's notes)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


async def _carrying(awaitable: Awaitable[T]) -> T:
    try:
        return await awaitable
    except (SystemExit, KeyboardInterrupt) as error:
        raise _Carried(error) from None


def _read_outcome(task: asyncio.Future[T]) -> None:
    """Read a stopped task's outcome, so that asyncio does not report it as never retrieved."""
    if task.cancelled():
        return
    error = task.exception()
    if error is not None and not isinstance(error, Cancelled | asyncio.CancelledError):
        _log.debug("an await stopped by cancellation ended with %r", error)
