"""Durable runs: run logs that keep a run's events beyond its HTTP response.

Without a log, a run lives inside one response: the client leaves and the run is cancelled or
read by nobody, and no other worker can see it. With `agui.asgi_app(agent, runs=...)` the
endpoint writes each run's frames to a `RunLog` and streams every response from there, so a run
goes on when its client leaves, is resumed from the last event a client saw (SSE `id:` lines
and `Last-Event-ID`), is cancelled from any worker, and leaves a thread record when it ends
(see "Durable runs and many workers" in the HTTP guide).

- `MemoryRunLog()`: one process; runs survive their connections, not a restart.
- `RedisRunLog(url)`: many workers sharing one Redis (the `redis` extra); a run started on one
  is read, resumed and cancelled on any other, and a dead worker's runs end `RUN_LOST` within
  the lease.

Both keep the same settings (`Settings`): `lease` (15 s), `ttl` for finished runs and threads
(a day), `max_run_seconds` (an hour) and `maxlen`, the events kept per run (10,000; older ones
are trimmed, so a run's memory in the store is bounded by about `maxlen` frames), and
`max_blob_bytes`, the largest value an agent may keep for a thread between its runs (4 MiB;
`RunLog.keep_blob`, `take_blob`: how a bridge resumes a paused framework run on any worker).

Runs and threads belong to their owner, the identity `authorize` named (`SHARED` for `True`):
a run is kept under `run_key(owner, run_id)`, and a thread's owner beside its record (see
"How ownership is stored" in the reference).

Examples:
    >>> import agui
    >>> from agui.runs import MemoryRunLog
    >>> async def hello(ctx):
    ...     ctx.say("Hello!")
    >>> app = agui.asgi_app(hello, runs=MemoryRunLog(lease=5.0))
"""

from __future__ import annotations

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
    RunLog,
    Settings,
    ThreadRecord,
    lost_frame,
    run_key,
)
from agui.runs._memory import MemoryRunLog
from agui.runs._redis import RedisRunLog

__all__ = [
    "LEASE",
    "MAXLEN",
    "MAX_BLOB_BYTES",
    "MAX_RUN_SECONDS",
    "SHARED",
    "TTL",
    "CancelAnswer",
    "LeaseAnswer",
    "MemoryRunLog",
    "Owned",
    "Page",
    "RedisRunLog",
    "RunLog",
    "Settings",
    "ThreadRecord",
    "lost_frame",
    "run_key",
]
