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
├── InvalidArguments      a tool call's argument text is partial, not JSON, or the wrong shape
│                         (INVALID_ARGUMENTS)
├── Cancelled             the run was cancelled; emitting after that point raises it (CANCELLED)
└── DecodeError           bytes or JSON that do not make a valid AG-UI value (DECODE_ERROR)
    ├── UnknownEventType  an event type AG-UI 1.0 does not define (UNKNOWN_EVENT_TYPE)
    ├── MalformedEvent    a known event with a field of the wrong shape (MALFORMED_EVENT)
    └── InvalidInput      a RunAgentInput that does not validate (INVALID_INPUT)
```
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AgentError",
    "AguiError",
    "Cancelled",
    "DecodeError",
    "InvalidArguments",
    "InvalidInput",
    "MalformedEvent",
    "PatchError",
    "ProtocolViolation",
    "StateError",
    "UnknownEventType",
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


class ProtocolViolation(AguiError):
    """An event that breaks an AG-UI ordering or lifecycle rule.

    `rule` is the broken `agui.verify.Rule` (its value is a stable kebab-case name); `event` is
    the event that was refused. The verifier never changes its state when it raises this.

    Examples:
        >>> error = ProtocolViolation("no run has started", rule="first-event-not-run-started")
        >>> error.code, error.rule
        ('PROTOCOL_VIOLATION', 'first-event-not-run-started')
    """

    code: ClassVar[str] = "PROTOCOL_VIOLATION"

    def __init__(self, message: str, *, rule: str, event: object | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.event = event
