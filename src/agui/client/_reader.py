"""One response read as AG-UI events: frames parsed, decoded, verified, and the end checked.

`AGUIClient` owns the HTTP exchange; what it does with the body's bytes is here, sans-IO like
the parser under it, so each rule (an unknown event type is skipped with a warning, a malformed
one is fatal, a stream must end after a terminal event) is one method that names the frame.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from agui.client._parser import SSEParser
from agui.errors import (
    DecodeError,
    FrameTooLarge,
    ProtocolViolation,
    RunLogError,
    UnknownEventType,
    UnknownMemberWarning,
)
from agui.events import Event, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.messages import AssistantMessage
from agui.types import RunAgentInput
from agui.verify import Rule, Verifier
from agui.wire import parse_event

if TYPE_CHECKING:
    import httpx

__all__ = ["StreamReader", "error_body"]

_ERROR_BODY_LIMIT = 64 * 1024


class StreamReader:
    """Turns one response's bytes into checked events; sans-IO, like the parser under it."""

    def __init__(
        self,
        url: str,
        input: RunAgentInput,  # noqa: A002
        *,
        max_frame_bytes: int,
        verify: bool,
        decode: Callable[[str], Event | None] = parse_event,
    ) -> None:
        self._url = url
        self._read = decode
        self._limit = max_frame_bytes
        self._parser = SSEParser(max_frame_bytes=max_frame_bytes)
        known = {
            call.id
            for message in input.messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls or ()
        }
        self._verifier = Verifier(known_tool_call_ids=known) if verify else None
        self._frames = 0
        self._last: tuple[int, str] | None = None  # the frame and type of the last event read
        self.unavailable: str | None = None
        """The message of the server's "resume later" frame that ended the last response."""
        self._active: str | None = None
        self._ended = False

    @property
    def ended(self) -> bool:
        """Whether the run's terminal event has been read."""
        return self._ended and self._active is None

    @property
    def frames(self) -> int:
        """How many frames have been read, over every response of the run."""
        return self._frames

    @property
    def last_event_id(self) -> str | None:
        """The SSE id of the last frame read, where a broken stream resumes; `None`: no ids."""
        return self._parser.last_event_id

    def resume(self, url: str) -> None:
        """Read the rest of the run from another response: a new SSE stream, the same run."""
        self._url = url
        self.unavailable = None
        last = self._parser.last_event_id
        self._parser = SSEParser(max_frame_bytes=self._limit, last_event_id=last)

    def feed(self, chunk: bytes) -> list[Event]:
        events: list[Event] = []
        try:
            frames = self._parser.feed(chunk)
        except FrameTooLarge as error:  # the parser knows where; the stream's URL, only here
            frame, offset, source = error.frame, error.offset, str(self._url)
            raise FrameTooLarge(error.limit, frame=frame, offset=offset, source=source) from None
        for data in frames:
            index = self._frames
            event = self._decode(data, index)
            if self._held_off(event):
                continue
            self._frames += 1
            if event is None:
                continue
            if self._verifier is not None:
                self._observe(self._verifier, event, index)
            self._track(event)
            self._last = (index, event.type)
            events.append(event)
        return events

    def _held_off(self, event: Event | None) -> bool:
        """Whether `event` is a durable endpoint's own "resume later", not an event of the run.

        A reader whose run log could not be read ends its stream with a `RUN_ERROR`
        `RUN_LOG_UNAVAILABLE` of its own (agui's `asgi_app(runs=...)`), while the run may go on:
        in a stream with ids it is taken as a break, and the run is resumed.
        """
        if not isinstance(event, RunErrorEvent) or event.code != RunLogError.code:
            return False
        if self._parser.last_event_id is None:  # no ids, no resume: it ends the run as sent
            return False
        self.unavailable = event.message
        return True

    def _decode(self, data: str, index: int) -> Event | None:
        try:
            return self._read(data)
        except UnknownEventType as error:
            message = f"Dropped frame {index} from {self._url}: {error}"
            warnings.warn(UnknownMemberWarning(message), stacklevel=2)
            return None
        except DecodeError as error:
            message = f"frame {index} from {self._url} is not a valid AG-UI event: {error}"
            raise type(error)(message, path=error.path) from error

    def _observe(self, verifier: Verifier, event: Event, index: int) -> None:
        try:
            verifier.observe(event)
        except ProtocolViolation as violation:
            message = f"frame {index} ({event.type}) from {self._url}: {violation}"
            raise ProtocolViolation(message, rule=violation.rule, event=event) from violation

    def _track(self, event: Event) -> None:
        match event:
            case RunStartedEvent():
                self._active = event.run_id
            case RunFinishedEvent() | RunErrorEvent():
                self._active = None
                self._ended = True
            case _:
                pass  # only the run's boundaries move where the stream is

    def stalled(self) -> str:
        """Where a stream that stopped sending stopped: the start of a timeout's message."""
        if self._last is None:
            where = "before its first event"
        else:
            index, kind = self._last
            where = f"after frame {index} ({kind})"
        return f"The stream from {self._url} sent nothing more {where}"

    def truncation(self, detail: str | None = None) -> ProtocolViolation:
        """The error of a stream that ended before its terminal event; `detail` says more."""
        if self._active is not None:
            what = f"run '{self._active}' is still active"
        else:
            what = "no run was started"
        if self._parser.incomplete:
            what += "; the last frame was cut off"
        more = f"; {detail}" if detail else ""
        message = (
            f"The stream from {self._url} ended without a terminal event: {what} "
            f"({self._frames} frames read){more}. A truncated run has no outcome; the server "
            "must end every run with 'RUN_FINISHED' or 'RUN_ERROR'."
        )
        return ProtocolViolation(message, rule=Rule.TRUNCATED)


async def error_body(response: httpx.Response) -> str:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= _ERROR_BODY_LIMIT:
            break
    return b"".join(chunks)[:_ERROR_BODY_LIMIT].decode("utf-8", errors="replace")
