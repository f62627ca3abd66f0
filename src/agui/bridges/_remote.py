"""`remote`: another AG-UI endpoint, served as an agui agent through `agui.client`.

Each run POSTs its input to the far endpoint (the same thread and run ids, so its
`RUN_STARTED` matches) and relays the answer with `from_events`' rules. `agui.client` reads the
stream: it resumes a broken stream by `Last-Event-ID` where the far side numbers its frames (an
agui server with durable runs does), and reports one that ends without a terminal event, which
the bridge turns into `UPSTREAM_TRUNCATED`. It reads each frame with the bridge's reader
(`ForeignReader.decode`), so a far side on an older protocol is read as `from_events` reads an
adapter: its retired `THINKING_*` events arrive as `REASONING_*` ones. The client's own
verifier is off: the run's verifier checks every event, with the bridge's repair or strict
mode. When the run is cancelled (our client left, the server shuts down), the response is
closed, which the far side takes as its client leaving, and a durable far side is asked to
cancel the run too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, cast
from urllib.parse import quote

from pydantic import JsonValue

from agui.bridges._bridge import BridgeMode, RawEvents, relay
from agui.bridges._foreign import ForeignReader
from agui.client import AGUIClient
from agui.errors import Cancelled, ProtocolViolation, UpstreamTruncated, UsageError

if TYPE_CHECKING:
    from agui.context import RunContext
    from agui.events import Event
    from agui.types import RunOutcome

__all__ = ["RemoteAgent", "remote"]

_log = logging.getLogger("agui.bridges")


class RemoteAgent:
    """An agui agent that relays each run to another AG-UI endpoint; see `remote`.

    Examples:
        >>> RemoteAgent("http://127.0.0.1:8001/agent").url
        'http://127.0.0.1:8001/agent'
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        mode: BridgeMode = "repair",
        raw: RawEvents = "drop",
    ) -> None:
        if mode not in ("repair", "strict") or raw not in ("drop", "keep"):
            message = f"remote: mode is 'repair' or 'strict' and raw 'drop' or 'keep', not {mode!r}"
            message += f" and {raw!r}"
            raise UsageError(message)
        self.client = AGUIClient(url, headers=headers, verify=False)
        self.url = url
        self.mode: BridgeMode = mode
        self.raw: RawEvents = raw

    async def run(self, ctx: RunContext[JsonValue]) -> RunOutcome | None:
        """Relay one run to the far endpoint and its answer back through `ctx`."""
        reader = ForeignReader(ctx.run_id, keep_raw=self.raw == "keep")
        events = _upstream(self.client.stream(ctx.input, decode=reader.decode))
        try:
            return await relay(ctx, events, _decoded, strict=self.mode == "strict")
        except (asyncio.CancelledError, Cancelled):
            await self._cancel(ctx.run_id)
            raise

    async def _cancel(self, run_id: str) -> None:
        """Ask the far side to cancel `run_id`, as a durable one serves; others say 404."""
        import httpx  # noqa: PLC0415 - the client extra, loaded with agui.client

        endpoint = httpx.URL(self.url)
        path, mark, query = endpoint.raw_path.partition(b"?")
        segment = quote(run_id, safe="").encode("ascii")
        url = endpoint.copy_with(
            raw_path=path.rstrip(b"/") + b"/runs/" + segment + b"/cancel" + mark + query
        )
        try:
            async with httpx.AsyncClient(timeout=2) as http:
                await http.post(url, headers=self.client.headers)
        except httpx.HTTPError as error:
            _log.info("run %s: the far side was not asked to cancel it: %s", run_id, error)


def remote(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    mode: BridgeMode = "repair",
    raw: RawEvents = "drop",
) -> RemoteAgent:
    """Serve another AG-UI endpoint as an agui agent: verified, resumed, cancelled with ours.

    `url` is the far endpoint (any language, any framework, any protocol release its events
    can be read from); `headers` go with every request (say, its `Authorization`). Each run is
    relayed by `from_events`' rules (`mode`, `raw` as there). Needs the `client` extra (httpx).

    Examples:
        >>> agent = remote("http://127.0.0.1:8001/agent", headers={"Authorization": "Bearer x"})
        >>> agent.client.headers
        {'Authorization': 'Bearer x'}
    """
    return RemoteAgent(url, headers=headers, mode=mode, raw=raw)


async def _upstream(stream: AsyncGenerator[Event, None]) -> AsyncIterator[Event]:
    """The far side's events; a stream it broke off (rule `truncated`) is `UPSTREAM_TRUNCATED`."""
    async with contextlib.aclosing(stream):
        try:
            async for event in stream:
                yield event
        except ProtocolViolation as violation:
            # With its verifier off, the client's one violation is a stream with no terminal.
            raise UpstreamTruncated(str(violation)) from violation


def _decoded(item: object) -> Event | None:
    """An event the client read with the run's `ForeignReader.decode`: read already."""
    return cast("Event", item)
