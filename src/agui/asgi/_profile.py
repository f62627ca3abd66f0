"""The legacy-peer profile: what agui sends a client older than AG-UI 1.0.

agui speaks 1.0, and a 1.0 client reads any stream agui writes. The most used frontend does
not run one: CopilotKit's runtime reaches agents through `@ag-ui/client` 0.0.x, which parses
every event with a strict union and fails the run on a type or shape it does not know. Four
1.0 additions are fatal there: the `SUBAGENT_*` events, the `cancelled` run outcome, the
`pendingToolCallIds` of a success outcome (its success is `{"type": "success"}` and nothing
more), and a `TOOL_CALL_RESULT` whose content is a list of parts. Unknown keys of an event pass
(its events are open objects), so everything else, `protocolVersion` included, is unchanged.

A request without `protocolVersion` comes from such a client (a 1.0 client always sends it),
so the endpoint downgrades its stream with `LegacyProfile`, the last transformer of the run's
chain, before the verifier: the verifier checks the stream as it leaves, so a downgrade that
made it invalid (a subagent's step and the parent's of one name, open at once, once their
owners are stripped) is refused like any other broken rule. `asgi_app(protocol_version=...)`
forces either profile. A run's own deltas, plain starts and ends pass the profile unchanged,
so it marks itself as passing records (`_records_pass`): the pipeline keeps them on their fast
path, and a legacy peer's stream costs what a 1.0 peer's does.

What a downgrade does, event by event:

- `SUBAGENT_STARTED`, `SUBAGENT_FINISHED` and `SUBAGENT_ERROR` are dropped, and
  `subagentRunId` is stripped from every event: a subagent's messages become the parent's;
- a cancelled run ends with `RUN_FINISHED` as a success (no outcome, which a 0.x client reads
  as success) carrying `metadata: {"outcome": "cancelled"}`: a run stopped on purpose is not a
  failure, and a `RUN_ERROR` would show the user an error for pressing stop;
- a success that leaves calls to the client ends without their ids (`{"type": "success"}`):
  such a client finds the calls it must run in the run's messages, and refuses the whole run
  over the list;
- a tool result made of parts is sent as the text of its text parts, joined, with a warning on
  the `agui` log naming the parts that were left out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import ClassVar, Literal, Protocol, cast

from agui.events import (
    Event,
    EventType,
    RunFinishedEvent,
    ToolCallResultEvent,
)
from agui.messages import TextPart
from agui.transform import Transformer, checked_transformers
from agui.types import CancelledOutcome, RunAgentInput, SuccessOutcome

__all__ = [
    "Chain",
    "LegacyProfile",
    "ProtocolSetting",
    "TransformerFactory",
    "is_legacy",
    "profiled",
]

_log = logging.getLogger("agui")

ProtocolSetting = Literal["auto", "1.0", "0.x"]
"""`asgi_app(protocol_version=...)`: `auto` reads each request, the others force a profile."""

TransformerFactory = Callable[[], Sequence[Transformer]]
"""Builds a fresh transformer chain for each request (transformers keep per-run state)."""


class Chain(Protocol):
    """The endpoint's transformer factory, told whether the request is a legacy peer's."""

    def __call__(self, *, legacy: bool) -> Sequence[Transformer]:
        """A fresh chain for one request."""
        ...


_SUBAGENT_TYPES = frozenset(
    kind.value
    for kind in (EventType.SUBAGENT_STARTED, EventType.SUBAGENT_FINISHED, EventType.SUBAGENT_ERROR)
)
# Plain strings: comparing with a `str` enum member costs several times a string compare.
_RESULT, _FINISHED = EventType.TOOL_CALL_RESULT.value, EventType.RUN_FINISHED.value


def is_legacy(run_input: RunAgentInput, setting: ProtocolSetting) -> bool:
    """Whether a request's stream is downgraded: forced by `setting`, or no `protocolVersion`.

    Examples:
        >>> old = RunAgentInput(thread_id="t", run_id="r")
        >>> is_legacy(old, "auto"), is_legacy(old, "1.0")
        (True, False)
        >>> is_legacy(RunAgentInput(thread_id="t", run_id="r", protocol_version="1.0"), "auto")
        False
    """
    if setting == "auto":
        return run_input.protocol_version is None
    return setting == "0.x"


def profiled(factory: TransformerFactory | None) -> Chain:
    """A transformer factory that ends the chain with `LegacyProfile` for a legacy request.

    Told the profile, not reading it from a context variable: a variable set for a request
    was held, with its token and a context of its own, by every open stream.

    Examples:
        >>> chain = profiled(None)
        >>> chain(legacy=False)
        []
        >>> [type(t).__name__ for t in chain(legacy=True)]
        ['LegacyProfile']
    """

    def chain(*, legacy: bool) -> Sequence[Transformer]:
        transformers = [] if factory is None else list(checked_transformers(factory()))
        if legacy:
            transformers.append(LegacyProfile())
        return transformers

    return chain


class LegacyProfile:
    """Downgrade a 1.0 stream to what a pre-1.0 client accepts (see the module docstring).

    Examples:
        >>> from agui.events import SubagentStartedEvent, TextMessageStartEvent
        >>> profile = LegacyProfile()
        >>> profile.transform(SubagentStartedEvent(subagent_run_id="s1", name="researcher"))
        []
        >>> [e.model_dump_json() for e in profile.transform(
        ...     TextMessageStartEvent(message_id="m1", subagent_run_id="s1"))]
        ['{"type":"TEXT_MESSAGE_START","messageId":"m1"}']
    """

    _records_pass: ClassVar[bool] = True
    """It returns a record's event (a run's own delta, plain start or end) unchanged: the
    pipeline keeps such a run's records on their fast path, past the chain."""

    def transform(self, event: Event) -> Sequence[Event]:
        # Read by `type` first: nearly every event passes, and a pydantic class's `isinstance`
        # costs tens of nanoseconds per class when it does not match.
        kind = event.type
        if kind in _SUBAGENT_TYPES:
            return []
        if getattr(event, "subagent_run_id", None) is not None:
            event = event.model_copy(update={"subagent_run_id": None})
        if kind == _RESULT:
            result = cast("ToolCallResultEvent", event)
            if not isinstance(result.content, str):
                return [result.model_copy(update={"content": _flattened(result)})]
        elif kind == _FINISHED:
            finished = cast("RunFinishedEvent", event)
            if isinstance(finished.outcome, CancelledOutcome):
                metadata = {**(finished.metadata or {}), "outcome": "cancelled"}
                return [finished.model_copy(update={"outcome": None, "metadata": metadata})]
            if (
                isinstance(finished.outcome, SuccessOutcome)
                and finished.outcome.pending_tool_call_ids
            ):
                return [finished.model_copy(update={"outcome": SuccessOutcome()})]
        return [event]


def _flattened(event: ToolCallResultEvent) -> str:
    parts = event.content if not isinstance(event.content, str) else []
    texts = [part.text for part in parts if isinstance(part, TextPart)]
    dropped = [part.type for part in parts if not isinstance(part, TextPart)]
    _log.warning(
        "the result of tool call %s is made of content parts, which a pre-1.0 client cannot "
        "read; sent as the text of its text parts%s",
        event.tool_call_id,
        f" (left out: {', '.join(dropped)})" if dropped else "",
    )
    return "\n".join(texts)
