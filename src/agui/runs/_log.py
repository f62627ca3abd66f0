"""The run log's contract: what a durable endpoint asks of the store its runs live in.

A run that outlives its HTTP response needs somewhere to be: its frames, in order, readable by
any worker from any point; whether it is still live, and which worker runs it (a lease the worker
renews, so a dead one is noticed); a way to ask that worker, wherever it is, to cancel it; and the
thread it belongs to, reserved while it runs and folded once when it ends; and a small opaque
value per thread that an agent keeps between its runs (a paused framework run to resume on any
worker: `keep_blob`, `take_blob`). `RunLog` names those
operations and nothing else, so the endpoint (`agui.asgi`) has one code path whatever the
store: `MemoryRunLog` for one process, `RedisRunLog` for many workers.

A run's frames are the wire JSON of its events, numbered from 1 in the order they were emitted;
the number is the SSE `id:` of the frame, so `after=0` reads a run from its start.

Runs and threads have owners: the identity an endpoint's `authorize` named (`SHARED`, the empty
string, when it admitted the caller to the one shared space). A thread belongs to the owner of
its first run, and every later run on it lives in that owner's space: a log is asked for a run
by its key, `run_key(owner, run_id)`, so one owner's run ids never meet another's, and
`begin` refuses (with `Owned`) a run on a thread someone else owns, before it looks at anything
else of the thread. A store written before owners existed holds runs and threads without one:
they are the shared space's, as they were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from pydantic import JsonValue

from agui._util.numbers import real, whole
from agui.errors import BlobTooLarge, UsageError
from agui.events import RunErrorEvent
from agui.sse import event_json

__all__ = [
    "LEASE",
    "MAXLEN",
    "MAX_BLOB_BYTES",
    "MAX_RUN_SECONDS",
    "SHARED",
    "TTL",
    "CancelAnswer",
    "LeaseAnswer",
    "Owned",
    "Page",
    "RunLog",
    "Settings",
    "ThreadRecord",
    "lost_frame",
    "run_key",
]

LEASE = 15.0
"""The default lease, in seconds: a run whose worker has not renewed it for this long is lost."""
TTL = 86_400.0
"""The default time a finished run and a thread are kept, in seconds: a day."""
MAX_RUN_SECONDS = 3_600.0
"""The default longest a run may go on, in seconds, with or without a client: an hour."""
MAXLEN = 10_000
"""The default number of a run's latest events a log keeps (older ones are trimmed)."""
MAX_BLOB_BYTES = 4 * 1024 * 1024
"""The default largest value a log keeps for a thread (`RunLog.keep_blob`), in bytes: 4 MiB."""
SHORTEST = 0.001
"""The shortest time a setting may name, in seconds: a millisecond, the Redis log's resolution."""
LONGEST = 315_360_000.0
"""The longest time a setting may name, in seconds: ten years, well within Redis's expiry times."""

CancelAnswer = Literal["accepted", "unknown", "ended"]
"""What asking to cancel a run found: live (its worker is told), no such run, or already ended."""
LeaseAnswer = Literal["live", "cancel", "gone"]
"""What renewing a lease found: still ours, ours with a cancel requested, or no longer ours."""
SHARED = ""
"""The owner of the shared space: every caller `authorize` admitted with `True` (or no hook).

No identity is empty, so no identity is the shared space's owner."""


def run_key(owner: str, run_id: str) -> str:
    """The key a log holds a run under: its id in its owner's space.

    A shared run's key is its id, as before owners existed. An identity's is the identity, `/`
    and the id: an endpoint takes no run id holding `/`, so the key is the only one of its
    owner and id, and never a shared run's.

    Examples:
        >>> run_key(SHARED, "r1"), run_key("alice", "r1"), run_key("a/b", "r1")
        ('r1', 'alice/r1', 'a/b/r1')
    """
    return run_id if owner == SHARED else f"{owner}/{run_id}"


@dataclasses.dataclass(frozen=True)
class Owned:
    """What `RunLog.begin` answers for a thread another owner holds: that owner.

    Examples:
        >>> Owned("alice").owner
        'alice'
    """

    owner: str


_LOST = RunErrorEvent(
    message=(
        "the worker running this run stopped renewing its lease, so the run is lost; "
        "start a new run to go on"
    ),
    code="RUN_LOST",
)


def lost_frame() -> bytes:
    """The frame a log appends to a run whose worker stopped renewing its lease.

    Examples:
        >>> lost_frame()[:40]
        b'{"type":"RUN_ERROR","message":"the worke'
        >>> b'"code":"RUN_LOST"' in lost_frame()
        True
    """
    return event_json(_LOST)


