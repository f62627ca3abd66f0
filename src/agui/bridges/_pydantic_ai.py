"""The pydantic-ai bridge: a pydantic-ai `Agent` served as an agui agent.

The input side is pydantic-ai's own AG-UI adapter (`AGUIAdapter.run_stream_native`): it loads
the client's messages into the agent's history, offers the client's tools as a deferred
toolset, writes the client's state into a `StateDeps`, and reads `resume[]` into approvals that
deny by default. What it yields is pydantic-ai's native event stream, which this module maps
onto agui's handles, one part at a time (a model response streams its parts in order, each
ended before the next starts):

| pydantic-ai | agui |
|---|---|
| `TextPart` start, deltas, end | `ctx.message()`: `TEXT_MESSAGE_*` |
| `ThinkingPart` start, deltas, end | `ctx.reasoning()`: `REASONING_*` |
| `ToolCallPart` start, deltas, end | `ctx.tool_call(name, call_id=...)`, the call id kept |
| `FunctionToolResultEvent`, `OutputToolResultEvent` | `ctx.tool_result(call_id, ...)` |
| an output of `DeferredToolRequests` with approvals | the `interrupt` outcome |
| an output of `DeferredToolRequests` with calls only | success, the calls pending |
| a `StateDeps` state a tool changed | `ctx.publish_state()`: `STATE_DELTA` |
| AG-UI events in a tool's `ToolReturn.metadata` | `ctx.emit(...)`, read and verified |
| a `CustomEvent` a tool emits (unless `ui=False`) | `CUSTOM`, its payload the value |

Everything else agui's run driver gives: a failure of the framework ends the run with a coded
`RUN_ERROR` (a model's HTTP failure is `MODEL_*`, with the status and never the provider's
text), the open block closed first; a client that leaves, or a cancel, trips pydantic-ai's own
`CancellationToken` and closes the stream, so the model is not called again; and between events
the bridge waits for the client to read (`ctx.writable()`), which paces pydantic-ai's
zero-buffer stream.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Generic, TypeVar, cast

import ag_ui.core
from pydantic import JsonValue
from pydantic_ai import CancellationToken as PydanticCancellationToken
from pydantic_ai import DeferredToolRequests
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError, RunCancelled, UserError
from pydantic_ai.messages import CustomEvent as NativeCustomEvent
from pydantic_ai.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelResponsePart,
    ModelResponsePartDelta,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.ui import NativeEvent, StateHandler
from pydantic_ai.ui.ag_ui import AGUIAdapter
from pydantic_ai.ui.ag_ui._interrupt import approval_to_interrupt
from pydantic_core import to_json, to_jsonable_python

from agui.bridges._failure import model_failure
from agui.context import RunContext
from agui.errors import Cancelled, InvalidInput
from agui.events import CustomEvent
from agui.handles import MessageHandle, ReasoningHandle, ToolCallHandle
from agui.runner import AgentFunction
from agui.types import Interrupt, RunOutcome
from agui.wire import parse_event

__all__ = ["pydantic_ai"]

D = TypeVar("D")

_log = logging.getLogger("agui")

_Block = MessageHandle[JsonValue] | ReasoningHandle[JsonValue] | ToolCallHandle[JsonValue]


def pydantic_ai(
    agent: AbstractAgent[D, object], *, deps: D | None = None
) -> AgentFunction[JsonValue]:
    """An agui agent that runs the pydantic-ai `agent` for each run.

    `deps` are the agent's dependencies. A `StateDeps` (any `StateHandler`) is copied for each
    run, so concurrent runs never share a state, and gets the client's state; what a tool
    changes in it reaches the client as `STATE_DELTA`. A tool declared with
    `requires_approval=True` ends the run with the `interrupt` outcome, one interrupt per call
    (id `int-<call id>`, reason `tool_call`); the next run answers each in `resume[]` with
    `{"approved": true}` (the tool runs, with `editedArgs` if given) or anything else (it does
    not).

    Examples:
        >>> import asyncio
        >>> from pydantic_ai import Agent
        >>> from pydantic_ai.models.test import TestModel
        >>> from agui import RunAgentInput
        >>> from agui.messages import UserMessage
        >>> from agui.testing import collect, fold
        >>> agent = pydantic_ai(Agent(TestModel(custom_output_text="Hello there!")))
        >>> given = RunAgentInput(
        ...     thread_id="t", run_id="r", messages=[UserMessage(id="u", content="Hi")]
        ... )
        >>> events = asyncio.run(collect(agent, given))
        >>> fold(events).messages[-1].content
        'Hello there!'
    """

    async def run(ctx: RunContext[JsonValue]) -> RunOutcome | None:
        # `None` is what pydantic-ai itself passes for an agent given no deps.
        return await _Run(ctx, _fresh(cast("D", deps))).drive(agent)

    return run


def _fresh(deps: D) -> D:
    """A run's own copy of state-holding deps (the adapter writes the client's state into them)."""
    return copy.copy(deps) if isinstance(deps, StateHandler) else deps


class _Run(Generic[D]):
    """One run's translation: the part open now, the response's message, the run's output."""

    def __init__(self, ctx: RunContext[JsonValue], deps: D) -> None:
        self._ctx = ctx
        self._deps = deps
        self._block: tuple[int, _Block] | None = None
        self._parent: str | None = None  # the message of the response streaming now
        self._output: object = None

    async def drive(self, agent: AbstractAgent[D, object]) -> RunOutcome | None:
        """Run `agent` on the run's input; its failures become agui's coded errors."""
        try:
            await self._stream(agent)
        except RunCancelled:
            raise Cancelled(self._ctx.token.reason or "the run was cancelled") from None
        except ModelHTTPError as error:
            raise model_failure(error.model_name, error.status_code) from error
        except ModelAPIError as error:
            raise model_failure(error.model_name, None) from error
        return self._outcome()

    async def _stream(self, agent: AbstractAgent[D, object]) -> None:
        ctx = self._ctx
        adapter = AGUIAdapter[D, object](agent=agent, run_input=_official(ctx))
        try:
            answers = adapter.deferred_tool_results
        except UserError as error:
            message = f"the run's resume entries do not answer the agent's approvals: {error}"
            raise InvalidInput(message, errors=[("/resume", message)]) from None
        if answers is not None:
            # CopilotKit's `useInterrupt` also answers each interrupted call with a tool message
            # of its own; pydantic-ai would read that as the call's result and refuse the
            # approval. The approval in `resume[]` is the answer, as in agui's own approvals.
            answered = {*answers.approvals, *answers.calls}
            adapter = AGUIAdapter[D, object](agent=agent, run_input=_official(ctx, answered))
        token = PydanticCancellationToken()
        ctx.token.on_cancel(token.cancel)
        events = adapter.run_stream_native(
            deps=self._deps,
            output_type=[agent.output_type, DeferredToolRequests],
            deferred_tool_results=answers,
            cancellation_token=token,
        )
        self._publish_state()
        # An async generator (the adapter's own `stream_events`), typed as an iterator: closed
        # on every way out, so the framework's run is torn down with it.
        async with aclosing(cast("AsyncGenerator[NativeEvent, None]", events)):
            async for event in events:
                self._take(event)
                await ctx.writable()

    def _take(self, event: NativeEvent) -> None:
        match event:
            case PartStartEvent(index=index, part=part):
                self._start(index, part)
            case PartDeltaEvent(index=index, delta=delta):
                self._delta(index, delta)
            case PartEndEvent():
                self._end()  # a response's parts stream in turn: the end is the open one's
            case FunctionToolCallEvent():
                self._parent = None  # the response is over: its calls run
            case FunctionToolResultEvent(part=part) | OutputToolResultEvent(part=part):
                self._ctx.tool_result(part.tool_call_id, part.model_response_str())
                self._forward(part.metadata)
                self._publish_state()
            case NativeCustomEvent():
                if event.ui:
                    self._forward(event.to_payload(), name=event.name)
            case AgentRunResultEvent(result=result):
                self._output = result.output
            case _:
                pass  # no AG-UI counterpart: provider-native tools, files, capabilities

    def _start(self, index: int, part: ModelResponsePart) -> None:
        self._end()
        ctx = self._ctx
        block: _Block
        if isinstance(part, TextPart):
            block = ctx.message()
            self._parent = block.id
            block.delta(part.content)
        elif isinstance(part, ThinkingPart):
            block = ctx.reasoning()
            block.delta(part.content)
        elif isinstance(part, ToolCallPart):
            block = ctx.tool_call(
                part.tool_name, call_id=part.tool_call_id, parent_message_id=self._parent
            )
            block.args(_arguments(part.args))
        else:
            return
        self._block = (index, block)

    def _delta(self, index: int, delta: ModelResponsePartDelta) -> None:
        if self._block is None or self._block[0] != index:
            # Deltas of two parts interleaved: the earlier part has ended on the wire.
            _log.warning("run %s: a delta of a part that is not open was dropped", self._ctx.run_id)
            return
        block = self._block[1]
        if isinstance(block, ToolCallHandle):
            block.args(
                _arguments(delta.args_delta if isinstance(delta, ToolCallPartDelta) else None)
            )
        else:
            block.delta(_content(delta))

    def _end(self) -> None:
        if self._block is not None:
            self._block[1].end()
            self._block = None

    def _forward(self, value: object, *, name: str | None = None) -> None:
        """Send the AG-UI events a tool returned in its metadata, or a custom event's payload.

        These are how pydantic-ai's own adapter lets a tool add to the stream (a snapshot of the
        state, an event of the app's): each goes through agui's reader and verifier.
        """
        found = cast("list[object]", value) if isinstance(value, list) else [value]
        official = [item for item in found if isinstance(item, ag_ui.core.BaseEvent)]
        for item in official:
            self._ctx.emit(parse_event(item.model_dump(mode="json", by_alias=True)))
        if name is not None and not official:
            self._ctx.emit(CustomEvent(name=name, value=to_jsonable_python(value)))

    def _publish_state(self) -> None:
        if isinstance(self._deps, StateHandler):
            self._ctx.state = to_jsonable_python(self._deps.state)
            self._ctx.publish_state()

    def _outcome(self) -> RunOutcome | None:
        output = self._output
        if isinstance(output, DeferredToolRequests):
            if not output.approvals:
                return None  # the client's tools: their calls are pending
            return RunOutcome.interrupt(
                [_interrupt(call, output.metadata) for call in output.approvals]
            )
        if output is not None and not isinstance(output, str):
            self._ctx.result = to_jsonable_python(output)
        return None


