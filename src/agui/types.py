"""The shared AG-UI types: the run input, tools, context, interrupts, outcomes, usage, patches.

`RunAgentInput` is read leniently, as the protocol asks of a producer: 1.0 and 0.x bodies,
camelCase or snake_case keys, `tools`/`context`/`forwardedProps`/`state` present or absent, and
the legacy optional nulls (`state`, `forwardedProps`, `tools[].parameters`, `resume[].payload`,
`metadata` on media parts) read as absent. What agui writes is strict 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, TypeVar, cast

from pydantic import Field, JsonValue, ValidationError

from agui._protocol.model import Opt, WireModel
from agui.errors import UsageError
from agui.messages import ContentPart, JsonObject, Message

__all__ = [
    "AddOperation",
    "CancelledOutcome",
    "Context",
    "CopyOperation",
    "Interrupt",
    "InterruptOutcome",
    "JsonObject",
    "JsonPatchOperation",
    "MoveOperation",
    "RemoveOperation",
    "ReplaceOperation",
    "ResumeEntry",
    "RunAgentInput",
    "RunFinishedOutcome",
    "RunOutcome",
    "SubagentFinishedOutcome",
    "SubagentSuccessOutcome",
    "SubagentSuspendedOutcome",
    "SuccessOutcome",
    "TestOperation",
    "TokenUsage",
    "Tool",
    "ToolResultContent",
]

OutcomeT = TypeVar("OutcomeT", bound="RunOutcome")
_POINTER = r"^(/([^/~]|~[01])*)*$"
_COUNT = Annotated[int, Field(strict=True, ge=0, le=2**53 - 1)]

ToolResultContent = str | list[ContentPart]
"""What a tool result carries: text (serialized data is text), or content parts (1.0)."""


class Tool(WireModel, frozen=True):
    """A tool the client offers; `parameters` is its JSON Schema (absent: no arguments).

    Examples:
        >>> Tool(name="confirm", description="Ask the user to confirm").model_dump_json()
        '{"name":"confirm","description":"Ask the user to confirm"}'
    """

    name: str
    description: str
    parameters: Opt[JsonValue] = None
    metadata: Opt[JsonObject] = None


class Context(WireModel, frozen=True):
    """A piece of application context the model should see.

    Examples:
        >>> Context(description="user's timezone", value="Europe/Paris").value
        'Europe/Paris'
    """

    description: str
    value: str


class Interrupt(WireModel, frozen=True):
    """A question the run stops on; the next run answers it with a `ResumeEntry` of this `id`.

    Examples:
        >>> Interrupt(id="i1", reason="tool_call", tool_call_id="c1").model_dump_json()
        '{"id":"i1","reason":"tool_call","toolCallId":"c1"}'
    """

    subagent_run_id: Opt[str] = None
    id: str
    reason: str
    message: Opt[str] = None
    tool_call_id: Opt[str] = None
    response_schema: Opt[JsonObject] = None
    expires_at: Opt[str] = None
    metadata: Opt[JsonObject] = None


class ResumeEntry(WireModel, frozen=True):
    """The client's answer to an interrupt: `resolved` with a `payload`, or `cancelled`.

    Examples:
        >>> entry = ResumeEntry(interrupt_id="i1", status="resolved", payload={"approved": True})
        >>> entry.model_dump_json()
        '{"interruptId":"i1","status":"resolved","payload":{"approved":true}}'
    """

    interrupt_id: str
    status: Literal["resolved", "cancelled"]
    payload: Opt[JsonValue] = None
    metadata: Opt[JsonObject] = None


class RunOutcome(WireModel, frozen=True):
    """How a run ended; build one with `success()`, `interrupt()` or `cancelled()`.

    An agent returns one (or `None`, meaning success) and the driver puts it on `RUN_FINISHED`.

    Examples:
        >>> RunOutcome.success(pending_tool_call_ids=["r-call-1"]).model_dump_json()
        '{"type":"success","pendingToolCallIds":["r-call-1"]}'
        >>> RunOutcome.interrupt([Interrupt(id="i1", reason="confirmation")]).type
        'interrupt'
        >>> RunOutcome.cancelled().model_dump_json()
        '{"type":"cancelled"}'
    """

    @staticmethod
    def success(*, pending_tool_call_ids: Opt[Sequence[str]] = None) -> SuccessOutcome:
        """The run did its work; list calls left for the client to execute, in call order."""
        call = "RunOutcome.success()"
        given = pending_tool_call_ids
        ids = (
            _listed(given, call, "tool call ids, such as [call.id]") if given is not None else None
        )
        return _outcome(SuccessOutcome, call, pending_tool_call_ids=ids)

    @staticmethod
    def interrupt(interrupts: Sequence[Interrupt]) -> InterruptOutcome:
        """The run stops on questions the next run must answer (at least one).

        Examples:
            >>> RunOutcome.interrupt([])
            Traceback (most recent call last):
            ...
            agui.errors.UsageError: RunOutcome.interrupt() needs at least one Interrupt: ...
        """
        call = "RunOutcome.interrupt()"
        listed = _listed(interrupts, call, "Interrupt, such as [Interrupt(id=..., reason=...)]")
        if not listed:
            message = (
                f"{call} needs at least one Interrupt: an interrupted run stops on a question; "
                "return RunOutcome.success() when there is nothing to ask"
            )
            raise UsageError(message)
        return _outcome(InterruptOutcome, call, interrupts=listed)

    @staticmethod
    def cancelled() -> CancelledOutcome:
        """The run was stopped on purpose and did not fail."""
        return CancelledOutcome()


def _listed(values: object, call: str, what: str) -> list[object]:
    """`values` as a list; a string (a sequence of characters) or a non-sequence is refused."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        message = f"{call} takes a list of {what}, not {type(values).__name__}"
        raise UsageError(message)
    return list(cast("Sequence[object]", values))


