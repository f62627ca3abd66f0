"""Keep-alive pings for an endpoint's streams: one timer for all of them.

A stream quiet for `keepalive` seconds gets an SSE comment frame, so that a proxy which closes
idle connections keeps it open. A timer per stream cost every open stream a timer handle and a
copy of its context, about 0.5 KiB under tracemalloc (`bench/bench_streams.py`), to send a ping
that a token stream never needs. One ticker per endpoint instead looks at its open streams every
`keepalive / 4` seconds: a quiet stream's ping comes after `keepalive` to `1.25 * keepalive`
seconds of quiet, and the ticker's own timer runs only while streams are open.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

__all__ = ["Pinged", "Pings"]

_TICKS_PER_KEEPALIVE = 4


class Pinged(Protocol):
    """A stream the ticker looks at: it sends a ping if it has been quiet long enough."""

    def ping_if_quiet(self, now: float, keepalive: float) -> None:
        """Send a ping if nothing went out for `keepalive` seconds before `now` (loop time)."""
        ...


class Pings:
    """The ticker of one endpoint's keep-alive pings.

    An endpoint serves from one event loop at a time; run under another (tests run an app
    under several, one after the other), the ticker starts afresh on it.

    Examples:
        >>> import asyncio
        >>> class Quiet:
        ...     def ping_if_quiet(self, now, keepalive):
        ...         print("ping")
        >>> async def main():
        ...     pings, stream = Pings(0.04), Quiet()
        ...     pings.add(stream)
        ...     await asyncio.sleep(0.015)
        ...     pings.discard(stream)
        ...     await asyncio.sleep(0.03)
        >>> asyncio.run(main())
        ping
    """

    def __init__(self, keepalive: float) -> None:
        self.keepalive = keepalive
        self._streams: dict[Pinged, None] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def add(self, stream: Pinged) -> None:
        """Look at `stream` from now on, until it is discarded."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._streams.clear()  # a stream of an earlier loop never ends on this one
            self._loop, self._timer = loop, None
        self._streams[stream] = None
        if self._timer is None:
            self._timer = loop.call_later(self.keepalive / _TICKS_PER_KEEPALIVE, self._tick)

    def discard(self, stream: Pinged) -> None:
        """Stop looking at `stream` (its stream ended); the timer stops with the last one."""
        self._streams.pop(stream, None)
        if not self._streams and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        loop = self._loop
        assert loop is not None  # noqa: S101 - armed on a loop
        now, keepalive = loop.time(), self.keepalive
        for stream in list(self._streams):
            stream.ping_if_quiet(now, keepalive)
        self._timer = (
            loop.call_later(keepalive / _TICKS_PER_KEEPALIVE, self._tick) if self._streams else None
        )