@dataclasses.dataclass(frozen=True)
class Settings:
    """A log's timings and bounds, shared by every worker that uses the same store.

    Examples:
        >>> Settings().lease, Settings(lease=2.0).renew_every
        (15.0, 0.6666666666666666)
        >>> Settings(lease=0)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: lease must be a number of seconds from 0.001 ..., not 0 ...
        >>> Settings(maxlen=True)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: maxlen must be a positive whole number of events, not True ...
        >>> Settings(max_blob_bytes=0)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: max_blob_bytes must be a positive whole number of bytes, not 0 ...
    """

    lease: float = LEASE
    """Seconds a live run's worker has to renew its lease before readers call the run lost."""
    ttl: float = TTL
    """Seconds a finished run (its frames, its status) and a thread record are kept."""
    max_run_seconds: float = MAX_RUN_SECONDS
    """Seconds a run may go on before it is cancelled."""
    maxlen: int = MAXLEN
    """How many of a run's latest events are kept; older ones are trimmed."""
    max_blob_bytes: int = MAX_BLOB_BYTES
    """The largest value kept for a thread (`RunLog.keep_blob`); a larger one is refused."""

    def __post_init__(self) -> None:
        durations = (
            ("lease", self.lease),
            ("ttl", self.ttl),
            ("max_run_seconds", self.max_run_seconds),
        )
        problems = [
            f"{name} must be a number of seconds from {SHORTEST:g} (a millisecond) to "
            f"{LONGEST:.0f} (ten years), not {value!r}"
            for name, value in durations
            if not _is_duration(value)
        ]
        if not _is_count(self.maxlen):
            problems.append(
                f"maxlen must be a positive whole number of events, not {self.maxlen!r}"
            )
        if not _is_count(self.max_blob_bytes):
            problems.append(
                "max_blob_bytes must be a positive whole number of bytes, "
                f"not {self.max_blob_bytes!r}"
            )
        if problems:
            raise UsageError("; ".join(problems) + " (fix the run log's settings)")

    @property
    def renew_every(self) -> float:
        """How often a worker renews its lease: a third of it, so one late renewal is no loss."""
        return self.lease / 3

    @property
    def poll(self) -> float:
        """The longest a reader waits for frames before it looks at the lease again."""
        return min(self.lease / 10, 1.0)


def _is_duration(value: object) -> bool:
    # A bool is an int to Python, and `lease=True` is a slip, not one second.
    number = real(value)
    return number is not None and SHORTEST <= number <= LONGEST


def _is_count(value: object) -> bool:
    count = whole(value)
    return count is not None and count >= 1


def check_blob(settings: Settings, thread_id: str, blob: bytes) -> None:
    """Refuse a value over the log's `max_blob_bytes`, the same way on every log.

    Examples:
        >>> check_blob(Settings(max_blob_bytes=4), "t1", b"four")
        >>> check_blob(Settings(max_blob_bytes=4), "t1", b"fives")
        Traceback (most recent call last):
        ...
        agui.errors.BlobTooLarge: the value kept for thread 't1' is 5 bytes, over ...
    """
    if len(blob) > settings.max_blob_bytes:
        message = (
            f"the value kept for thread {thread_id!r} is {len(blob)} bytes, over the run log's "
            f"max_blob_bytes ({settings.max_blob_bytes}); a log keeps a small value per thread, "
            "so keep less (a shorter history), or raise max_blob_bytes where the log is made"
        )
        raise BlobTooLarge(message)


def check_frames(frames: Sequence[bytes]) -> None:
    """Refuse an empty batch, the same way on every log (`RunLog.append`).

    Examples:
        >>> check_frames([b"{}"])
        >>> check_frames([])
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: an append was given no frames; ...
    """
    if not frames:
        message = (
            "an append was given no frames; a batch adds at least one frame to its run (and the "
            "last batch holds the run's terminal event); pass the frames, or make no call"
        )
        raise UsageError(message)


@dataclasses.dataclass(frozen=True)
class Page:
    """Frames read from a run: `(id, wire JSON)` pairs, and whether the last one ends the run.

    Examples:
        >>> Page([(1, b'{"type":"RUN_STARTED"}')], ended=False).frames[0][0]
        1
    """

    frames: list[tuple[int, bytes]]
    ended: bool


