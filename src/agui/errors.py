"""The one exception tree of agui.

Every error agui raises derives from `AguiError` and carries a stable `code`. The run driver
turns an error escaping agent code into `RUN_ERROR` with that code, so a frontend can branch on
it; the message is written for the developer who reads it: the fact, the rule, the fix.

```
AguiError
├── UsageError            the SDK was called in a way it does not allow (USAGE_ERROR)
├── ProtocolViolation     an event breaks an AG-UI ordering rule; carries .rule (PROTOCOL_VIOLATION)
├── StateError            the run state cannot be read, written or published (STATE_ERROR)
├── PatchError            a JSON Patch does not apply to its document (PATCH_ERROR)
├── AgentError            an agent fails on purpose with a message the user may see (AGENT_ERROR)
│   ├── InterruptExpired  a resume answers an interrupt whose paused run is no longer kept
│   │                     (INTERRUPT_EXPIRED)
│   └── ModelError        a model's API failed: a 4xx, a broken stream (MODEL_ERROR)
│       ├── ModelAuthenticationError  the key was refused: 401, 403 (MODEL_AUTHENTICATION)
│       ├── ModelRateLimited          429 after the retries (MODEL_RATE_LIMITED)
│       ├── ModelTimeout              no answer in time (MODEL_TIMEOUT)
│       ├── ModelUnavailable          no connection, or a 5xx (MODEL_UNAVAILABLE)
│       └── UnsupportedContent        a message part the model cannot take (UNSUPPORTED_CONTENT)
│           └── ContentTooLarge       an image over the model's size limit (CONTENT_TOO_LARGE)
├── InvalidA2UI           an A2UI value that does not fit A2UI v0.9 (INVALID_SURFACE)
├── InvalidArguments      a tool call's argument text is partial, not JSON, or the wrong shape
│                         (INVALID_ARGUMENTS)
├── Cancelled             the run was cancelled; emitting after that point raises it (CANCELLED)
├── HTTPStatusError       an endpoint answered `agui.client` with a non-2xx status
│                         (HTTP_STATUS_ERROR)
├── Refused               an `authorize` hook refuses an HTTP request with a 4xx status of its
│                         own (REFUSED)
├── TargetError           an `agui serve` TARGET that does not load or is not an agent
│                         (TARGET_ERROR)
├── CaptureError          a stream `agui watch` or `agui verify` cannot read at all: no file,
│                         no format, no connection, an HTTP error (CAPTURE_ERROR)
├── RunLogError           the store of durable runs (`agui.runs`) cannot be reached
│   │                     (RUN_LOG_UNAVAILABLE)
│   └── BlobTooLarge      a value kept for a thread is over the log's `max_blob_bytes`
│                         (BLOB_TOO_LARGE)
├── UpstreamError         the agent a bridge relays (`agui.bridges`) ended its run in error
│   │                     (UPSTREAM_ERROR, or the upstream's own code, kept as `wire_code`)
│   └── UpstreamTruncated its stream ended with no terminal event (UPSTREAM_TRUNCATED)
└── DecodeError           bytes or JSON that do not make a valid AG-UI value (DECODE_ERROR)
    ├── UnknownEventType  an event type AG-UI 1.0 does not define (UNKNOWN_EVENT_TYPE)
    ├── MalformedEvent    a known event with a field of the wrong shape (MALFORMED_EVENT)
    ├── InvalidInput      a RunAgentInput that does not validate (INVALID_INPUT)
    └── FrameTooLarge     an SSE frame grew past the reader's limit (FRAME_TOO_LARGE)

UserWarning
└── UnknownMemberWarning  material AG-UI does not describe was stripped from a value being
                          read, and reading went on (UNKNOWN_MEMBER)

ResourceWarning
└── UnclosedHandleWarning a handle was still open when its run ended, and the run closed it
                          (UNCLOSED_HANDLE)
```

The warnings are not errors: AG-UI 1.0 asks a reader to drop what it does not know and carry
on, so that is a `UserWarning` a caller can filter, log or turn into an error; and a handle the
run had to close was closed, so that is a `ResourceWarning`, like an unclosed file's. They live
here so that everything agui raises or warns is in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import ClassVar

from pydantic import JsonValue

from agui._protocol.rules import Rule

__all__ = [
    "AgentError",
    "AguiError",
    "BlobTooLarge",
    "Cancelled",
    "CaptureError",
    "ContentTooLarge",
    "DecodeError",
    "FrameTooLarge",
    "HTTPStatusError",
    "InterruptExpired",
    "InvalidA2UI",
    "InvalidArguments",
    "InvalidInput",
    "MalformedEvent",
    "ModelAuthenticationError",
    "ModelError",
    "ModelRateLimited",
    "ModelTimeout",
    "ModelUnavailable",
    "PatchError",
    "ProtocolViolation",
    "Refused",
    "RunLogError",
    "StateError",
    "TargetError",
    "UnclosedHandleWarning",
    "UnknownEventType",
    "UnknownMemberWarning",
    "UnsupportedContent",
    "UpstreamError",
    "UpstreamTruncated",
    "UsageError",
]


class AguiError(Exception):
    """The base of every error agui raises; `code` is stable and becomes `RUN_ERROR.code`.

    Examples:
        >>> try:
        ...     raise UsageError("a message is already open")
        ... except AguiError as error:
        ...     print(error.code, "-", error)
        USAGE_ERROR - a message is already open
    """

    code: ClassVar[str] = "AGUI_ERROR"


class UsageError(AguiError):
    """The SDK was called in a way it does not allow, such as opening a block inside another.

    Examples:
        >>> UsageError("tool call 'r-call-1' has ended").code
        'USAGE_ERROR'
    """

    code: ClassVar[str] = "USAGE_ERROR"


class StateError(AguiError):
    """The run state does not fit its type, or cannot be serialized or published.

    Examples:
        >>> StateError("state field 'tasks' must be a list").code
        'STATE_ERROR'
    """

    code: ClassVar[str] = "STATE_ERROR"


class PatchError(AguiError):
    """A JSON Patch (RFC 6902) operation does not apply to the document it was given.

    `index` is the position of the failing operation in the patch, when known.

    Examples:
        >>> error = PatchError("path '/a' does not exist", index=0)
        >>> error.code, error.index
        ('PATCH_ERROR', 0)
    """

    code: ClassVar[str] = "PATCH_ERROR"

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class AgentError(AguiError):
    """Raised by agent code to fail the run with a message meant for the user.

    Unlike any other exception, its message reaches `RUN_ERROR.message` without `debug=True`.

    Examples:
        >>> AgentError("the tool 'add_task' was not offered by the client").code
        'AGENT_ERROR'
    """

    code: ClassVar[str] = "AGENT_ERROR"


class InterruptExpired(AgentError):
    """A resume answers an interrupt whose paused run is no longer kept (expired, or used).

    A bridge that pauses a framework's run keeps it in the run log for the log's TTL; an answer
    that comes later, or a second time, has nothing to resume, and the run fails with this
    rather than start afresh as if the question had not been asked. Its message reaches the
    client: it names the interrupt and says to ask again.

    Examples:
        >>> InterruptExpired("the paused run that interrupt 'approve-c1' asked for is gone").code
        'INTERRUPT_EXPIRED'
    """

    code: ClassVar[str] = "INTERRUPT_EXPIRED"


class ModelError(AgentError):
    """Raised when a model's API fails: the request was refused, or the stream broke.

    The model classes map their SDK's errors onto this branch, so `RUN_ERROR.code` says what
    went wrong whichever provider is behind the agent.

    Examples:
        >>> ModelError("the model API answered HTTP 400: unknown model 'gpt-9'").code
        'MODEL_ERROR'
    """

    code: ClassVar[str] = "MODEL_ERROR"


class ModelAuthenticationError(ModelError):
    """Raised when a model's API refuses the credentials (HTTP 401 or 403).

    Examples:
        >>> ModelAuthenticationError("the model API refused the API key").code
        'MODEL_AUTHENTICATION'
    """

    code: ClassVar[str] = "MODEL_AUTHENTICATION"


class ModelRateLimited(ModelError):
    """Raised when a model's API still rate-limits the request (HTTP 429) after the retries.

    Examples:
        >>> ModelRateLimited("the model API rate-limited the request").code
        'MODEL_RATE_LIMITED'
    """

    code: ClassVar[str] = "MODEL_RATE_LIMITED"


class ModelTimeout(ModelError):
    """Raised when a model's API does not answer within the configured timeout.

    Examples:
        >>> ModelTimeout("the model API did not answer within 60 s").code
        'MODEL_TIMEOUT'
    """

    code: ClassVar[str] = "MODEL_TIMEOUT"


class ModelUnavailable(ModelError):
    """Raised when a model's API cannot be reached, or fails on its side (HTTP 5xx).

    Examples:
        >>> ModelUnavailable("the model API could not be reached").code
        'MODEL_UNAVAILABLE'
    """

    code: ClassVar[str] = "MODEL_UNAVAILABLE"


class UnsupportedContent(ModelError):
    """Raised when a message part (an image, audio, a document) is one the model cannot take.

    Raised before the request is sent, so the part is refused by name instead of dropped.

    Examples:
        >>> UnsupportedContent("OpenAIModel 'qwen' takes no images").code
        'UNSUPPORTED_CONTENT'
    """

    code: ClassVar[str] = "UNSUPPORTED_CONTENT"


class ContentTooLarge(UnsupportedContent):
    """Raised when an inline image is larger than the model's configured `max_image_bytes`.

    Examples:
        >>> ContentTooLarge("the image is 9 MB, over the 5 MB limit").code
        'CONTENT_TOO_LARGE'
    """

    code: ClassVar[str] = "CONTENT_TOO_LARGE"


class InvalidA2UI(AguiError, ValueError):
    """Raised when an A2UI value (a message, an `a2ui_operations` envelope) does not fit v0.9.

    Examples:
        >>> InvalidA2UI("A2UI message 0 does not fit v0.9").code
        'INVALID_SURFACE'
    """

    code: ClassVar[str] = "INVALID_SURFACE"


class InvalidArguments(AguiError):
    """A tool call's argument text is partial, is not JSON, or does not fit the expected type.

    `tool_call_id` and `tool_name` name the call; `errors` lists `(json_pointer, message)`.

    Examples:
        >>> error = InvalidArguments("bad", tool_call_id="r-call-1", tool_name="get_weather")
        >>> error.code, error.tool_name
        ('INVALID_ARGUMENTS', 'get_weather')
    """

    code: ClassVar[str] = "INVALID_ARGUMENTS"

    def __init__(
        self,
        message: str,
        *,
        tool_call_id: str,
        tool_name: str,
        errors: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.errors: list[tuple[str, str]] = list(errors or [])


class Cancelled(AguiError):
    """The run was cancelled (by the server or a client disconnect); emitting now raises this.

    Examples:
        >>> Cancelled("the run was cancelled").code
        'CANCELLED'
    """

    code: ClassVar[str] = "CANCELLED"


class RunLogError(AguiError):
    """The store of durable runs (`agui.runs`, such as Redis) cannot be reached, or refuses.

    The message says which, and what the store answered. A run whose log fails is stopped, and
    its readers get a `RUN_ERROR` with this code.

    Examples:
        >>> RunLogError("the run log (Redis) cannot be reached").code
        'RUN_LOG_UNAVAILABLE'
    """

    code: ClassVar[str] = "RUN_LOG_UNAVAILABLE"


class BlobTooLarge(RunLogError):
    """A value kept for a thread (`RunLog.keep_blob`) is over the log's `max_blob_bytes`.

    Nothing is kept; the message gives the size and the limit.

    Examples:
        >>> BlobTooLarge("the value kept for thread 't1' is 5 MiB, over 4 MiB").code
        'BLOB_TOO_LARGE'
    """

    code: ClassVar[str] = "BLOB_TOO_LARGE"


class DecodeError(AguiError):
    """Bytes or JSON that do not make a valid AG-UI value.

    `path` names the offending field (a JSON Pointer into the value), when there is one.

    Examples:
        >>> DecodeError("not JSON", path="").path
        ''
    """

    code: ClassVar[str] = "DECODE_ERROR"

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class UnknownEventType(DecodeError):
    """An event whose `type` AG-UI 1.0 does not define.

    Examples:
        >>> UnknownEventType("unknown event type 'FOO'").code
        'UNKNOWN_EVENT_TYPE'
    """

    code: ClassVar[str] = "UNKNOWN_EVENT_TYPE"


class MalformedEvent(DecodeError):
    """A known event type with a field that is missing or has the wrong shape.

    Examples:
        >>> MalformedEvent("field 'delta' must be a string", path="/delta").path
        '/delta'
    """

    code: ClassVar[str] = "MALFORMED_EVENT"


class InvalidInput(DecodeError):
    """A `RunAgentInput` (the POST body) that does not validate.

    `errors` lists each problem as `(json_pointer, message)`.

    Examples:
        >>> InvalidInput("bad input", errors=[("/threadId", "Field required")]).errors
        [('/threadId', 'Field required')]
    """

    code: ClassVar[str] = "INVALID_INPUT"

    def __init__(self, message: str, *, errors: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message, path=errors[0][0] if errors else None)
        self.errors: list[tuple[str, str]] = list(errors or [])


class FrameTooLarge(DecodeError):
    """An SSE frame grew past the reader's `max_frame_bytes` before it ended.

    `frame` counts the frames before it and `offset` is the byte it began at, both from the
    start of the response, when known; `source` names the stream (the client gives its URL).

    Examples:
        >>> from agui.client import SSEParser
        >>> SSEParser(max_frame_bytes=8).feed(b"data: 0123456789")
        Traceback (most recent call last):
        ...
        agui.errors.FrameTooLarge: an SSE frame grew past 8 bytes without ending (frame 0 of ...
    """

    code: ClassVar[str] = "FRAME_TOO_LARGE"

    def __init__(
        self,
        limit: int,
        *,
        frame: int | None = None,
        offset: int | None = None,
        source: str | None = None,
    ) -> None:
        where = "" if frame is None else f" (frame {frame} of the stream, from byte {offset})"
        prefix = "" if source is None else f"the stream from {source}: "
        message = (
            f"{prefix}an SSE frame grew past {limit} bytes without ending{where}; the stream is "
            "cut off. Raise max_frame_bytes if the server sends events that large"
        )
        super().__init__(message)
        self.limit = limit
        self.frame = frame
        self.offset = offset
        self.source = source


_CLIENT_ERRORS = range(400, 500)
_WIRE_CODES = {401: "UNAUTHORIZED", 403: "FORBIDDEN"}


class Refused(AguiError):
    """Raised by an `authorize` hook to refuse a request with a status and message of its own.

    The endpoint answers with `status` and the JSON body `{"code": wire_code, "message": ...}`,
    plus `headers`; `wire_code` is `UNAUTHORIZED` for 401, `FORBIDDEN` for 403, else `REFUSED`.

    Examples:
        >>> error = Refused("this agent needs the 'agents:run' scope", status=403)
        >>> error.code, error.status, error.wire_code
        ('REFUSED', 403, 'FORBIDDEN')
        >>> Refused("down for maintenance", status=503)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: a refusal is a 4xx status, not 503: ...
    """

    code: ClassVar[str] = "REFUSED"

    def __init__(
        self, message: str, *, status: int = 403, headers: Mapping[str, str] | None = None
    ) -> None:
        if status not in _CLIENT_ERRORS:
            problem = (
                f"a refusal is a 4xx status, not {status}: give Refused a client error status "
                "(400 to 499); for a failure of the server itself raise any other exception, "
                "which the server answers with 500"
            )
            raise UsageError(problem)
        super().__init__(message)
        self.status = status
        self.wire_code = _WIRE_CODES.get(status, "REFUSED")
        self.headers = dict(headers or {})


_ERROR_BODY_SHOWN = 500


class UpstreamError(AguiError):
    """Raised by a bridge when the agent it relays ends its run with its own `RUN_ERROR`.

    `wire_code` is the code the run's `RUN_ERROR` carries: the upstream's own code, kept so a
    frontend can still branch on it, or `UPSTREAM_ERROR` when it gave none. The message is the
    upstream's, which is often an exception's text: the run driver sends it to the client only
    in debug mode, like any other error's.

    Examples:
        >>> error = UpstreamError("KeyError: 'api_key'", wire_code="EXECUTION_ERROR")
        >>> error.code, error.wire_code
        ('UPSTREAM_ERROR', 'EXECUTION_ERROR')
        >>> UpstreamError("failed").wire_code
        'UPSTREAM_ERROR'
    """

    code: ClassVar[str] = "UPSTREAM_ERROR"

    def __init__(self, message: str, *, wire_code: str | None = None) -> None:
        super().__init__(message)
        self.wire_code = wire_code or self.code


class UpstreamTruncated(UpstreamError):
    """Raised by a bridge when the stream it relays ends with no terminal event.

    AG-UI gives such a run no outcome, and never a successful one: an adapter that stops early
    (a crash it swallowed, a connection that broke) must not read as a finished run.

    Examples:
        >>> UpstreamTruncated("the stream ended after 3 events").wire_code
        'UPSTREAM_TRUNCATED'
    """

    code: ClassVar[str] = "UPSTREAM_TRUNCATED"


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
        if len(text) <= _ERROR_BODY_SHOWN:
            return text
        return text[:_ERROR_BODY_SHOWN] + "..."


def _json_or_none(body: str) -> JsonValue | None:
    try:
        value: JsonValue = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return value


class UnknownMemberWarning(UserWarning):
    """Material the protocol does not describe was removed from a value being read.

    Examples:
        >>> import warnings
        >>> from agui.wire import parse_event
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     event = parse_event({"type": "RAW", "event": 1, "colour": "red"})
        >>> print(caught[0].message)
        Removed unrecognised material at '/colour' on RAW
        >>> UnknownMemberWarning.code
        'UNKNOWN_MEMBER'
    """

    code: ClassVar[str] = "UNKNOWN_MEMBER"


class UnclosedHandleWarning(ResourceWarning):
    """A handle was still open when its run ended: the run closed it, and says where it opened.

    The warning points at the line of agent code that opened the block (the `agui` log says
    the same), so a block opened without `with` and never ended is found where it began.

    Examples:
        >>> import asyncio, warnings
        >>> from agui import RunAgentInput
        >>> from agui.testing import collect
        >>> async def forgetful(ctx):
        ...     ctx.message().delta("Hi")
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     events = asyncio.run(collect(forgetful, RunAgentInput(thread_id="t", run_id="r")))
        >>> print(caught[0].message)
        text message 'r-msg-1' was still open when its run ended, so the run closed it; ...
        >>> UnclosedHandleWarning.code
        'UNCLOSED_HANDLE'
    """

    code: ClassVar[str] = "UNCLOSED_HANDLE"


class ProtocolViolation(AguiError):
    """An event that breaks an AG-UI ordering or lifecycle rule.

    `rule` is the broken `agui.verify.Rule` (its value is a stable kebab-case name); `event` is
    the event that was refused. The verifier never changes its state when it raises this.

    Examples:
        >>> from agui.verify import Rule
        >>> error = ProtocolViolation("no run has started", rule=Rule.FIRST_EVENT_NOT_RUN_STARTED)
        >>> error.code, error.rule.value
        ('PROTOCOL_VIOLATION', 'first-event-not-run-started')
    """

    code: ClassVar[str] = "PROTOCOL_VIOLATION"

    def __init__(self, message: str, *, rule: Rule, event: object | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.event = event


class TargetError(AguiError):
    """A `module:attr` or `file.py:attr` target that cannot be loaded or is the wrong kind.

    Its message names what is wrong (the file, the module, the attribute, or why the object is
    not an agent) and how to name the target instead.

    Examples:
        >>> from agui.cli import load_target
        >>> try:
        ...     load_target("no_such_module_here:agent")
        ... except TargetError as error:
        ...     print(error.code, "-", error)
        TARGET_ERROR - cannot import module 'no_such_module_here': No module named ...
    """

    code: ClassVar[str] = "TARGET_ERROR"


class CaptureError(AguiError):
    """A stream that cannot be read at all: no such file, no format, no connection, an HTTP error.

    `body` holds the response text of an HTTP error, to show the server's own explanation.

    Examples:
        >>> error = CaptureError("HTTP 422 Unprocessable Entity from http://x/", body="{}")
        >>> error.code, error.body
        ('CAPTURE_ERROR', '{}')
    """

    code: ClassVar[str] = "CAPTURE_ERROR"

    def __init__(self, message: str, *, body: str | None = None) -> None:
        super().__init__(message)
        self.body = body
