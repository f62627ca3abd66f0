"""Admitting an HTTP request to the AG-UI endpoint: everything checked before a stream starts.

The method, the content negotiation (`Accept`, `Content-Type`), the body (its size, counted as
it is read, the time it takes to arrive, its JSON, its `RunAgentInput`) are each checked by one
function here that raises `Refusal`, which `send_refusal` writes as a JSON error body;
`agui.asgi` calls them in order, after `check_head` and the checks of which pages and hosts may
use the endpoint (`agui.asgi._origins`).

`check_head` holds whatever HTTP parser the server picked: h11 (uvicorn's when httptools is not
installed, and the one `agui serve` pins) refuses a head over its size limit and an HTTP/1.1
request without `Host` before the app sees them, while httptools has neither limit and passes
both on. The head is weighed from the scope (the request line's parts and each header, plus
their separators), so a request h11 admitted under the same limit is never refused here.

`Content-Type` must announce JSON, and a missing one is refused too: a browser sends a
cross-site POST without asking the server first only when its type is a form, `text/plain` or
absent, so requiring JSON means every page of another origin must pass a CORS preflight first.
A body must arrive whole within the endpoint's `body_timeout` of the request's headers; a body
that trickles or stalls would otherwise hold a connection, and the memory read so far, for as
long as the client likes. A 422 lists each problem of the input once, at most
`MAX_LISTED_PROBLEMS` of them, and counts the rest, so a huge invalid body does not get a
larger answer.

`check_accept` picks the media type of the answer with `agui.asgi._negotiation`'s
`negotiate` (RFC 9110's reading of `Accept`, and protobuf only when it is named).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import warnings
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any, cast

from agui.asgi._negotiation import OFFERED, negotiate
from agui.errors import DecodeError, InvalidInput, UnknownMemberWarning
from agui.proto import PROTO_MEDIA_TYPE
from agui.types import RunAgentInput
from agui.wire import json_kind, parse_input, parse_json

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_LISTED_PROBLEMS",
    "OFFERED",
    "Message",
    "Receive",
    "Refusal",
    "Scope",
    "Send",
    "check_accept",
    "check_content_type",
    "check_head",
    "check_method",
    "decode_input",
    "is_json_content_type",
    "negotiate",
    "read_body",
    "refuse_websocket",
    "request_headers",
    "send_refusal",
    "uncancel",
]

Scope = MutableMapping[str, Any]
"""An ASGI connection scope."""
Message = MutableMapping[str, Any]
"""An ASGI message."""
Receive = Callable[[], Awaitable[Message]]
"""The ASGI `receive` callable."""
Send = Callable[[Message], Awaitable[None]]
"""The ASGI `send` callable."""

_log = logging.getLogger("agui.asgi")

MAX_HEADER_BYTES = 16 * 1024
"""The default limit of a request's line and headers together: 16 KiB."""
MAX_LISTED_PROBLEMS = 20
"""How many problems of an invalid input a 422 lists; it counts the others in `omitted`."""
_UTF8_NAMES = frozenset({"utf-8", "utf8"})
_UTF8_BOM = b"\xef\xbb\xbf"

uncancel: Callable[[asyncio.Task[Any]], int] = getattr(asyncio.Task, "uncancel", lambda _: 0)
"""Undo the body timer's cancellation of its task (Python 3.11 counts them; 3.10 does not)."""


def is_json_content_type(content_type: str) -> bool:
    """Whether a request `Content-Type` announces JSON.

    The essence (before `;`, trimmed, any case) must be `application/json`, `text/json`, or
    end in `+json`. Parameters such as `charset` are not judged: the body is read as UTF-8, as
    JSON must be.

    Examples:
        >>> is_json_content_type("Application/JSON; charset=UTF-8"), is_json_content_type("")
        (True, False)
        >>> is_json_content_type("application/ld+json"), is_json_content_type("text/plain")
        (True, False)
    """
    essence = content_type.partition(";")[0].strip().lower()
    return essence in ("application/json", "text/json") or (
        essence.endswith("+json") and "/" in essence
    )


# Response headers a page may read unasked (CORS-safelisted), or has no use for.
_UNEXPOSED = {"cache-control", "content-language", "content-length", "content-type", "connection"}


