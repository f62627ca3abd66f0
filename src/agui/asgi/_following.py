"""Reading a durable run to a client: from the run log, from an id onwards, to its end.

Every response of an endpoint with a run log is read from the log, the POST that started the
run as much as a `GET <P>/runs/<id>/events` on another worker, so each client sees the same
frames with the same ids. The follower blocks on the log for at most the log's poll interval at
a time, which is how a dead owner is noticed (the log ends such a run `RUN_LOST`), and stops at
the frame that ends the run, when the client leaves, or when the log cannot be read (then with a
`RUN_ERROR` frame of its own, `RUN_LOG_UNAVAILABLE`, which has no `id:` since the log never held
it: a client resuming after it resumes from the last frame the log gave). A run that leaves the
log before its end is read (it expired, or the store lost its keys) ends the stream the same way,
with `RUN_LOST`, and so does a reader that fell behind the log's `maxlen` (`EVENTS_TRIMMED`): the
events it missed are gone, and a stream with a hole in it could not be folded. A reader always
gets one terminal event.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from agui.asgi._admission import Receive, Send
from agui.asgi._encoding import Encoding, broken_frames
from agui.asgi._streaming import watch_client
from agui.asgi._writer import try_send
from agui.errors import AguiError, RunLogError
from agui.events import RunErrorEvent
from agui.proto import PROTO_MEDIA_TYPE
from agui.runs import Page, RunLog
from agui.sse import comment_frame
from agui.wire import parse_event

__all__ = ["Follower", "frames_writer", "sse_frames"]

FramesWriter = Callable[[list[tuple[int, bytes]]], tuple[bytes, bool]]
"""The bytes of a page of a log's frames, and whether the stream may go on after them."""

_log = logging.getLogger("agui.asgi")
_PING = comment_frame("ping")
_UNAVAILABLE = RunErrorEvent(
    message="the run log cannot be reached, so this stream ends here; resume it later",
    code="RUN_LOG_UNAVAILABLE",
)
_VANISHED = RunErrorEvent(
    message=(
        "the run is no longer in the run log (it expired, or the log lost its data) before its "
        "end was read, so its outcome is unknown; read the thread for what it left"
    ),
    code="RUN_LOST",
)


def sse_frames(frames: list[tuple[int, bytes]]) -> bytes:
    r"""SSE frames with `id:` lines from a log's `(id, JSON)` pairs.

    Examples:
        >>> sse_frames([(1, b'{"type":"RUN_STARTED"}')])
        b'id: 1\ndata: {"type":"RUN_STARTED"}\n\n'
    """
    return b"".join([b"id: %d\ndata: %b\n\n" % frame for frame in frames])


def frames_writer(encoding: Encoding) -> FramesWriter:
    r"""How a log's frames become the bytes of an encoding: SSE with ids, or protobuf.

    The log holds JSON, which every event can be written as. The binary binding cannot carry
    every JSON value (an integer past a double's range): a page holding one is written up to
    it, then a `RUN_ERROR` of its own ends that reader's stream, as the endpoint without a log
    ends it. The run itself goes on in the log, for readers of another encoding.

    Examples:
        >>> from agui.asgi._encoding import SSE
        >>> frames_writer(SSE)([(1, b'{"type":"RUN_STARTED"}')])
        (b'id: 1\ndata: {"type":"RUN_STARTED"}\n\n', True)
    """
    if (b"content-type", PROTO_MEDIA_TYPE.encode()) not in encoding.headers:
        return _sse_page
    frame = encoding.frame

    def proto_frames(frames: list[tuple[int, bytes]]) -> tuple[bytes, bool]:
        # The binary binding has no ids: a protobuf reader resumes with `?after=` by count.
        events = [parse_event(data) for _, data in frames]
        try:
            return b"".join([frame(event) for event in events]), True
        except (ValueError, AguiError):
            return broken_frames(list(events), encoding), False

    return proto_frames


def _sse_page(frames: list[tuple[int, bytes]]) -> tuple[bytes, bool]:
    return sse_frames(frames), True


class Follower:
    """Streams one run from a log to one client (see the module docstring)."""

    def __init__(self, log: RunLog, keepalive: float | None) -> None:
        self._log = log
        self._keepalive = keepalive

    async def stream(
        self,
        run_id: str,
        after: int,
        first: Page,
        encoding: Encoding,
        cors: list[tuple[bytes, bytes]],
        receive: Receive,
        send: Send,
    ) -> None:
        """Send the 200, then `first` (the page after `after`) and what follows, to the end."""
        headers = [*encoding.headers, *cors]
        if not await try_send(
            send, {"type": "http.response.start", "status": 200, "headers": headers}
        ):
            return
        pumping = asyncio.create_task(self._pump(run_id, after, first, encoding, send))
        try:
            await watch_client(receive, pumping)
        finally:
            pumping.cancel()
            await asyncio.wait({pumping})
        if not pumping.cancelled() and pumping.result():
            await try_send(send, {"type": "http.response.body", "body": b""})

    async def _pump(
        self, run_id: str, cursor: int, first: Page, encoding: Encoding, send: Send
    ) -> bool:
        """Write frames until the run's end (`True`), or the client or the run went (`False`)."""
        write = frames_writer(encoding)
        loop = asyncio.get_running_loop()
        idle_since = loop.time()
        page: Page | None = first
        while page is not None:
            if page.frames:
                data, going = self._written(page.frames, cursor, write, encoding)
                cursor = page.frames[-1][0]
                idle_since = loop.time()
                if not await try_send(send, _body(data)):
                    return False
                if not going:
                    return True
            elif self._idle(loop.time() - idle_since, encoding):
                idle_since = loop.time()
                if not await try_send(send, _body(_PING)):
                    return False
            if page.ended:
                return True
            try:
                page = await self._log.read(run_id, cursor, self._log.settings.poll)
            except RunLogError:
                _log.exception("reading run %s from its log failed; ending its stream", run_id)
                await try_send(send, _body(encoding.frame(_UNAVAILABLE)))
                return True
        # The run left the log while it was read: its end will never come.
        await try_send(send, _body(encoding.frame(_VANISHED)))
        return True

    def _written(
        self, frames: list[tuple[int, bytes]], cursor: int, write: FramesWriter, encoding: Encoding
    ) -> tuple[bytes, bool]:
        """A page's bytes, or, when frames after `cursor` were trimmed unread, the stream's end."""
        missed = frames[0][0] - cursor - 1
        if missed <= 0:
            return write(frames)
        maxlen = self._log.settings.maxlen
        _log.warning("a reader fell %d events behind the run log's maxlen of %d", missed, maxlen)
        message = (
            f"this stream fell behind: the run log keeps a run's latest {maxlen} events, and the "
            f"{missed} after event {cursor} were dropped before they were read, so the stream "
            "cannot go on whole; raise the log's maxlen, or read the thread for the run's result"
        )
        return encoding.frame(RunErrorEvent(message=message, code="EVENTS_TRIMMED")), False

    def _idle(self, idle: float, encoding: Encoding) -> bool:
        return self._keepalive is not None and encoding.pings and idle >= self._keepalive


def _body(data: bytes) -> dict[str, object]:
    return {"type": "http.response.body", "body": data, "more_body": True}