@dataclasses.dataclass(frozen=True)
class ThreadRecord:
    """What a UI holds after a thread's finished runs: messages and state (wire JSON), run ids.

    The owner is kept beside the record, never in what the thread route answers.

    Examples:
        >>> record = ThreadRecord("t", messages=[], state={}, run_ids=["r1"], owner="alice")
        >>> record.wire()
        {'threadId': 't', 'messages': [], 'state': {}, 'runIds': ['r1']}
        >>> ThreadRecord.from_wire(record.wire(), owner="alice") == record
        True
    """

    thread_id: str
    messages: list[JsonValue]
    state: JsonValue
    run_ids: list[str]
    owner: str = SHARED
    """The identity the thread belongs to (`SHARED`: the shared space's)."""

    def wire(self) -> dict[str, JsonValue]:
        """The record as the thread route answers it."""
        return {
            "threadId": self.thread_id,
            "messages": self.messages,
            "state": self.state,
            "runIds": list(self.run_ids),
        }

    @classmethod
    def from_wire(cls, wire: dict[str, JsonValue], *, owner: str = SHARED) -> ThreadRecord:
        """The record a log stored with `wire()`, and its owner, stored beside it."""
        messages, run_ids = wire["messages"], wire["runIds"]
        assert isinstance(messages, list)  # noqa: S101 - written by `wire()`
        assert isinstance(run_ids, list)  # noqa: S101
        thread_id, state = str(wire["threadId"]), wire["state"]
        return cls(thread_id, messages, state, [str(r) for r in run_ids], owner=owner)


class RunLog(Protocol):
    """Where a durable endpoint keeps its runs: frames, leases, cancellation, threads.

    Every method is a coroutine; a store that cannot be reached, or refuses a command, raises
    `agui.errors.RunLogError`. A `run_id` is the run's key, `run_key(owner, id)`. See
    `MemoryRunLog` and `RedisRunLog`.
    """

    settings: Settings
    """The lease, the TTL, the longest run and the events kept per run."""

    async def begin(
        self, run_id: str, thread_id: str, *, owner: str = SHARED
    ) -> str | Owned | None:
        """Start a live run run by this log and reserve its thread; `None` when done.

        `owner` is the owner of the space the run's key is in. Otherwise nothing changes and
        the answer names what is in the way: `Owned` when the thread is another owner's
        (checked first), `run_id` itself when that run exists already, or the live run (its
        key) that holds the thread.
        """
        ...

    async def append(
        self, run_id: str, frames: Sequence[bytes], *, thread: ThreadRecord | None = None
    ) -> bool:
        """Add a batch of frames to a run this log runs, in one round trip.

        With `thread`, the batch is the run's last: the run ends, the thread record is written
        and the thread is free. `False` when the run is no longer this log's to write (it was
        called lost, or it expired): its worker stops it. An empty batch raises `UsageError`.
        """
        ...

    async def renew(self, run_id: str) -> LeaseAnswer:
        """Renew this log's lease on a live run; also tells whether a cancel was requested."""
        ...

    async def abandon(self, run_id: str) -> None:
        """Give up a live run of this log's before its end, as if its lease had run out.

        It ends with the `RUN_LOST` frame now, for every reader, rather than once the lease
        lapses; a run that ended, or is not this log's, is left as it is.
        """
        ...

    async def read(self, run_id: str, after: int, wait: float) -> Page | None:
        """The frames after id `after`, waiting up to `wait` seconds for some; `None`: unknown.

        A live run whose lease has run out is ended here with a `RUN_ERROR` `RUN_LOST` frame
        (`lost_frame`), so no reader waits on a dead run. An empty page means nothing came.
        """
        ...

    async def cancel(self, run_id: str) -> CancelAnswer:
        """Ask the run's worker, whichever it is, to cancel it."""
        ...

    def watch(self, run_id: str, on_cancel: Callable[[], object]) -> Callable[[], None]:
        """Call `on_cancel()` when a cancel of this log's run arrives; returns the unwatch."""
        ...

    async def thread(self, thread_id: str) -> ThreadRecord | None:
        """The thread's record after its finished runs; `None` when unknown or expired."""
        ...

    async def owner(self, thread_id: str) -> str | None:
        """Whose the thread is, with a finished or a live run; `None`: nobody's yet."""
        ...

    async def run_thread(self, run_id: str) -> str | None:
        """The thread of a run the log holds; `None` when it holds no such run."""
        ...

    async def keep_blob(self, thread_id: str, blob: bytes, *, owner: str = SHARED) -> None:
        """Keep `blob` for the thread in `owner`'s space for the TTL, in place of any before.

        A value is the agent's, opaque to the log, and kept under `run_key(owner, thread_id)`,
        so one owner never reads another's. One over `settings.max_blob_bytes` raises
        `BlobTooLarge` and keeps nothing.
        """
        ...

    async def take_blob(self, thread_id: str, *, owner: str = SHARED) -> bytes | None:
        """The thread's value in `owner`'s space, removed as it is read: one taker gets it.

        `None` when none was kept, or it expired.
        """
        ...

    async def aclose(self) -> None:
        """Release the log's connections."""
        ...