def _official(
    ctx: RunContext[JsonValue], answered: set[str] | None = None
) -> ag_ui.core.RunAgentInput:
    """The run's input as the official SDK's model, which the adapter reads.

    Without the tool messages for the calls in `answered`, whose answers are in `resume[]`.
    """
    wire = ctx.input.model_dump(mode="json", by_alias=True, exclude_none=True)
    if answered:
        messages = cast("list[dict[str, JsonValue]]", wire.get("messages", []))
        wire["messages"] = [
            message
            for message in messages
            if message.get("role") != "tool" or message.get("toolCallId") not in answered
        ]
    return ag_ui.core.RunAgentInput.model_validate(wire)


def _interrupt(call: ToolCallPart, metadata: dict[str, dict[str, object]]) -> Interrupt:
    """The adapter's interrupt for an approval (its id is what its resume reading expects)."""
    official = approval_to_interrupt(call, metadata)
    return Interrupt.model_validate(official.model_dump(mode="json", by_alias=True))


def _arguments(arguments: object) -> str:
    """Argument text as the client reads it (a fragment stays a fragment)."""
    if isinstance(arguments, str):
        return arguments
    return "" if arguments is None else to_json(arguments).decode()


def _content(delta: ModelResponsePartDelta) -> str:
    """The text a text or thinking delta adds."""
    text = delta.content_delta if isinstance(delta, TextPartDelta | ThinkingPartDelta) else None
    return text or ""
