"""The run log of one process: runs and threads in dictionaries, waits on futures.

It keeps the semantics of the Redis log exactly (ids from 1, the lease, the lost frame, the
thread reservation, the TTL, the events kept per run), so an endpoint behaves the same on both
and one test suite runs on both; only "many workers" needs Redis. Time is the event loop's
monotonic clock, and expired entries are dropped when they are next looked at.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
import uuid
from collections.abc import Callable, Sequence

from agui.runs._log import (
    LEASE,
    MAX_BLOB_BYTES,
    MAX_RUN_SECONDS,
    MAXLEN,
    SHARED,
    TTL,
    CancelAnswer,
    LeaseAnswer,
    Owned,
    Page,
    Settings,
    ThreadRecord,
    check_blob,
    check_frames,
    lost_frame,
    run_key,
)

__all__ = ["MemoryRunLog"]


@dataclasses.dataclass
class _Run:
    thread_id: str
    worker: str  # the log that runs it: its lease is this log's to renew
    lease_until: float
    expires: float
    # The frames alone, the last one's id `last`: bytes, which the garbage collector never
    # walks, where (id, frame) pairs would be thousands of tuples a run for it to visit.
    frames: list[bytes] = dataclasses.field(default_factory=list[bytes])
    last: int = 0
    live: bool = True
    cancel: bool = False
    waiters: list[asyncio.Future[None]] = dataclasses.field(
        default_factory=list[asyncio.Future[None]]
    )


class MemoryRunLog:
    """A `RunLog` for one process: runs survive their client, not the process.

    Examples:
        >>> import asyncio
        >>> async def demo():
        ...     log = MemoryRunLog(lease=5.0)
        ...     await log.begin("r1", "t1")
        ...     await log.append("r1", [b'{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}'])
        ...     page = await log.read("r1", 0, wait=0)
        ...     busy = await log.begin("r2", "t1")
        ...     return [frame_id for frame_id, _ in page.frames], page.ended, busy
        >>> asyncio.run(demo())
        ([1], False, 'r1')
    """

    def __init__(
        self,
        *,
        lease: float = LEASE,
        ttl: float = TTL,
        max_run_seconds: float = MAX_RUN_SECONDS,
        maxlen: int = MAXLEN,
        max_blob_bytes: int = MAX_BLOB_BYTES,
    ) -> None:
        self.settings = Settings(lease, ttl, max_run_seconds, maxlen, max_blob_bytes)
        self._worker = uuid.uuid4().hex
        self._runs: dict[str, _Run] = {}
        self._threads: dict[str, tuple[ThreadRecord, float]] = {}
        self._busy: dict[str, str] = {}
        self._owners: dict[str, tuple[str, float]] = {}  # a thread's owner, until when
        self._watchers: dict[str, Callable[[], object]] = {}
        self._blobs: dict[str, tuple[bytes, float]] = {}  # by run_key(owner, thread), until when
        self._swept = time.monotonic()

    @property
    def held_runs(self) -> int:
        """How many runs the log holds: live ones, and finished ones kept for the TTL.

        Examples:
            >>> MemoryRunLog().held_runs
            0
        """
        return len(self._runs)

    def _run(self, run_id: str) -> _Run | None:
        run = self._runs.get(run_id)
        if run is not None and run.expires <= time.monotonic():
            del self._runs[run_id]
            return None
        return run

    async def begin(
        self, run_id: str, thread_id: str, *, owner: str = SHARED
    ) -> str | Owned | None:
        """Start a live run and reserve its thread (see `RunLog.begin`)."""
        self._sweep()
        held_by = await self.owner(thread_id)
        if held_by is not None and held_by != owner:
            return Owned(held_by)
        if self._run(run_id) is not None:
            return run_id
        holder = self._busy.get(thread_id)
        held = None if holder is None else self._run(holder)
        if held is not None and held.live and held.lease_until > time.monotonic():
            return holder
        now = time.monotonic()
        settings = self.settings
        expires = now + settings.max_run_seconds + settings.ttl
        self._runs[run_id] = _Run(
            thread_id, self._worker, lease_until=now + settings.lease, expires=expires
        )
        self._busy[thread_id] = run_id
        # The thread stays its owner's at least as long as the run is kept, ended or lost.
        _, kept = self._owners.get(thread_id, (owner, 0.0))
        self._owners[thread_id] = (owner, max(kept, expires))
        return None

    def _sweep(self) -> None:
        """Drop what expired, once a second at most: nothing else looks at a run nobody reads."""
        now = time.monotonic()
        if now - self._swept < 1.0:
            return
        self._swept = now
        for run_id in [r for r, run in self._runs.items() if run.expires <= now]:
            self.discard(run_id)
        for thread_id in [t for t, (_, expires) in self._threads.items() if expires <= now]:
            del self._threads[thread_id]
        for thread_id in [t for t, (_, expires) in self._owners.items() if expires <= now]:
            del self._owners[thread_id]
        for key in [k for k, (_, expires) in self._blobs.items() if expires <= now]:
            del self._blobs[key]

    def discard(self, run_id: str) -> None:
        """Forget a run at once, live or finished: readers find it gone, and its thread is free.

        Examples:
            >>> import asyncio
            >>> async def demo():
            ...     log = MemoryRunLog()
            ...     await log.begin("r1", "t1")
            ...     log.discard("r1")
            ...     return await log.read("r1", 0, wait=0), await log.begin("r2", "t1")
            >>> asyncio.run(demo())
            (None, None)
        """
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        if self._busy.get(run.thread_id) == run_id:
            del self._busy[run.thread_id]
        self._watchers.pop(run_id, None)
        _wake(run.waiters)  # a reader waiting on it reads again, and finds it gone

    async def append(
        self, run_id: str, frames: Sequence[bytes], *, thread: ThreadRecord | None = None
    ) -> bool:
        """Add a batch of frames; with `thread`, the last (see `RunLog.append`)."""
        check_frames(frames)
        run = self._owned(run_id)
        if run is None:
            return False
        self._add(run, frames)
        if thread is not None:
            self._end(run_id, run)
            kept = time.monotonic() + self.settings.ttl
            self._threads[thread.thread_id] = (thread, kept)
            self._owners[thread.thread_id] = (thread.owner, kept)
        return True

    def _add(self, run: _Run, frames: Sequence[bytes]) -> None:
        run.frames.extend(frames)
        run.last += len(frames)
        excess = len(run.frames) - self.settings.maxlen
        if excess > 0:
            del run.frames[:excess]
        waiters, run.waiters = run.waiters, []
        _wake(waiters)

    def _owned(self, run_id: str) -> _Run | None:
        """The live run this log runs, or `None`; a lapsed lease is lost, even to its worker."""
        run = self._run(run_id)
        if run is None or run.worker != self._worker:
            return None
        if run.live:
            self._settle(run_id, run)
        return run if run.live else None

    def _end(self, run_id: str, run: _Run) -> None:
        run.live = False
        run.expires = time.monotonic() + self.settings.ttl
        if self._busy.get(run.thread_id) == run_id:
            del self._busy[run.thread_id]
        self._watchers.pop(run_id, None)

    async def renew(self, run_id: str) -> LeaseAnswer:
        """Renew the lease (see `RunLog.renew`)."""
        run = self._owned(run_id)
        if run is None:
            return "gone"
        run.lease_until = time.monotonic() + self.settings.lease
        return "cancel" if run.cancel else "live"

    async def abandon(self, run_id: str) -> None:
        """End a live run of this log's with the lost frame now (see `RunLog.abandon`)."""
        run = self._owned(run_id)
        if run is not None:
            run.lease_until = time.monotonic()
            self._settle(run_id, run)

    async def read(self, run_id: str, after: int, wait: float) -> Page | None:
        """The frames after `after`, waiting up to `wait` (see `RunLog.read`)."""
        run = self._run(run_id)
        if run is None:
            return None
        if run.last <= after and run.live:
            self._settle(run_id, run)
        if run.last <= after and run.live and wait > 0:
            waiter = asyncio.get_running_loop().create_future()
            run.waiters.append(waiter)
            # `asyncio.TimeoutError`: on Python 3.10 it is not yet the built-in `TimeoutError`.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(waiter, wait)
            with contextlib.suppress(ValueError):  # gone already when an append woke it
                run.waiters.remove(waiter)
        first = run.last - len(run.frames) + 1
        skip = max(0, after + 1 - first)
        frames = list(zip(range(first + skip, run.last + 1), run.frames[skip:], strict=True))
        return Page(frames, ended=not run.live)

    def _settle(self, run_id: str, run: _Run) -> None:
        """End a live run whose lease ran out with the lost frame."""
        if run.lease_until <= time.monotonic():
            self._add(run, [lost_frame()])
            self._end(run_id, run)

    async def cancel(self, run_id: str) -> CancelAnswer:
        """Ask the run's worker to cancel it (see `RunLog.cancel`)."""
        run = self._run(run_id)
        if run is None:
            return "unknown"
        if run.live:
            self._settle(run_id, run)
        if not run.live:
            return "ended"
        run.cancel = True
        watcher = self._watchers.get(run_id)
        if watcher is not None:
            watcher()
        return "accepted"

    def watch(self, run_id: str, on_cancel: Callable[[], object]) -> Callable[[], None]:
        """Call `on_cancel()` when a cancel of the run arrives (see `RunLog.watch`)."""
        self._watchers[run_id] = on_cancel
        return lambda: self._watchers.pop(run_id, None) and None

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record (see `RunLog.thread`)."""
        found = self._threads.get(thread_id)
        if found is None:
            return None
        if found[1] <= time.monotonic():
            del self._threads[thread_id]
            return None
        return found[0]

    async def owner(self, thread_id: str) -> str | None:
        """Whose the thread is (see `RunLog.owner`): kept from its first run, as in Redis."""
        found = self._owners.get(thread_id)
        if found is None or found[1] <= time.monotonic():
            return None
        return found[0]

    async def run_thread(self, run_id: str) -> str | None:
        """The thread of a run the log holds (see `RunLog.run_thread`)."""
        run = self._run(run_id)
        return None if run is None else run.thread_id

    async def keep_blob(self, thread_id: str, blob: bytes, *, owner: str = SHARED) -> None:
        """Keep a value for the thread, for the TTL (see `RunLog.keep_blob`).

        Examples:
            >>> import asyncio
            >>> async def demo():
            ...     log = MemoryRunLog()
            ...     await log.keep_blob("t1", b"paused", owner="alice")
            ...     theirs = await log.take_blob("t1", owner="bob")
            ...     return theirs, await log.take_blob("t1", owner="alice"), await log.take_blob(
            ...         "t1", owner="alice")
            >>> asyncio.run(demo())
            (None, b'paused', None)
        """
        check_blob(self.settings, thread_id, blob)
        self._sweep()
        self._blobs[run_key(owner, thread_id)] = (blob, time.monotonic() + self.settings.ttl)

    async def take_blob(self, thread_id: str, *, owner: str = SHARED) -> bytes | None:
        """The thread's value, removed as it is read (see `RunLog.take_blob`)."""
        found = self._blobs.pop(run_key(owner, thread_id), None)
        if found is None or found[1] <= time.monotonic():
            return None
        return found[0]

    async def aclose(self) -> None:
        """Nothing to release: the runs go with the process."""


def _wake(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:
        if not waiter.done():  # one whose wait timed out may still be listed
            waiter.set_result(None)
