"""A worker's own runs, read without a round trip: the log, with a local copy of what it owns.

The response to the POST that starts a run is read on the worker that runs it, and so is often
a resumed one; reading those from Redis would cost a round trip per batch and a wait on `XREAD`
for frames this very process has just written. `Tail` wraps a log: each batch is appended to
the log first, and once the log holds it, to a `MemoryRunLog` of this process, from which a
reader of a run owned here reads. A reader of any other run, or of one whose local copy has
expired (it is kept briefly after the run ends), reads the log itself. Either way it reads the
same frames with the same ids: the copy holds only what the log accepted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from agui.errors import RunLogError
from agui.runs._log import (
    LONGEST,
    SHARED,
    CancelAnswer,
    LeaseAnswer,
    Owned,
    Page,
    RunLog,
    ThreadRecord,
)
from agui.runs._memory import MemoryRunLog

__all__ = ["Tail"]

_KEPT = 60.0
"""Seconds the local copy of a finished run is kept, for its last readers (never longer than the
log keeps the run: past that, every worker answers that the run is gone)."""
_NO_THREAD = ThreadRecord("", messages=[], state=None, run_ids=[])
_PAST_ANY = 2**62
"""A frame id past every run's last: reading after it asks only whether the run ended."""
_log = logging.getLogger("agui.asgi")


class Tail:
    """A `RunLog` that reads the runs this process owns from a local copy (see the module).

    Examples:
        >>> import asyncio
        >>> async def demo():
        ...     tail = Tail(MemoryRunLog())  # a memory log is read as it is
        ...     await tail.begin("r1", "t1")
        ...     await tail.append("r1", [b'{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}'])
        ...     page = await tail.read("r1", 0, wait=0)
        ...     return [frame_id for frame_id, _ in page.frames], await tail.append("r9", [b"{}"])
        >>> asyncio.run(demo())
        ([1], False)
    """

    def __init__(self, log: RunLog) -> None:
        self._log = log
        self.settings = log.settings
        # Never lost, since this process owns it; within what a setting may be.
        longest = min(log.settings.max_run_seconds + 3_600.0, LONGEST)
        # A memory log is in this process already: a copy would only double it.
        self._local = (
            None
            if isinstance(log, MemoryRunLog)
            else MemoryRunLog(
                lease=longest,
                ttl=min(_KEPT, log.settings.ttl),
                max_run_seconds=longest,
                maxlen=log.settings.maxlen,
            )
        )

    async def begin(
        self, run_id: str, thread_id: str, *, owner: str = SHARED
    ) -> str | Owned | None:
        """Begin the run in the log, and its local copy when it began.

        A copy of an earlier run of that id may still be here when the log no longer holds it
        (it expired there, or the store lost it, and a client sent the id again): the log is
        what says the id is free, so that copy goes, and the new run's readers read the new run.
        """
        holder = await self._log.begin(run_id, thread_id, owner=owner)
        if holder is None and self._local is not None:
            self._local.discard(run_id)
            await self._local.begin(run_id, run_id)
        return holder

    async def append(
        self, run_id: str, frames: Sequence[bytes], *, thread: ThreadRecord | None = None
    ) -> bool:
        """Append to the log, then to the local copy what the log accepted."""
        written = await self._log.append(run_id, frames, thread=thread)
        if written and self._local is not None:
            await self._local.append(run_id, frames, thread=None if thread is None else _NO_THREAD)
        return written

    async def release(self, run_id: str) -> None:
        """Give up a run its owner stopped writing before its end: it ends `RUN_LOST` in the log.

        The local copy goes first: whether the log took the last batch is not known (an append
        that timed out may have been applied after all), so the copy cannot say which frame
        comes next. Its readers read the log, which holds the run's end, or, while it cannot be
        reached, end their streams with the follower's own frame. A run that ended is left.
        """
        if self._local is not None:
            page = await self._local.read(run_id, _PAST_ANY, wait=0)
            if page is None or page.ended:
                return
            self._local.discard(run_id)
        try:
            await self.abandon(run_id)
        except RunLogError:
            _log.warning("run %s could not be given up; it ends when its lease lapses", run_id)

    async def read(self, run_id: str, after: int, wait: float) -> Page | None:
        """Read the local copy of a run owned here, or else the log."""
        page = None if self._local is None else await self._local.read(run_id, after, wait)
        return page if page is not None else await self._log.read(run_id, after, wait)

    async def renew(self, run_id: str) -> LeaseAnswer:
        """Renew the lease in the log."""
        return await self._log.renew(run_id)

    async def abandon(self, run_id: str) -> None:
        """Give the run up in the log (see `release`, which also drops the local copy)."""
        await self._log.abandon(run_id)

    async def cancel(self, run_id: str) -> CancelAnswer:
        """Ask the log to have the run cancelled."""
        return await self._log.cancel(run_id)

    def watch(self, run_id: str, on_cancel: Callable[[], object]) -> Callable[[], None]:
        """Watch the log for a cancel of the run."""
        return self._log.watch(run_id, on_cancel)

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record in the log."""
        return await self._log.thread(thread_id)

    async def owner(self, thread_id: str) -> str | None:
        """Whose the thread is, in the log."""
        return await self._log.owner(thread_id)

    async def run_thread(self, run_id: str) -> str | None:
        """The run's thread, in the log."""
        return await self._log.run_thread(run_id)

    async def keep_blob(self, thread_id: str, blob: bytes, *, owner: str = SHARED) -> None:
        """Keep a thread's value in the log."""
        await self._log.keep_blob(thread_id, blob, owner=owner)

    async def take_blob(self, thread_id: str, *, owner: str = SHARED) -> bytes | None:
        """Take a thread's value from the log."""
        return await self._log.take_blob(thread_id, owner=owner)

    async def aclose(self) -> None:
        """Close the log."""
        await self._log.aclose()