def _outcome(cls: type[OutcomeT], call: str, **fields: object) -> OutcomeT:
    """`cls(**fields)`; what does not fit it is the agent's `UsageError`, pointing at it."""
    try:
        return cls(**fields)
    except ValidationError as error:
        listed = "; ".join(
            f"'{''.join(f'/{part}' for part in item['loc'][1:])}': {item['msg']}"
            for item in error.errors(include_url=False)
        )
        message = f"{call} was given what does not fit: {listed}"
        raise UsageError(message) from None


class SuccessOutcome(RunOutcome, frozen=True):
    """A successful run; `pending_tool_call_ids` lists client-executed calls left open.

    Examples:
        >>> SuccessOutcome().model_dump_json()
        '{"type":"success"}'
    """

    type: Literal["success"] = "success"
    pending_tool_call_ids: Opt[list[str]] = None


class InterruptOutcome(RunOutcome, frozen=True):
    """A run that stops on interrupts; the list holds at least one.

    Examples:
        >>> len(InterruptOutcome(interrupts=[Interrupt(id="i1", reason="confirmation")]).interrupts)
        1
    """

    type: Literal["interrupt"] = "interrupt"
    interrupts: Annotated[list[Interrupt], Field(min_length=1)]


class CancelledOutcome(RunOutcome, frozen=True):
    """A run stopped on purpose, everything closed first (AG-UI 1.0).

    Examples:
        >>> CancelledOutcome().type
        'cancelled'
    """

    type: Literal["cancelled"] = "cancelled"


RunFinishedOutcome = Annotated[
    SuccessOutcome | InterruptOutcome | CancelledOutcome, Field(discriminator="type")
]
"""The `RUN_FINISHED.outcome` union, discriminated by `type`."""


class SubagentSuccessOutcome(WireModel, frozen=True):
    """A subagent invocation that completed.

    Examples:
        >>> SubagentSuccessOutcome().model_dump_json()
        '{"type":"success"}'
    """

    type: Literal["success"] = "success"


class SubagentSuspendedOutcome(WireModel, frozen=True):
    """A subagent invocation suspended on interrupts.

    Examples:
        >>> SubagentSuspendedOutcome(interrupt_ids=["i1"]).model_dump_json()
        '{"type":"suspended","interruptIds":["i1"]}'
    """

    type: Literal["suspended"] = "suspended"
    interrupt_ids: Opt[list[str]] = None


SubagentFinishedOutcome = Annotated[
    SubagentSuccessOutcome | SubagentSuspendedOutcome, Field(discriminator="type")
]
"""The `SUBAGENT_FINISHED.outcome` union, discriminated by `type`."""


