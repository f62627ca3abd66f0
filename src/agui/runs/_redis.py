"""The run log on Redis: runs any worker can read, resume and cancel, whichever one runs them.

Each change is one script (`agui.runs._scripts`), so a batch of frames costs one round trip
and no decision races another worker's. A reader blocks on `XREAD` and looks at the run's status
only when nothing came, which is when a dead owner can be noticed. Cancellation is a message on
one pub/sub channel per log, which each worker listens to with one connection while it owns a
run (and the flag in the run's hash, which the next renewal reads, in case a message is lost).

`redis` (the official client, its asyncio API) is imported when the log is built, so
`import agui.runs` does not need it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

from agui.errors import RunLogError, UsageError
from agui.runs import _scripts
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

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

__all__ = ["RedisRunLog"]

T = TypeVar("T")
_log = logging.getLogger("agui.runs")
_RETRY_SECONDS = 0.5
_LONGEST_RETRY = 30.0


class RedisRunLog:
    """A `RunLog` on Redis (`pip install "agui-server[redis]"`): runs shared by many workers.

    `url` is a `redis://` URL as the official client reads it; keys start with `prefix`.

    Examples:
        >>> log = RedisRunLog("redis://127.0.0.1:6379/0", lease=5.0)
        >>> log.settings.lease, log.prefix
        (5.0, 'agui:')
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "agui:",
        lease: float = LEASE,
        ttl: float = TTL,
        max_run_seconds: float = MAX_RUN_SECONDS,
        maxlen: int = MAXLEN,
        max_blob_bytes: int = MAX_BLOB_BYTES,
    ) -> None:
        try:
            from redis import exceptions  # noqa: PLC0415
            from redis.asyncio import Redis  # noqa: PLC0415 - the optional extra
        except ImportError:
            message = 'RedisRunLog needs the redis package: pip install "agui-server[redis]"'
            raise UsageError(message) from None
        self.settings = Settings(lease, ttl, max_run_seconds, maxlen, max_blob_bytes)
        self.prefix = prefix
        # The client's `from_url` takes untyped keyword options.
        if not isinstance(cast("object", url), str):
            raise UsageError(_not_a_url(url, type(url).__name__))
        try:
            self._redis: Redis = Redis.from_url(url)  # pyright: ignore[reportUnknownMemberType]
        except ValueError as error:  # what redis-py says of a URL it cannot read
            raise UsageError(_not_a_url(url, str(error))) from None
        self._worker = uuid.uuid4().hex
        self._channel = f"{prefix}cancel"
        self._scripts: dict[str, AsyncScript] = {
            name: self._redis.register_script(getattr(_scripts, name)) for name in _scripts.__all__
        }
        self._watchers: dict[str, Callable[[], object]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._lost = lost_frame()
        self._unreachable = (exceptions.ConnectionError, exceptions.TimeoutError, OSError)
        self._refused = exceptions.RedisError

    # Each key is the prefix, a kind without ':' and the id last: two keys are equal only for
    # the same kind and the same id, whatever the ids hold (a run 'x:log' is not the log of 'x').
    def _keys(self, run_id: str) -> tuple[str, str]:
        return f"{self.prefix}run:{run_id}", f"{self.prefix}log:{run_id}"

    def _busy(self, thread_id: str) -> str:
        return f"{self.prefix}busy:{thread_id}"

    def _thread(self, thread_id: str) -> str:
        return f"{self.prefix}thread:{thread_id}"

    def _identity(self, thread_id: str) -> str:
        return f"{self.prefix}identity:{thread_id}"

    def _blob(self, thread_id: str, owner: str) -> str:
        return f"{self.prefix}blob:{run_key(owner, thread_id)}"

    async def _call(self, command: Awaitable[T]) -> T:
        try:
            return await command
        except self._unreachable as error:
            raise _unavailable(error) from error
        except self._refused as error:
            raise self._refusal(error) from error

    def _refusal(self, error: BaseException) -> RunLogError:
        return RunLogError(
            f"the run log (Redis) refused a command: {error}; the server answered, so it is "
            "reachable but would not do it: check that it is writable (a primary, under its "
            f"maxmemory) and that nothing but this log writes keys under {self.prefix!r}"
        )

    def _live_ms(self) -> int:
        return int((self.settings.max_run_seconds + self.settings.ttl) * 1000) + 1

    def _ttl_ms(self) -> int:
        return max(1, int(self.settings.ttl * 1000))

    async def begin(
        self, run_id: str, thread_id: str, *, owner: str = SHARED
    ) -> str | Owned | None:
        """Start a live run and reserve its thread (see `RunLog.begin`)."""
        run_key, _ = self._keys(run_id)
        keys = [run_key, self._busy(thread_id), self._identity(thread_id), self._thread(thread_id)]
        found = await self._call(
            self._scripts["BEGIN"](
                keys=keys,
                args=[run_id, thread_id, self._worker, self._lease_ms(), self._live_ms(), owner],
            )
        )
        if found is None:
            return None
        kind, named = cast("list[bytes]", found)
        return Owned(_text(named)) if kind == b"owned" else _text(named)

    def _lease_ms(self) -> int:
        return int(self.settings.lease * 1000)

    async def append(
        self, run_id: str, frames: Sequence[bytes], *, thread: ThreadRecord | None = None
    ) -> bool:
        """Add a batch of frames in one script; with `thread`, the last (see `RunLog.append`)."""
        check_frames(frames)
        run_key, log_key = self._keys(run_id)
        thread_id = "" if thread is None else thread.thread_id
        record = b"" if thread is None else json.dumps(thread.wire()).encode()
        keys = [run_key, log_key, self._busy(thread_id), self._thread(thread_id)]
        done = await self._call(
            self._scripts["APPEND"](
                keys=[*keys, self._identity(thread_id)],
                args=[
                    self._worker,
                    len(frames),
                    b"\n".join(frames),
                    0 if thread is None else 1,
                    record,
                    self._ttl_ms(),
                    self.settings.maxlen,
                    run_id,
                    self._live_ms(),
                    self._lost,
                    self.prefix,
                    SHARED if thread is None else thread.owner,
                ],
            )
        )
        return bool(done)

    async def renew(self, run_id: str) -> LeaseAnswer:
        """Renew the lease (see `RunLog.renew`)."""
        run_key, log_key = self._keys(run_id)
        lost = (self._lost, self._ttl_ms(), self.settings.maxlen)
        answer = await self._call(
            self._scripts["RENEW"](
                keys=[run_key, log_key],
                args=[self._worker, self._lease_ms(), run_id, self.prefix, *lost],
            )
        )
        return cast("LeaseAnswer", _text(answer))

    async def abandon(self, run_id: str) -> None:
        """End a live run of this log's with the lost frame now (see `RunLog.abandon`)."""
        run_key, log_key = self._keys(run_id)
        lost = (self._lost, self._ttl_ms(), self.settings.maxlen, self.prefix, self._worker)
        await self._call(self._scripts["ABANDON"](keys=[run_key, log_key], args=[run_id, *lost]))

    async def read(self, run_id: str, after: int, wait: float) -> Page | None:
        """The frames after `after`, blocking on XREAD up to `wait` (see `RunLog.read`)."""
        run_key, log_key = self._keys(run_id)
        if wait > 0:
            found = await self._call(
                self._redis.xread({log_key: f"0-{after}"}, block=max(1, int(wait * 1000)))
            )
            if found:
                return _page(found, after)
        found = await self._call(self._redis.xread({log_key: f"0-{after}"}))
        if found:
            return _page(found, after)
        state = await self._call(self._redis.hget(run_key, "state"))
        if state is None:
            return None
        if state == b"live" and await self._settle(run_id):
            return await self.read(run_id, after, 0)
        return Page([], ended=state != b"live")

    async def _settle(self, run_id: str) -> bool:
        run_key, log_key = self._keys(run_id)
        settled = await self._call(
            self._scripts["SETTLE"](
                keys=[run_key, log_key],
                args=[run_id, self._lost, self._ttl_ms(), self.settings.maxlen, self.prefix],
            )
        )
        return bool(settled)

    async def cancel(self, run_id: str) -> CancelAnswer:
        """Ask the owner, on whichever worker, to cancel the run (see `RunLog.cancel`)."""
        run_key, log_key = self._keys(run_id)
        answer = await self._call(
            self._scripts["CANCEL"](
                keys=[run_key, log_key],
                args=[
                    run_id,
                    self._lost,
                    self._ttl_ms(),
                    self.settings.maxlen,
                    self.prefix,
                    self._channel,
                ],
            )
        )
        return cast("CancelAnswer", _text(answer))

    def watch(self, run_id: str, on_cancel: Callable[[], object]) -> Callable[[], None]:
        """Call `on_cancel()` when a cancel of the run arrives (see `RunLog.watch`)."""
        self._watchers[run_id] = on_cancel
        if self._listener is None or self._listener.done():
            self._listener = asyncio.create_task(self._listen(), name="agui run log cancels")
        return lambda: self._watchers.pop(run_id, None) and None

    async def _listen(self) -> None:
        """Hand each cancel message to its run's watcher; reconnect while the log is open.

        While the store is away, the tries back off (0.5 s, doubling, to 30 s) and only the
        first failure of an outage is a warning with its traceback: an idle worker would
        otherwise log one every half second for as long as the outage lasts.
        """
        failures = 0
        while True:
            try:
                # The client's pub/sub messages are untyped dictionaries.
                pubsub = self._redis.pubsub(ignore_subscribe_messages=True)  # pyright: ignore[reportUnknownMemberType]
                async with pubsub:
                    await pubsub.subscribe(self._channel)
                    if failures:
                        _log.warning("listening for cancels again, after %d failed tries", failures)
                    failures = 0
                    listening = cast("AsyncIterator[dict[str, object]]", pubsub.listen())  # pyright: ignore[reportUnknownMemberType]
                    async for message in listening:
                        watcher = self._watchers.get(_text(message["data"]))
                        if watcher is not None:
                            watcher()
            except Exception:  # noqa: BLE001 - the store went away: listen again when it is back
                level = logging.WARNING if failures == 0 else logging.DEBUG
                _log.log(level, "listening for cancels failed; retrying", exc_info=True)
                await asyncio.sleep(min(_RETRY_SECONDS * 2 ** min(failures, 6), _LONGEST_RETRY))
                failures += 1

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record (see `RunLog.thread`)."""
        keys = [self._thread(thread_id), self._identity(thread_id)]
        found, owner = await self._call(self._redis.mget(keys))
        if found is None:
            return None
        return ThreadRecord.from_wire(json.loads(found), owner=_owner(owner))

    async def owner(self, thread_id: str) -> str | None:
        """Whose the thread is (see `RunLog.owner`); one round trip."""
        keys = [self._identity(thread_id), self._thread(thread_id), self._busy(thread_id)]
        owner, record, holder = await self._call(self._redis.mget(keys))
        if owner is None and record is None and holder is None:
            return None
        return _owner(owner)

    async def run_thread(self, run_id: str) -> str | None:
        """The thread of a run the log holds (see `RunLog.run_thread`)."""
        found = await self._call(self._redis.hget(self._keys(run_id)[0], "thread"))
        return None if found is None else _text(found)

    async def keep_blob(self, thread_id: str, blob: bytes, *, owner: str = SHARED) -> None:
        """Keep a value for the thread, for the TTL (see `RunLog.keep_blob`); one `SET`."""
        check_blob(self.settings, thread_id, blob)
        await self._call(self._redis.set(self._blob(thread_id, owner), blob, px=self._ttl_ms()))

    async def take_blob(self, thread_id: str, *, owner: str = SHARED) -> bytes | None:
        """The thread's value, removed as it is read (see `RunLog.take_blob`); one `GETDEL`."""
        found = await self._call(self._redis.getdel(self._blob(thread_id, owner)))
        return cast("bytes | None", found)  # the client decodes nothing

    async def aclose(self) -> None:
        """Stop listening for cancels and close the connections."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        await self._redis.aclose()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _owner(stored: object) -> str:
    """A thread's owner as stored; none stored: written before owners existed, so shared."""
    return SHARED if stored is None else _text(stored)


def _unavailable(error: BaseException) -> RunLogError:
    return RunLogError(f"the run log (Redis) cannot be reached: {error}; check the server and URL")


def _page(found: object, after: int) -> Page:
    """The frames after `after` of an XREAD answer (its first entry may hold earlier ones)."""
    frames: list[tuple[int, bytes]] = []
    ended = False
    for _, entries in cast("list[tuple[bytes, list[tuple[bytes, dict[bytes, bytes]]]]]", found):
        for entry_id, fields in entries:
            last = int(entry_id.partition(b"-")[2])
            ended = b"e" in fields
            batch = (fields.get(b"f") or fields[b"e"]).split(b"\n")
            start = last - len(batch) + 1
            frames.extend(
                (number, frame) for number, frame in enumerate(batch, start) if number > after
            )
    return Page(frames, ended=ended)


def _not_a_url(url: object, why: str) -> str:
    return (
        "RedisRunLog takes a Redis URL such as 'redis://localhost:6379/0' (rediss:// for TLS, "
        f"unix:///path for a socket), not {url!r}: {why}"
    )
