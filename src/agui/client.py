r"""A small AG-UI client: POST a `RunAgentInput`, read the event stream back as typed events.

`AGUIClient` is for talking to an AG-UI server from Python: a smoke test against a deployed
endpoint, a test of your own server over real HTTP, a command-line tool. It sends what the
official TypeScript client sends (`POST`, `Content-Type: application/json`,
`Accept: text/event-stream`, the input as camelCase JSON) and reads the answer the way that
client does, with three differences:

- A stream that ends without a terminal event is an error (`ProtocolViolation` with rule
  `truncated`). The official client resolves such a run as completed; AG-UI says it has no
  outcome, and never a successful one.
- With `verify=True` (the default) every event goes through agui's own verifier, the one the
  server side uses, so an ordering error is named at the event that caused it; it is stricter
  than the official client's in the places `agui.verify` lists.
- The SSE parser follows the full specification, not only the `\n\n` splitting of the official
  client: LF, CRLF and lone CR line endings all end a line, so more servers can be read.

Events are read with `agui.parse_event`: unknown members are stripped with an
`agui.UnknownMemberWarning`, and an event type AG-UI 1.0 does not define (a newer protocol's, or
a retired `THINKING_*` one) is skipped with the same warning, as the official client drops it. A
known event with a malformed field is fatal (`agui.MalformedEvent`), as it is there.

The HTTP part needs `httpx`, installed with the `client` extra
(`pip install "agui-server[client]"`); `SSEParser` needs nothing and works on any byte source.

SSE framing, as `SSEParser` reads it (the WHATWG event-stream rules):

- Lines end with LF, CRLF or a lone CR; the bytes are UTF-8 (invalid bytes become U+FFFD) and
  one leading byte order mark is dropped.
- An empty line ends a frame. The frame's `data:` lines are joined with `\n`; a frame without
  `data:` lines (only comments, `event:`, `id:` or `retry:`) produces nothing.
- `data:` is read with or without one space after the colon; a line starting with `:` is a
  comment (servers send `: ping` to keep idle connections open).
- `event:`, `id:` and `retry:` are ignored: AG-UI does not use them.
- Bytes after the last empty line are an unfinished frame and are never produced.

Examples:
    >>> parser = SSEParser()
    >>> parser.feed(b'data: {"type":"RUN_STARTED",')
    []
    >>> parser.feed(b'"threadId":"t","runId":"r"}\r\n\r\n: ping\n\n')
    ['{"type":"RUN_STARTED","threadId":"t","runId":"r"}']
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, ClassVar, cast

from pydantic import JsonValue

from agui.errors import AguiError, DecodeError, ProtocolViolation, UnknownEventType
from agui.events import Event, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.messages import AssistantMessage
from agui.sse import SSE_MEDIA_TYPE
from agui.testing import FoldedRun, fold
from agui.types import RunAgentInput
from agui.verify import Rule, Verifier
from agui.wire import UnknownMemberWarning, parse_event, parse_json

if TYPE_CHECKING:
    import httpx
    from typing_extensions import Self

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_FRAME_BYTES",
    "AGUIClient",
    "FrameTooLarge",
    "HTTPStatusError",
    "SSEParser",
]

MAX_FRAME_BYTES = 10 * 1024 * 1024
"""The default limit on one SSE frame: 10 MiB, the official client's buffer limit."""

DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for a connection, and between two reads of a stream."""

_PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
_EOL = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_ERROR_BODY_LIMIT = 64 * 1024
_SHOWN_BODY = 500


class FrameTooLarge(DecodeError):
    """An SSE frame grew past the parser's `max_frame_bytes` before it ended.

    Examples:
        >>> parser = SSEParser(max_frame_bytes=8)
        >>> parser.feed(b"data: 0123456789")
        Traceback (most recent call last):
        ...
        agui.client.FrameTooLarge: an SSE frame grew past 8 bytes without ending...
    """

    code: ClassVar[str] = "FRAME_TOO_LARGE"


class HTTPStatusError(AguiError):
    """The server answered with a status other than 2xx, so no event stream was read.

    `status` is the HTTP status, `body` the response text (at most 64 KiB of it), and
    `payload` the parsed JSON body when there is one: agui servers refuse a request with
    `{"code": ..., "message": ...}`, which `server_code` and `server_message` read.

    Examples:
        >>> error = HTTPStatusError(422, '{"code":"INVALID_INPUT","message":"no runId"}')
        >>> error.code, error.status, error.server_code
        ('HTTP_STATUS_ERROR', 422, 'INVALID_INPUT')
        >>> print(error)
        HTTP 422: INVALID_INPUT: no runId
    """

    code: ClassVar[str] = "HTTP_STATUS_ERROR"

    def __init__(self, status: int, body: str, *, url: str | None = None) -> None:
        self.status = status
        self.body = body
        self.url = url
        self.payload: JsonValue | None = _json_or_none(body)
        where = f" from {url}" if url else ""
        super().__init__(f"HTTP {status}{where}: {self._detail()}")

    @property
    def server_code(self) -> str | None:
        """The `code` member of a JSON error body, if it has one."""
        return self._member("code")

    @property
    def server_message(self) -> str | None:
        """The `message` member of a JSON error body, if it has one."""
        return self._member("message")

    def _member(self, name: str) -> str | None:
        if isinstance(self.payload, dict):
            value = self.payload.get(name)
            if isinstance(value, str):
                return value
        return None

    def _detail(self) -> str:
        code, message = self.server_code, self.server_message
        if code is not None and message is not None:
            return f"{code}: {message}"
        text = self.body.strip()
        if not text:
            return "(empty body)"
        return text if len(text) <= _SHOWN_BODY else text[:_SHOWN_BODY] + "..."


def _json_or_none(body: str) -> JsonValue | None:
    try:
        return cast("JsonValue", parse_json(body))
    except DecodeError:
        return None


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
        >>> parser.incomplete
        False
    """

    def __init__(self, *, max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        if max_frame_bytes <= 0:
            message = f"max_frame_bytes must be positive, not {max_frame_bytes}"
            raise ValueError(message)
        self._limit = max_frame_bytes
        self._line = bytearray()
        self._data: list[str] = []
        self._data_size = 0
        self._after_cr = False
        self._first_line = True

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
        for match in _EOL.finditer(data, start):
            self._line += data[start : match.start()]
            self._check_size()
            self._take_line(frames)
            start = match.end()
            if match.group() == b"\r" and start == len(data):
                self._after_cr = True
        self._line += data[start:]
        self._check_size()
        return frames

    def _check_size(self) -> None:
        if len(self._line) + self._data_size > self._limit:
            self._line.clear()
            message = (
                f"an SSE frame grew past {self._limit} bytes without ending; the stream is cut "
                "off. Raise max_frame_bytes if the server sends events that large"
            )
            raise FrameTooLarge(message)

    def _take_line(self, frames: list[str]) -> None:
        raw = bytes(self._line)
        self._line.clear()
        if self._first_line:
            self._first_line = False
            raw = raw.removeprefix(_BOM)
        if not raw:
            if self._data:
                frames.append("\n".join(self._data))
            self._data.clear()
            self._data_size = 0
            return
        if raw.startswith(b":"):
            return
        name, colon, value = raw.partition(b":")
        if name != b"data":
            return  # event:, id:, retry: and unknown fields mean nothing to AG-UI
        if colon and value.startswith(b" "):
            value = value[1:]
        self._data.append(value.decode("utf-8", errors="replace"))
        self._data_size += len(value) + 1


class AGUIClient:
    """An HTTP client for one AG-UI endpoint: POST a run input, read its events as they stream.

    Redirects are followed, as browsers do (a 307 or 308 repeats the POST; Starlette answers
    `/agent` with a 307 to `/agent/` when an app is mounted there).

    Use it as an async context manager to reuse one connection pool for many runs; without
    that, each run opens and closes its own. Pass `http_client` to bring your own configured
    `httpx.AsyncClient` (proxies, TLS, a test transport); the client then never closes it.

    Args:
        url: The endpoint's URL.
        headers: Extra request headers, such as `Authorization`.
        timeout: Seconds to wait for the connection and between two reads of the stream;
            `None` waits forever. A server that sends keep-alive comments resets the wait.
        verify: Check every event with agui's verifier as it arrives (see `agui.verify`).
        max_frame_bytes: The limit on one SSE frame; a larger one raises `FrameTooLarge`.
        http_client: An `httpx.AsyncClient` to send the requests with.

    Raises:
        ImportError: `httpx` is not installed (install the `agui-server[client]` extra).

    Examples:
        >>> client = AGUIClient("http://127.0.0.1:8000/agent", headers={"Authorization": "x"})
        >>> client.url
        'http://127.0.0.1:8000/agent'
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        verify: bool = True,
        max_frame_bytes: int = MAX_FRAME_BYTES,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        _require_httpx()
        self.url = url
        self.headers: dict[str, str] = dict(headers or {})
        self.timeout = timeout
        self.verify = verify
        self.max_frame_bytes = max_frame_bytes
        self._given = http_client
        self._owned: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Self:
        if self._given is None and self._owned is None:
            self._owned = self._new_http_client()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool this client opened (never one passed as `http_client`)."""
        owned, self._owned = self._owned, None
        if owned is not None:
            await owned.aclose()

    async def stream(self, input: RunAgentInput) -> AsyncGenerator[Event, None]:  # noqa: A002
        """POST `input` and yield each event of the answer as it arrives.

        Stop early with `aclose()` on the iterator (or `contextlib.aclosing`); that closes the
        connection, which an agui server takes as a disconnect.

        Raises:
            HTTPStatusError: The server answered with a non-2xx status (before any event).
            ProtocolViolation: An event breaks an ordering rule (with `verify=True`), or the
                stream ended without a terminal event (rule `truncated`, always checked).
            DecodeError: A frame is not JSON, or not a valid event (`MalformedEvent`), or is
                too large (`FrameTooLarge`).
            httpx.HTTPError: The connection failed or timed out.
        """
        shared = self._given if self._given is not None else self._owned
        if shared is not None:
            async for event in self._stream(shared, input):
                yield event
            return
        async with self._new_http_client() as http:
            async for event in self._stream(http, input):
                yield event

    async def run(self, input: RunAgentInput) -> list[Event]:  # noqa: A002
        """POST `input` and return every event of the answer, terminal event included."""
        return [event async for event in self.stream(input)]

    async def fold(self, input: RunAgentInput) -> FoldedRun:  # noqa: A002
        """Run `input` and return what a UI holds afterwards: messages, state and outcome.

        The stream is applied with `agui.testing.fold` on top of the messages and state that
        `input` carried, which is what the official client does with the answer to a request.
        """
        events = await self.run(input)
        return fold(events, messages=input.messages, state=input.state)

    def _new_http_client(self) -> httpx.AsyncClient:
        import httpx  # noqa: PLC0415 - optional dependency, checked in __init__

        return httpx.AsyncClient(timeout=httpx.Timeout(self.timeout))

    async def _stream(
        self,
        http: httpx.AsyncClient,
        input: RunAgentInput,  # noqa: A002
    ) -> AsyncIterator[Event]:
        headers = {name.lower(): value for name, value in self.headers.items()}
        headers.update({"content-type": "application/json", "accept": SSE_MEDIA_TYPE})
        body = input.model_dump_json().encode()
        request = http.build_request("POST", self.url, content=body, headers=headers)
        response = await http.send(request, stream=True, follow_redirects=True)
        try:
            if not response.is_success:
                raise HTTPStatusError(
                    response.status_code, await _error_body(response), url=self.url
                )
            media = response.headers.get("content-type", "").strip().lower()
            if media == _PROTOBUF_MEDIA_TYPE:
                message = (
                    f"the server at {self.url} answered with the protobuf binding ({media}), "
                    "which this client cannot read; it asked for text/event-stream"
                )
                raise DecodeError(message)
            reader = _StreamReader(self, input)
            async for chunk in response.aiter_bytes():
                for event in reader.feed(chunk):
                    yield event
            reader.finish()
        finally:
            await response.aclose()


class _StreamReader:
    """Turns one response's bytes into checked events; sans-IO, like the parser under it."""

    def __init__(self, client: AGUIClient, input: RunAgentInput) -> None:  # noqa: A002
        self._url = client.url
        self._parser = SSEParser(max_frame_bytes=client.max_frame_bytes)
        known = {
            call.id
            for message in input.messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls or ()
        }
        self._verifier = Verifier(known_tool_call_ids=known) if client.verify else None
        self._frames = 0
        self._active: str | None = None
        self._ended = False

    def feed(self, chunk: bytes) -> list[Event]:
        events: list[Event] = []
        for data in self._parser.feed(chunk):
            index = self._frames
            self._frames += 1
            event = self._decode(data, index)
            if event is None:
                continue
            if self._verifier is not None:
                self._observe(self._verifier, event, index)
            self._track(event)
            events.append(event)
        return events

    def _decode(self, data: str, index: int) -> Event | None:
        try:
            return parse_event(data)
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
        if isinstance(event, RunStartedEvent):
            self._active = event.run_id
        elif isinstance(event, (RunFinishedEvent, RunErrorEvent)):
            self._active = None
            self._ended = True

    def finish(self) -> None:
        """Check that the stream ended after a terminal event."""
        if self._active is None and self._ended:
            return
        if self._active is not None:
            what = f"run '{self._active}' is still active"
        else:
            what = "no run was started"
        if self._parser.incomplete:
            what += "; the last frame was cut off"
        message = (
            f"The stream from {self._url} ended without a terminal event: {what} "
            f"({self._frames} frames read). A truncated run has no outcome; the server must end "
            "every run with 'RUN_FINISHED' or 'RUN_ERROR'."
        )
        raise ProtocolViolation(message, rule=Rule.TRUNCATED)


async def _error_body(response: httpx.Response) -> str:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= _ERROR_BODY_LIMIT:
            break
    return b"".join(chunks)[:_ERROR_BODY_LIMIT].decode("utf-8", errors="replace")


def _require_httpx() -> None:
    if importlib.util.find_spec("httpx") is None:
        message = (
            "agui.client.AGUIClient needs httpx, which is not installed: "
            'pip install "agui-server[client]"'
        )
        raise ImportError(message, name="httpx")
