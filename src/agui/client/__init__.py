r"""A small AG-UI client: POST a `RunAgentInput`, read the event stream back as typed events.

`AGUIClient` is for talking to an AG-UI server from Python: a smoke test against a deployed
endpoint, a test of your own server over real HTTP, a command-line tool. It sends what the
official TypeScript client sends (`POST`, `Content-Type: application/json`,
`Accept: text/event-stream`, the input as camelCase JSON, with `protocolVersion` "1.0" when the
input has none, as a 1.0 client declares) and reads the answer the way that client does, with
three differences:

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
known event with a malformed field is fatal (`agui.errors.MalformedEvent`), as it is there.

**Resuming.** A server with durable runs (`agui.asgi_app(agent, runs=...)`) numbers its frames
with `id:` lines and serves each run again at `<url>/runs/<run id>/events` (the run id
percent-quoted as one path segment, the query string of `url` kept). When such a stream breaks
before its terminal event (the connection drops, or the body ends early), the client asks for the
rest with `Last-Event-ID`, so the caller sees one unbroken run: every event once, in order,
verified as one stream. It tries `reconnects` times in a row (3 by default), waiting
`reconnect_delay` seconds before the first try and that much longer before each next one (0.25,
0.5 and 0.75 seconds by default); a try that brings a frame starts the count again, and a try
that cannot connect, gets no answer, or a 502, 503 or 504 (a server or proxy that is busy or
restarting), counts as one. So does a durable endpoint's "resume later" (its own `RUN_ERROR`
`RUN_LOG_UNAVAILABLE` ending a stream with ids, while the run may go on), which is not taken as
the run's end. A server that refuses the resume otherwise (a 404 for a run it does not know) is
not asked again.

**How a run can fail to end.** A stream that stops before its terminal event, and cannot be
resumed (no ids, or every try failed), is truncated: a `ProtocolViolation` with rule `truncated`
that says what was read and why it stopped, the broken connection or the failed resume being its
`__cause__`. A server that sends nothing for `timeout` seconds is not taken as gone: the client
raises httpx's timeout (`httpx.ReadTimeout`), with a message that names where the stream stopped
and the option that waits longer.

The HTTP part needs `httpx`, installed with the `client` extra
(`pip install "agui-server[client]"`); `SSEParser` needs nothing and works on any byte source.

SSE framing, as `SSEParser` reads it (the WHATWG event-stream rules):

- Lines end with LF, CRLF or a lone CR; the bytes are UTF-8 (invalid bytes become U+FFFD) and
  one leading byte order mark is dropped.
- An empty line ends a frame. The frame's `data:` lines are joined with `\n`; a frame without
  `data:` lines (only comments, `event:`, `id:` or `retry:`) produces nothing.
- `data:` is read with or without one space after the colon; a line starting with `:` is a
  comment (servers send `: ping` to keep idle connections open).
- `event:` and `retry:` are ignored: AG-UI does not use them. `id:` is kept, for resuming.
- Bytes after the last empty line are an unfinished frame and are never produced.

Examples:
    >>> parser = SSEParser()
    >>> parser.feed(b'data: {"type":"RUN_STARTED",')
    []
    >>> parser.feed(b'"threadId":"t","runId":"r"}\r\n\r\n: ping\n\n')
    ['{"type":"RUN_STARTED","threadId":"t","runId":"r"}']
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from pydantic_core import PydanticSerializationError

from agui._util.numbers import duration, whole
from agui.client._ending import lost, refused_for_good, timed_out
from agui.client._parser import MAX_FRAME_BYTES, SSEParser
from agui.client._reader import StreamReader, error_body
from agui.errors import DecodeError, HTTPStatusError, RunLogError, UsageError
from agui.events import Event
from agui.fold import FoldedRun, fold
from agui.runner import PROTOCOL_VERSION
from agui.sse import SSE_MEDIA_TYPE
from agui.types import RunAgentInput
from agui.wire import parse_event

if TYPE_CHECKING:
    import httpx
    from typing_extensions import Self

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_FRAME_BYTES",
    "RECONNECTS",
    "AGUIClient",
    "SSEParser",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for a connection, and between two reads of a stream."""
RECONNECTS = 3
"""How many times in a row a broken stream with ids is resumed before the client gives up."""

_PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"


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
        reconnects: How many times in a row to resume a broken stream that has ids; 0: never.
        reconnect_delay: Seconds to wait before the first try to resume; each next try in a
            row waits that much longer than the one before.
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
        reconnects: int = RECONNECTS,
        reconnect_delay: float = 0.25,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        _require_httpx()
        problems = _problems(url, timeout, (reconnects, reconnect_delay))
        if problems:
            raise UsageError("AGUIClient: " + "; ".join(problems))
        self.url = url
        self.headers: dict[str, str] = dict(headers or {})
        self.timeout = timeout
        self.verify = verify
        self.max_frame_bytes = max_frame_bytes
        self.reconnects = reconnects
        self.reconnect_delay = reconnect_delay
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

    async def stream(
        self,
        input: RunAgentInput,  # noqa: A002
        *,
        decode: Callable[[str], Event | None] = parse_event,
    ) -> AsyncGenerator[Event, None]:
        """POST `input` and yield each event of the answer as it arrives.

        An input without `protocol_version` goes out declaring "1.0", the protocol this client
        reads, so that a server which downgrades for older clients sends it the 1.0 stream.

        `decode` reads each frame's data as an event (`None`: drop the frame); its errors are
        the frame's, as `agui.parse_event`'s are. A reader of older protocols passes its own:
        `agui.bridges.remote` reads the retired `THINKING_*` events as `REASONING_*` ones.

        Stop early with `aclose()` on the iterator (or `contextlib.aclosing`); that closes the
        connection, which an agui server takes as a disconnect.

        Raises:
            HTTPStatusError: The server answered with a non-2xx status (before any event).
            ProtocolViolation: An event breaks an ordering rule (with `verify=True`), or the
                stream ended without a terminal event (rule `truncated`, always checked: the
                body ended early or the connection broke, and it could not be resumed; the
                message names the break or the failed resume, which is its `__cause__`).
            DecodeError: The answer is not an event stream (another content type), or a frame
                is not JSON, or not a valid event (`MalformedEvent`), or is too large
                (`FrameTooLarge`).
            httpx.HTTPError: The first connection failed (`httpx.ConnectError`), or the server
                sent nothing within `timeout` (`httpx.ReadTimeout`, its message naming where
                the stream stopped and the option to raise).
        """
        shared = self._given if self._given is not None else self._owned
        if shared is not None:
            async for event in self._stream(shared, input, decode):
                yield event
            return
        async with self._new_http_client() as http:
            async for event in self._stream(http, input, decode):
                yield event

    async def run(self, input: RunAgentInput) -> list[Event]:  # noqa: A002
        """POST `input` and return every event of the answer, terminal event included."""
        return [event async for event in self.stream(input)]

    async def fold(self, input: RunAgentInput) -> FoldedRun:  # noqa: A002
        """Run `input` and return what a UI holds afterwards: messages, state and outcome.

        The stream is applied with `agui.fold.fold` on top of the messages and state that
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
        decode: Callable[[str], Event | None],
    ) -> AsyncIterator[Event]:
        request, headers = self._post(http, input)
        limit = self.max_frame_bytes
        reader = StreamReader(
            self.url, input, max_frame_bytes=limit, verify=self.verify, decode=decode
        )
        events_url = _events_url(self.url, input.run_id)
        response: httpx.Response | None = await self._open(http, request)
        failure: Exception | None = None  # why the last response ended early, or never came
        tries = 0  # resumes in a row that brought no frame
        while True:
            read = response is not None
            if response is not None:
                before = reader.frames
                try:
                    async for chunk in response.aiter_bytes():
                        for event in reader.feed(chunk):
                            yield event
                    failure = None
                except _httpx_errors() as error:
                    failure = error
                finally:
                    await response.aclose()
                tries = 0 if reader.frames > before else tries
                if reader.unavailable is not None:
                    failure = RunLogError(reader.unavailable)
            if reader.ended:
                return
            refused = refused_for_good(failure)
            last_id = reader.last_event_id
            if last_id is None or tries >= self.reconnects or refused:
                longer = self._longer()
                raise lost(reader, failure, tries=tries, read=read, longer=longer) from failure
            tries += 1
            await asyncio.sleep(self.reconnect_delay * tries)
            resume = headers | {"last-event-id": last_id}
            response, failure = await self._resume(http, resume, reader, events_url)

    def _post(
        self,
        http: httpx.AsyncClient,
        input: RunAgentInput,  # noqa: A002
    ) -> tuple[httpx.Request, dict[str, str]]:
        """The run's POST, and the headers of a GET that resumes it (no body, so no type)."""
        headers = {name.lower(): value for name, value in self.headers.items()}
        headers.pop("content-type", None)
        headers["accept"] = SSE_MEDIA_TYPE
        try:
            body = _declared(input).model_dump_json().encode()
        except PydanticSerializationError as error:
            message = (
                f"AGUIClient cannot send this RunAgentInput as JSON ({error}): its text must be "
                "valid Unicode, and a lone surrogate (as a file name read with surrogateescape "
                "may hold) has no UTF-8; fix or drop that text"
            )
            raise UsageError(message) from None
        posted = headers | {"content-type": "application/json"}
        return http.build_request("POST", self.url, content=body, headers=posted), headers

    async def _resume(
        self,
        http: httpx.AsyncClient,
        headers: dict[str, str],
        reader: StreamReader,
        url: httpx.URL,
    ) -> tuple[httpx.Response | None, Exception | None]:
        """The rest of a broken run, from `url`; or, when it cannot be had, why not."""
        try:
            response = await self._open(http, http.build_request("GET", url, headers=headers))
        except (HTTPStatusError, DecodeError, _httpx_errors()) as error:
            return None, error
        reader.resume(str(url))
        return response, None

    def _longer(self) -> str:
        """How to give a stalled server more time, in this client's terms."""
        if self._given is None:
            return f"raise AGUIClient's timeout (timeout={self.timeout!r} now; None waits forever)"
        return "raise the timeout of the httpx.AsyncClient passed as http_client"

    async def _open(self, http: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
        """Send `request`; the streaming response, checked to be a 2xx SSE stream."""
        import httpx  # noqa: PLC0415 - optional dependency, checked in __init__

        try:
            response = await http.send(request, stream=True, follow_redirects=True)
        except httpx.TimeoutException as error:
            what = f"The request to {request.url} got no answer"
            raise timed_out(error, what, self._longer()) from error
        try:
            await self._check(response, self.url if request.method == "POST" else str(request.url))
        except BaseException:
            await response.aclose()
            raise
        return response

    async def _check(self, response: httpx.Response, url: str) -> None:
        if not response.is_success:
            raise HTTPStatusError(response.status_code, await error_body(response), url=url)
        given = response.headers.get("content-type", "")
        media = given.partition(";")[0].strip().lower()
        if media == _PROTOBUF_MEDIA_TYPE:
            message = (
                f"the server at {url} answered with the protobuf binding ({given}), "
                f"which this client cannot read; it asked for {SSE_MEDIA_TYPE}"
            )
            raise DecodeError(message)
        # A server that names no type is read as a stream, as the official client reads it.
        if media and media != SSE_MEDIA_TYPE:
            message = (
                f"the server at {url} answered HTTP {response.status_code} with {given}, not an "
                f"event stream: an AG-UI endpoint answers a run with {SSE_MEDIA_TYPE}; check that "
                "the URL names the endpoint itself, not a page or a proxy's error"
            )
            raise DecodeError(message)


def _events_url(url: str, run_id: str) -> httpx.URL:
    """Where a server with durable runs serves a run again: `<url>/runs/<run id>/events`.

    The run id is one path segment, so it is percent-quoted, `/` included; the endpoint's query
    string is kept, since it may carry what the endpoint needs (a key, a version).
    """
    import httpx  # noqa: PLC0415 - optional dependency, checked in AGUIClient

    endpoint = httpx.URL(url)
    path, mark, query = endpoint.raw_path.partition(b"?")
    segment = quote(run_id, safe="").encode("ascii")
    return endpoint.copy_with(
        raw_path=path.rstrip(b"/") + b"/runs/" + segment + b"/events" + mark + query
    )


def _declared(run_input: RunAgentInput) -> RunAgentInput:
    """`run_input` as posted: with the 1.0 `protocolVersion` the client reads, unless it has one.

    A server reads a request without it as a pre-1.0 client's and may downgrade the stream
    (agui's endpoint does, by default), which this client, a 1.0 one, has no need for.
    """
    if run_input.protocol_version is not None:
        return run_input
    return run_input.model_copy(update={"protocol_version": PROTOCOL_VERSION})


def _httpx_errors() -> type[Exception]:
    """The errors of a connection that broke while a stream was read."""
    import httpx  # noqa: PLC0415 - optional dependency, checked in AGUIClient

    return httpx.TransportError


def _require_httpx() -> None:
    if importlib.util.find_spec("httpx") is None:
        message = (
            "agui.client.AGUIClient needs httpx, which is not installed: "
            'pip install "agui-server[client]"'
        )
        raise ImportError(message, name="httpx")


def _problems(url: object, timeout: object, reconnecting: tuple[object, object]) -> list[str]:
    """What is wrong with a client's options, each named with what it takes."""
    problems: list[str] = []
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        problems.append(
            f"the url must be an http:// or https:// URL of the endpoint, such as "
            f"'http://127.0.0.1:8000/agent', not {url!r}"
        )
    if timeout is not None and duration(timeout) is None:
        problems.append(f"timeout must be a positive number of seconds or None, not {timeout!r}")
    reconnects, delay = reconnecting
    count = whole(reconnects)
    if count is None or count < 0:
        problems.append(f"reconnects must be a whole number, 0 or more, not {reconnects!r}")
    if duration(delay, zero=True) is None:
        problems.append(f"reconnect_delay must be zero or more seconds, not {delay!r}")
    return problems
