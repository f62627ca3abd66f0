r"""The SSE reader under `agui.client`: bytes in, the `data` of each complete frame out.

It is sans-IO, so it works on any byte source (a socket, a file, a test's literal bytes) and
its output does not depend on how the stream was chunked; the framing rules it follows are
listed in `agui.client`'s docstring.
"""

from __future__ import annotations

import re

from agui._util.numbers import whole
from agui.errors import FrameTooLarge, UsageError

__all__ = ["MAX_FRAME_BYTES", "SSEParser"]

MAX_FRAME_BYTES = 10 * 1024 * 1024
"""The default limit on one SSE frame: 10 MiB, the official client's buffer limit."""

_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class SSEParser:
    r"""Incremental Server-Sent Events parser: bytes in, the `data` of each complete frame out.

    It is sans-IO: feed it bytes as they arrive, in chunks of any size and split anywhere, and
    it returns the frames those bytes complete. The frames it returns do not depend on how the
    stream was chunked. A frame (its unfinished line plus its data so far) larger than
    `max_frame_bytes` raises `FrameTooLarge`, so a server that never ends a frame cannot fill
    the memory of its reader.

    Examples:
        >>> parser = SSEParser()
        >>> parser.feed(b"data: first\ndata:second\n\nevent: x\nid: 7\n\n")
        ['first\nsecond']
        >>> parser.feed(b"data: 3\r")
        []
        >>> parser.feed(b"\n\r\n")
        ['3']
        >>> parser.incomplete, parser.last_event_id
        (False, '7')
    """

    def __init__(
        self, *, max_frame_bytes: int = MAX_FRAME_BYTES, last_event_id: str | None = None
    ) -> None:
        limit = whole(max_frame_bytes)
        if limit is None or limit <= 0:
            message = f"max_frame_bytes must be positive, not {max_frame_bytes}"
            raise UsageError(message)
        self._limit = limit
        self._line = bytearray()
        self._data: list[str] = []
        self._data_size = 0
        self._after_cr = False
        self._first_line = True
        self._fed = 0  # bytes fed before the current chunk
        self._frame_start = 0  # where the frame being read began, counted in bytes fed
        self._produced = 0
        self._id_buffer = last_event_id
        self.last_event_id = last_event_id
        """The `id:` in force at the last frame produced (`None` before any): where a reader
        that lost the stream resumes from, with `Last-Event-ID`."""

    @property
    def incomplete(self) -> bool:
        """Whether bytes of an unfinished frame are held (a partial line, or undelivered data)."""
        return bool(self._line) or bool(self._data)

    def feed(self, data: bytes) -> list[str]:
        """Take the next bytes of the stream; return the data of every frame they complete."""
        frames: list[str] = []
        start = 0
        if self._after_cr and data:
            # A CR ended the previous chunk: an LF first in this one belongs to that CRLF.
            self._after_cr = False
            if data[:1] == b"\n":
                start = 1
                if self._frame_start == self._fed:  # that CRLF ended a frame: the next is after it
                    self._frame_start += 1
        for match in _EOL.finditer(data, start):
            self._line += data[start : match.start()]
            self._check_size()
            start = match.end()
            if self._take_line(frames):
                self._frame_start = self._fed + start
            if match.group() == b"\r" and start == len(data):
                self._after_cr = True
        self._line += data[start:]
        self._check_size()
        self._fed += len(data)
        return frames

    def _check_size(self) -> None:
        if len(self._line) + self._data_size > self._limit:
            self._line.clear()
            raise FrameTooLarge(self._limit, frame=self._produced, offset=self._frame_start)

    def _take_line(self, frames: list[str]) -> bool:
        """Take one whole line; whether it was empty, the end of a frame."""
        raw = bytes(self._line)
        self._line.clear()
        if self._first_line:
            self._first_line = False
            raw = raw.removeprefix(_BOM)
        if not raw:
            if self._data:
                frames.append("\n".join(self._data))
                self.last_event_id = self._id_buffer
                self._produced += 1
            self._data.clear()
            self._data_size = 0
            return True
        if raw.startswith(b":"):
            return False
        name, colon, value = raw.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"id" and b"\0" not in value:
            # As the WHATWG rules say: it sets the id of this frame and of the ones after it.
            self._id_buffer = value.decode("utf-8", errors="replace")
        if name != b"data":
            return False  # event:, retry: and unknown fields mean nothing to AG-UI
        self._data.append(value.decode("utf-8", errors="replace"))
        self._data_size += len(value) + 1
        return False