class TokenUsage(WireModel, frozen=True):
    """Token counts for one (provider, model); absent means not reported, never zero.

    Examples:
        >>> TokenUsage(provider="openai", input_tokens=12, output_tokens=3).model_dump_json()
        '{"provider":"openai","inputTokens":12,"outputTokens":3}'
    """

    provider: Opt[str] = None
    model: Opt[str] = None
    input_tokens: Opt[_COUNT] = None
    output_tokens: Opt[_COUNT] = None
    total_tokens: Opt[_COUNT] = None
    reasoning_tokens: Opt[_COUNT] = None
    cached_input_tokens: Opt[_COUNT] = None
    cache_write_input_tokens: Opt[_COUNT] = None


_Pointer = Annotated[str, Field(pattern=_POINTER)]


class AddOperation(WireModel, frozen=True, extra="allow"):
    """JSON Patch `add`: set a member or insert into an array (`-` appends).

    Examples:
        >>> AddOperation(path="/tasks/-", value="ship it").model_dump_json()
        '{"op":"add","path":"/tasks/-","value":"ship it"}'
    """

    op: Literal["add"] = "add"
    path: _Pointer
    value: JsonValue


class RemoveOperation(WireModel, frozen=True, extra="allow"):
    """JSON Patch `remove`.

    Examples:
        >>> RemoveOperation(path="/tasks/0").op
        'remove'
    """

    op: Literal["remove"] = "remove"
    path: _Pointer


class ReplaceOperation(WireModel, frozen=True, extra="allow"):
    """JSON Patch `replace`; `value` may be `null`, which is data and is kept.

    Examples:
        >>> ReplaceOperation(path="/owner", value=None).model_dump_json()
        '{"op":"replace","path":"/owner","value":null}'
    """

    op: Literal["replace"] = "replace"
    path: _Pointer
    value: JsonValue


class MoveOperation(WireModel, frozen=True, extra="allow"):
    """JSON Patch `move` from `from_` (wire name `from`) to `path`.

    Examples:
        >>> MoveOperation(from_="/a", path="/b").model_dump_json()
        '{"op":"move","from":"/a","path":"/b"}'
    """

    op: Literal["move"] = "move"
    from_: _Pointer = Field(validation_alias="from", serialization_alias="from")
    path: _Pointer


class CopyOperation(WireModel, frozen=True, extra="allow"):
    """JSON Patch `copy` from `from_` (wire name `from`) to `path`.

    Examples:
        >>> CopyOperation(from_="/a", path="/b").op
        'copy'
    """

    op: Literal["copy"] = "copy"
    from_: _Pointer = Field(validation_alias="from", serialization_alias="from")
    path: _Pointer


class TestOperation(WireModel, frozen=True, extra="allow"):
    """JSON Patch `test`: the patch fails unless `path` holds `value`.

    Examples:
        >>> TestOperation(path="/version", value=3).op
        'test'
    """

    __test__ = False  # a patch operation, not a pytest test class
    op: Literal["test"] = "test"
    path: _Pointer
    value: JsonValue


JsonPatchOperation = Annotated[
    AddOperation
    | RemoveOperation
    | ReplaceOperation
    | MoveOperation
    | CopyOperation
    | TestOperation,
    Field(discriminator="op"),
]
"""One RFC 6902 operation, discriminated by `op`; extra members are kept (ops are open)."""


def _no_messages() -> list[Message]:
    return []


class RunAgentInput(WireModel, frozen=True):
    """The body of the POST that starts a run: thread, run, history, tools, state, answers.

    Both key styles are accepted, and everything but the ids may be absent. The protocol
    requires `messages`; absent, it reads as an empty history, but a `null` there is malformed
    (it is not one of the legacy nulls a server must accept).

    Examples:
        >>> body = {"thread_id": "t", "run_id": "r", "messages": [], "state": None}
        >>> RunAgentInput.model_validate(body).model_dump_json()
        '{"threadId":"t","runId":"r","messages":[]}'
    """

    thread_id: str
    run_id: str
    protocol_version: Opt[str] = None
    parent_run_id: Opt[str] = None
    state: Opt[JsonValue] = None
    messages: list[Message] = Field(default_factory=_no_messages)
    tools: Opt[list[Tool]] = None
    context: Opt[list[Context]] = None
    forwarded_props: Opt[JsonValue] = None
    resume: Opt[list[ResumeEntry]] = None
