"""The routes of durable runs, read from a request's path: events, cancel, thread.

An endpoint with a run log answers three paths below its own, wherever it is mounted (it cannot
know its mount, as with the capabilities route): `<P>/runs/<run id>/events`,
`<P>/runs/<run id>/cancel` and `<P>/threads/<thread id>`. A run is never posted to such a path,
so they cannot shadow the endpoint. Where a reader resumes comes from `Last-Event-ID` (what a
browser's `EventSource` sends when it reconnects) or else `?after=`; both name the id of the last
frame the reader has. A run route names a run of the caller's own space, or with `?thread=`
(`thread_of`) a run of that thread, whoever owns it: how an identity the application's
`thread_access` lets in reaches the runs of a thread it shares.

Since a run's id and its thread's are path segments of those routes, a durable endpoint takes
only ids a URL can carry as one segment (`check_ids`): not empty, no `/`, not `.` or `..` (which
clients resolve away), at most `MAX_ID_LENGTH` characters. A run it could not answer for is
refused before it starts, rather than run and never found.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal
from urllib.parse import parse_qs

from agui.asgi._admission import Refusal, Scope

__all__ = ["MAX_ID_LENGTH", "Route", "check_ids", "parse_route", "resume_after", "thread_of"]

MAX_ID_LENGTH = 512
"""The longest run or thread id a durable endpoint takes: a URL with it fits any server's limit."""
_MAX_EVENT_ID = 2**63 - 1
"""The largest id a log can number a frame with (a stream entry's is a 64-bit integer)."""
_SHOWN = 40
"""How many characters of a refused event id its message repeats."""
_DOT_SEGMENTS = frozenset({".", ".."})


@dataclasses.dataclass(frozen=True)
class Route:
    """A durable-run route: what it asks for, and the run or thread it names."""

    kind: Literal["events", "cancel", "thread"]
    target: str


def parse_route(scope: Scope) -> Route | None:
    """The durable-run route a request's path names, or `None` for the endpoint itself.

    Examples:
        >>> parse_route({"path": "/agent/runs/r1/events"})
        Route(kind='events', target='r1')
        >>> parse_route({"path": "/agent/threads/t1/"}), parse_route({"path": "/agent"})
        (Route(kind='thread', target='t1'), None)
        >>> parse_route({"path": "/agent/runs/r1/other"}) is None
        True
    """
    parts = str(scope.get("path", "")).rstrip("/").split("/")
    if len(parts) >= 4 and parts[-3] == "runs" and parts[-2]:  # noqa: PLR2004 - "/runs/<id>/x"
        last = parts[-1]
        if last == "events":
            return Route("events", parts[-2])
        if last == "cancel":
            return Route("cancel", parts[-2])
    if len(parts) >= 3 and parts[-2] == "threads" and parts[-1]:  # noqa: PLR2004
        return Route("thread", parts[-1])
    return None


def resume_after(scope: Scope, headers: Mapping[str, str]) -> int:
    """The id of the last frame a reader has: `Last-Event-ID`, else `?after=`, else 0 (none).

    An empty or blank `Last-Event-ID` counts as none, as an `EventSource` means it.

    Examples:
        >>> resume_after({"query_string": b"after=7"}, {}), resume_after({}, {"last-event-id": "3"})
        (7, 3)
        >>> try:
        ...     resume_after({"query_string": b"after=x"}, {})
        ... except Refusal as refusal:
        ...     print(refusal.status, refusal.code)
        400 INVALID_EVENT_ID
    """
    given = headers.get("last-event-id")
    # An empty id is the SSE spelling of "none yet" (an `id:` line with no value resets it).
    if given is None or not given.strip():
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        given = query.get("after", ["0"])[-1]
    text = given.strip()
    # Counted before `int()`, which refuses more than 4,300 digits with a ValueError of its own.
    digits = len(text) <= len(str(_MAX_EVENT_ID)) and text.isascii() and text.isdigit()
    if not digits or int(text) > _MAX_EVENT_ID:
        shown = given if len(given) <= _SHOWN else f"{given[:_SHOWN]}... ({len(given)} characters)"
        message = (
            f"the event id {shown!r} is not one this endpoint sent: ids are the numbers of the "
            "`id:` lines of a run's stream; send the last one you read, or none to start over"
        )
        raise Refusal(400, "INVALID_EVENT_ID", message)
    return int(text)


def thread_of(scope: Scope) -> str | None:
    """The thread a run route names with `?thread=`, or `None` for the caller's own runs.

    Examples:
        >>> thread_of({"query_string": b"thread=t%201&after=3"}), thread_of({})
        ('t 1', None)
    """
    query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
    found = query.get("thread")
    return None if not found else found[-1]


def check_ids(run_id: str, thread_id: str) -> None:
    """Refuse (400) a run whose run or thread id cannot be one segment of a route's path.

    Examples:
        >>> check_ids("r1", "t1")
        >>> try:
        ...     check_ids("a/b", "t1")
        ... except Refusal as refusal:
        ...     print(refusal.status, refusal.code)
        400 INVALID_RUN_ID
    """
    for name, field, code, value in (
        ("run", "runId", "INVALID_RUN_ID", run_id),
        ("thread", "threadId", "INVALID_THREAD_ID", thread_id),
    ):
        problem = _segment_problem(value)
        if problem is not None:
            message = (
                f"the {name} id {_shown(value)} {problem}; a durable endpoint serves each run and "
                f"thread at a path that holds its id as one segment (runs/<run id>/events, "
                f"threads/<thread id>); pick a {field} that is not empty, '.' or '..', has no "
                f"'/' and at most {MAX_ID_LENGTH} characters (a UUID, say)"
            )
            raise Refusal(400, code, message)


def _segment_problem(value: str) -> str | None:
    if not value:
        return "is empty"
    if "/" in value:
        return "holds '/'"
    if value in _DOT_SEGMENTS:
        return "is a dot segment, which clients resolve away"
    if len(value) > MAX_ID_LENGTH:
        return f"is {len(value)} characters long"
    return None


def _shown(value: str) -> str:
    # A refusal of a huge id must not be huge itself.
    return repr(value) if len(value) <= MAX_ID_LENGTH else repr(value[:40] + "...")