class Refusal(Exception):
    """A 4xx answer decided while admitting a request: status, JSON body, extra headers."""

    def __init__(
        self, status: int, code: str, message: str, headers: Sequence[tuple[str, str]] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.body: dict[str, object] = {"code": code, "message": message}
        self.headers = list(headers)

    def with_cors(self, cors: Sequence[tuple[bytes, bytes]]) -> Refusal:
        """The refusal with the request's CORS headers, added in place.

        A page that may read a stream may read why it was refused too.
        """
        if not cors:
            return self
        # A page reads only the headers CORS lets it: `Retry-After`, `WWW-Authenticate`, `Allow`.
        exposed = ", ".join(name for name, _ in self.headers if name.lower() not in _UNEXPOSED)
        self.headers += [(name.decode("latin-1"), value.decode("latin-1")) for name, value in cors]
        if exposed:
            self.headers.append(("access-control-expose-headers", exposed))
        return self


async def refuse_websocket(receive: Receive, send: Send) -> None:
    """Refuse a WebSocket connection: the endpoint speaks HTTP only."""
    message = await receive()
    if message["type"] == "websocket.connect":
        # Closing before accepting makes the server answer the handshake with 403.
        await send({"type": "websocket.close", "code": 1003})


async def send_refusal(send: Send, refusal: Refusal, *, head: bool = False) -> None:
    """Answer with the refusal's status and JSON body (`Vary: Accept`, never cached).

    The answer to a `HEAD` has the headers of the body and not the body (RFC 9110, 9.3.2).
    """
    body = json.dumps(refusal.body, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"vary", b"Accept"),
        *(
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in refusal.headers
        ),
    ]
    with contextlib.suppress(OSError):
        await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else body})


