"""The routes of durable runs, read from a request's path: events, cancel, thread.

An endpoint with a run log answers three paths below its own, wherever it is mounted (it cannot
know its mount, as with the capabilities route): `<P>/runs/<run id>/events`,
`<P>/runs/<run id>/cancel` and `<P>/threads/<thread id>`. A run is never posted to such a path,
so they cannot shadow the endpoint. Where a reader resumes comes from `Last-Event-ID` (what a
browser's `EventSource` sends when it reconnects) or else `?after=`; both name the id of the last
frame the reader has.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal
from urllib.parse import parse_qs

from agui.asgi._admission import Refusal, Scope

__all__ = ["Route", "parse_route", "resume_after"]


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
    if given is None:
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        given = query.get("after", ["0"])[-1]
    text = given.strip()
    if not text.isdigit() or not text.isascii():
        message = (
            f"the event id {given!r} is not one this endpoint sent: ids are the numbers of the "
            "`id:` lines of a run's stream; send the last one you read, or none to start over"
        )
        raise Refusal(400, "INVALID_EVENT_ID", message)
    return int(text)
