"""A worker process of the tenancy tests: `counter` on a Redis log, behind bearer identities.

Run as `python tenancy_worker.py REDIS_URL LEASE`, it serves `durable_worker.counter` with
uvicorn on a free port of 127.0.0.1, prints `port N` once listening, and runs until stopped.
`authorize` maps each token of `TOKENS` to its identity, and `Bearer shared` to the shared space
(`True`); `thread_access` lets Carol read and run on (never cancel in) threads named `team-...`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import agui
from agui.runs import RedisRunLog
from durable_worker import counter, serve

TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob", "Bearer carol-token": "carol"}


def authorize(headers: Mapping[str, str]) -> str | bool:
    given = headers.get("authorization", "")
    return True if given == "Bearer shared" else TOKENS.get(given, False)


def team(identity: str, thread_id: str, action: str) -> bool:
    return identity == "carol" and thread_id.startswith("team-") and action != "cancel"


def main() -> None:
    url, lease = sys.argv[1], float(sys.argv[2])
    log = RedisRunLog(url, lease=lease)
    serve(agui.asgi_app(counter, runs=log, authorize=authorize, thread_access=team))


if __name__ == "__main__":
    main()
