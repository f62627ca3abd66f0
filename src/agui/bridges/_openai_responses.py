"""The Responses events of an Agents SDK run, on agui's handles: one output item open at a time.

A model response streams its output items in turn: each is added, streams its deltas and is
done before the next is added, and the Agents SDK turns a chat-completions stream into the same
events. So one handle at a time is open, the one of the item added last: a message, a reasoning
block or a tool call. A tool call keeps the model's `call_id` (the next request's history names
it, as the SDK's own input does); messages and reasoning blocks get agui's ids, since output
item ids may repeat across responses. Results come later, as the SDK's run items, when the
tools ran. `AgentStream` adds the agents: each agent that runs (the first, then each handoff's)
is a step, inside which its items stream.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Container

from agents.items import HandoffOutputItem, RunItem, ToolCallOutputItem, TResponseStreamEvent
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseRefusalDeltaEvent,
    ResponseTextDeltaEvent,
)
from pydantic import JsonValue

from agui.context import RunContext
from agui.handles import MessageHandle, ReasoningHandle, StepHandle, ToolCallHandle

__all__ = ["AgentStream", "ResponseItems", "call_output"]

_log = logging.getLogger("agui")

_Block = MessageHandle[JsonValue] | ReasoningHandle[JsonValue] | ToolCallHandle[JsonValue]


class ResponseItems:
    """The output item open now, and the message the response's tool calls belong to.

    Examples:
        >>> from openai.types.responses import ResponseOutputItemAddedEvent, ResponseTextDeltaEvent
        >>> from agents.testing import assistant_message
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> items = ResponseItems(ctx)
        >>> items.take(ResponseOutputItemAddedEvent(
        ...     type="response.output_item.added", item=assistant_message("Hi"),
        ...     output_index=0, sequence_number=1))
        >>> items.take(ResponseTextDeltaEvent(
        ...     type="response.output_text.delta", item_id="m", output_index=0, content_index=0,
        ...     delta="Hi", logprobs=[], sequence_number=2))
        >>> items.end()
        >>> [event.type for event in events.drain()]
        ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']
    """

    def __init__(self, ctx: RunContext[JsonValue], left: Container[str] = ()) -> None:
        self._ctx = ctx
        self._left = left  # calls left to the client: their outputs are placeholders
        self.result_ids: dict[str, str] = {}
        """The message id a call's result goes with, by call id (agui's next one by default)."""
        self._block: _Block | None = None
        self._index: int | None = None  # the open item's place in its response
        self._parent: str | None = None

    def take(self, event: TResponseStreamEvent) -> None:
        """Map one Responses event; those with no AG-UI counterpart change nothing."""
        match event:
            case ResponseOutputItemAddedEvent(item=item, output_index=index):
                self._open(item, index)
            case (
                ResponseTextDeltaEvent(delta=text, output_index=index)
                | ResponseRefusalDeltaEvent(delta=text, output_index=index)
                | ResponseReasoningSummaryTextDeltaEvent(delta=text, output_index=index)
                | ResponseReasoningTextDeltaEvent(delta=text, output_index=index)
                | ResponseFunctionCallArgumentsDeltaEvent(delta=text, output_index=index)
            ):
                self._delta(index, text)
            case ResponseOutputItemDoneEvent(output_index=index):
                if index == self._index:
                    self.end()
            case ResponseCompletedEvent():
                self._parent = None  # the response is over: its calls run
            case _:
                pass

    def _open(self, item: object, index: int) -> None:
        self.end()
        ctx = self._ctx
        if isinstance(item, ResponseOutputMessage):
            self._block = ctx.message()
            self._parent = self._block.id
        elif isinstance(item, ResponseReasoningItem):
            self._block = ctx.reasoning()
        elif isinstance(item, ResponseFunctionToolCall):
            # Its arguments come as deltas (a chat-completions stream sends them whole in the
            # added item and again in one delta).
            self._block = ctx.tool_call(
                item.name, call_id=item.call_id, parent_message_id=self._parent
            )
        else:
            return
        self._index = index

    def _delta(self, index: int, text: str) -> None:
        block = self._block
        if block is None or index != self._index:
            # A chat-completions stream keeps its message open while calls stream after it.
            _log.warning(
                "run %s: a delta of an item that is not open was dropped", self._ctx.run_id
            )
        elif isinstance(block, ToolCallHandle):
            block.args(text)
        else:
            block.delta(text)

    def end(self) -> None:
        """End the open item, if one is."""
        if self._block is not None:
            self._block.end()
            self._block, self._index = None, None

    def result(self, item: RunItem) -> None:
        """Send a tool's (or a handoff's) output as its call's result, but a client's call's."""
        found = call_output(item)
        if found is not None and found[0] not in self._left:
            call_id, text = found
            self._ctx.tool_result(call_id, text, message_id=self.result_ids.get(call_id))


def call_output(item: RunItem) -> tuple[str, str] | None:
    """The call id and output text of a tool's (or a handoff's) output item; `None`: not one.

    Examples:
        >>> from agents import Agent
        >>> from agents.items import ToolCallOutputItem
        >>> raw = {"type": "function_call_output", "call_id": "c1", "output": "4"}
        >>> call_output(ToolCallOutputItem(agent=Agent(name="a"), raw_item=raw, output="4"))
        ('c1', '4')
    """
    if not isinstance(item, ToolCallOutputItem | HandoffOutputItem):
        return None
    raw = item.raw_item
    fields: dict[str, object] = dict(raw) if isinstance(raw, dict) else {}
    output = fields.get("output")
    text = output if isinstance(output, str) else json.dumps(output, default=str)
    return str(fields.get("call_id")), text


class AgentStream:
    """An agent run's stream events on a run context: its items, a step per agent that runs.

    Examples:
        >>> from agents import Agent
        >>> from agents.stream_events import AgentUpdatedStreamEvent
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> stream = AgentStream(ctx)
        >>> stream.take(AgentUpdatedStreamEvent(new_agent=Agent(name="triage")))
        >>> stream.next_step(None)
        >>> [(event.type, event.step_name) for event in events.drain()]
        [('STEP_STARTED', 'triage'), ('STEP_FINISHED', 'triage')]
    """

    def __init__(self, ctx: RunContext[JsonValue], left: Container[str] = ()) -> None:
        self._ctx = ctx
        self._items = ResponseItems(ctx, left)
        self.result_ids = self._items.result_ids
        """The message id a call's result goes with, by call id (`ResponseItems.result_ids`)."""
        self._step: StepHandle[JsonValue] | None = None

    def take(self, event: StreamEvent) -> None:
        """Map one stream event of the run."""
        match event:
            case RawResponsesStreamEvent(data=data):
                self._items.take(data)
            case RunItemStreamEvent(item=item):
                self._items.result(item)
            case _:
                self.next_step(event.new_agent.name)

    def next_step(self, agent: str | None) -> None:
        """End the step of the agent that ran, and start the one of `agent` (a handoff's)."""
        self._items.end()
        if self._step is not None:
            self._step.end()
        self._step = None if agent is None else self._ctx.step(agent)