def request_headers(scope: Scope) -> dict[str, str]:
    """The request headers by lower-case name; repeated headers are joined with `, `."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = bytes(raw_name).decode("latin-1").lower()
        value = bytes(raw_value).decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def check_head(scope: Scope, headers: Mapping[str, str], limit: int) -> None:
    """The request line and headers within `limit` bytes (431), `Host` on HTTP/1.1 (400).

    Examples:
        >>> check_head({"method": "POST", "path": "/", "http_version": "1.0"}, {}, 1024)
        >>> check_head({"method": "POST", "path": "/", "http_version": "1.1"}, {}, 1024)
        Traceback (most recent call last):
        ...
        agui.asgi._admission.Refusal: an HTTP/1.1 request must name its host ...
    """
    size = _head_size(scope)
    if size > limit:
        message = (
            f"the request line and headers take about {size} bytes, more than this endpoint's "
            f"limit of {limit} (max_header_bytes): send fewer or shorter headers"
        )
        raise Refusal(431, "HEADERS_TOO_LARGE", message, [("connection", "close")])
    if scope.get("http_version") == "1.1" and "host" not in headers:
        message = (
            "an HTTP/1.1 request must name its host (RFC 9112, 3.2), and this one has no Host "
            "header: send Host: <the server's name and port>"
        )
        raise Refusal(400, "MISSING_HOST", message)


def _head_size(scope: Scope) -> int:
    """About how many bytes the request line and headers took on the wire."""
    line = len(scope.get("method", "")) + len(scope.get("raw_path") or scope.get("path", ""))
    line += len(scope.get("query_string", b"")) + len(" ? HTTP/1.1\r\n\r\n")
    return line + sum(len(name) + len(value) + 4 for name, value in scope.get("headers", ()))


def check_method(method: str) -> None:
    """Only POST runs an agent (405 otherwise)."""
    if method != "POST":
        message = f"this endpoint runs an agent on POST; {method} is not allowed"
        raise Refusal(405, "METHOD_NOT_ALLOWED", message, [("allow", "POST")])


def check_accept(headers: Mapping[str, str], offered: tuple[str, ...] = OFFERED) -> str:
    """The media type of the event stream to answer with (406 when the client takes none)."""
    accept = headers.get("accept")
    media_type = negotiate(accept, offered)
    if media_type is None:
        note = "" if PROTO_MEDIA_TYPE in offered else " (the protobuf binding is not enabled)"
        message = (
            f"cannot produce any media type this request accepts ({accept!r}); this "
            f"endpoint emits: {', '.join(offered)}{note}"
        )
        raise Refusal(406, "NOT_ACCEPTABLE", message)
    return media_type


def check_content_type(headers: Mapping[str, str]) -> None:
    """The body must be announced as JSON (415 otherwise, a missing `Content-Type` included)."""
    content_type = headers.get("content-type")
    if content_type is None or not content_type.strip():
        message = (
            "expected a JSON request body, and the request has no Content-Type: send "
            "Content-Type: application/json (a body without a type is what a page of another "
            "site can send without asking, so it is refused)"
        )
        raise Refusal(415, "UNSUPPORTED_MEDIA_TYPE", message)
    if not is_json_content_type(content_type):
        message = f"expected a JSON request body, got Content-Type {content_type!r}"
        raise Refusal(415, "UNSUPPORTED_MEDIA_TYPE", message)
    charset = _charset(content_type)
    if charset is not None and charset not in _UTF8_NAMES:
        message = (
            f"the body is announced as charset {charset!r}; JSON travels as UTF-8 (RFC 8259): "
            "send it as UTF-8, with charset=utf-8 or no charset"
        )
        raise Refusal(415, "UNSUPPORTED_MEDIA_TYPE", message)
    coding = headers.get("content-encoding", "identity").strip().lower()
    if coding not in ("", "identity"):
        message = (
            f"the body is sent with Content-Encoding {coding!r}, which this endpoint does not "
            "decode: send it uncompressed (a run's input is one JSON document)"
        )
        raise Refusal(415, "UNSUPPORTED_MEDIA_TYPE", message, [("accept-encoding", "identity")])


def _charset(content_type: str) -> str | None:
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None


async def read_body(
    headers: Mapping[str, str], receive: Receive, limit: int, timeout: float
) -> bytes | None:
    """The request body, or `None` if the client left while sending it.

    A declared Content-Length over `limit` is refused (413) before reading; a body without one
    is counted as it arrives and refused as soon as it passes the limit, unread beyond that.
    A body not whole within `timeout` seconds is refused (408) and the connection closed.
    """
    declared = headers.get("content-length")
    if declared is not None:
        # `str.isdigit` also takes digits `int` does not read, such as Latin-1's superscripts.
        if not (declared.strip().isdigit() and declared.isascii()):
            problem = f"the Content-Length header is not a byte count: {declared!r}"
            raise Refusal(400, "INVALID_CONTENT_LENGTH", problem)
        if int(declared) > limit:
            raise Refusal(413, "BODY_TOO_LARGE", _too_large(limit, int(declared)))
    # A timer that cancels this task, rather than `asyncio.wait_for`, which would run the read
    # in a task of its own: on a loop busy with many streams, each of the turns that costs
    # delays every new client's first event.
    task = asyncio.current_task()
    assert task is not None  # noqa: S101 - an ASGI app runs in a task
    expired = False
    loop = asyncio.get_running_loop()
    timer: asyncio.Handle | None = None

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    def last_turn() -> None:
        # One more turn first: on a loop that was busy past the deadline (another agent's
        # blocking code), a body that arrived meanwhile wakes this task only on the next turn.
        nonlocal timer
        timer = loop.call_soon(expire)

    timer = loop.call_later(timeout, last_turn)
    try:
        return await _receive_body(receive, limit)
    except asyncio.CancelledError:
        if not expired:
            raise
        uncancel(task)
        message = (
            f"the request body did not arrive within {timeout:g} s, this endpoint's "
            "body_timeout: send the whole body at once (a run's input is one JSON document), "
            "or raise body_timeout on asgi_app for slow links"
        )
        raise Refusal(408, "BODY_TIMEOUT", message, [("connection", "close")]) from None
    finally:
        timer.cancel()  # the one pending: the deadline's, or the turn after it


async def _receive_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refusal(413, "BODY_TOO_LARGE", _too_large(limit, None))
        chunks.append(chunk)
        more = bool(message.get("more_body", False))
    return b"".join(chunks)


def decode_input(body: bytes) -> RunAgentInput:
    """The body as a `RunAgentInput`: 400 when empty or not JSON, 422 naming invalid fields."""
    if not body.strip():
        message = "the request body is empty; expected an AG-UI RunAgentInput JSON object"
        raise Refusal(400, "EMPTY_BODY", message)
    try:
        # RFC 8259 lets a parser ignore a byte order mark; it carries nothing
        raw = parse_json(body.removeprefix(_UTF8_BOM))
    except DecodeError as error:
        raise Refusal(400, "INVALID_JSON", str(error)) from None
    if not isinstance(raw, Mapping):
        problem = f"the run input must be a JSON object, not {json_kind(raw)}"
        raise _invalid_input(InvalidInput(problem, errors=[("", problem)]))
    # Unknown members are stripped; say so in the log rather than as process-wide warnings.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnknownMemberWarning)
        try:
            run_input = parse_input(cast("Mapping[str, object]", raw))
        except InvalidInput as error:
            raise _invalid_input(error) from None
    for warning in caught:
        _log.info("run input: %s", warning.message)
    return run_input


def _too_large(limit: int, declared: int | None) -> str:
    size = f"{declared} bytes" if declared is not None else "more than that"
    return f"the request body is larger than this endpoint's limit of {limit} bytes ({size})"


def _invalid_input(error: InvalidInput) -> Refusal:
    """The 422 of an input: each problem listed once in `errors`, at most a bounded number."""
    problems = error.errors
    if len(problems) > 1:
        path, text = problems[0]
        message = (
            f"the run input is invalid in {len(problems)} places, listed in 'errors' "
            f"(the first: {path!r}: {text})"
        )
    else:
        message = str(error)
    refusal = Refusal(422, "INVALID_INPUT", message)
    listed = problems[:MAX_LISTED_PROBLEMS]
    refusal.body["errors"] = [{"path": path, "message": text} for path, text in listed]
    if len(problems) > len(listed):
        refusal.body["omitted"] = len(problems) - len(listed)
    return refusal
