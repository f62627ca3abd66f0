"""Tool dispatch: how a model is told about tools, and how its calls are read back.

There are two ways a model asks for a tool, and one `ToolDispatcher` protocol over both:

- `NativeDispatcher`: the provider's structured tool calls. Specs go in the request; calls come
  back as fragments interleaved by `index` (id and name in the first fragment only), which are
  assembled per call and returned whole when the response ends. With `stream_tool_calls=True`
  they are also streamed to the client as they arrive, interleaved, through `ctx.emit`.
- `XmlDispatcher`: for local models without tool calling. The system prompt teaches a
  `<tool_call>{...}</tool_call>` format; a streaming parser separates answer text, `<think>`
  reasoning and calls while the text arrives; results go back as a user message of
  `<tool_result>` blocks; a malformed tag becomes an `agui.warning` CUSTOM event and is skipped.

A dispatcher streams the turn's text and reasoning to the client through a `TurnWriter` (one
assistant message per turn, reasoning blocks around it) and returns an `AssistantTurn` listing
the calls. Running them is the tool loop's job: one call at a time, each in its own tool-call
block, because a tool that changes state must do so while its call is open.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterable, Sequence
from typing import Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import JsonValue

from agui.agents import _xml as xml
from agui.agents._response import CallStreamer, Response, read_response
from agui.agents._xml import XmlStreamParser
from agui.agents.models.base import (
    ChatDelta,
    ChatMessage,
    ChatModel,
    ChatToolCall,
    chat_messages,
)
from agui.agents.tools import ToolResult
from agui.context import RunContext
from agui.events import CustomEvent
from agui.handles import MessageHandle, ReasoningHandle
from agui.messages import Message
from agui.types import TokenUsage, Tool

__all__ = [
    "WARNING_EVENT",
    "AssistantTurn",
    "CallResult",
    "DispatcherChoice",
    "NativeDispatcher",
    "ParsedCall",
    "ToolDispatcher",
    "TurnWriter",
    "XmlDispatcher",
    "XmlStreamParser",
    "emit_warning",
    "select_dispatcher",
]

S = TypeVar("S")
_log = logging.getLogger("agui")

WARNING_EVENT = "agui.warning"
"""The name of the CUSTOM event that reports model output agui had to skip."""


@dataclasses.dataclass(frozen=True)
class ParsedCall:
    """A tool call the model made: name, argument text, and the provider's id if it gave one.

    `started` means the dispatcher already streamed its START/ARGS/END to the client.

    Examples:
        >>> ParsedCall("get_weather", '{"location":"Paris"}').id is None
        True
    """

    name: str
    arguments: str
    id: str | None = None
    started: bool = False


@dataclasses.dataclass(frozen=True)
class AssistantTurn:
    """One model response, read: its text, its calls, usage, and why it stopped.

    `message_id` is the id of the text message the client saw, or of the synthetic assistant
    message the calls hang on when there was no text.

    Examples:
        >>> AssistantTurn(text="Hi", calls=()).calls
        ()
    """

    text: str
    calls: tuple[ParsedCall, ...]
    usage: TokenUsage | None = None
    finish_reason: str | None = None
    message_id: str | None = None


@dataclasses.dataclass(frozen=True)
class CallResult:
    """A call as it went out (with its final id) and the result it got.

    Examples:
        >>> CallResult("c1", "get_weather", "{}", ToolResult("sunny")).result.ok
        True
    """

    id: str
    name: str
    arguments: str
    result: ToolResult


def emit_warning(ctx: RunContext[S], message: str, **detail: JsonValue) -> None:
    """Report something skipped but not fatal: a log line and an `agui.warning` CUSTOM event.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> emit_warning(ctx, "skipped a malformed tool call", raw="<tool_call>{</tool_call>")
        >>> event = events.drain()[0]
        >>> event.type, event.name, event.value["raw"]
        ('CUSTOM', 'agui.warning', '<tool_call>{</tool_call>')
    """
    _log.warning("run %s: %s", ctx.run_id, message)
    ctx.emit(CustomEvent(name=WARNING_EVENT, value={"message": message, **detail}))


class TurnWriter(Generic[S]):
    r"""Streams one model turn's text and reasoning to the client, opening blocks lazily.

    Text goes into one assistant message, opened at the first non-blank text; reasoning into a
    reasoning block. Switching between the two closes the open one.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> writer = TurnWriter(ctx, turn=1)
        >>> writer.reasoning("Paris, then.")
        >>> writer.text("\n\nIt is sunny.")
        >>> writer.close()
        >>> writer.text_so_far, [event.type for event in events.drain()][-3:]
        ('It is sunny.', ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END'])
    """

    def __init__(self, ctx: RunContext[S], *, turn: int) -> None:
        self.ctx = ctx
        self.turn = turn
        self._message: MessageHandle[S] | None = None
        self._reasoning: ReasoningHandle[S] | None = None
        self._message_id: str | None = None
        self._texts: list[str] = []

    @property
    def text_so_far(self) -> str:
        """The answer text sent so far in this turn."""
        return "".join(self._texts)

    @property
    def parent_id(self) -> str:
        """The assistant message the turn's tool calls belong to.

        With no text, a synthetic id keeps parallel calls in one assistant message.
        """
        return self._message_id or f"{self.ctx.run_id}-turn-{self.turn}"

    def text(self, delta: str) -> None:
        """Append answer text; a blank start is dropped rather than opening a message."""
        if not delta:
            return
        self._end_reasoning()
        if self._message is None:
            delta = delta.lstrip()
            if not delta:
                return
            self._message = self.ctx.message()
            self._message_id = self._message.id
        self._message.delta(delta)
        self._texts.append(delta)

    def reasoning(self, delta: str) -> None:
        """Append reasoning; a blank start is dropped rather than opening a block."""
        if not delta:
            return
        self._end_message()
        if self._reasoning is None:
            delta = delta.lstrip()
            if not delta:
                return
            self._reasoning = self.ctx.reasoning()
        self._reasoning.delta(delta)

    def warn(self, message: str, **detail: JsonValue) -> None:
        """Report model output that was skipped (see `emit_warning`)."""
        emit_warning(self.ctx, message, **detail)

    def call_id(self, position: int) -> str:
        """An id for a streamed call the provider gave none (unique within the run)."""
        return f"{self.ctx.run_id}-turn-{self.turn}-call-{position}"

    def close(self) -> None:
        """Close whatever is open."""
        self._end_message()
        self._end_reasoning()

    def _end_message(self) -> None:
        if self._message is not None:
            self._message.end()
            self._message = None

    def _end_reasoning(self) -> None:
        if self._reasoning is not None:
            self._reasoning.end()
            self._reasoning = None


@runtime_checkable
class ToolDispatcher(Protocol):
    """How tools are offered to a model and how its calls and their results are carried.

    Examples:
        >>> isinstance(XmlDispatcher(), ToolDispatcher), NativeDispatcher().should_send_tool_specs
        (True, True)
    """

    @property
    def should_send_tool_specs(self) -> bool:
        """Whether the request carries the tool specs (native tool calling)."""
        ...

    def prompt_instructions(self, tools: Sequence[Tool]) -> str:
        """Text for the system prompt that teaches the model to call `tools` ("" if none)."""
        ...

    async def parse_response(
        self, deltas: AsyncIterable[ChatDelta], writer: TurnWriter[S]
    ) -> AssistantTurn:
        """Read a response: stream its text and reasoning through `writer`, return its calls."""
        ...

    def format_results(
        self, turn: AssistantTurn, results: Sequence[CallResult]
    ) -> list[ChatMessage]:
        """The messages that carry a turn and its results back to the model."""
        ...

    def to_provider_messages(self, messages: Sequence[Message]) -> list[ChatMessage]:
        """The AG-UI history as the model should read it."""
        ...


DispatcherChoice = Literal["native", "xml", "auto"]
"""`auto` picks native tool calling when the model supports it, XML tags otherwise."""


class NativeDispatcher:
    """The provider's structured tool calls, assembled from fragments interleaved by index.

    Examples:
        >>> import asyncio
        >>> from agui import RunAgentInput, RunContext
        >>> from agui.agents.models import ToolCallDelta
        >>> async def deltas():
        ...     yield ToolCallDelta(index=0, id="c1", name="get_weather")
        ...     yield ToolCallDelta(index=1, id="c2", name="get_time")
        ...     yield ToolCallDelta(index=0, arguments='{"location":"Paris"}')
        ...     yield ToolCallDelta(index=1, arguments="{}")
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> turn = asyncio.run(NativeDispatcher().parse_response(deltas(), TurnWriter(ctx, turn=1)))
        >>> [(call.id, call.name, call.arguments) for call in turn.calls]
        [('c1', 'get_weather', '{"location":"Paris"}'), ('c2', 'get_time', '{}')]
    """

    def __init__(self, *, stream_tool_calls: bool = False) -> None:
        self.stream_tool_calls = stream_tool_calls

    @property
    def should_send_tool_specs(self) -> bool:
        """Always: the provider takes the specs."""
        return True

    def prompt_instructions(self, tools: Sequence[Tool]) -> str:  # noqa: ARG002
        """Nothing: the specs travel in the request."""
        return ""

    async def parse_response(
        self, deltas: AsyncIterable[ChatDelta], writer: TurnWriter[S]
    ) -> AssistantTurn:
        """Stream text and reasoning; assemble the calls (streaming them too, if asked)."""
        streamer = CallStreamer(writer) if self.stream_tool_calls else None
        read = await read_response(deltas, writer, writer.text, streamer)
        writer.close()
        return _turn(read, writer, _parsed(read, writer, streamer))

    def format_results(
        self, turn: AssistantTurn, results: Sequence[CallResult]
    ) -> list[ChatMessage]:
        """An assistant message with the calls, then one tool message per result."""
        calls = [ChatToolCall(r.id, r.name, r.arguments) for r in results]
        return [ChatMessage.assistant(turn.text, calls)] + [
            ChatMessage.tool(r.id, r.result.content, name=r.name, is_error=not r.result.ok)
            for r in results
        ]

    def to_provider_messages(self, messages: Sequence[Message]) -> list[ChatMessage]:
        """Roles mapped one to one; reasoning and activity dropped; unanswered calls closed."""
        return chat_messages(messages)


class XmlDispatcher:
    """Tool calls written as `<tool_call>` tags in the text, for models without tool calling.

    Examples:
        >>> import asyncio
        >>> from agui import RunAgentInput, RunContext
        >>> from agui.agents.models import TextDelta
        >>> async def deltas():
        ...     yield TextDelta("<think>Weather, so a tool.</think>Checking.<tool_call>")
        ...     yield TextDelta('{"name": "get_weather", "arguments": {"location": "Paris"}}')
        ...     yield TextDelta("</tool_call>")
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> turn = asyncio.run(XmlDispatcher().parse_response(deltas(), TurnWriter(ctx, turn=1)))
        >>> turn.text, [(call.name, call.arguments) for call in turn.calls]
        ('Checking.', [('get_weather', '{"location":"Paris"}')])
    """

    @property
    def should_send_tool_specs(self) -> bool:
        """Never: the tools are described in the system prompt."""
        return False

    def prompt_instructions(self, tools: Sequence[Tool]) -> str:
        """The tag format and the tools, with their JSON Schemas."""
        return xml.prompt_instructions(tools)

    async def parse_response(
        self, deltas: AsyncIterable[ChatDelta], writer: TurnWriter[S]
    ) -> AssistantTurn:
        """Parse the text as it streams; calls are the complete tags, in order."""
        parser = XmlStreamParser()
        tags: list[ParsedCall] = []

        def on_text(text: str) -> None:
            _apply(parser.feed(text), writer, tags)

        read = await read_response(deltas, writer, on_text, None)
        _apply(parser.finish(), writer, tags)
        writer.close()
        return _turn(read, writer, tags + _parsed(read, writer, None))

    def format_results(
        self, turn: AssistantTurn, results: Sequence[CallResult]
    ) -> list[ChatMessage]:
        """The turn as the model wrote it, then a user message of `<tool_result>` blocks."""
        return _as_xml(NativeDispatcher().format_results(turn, results))

    def to_provider_messages(self, messages: Sequence[Message]) -> list[ChatMessage]:
        """Calls rendered as tags in the assistant text; results as `<tool_result>` blocks."""
        return _as_xml(chat_messages(messages))


def select_dispatcher(
    choice: ToolDispatcher | DispatcherChoice, model: ChatModel
) -> ToolDispatcher:
    """The dispatcher for `choice`; `"auto"` asks the model whether it calls tools natively.

    Examples:
        >>> from agui.agents.models import ScriptedModel
        >>> type(select_dispatcher("auto", ScriptedModel([], supports_native_tools=False)))
        <class 'agui.agents.dispatch.XmlDispatcher'>
    """
    if choice == "native" or (choice == "auto" and model.supports_native_tools):
        return NativeDispatcher()
    if choice in ("xml", "auto"):
        return XmlDispatcher()
    if not isinstance(choice, str):
        return choice
    message = f"unknown dispatcher {choice!r}: use 'native', 'xml', 'auto' or a ToolDispatcher"
    raise ValueError(message)


# -- building a turn from a response ------------------------------------------------------------


def _parsed(
    read: Response, writer: TurnWriter[S], streamer: CallStreamer[S] | None
) -> list[ParsedCall]:
    calls: list[ParsedCall] = []
    for call in read.calls.calls:
        if not call.name:
            # A START without a name is worse than no call at all.
            writer.warn("skipped a tool call that had no name", arguments=call.arguments)
        elif streamer is not None:
            call_id = streamer.end(call)
            calls.append(
                ParsedCall(call.name, call.arguments.strip() or "{}", call_id, started=True)
            )
        else:
            calls.append(ParsedCall(call.name, call.arguments.strip() or "{}", call.id))
    return calls


def _turn(read: Response, writer: TurnWriter[S], calls: list[ParsedCall]) -> AssistantTurn:
    return AssistantTurn(
        writer.text_so_far, tuple(calls), read.usage, read.finish_reason, writer.parent_id
    )


def _apply(pieces: Sequence[xml.XmlPiece], writer: TurnWriter[S], tags: list[ParsedCall]) -> None:
    for piece in pieces:
        if isinstance(piece, xml.TextPiece):
            writer.text(piece.text)
        elif isinstance(piece, xml.ReasoningPiece):
            writer.reasoning(piece.text)
        elif isinstance(piece, xml.ToolCallTag):
            tags.append(ParsedCall(piece.name, piece.arguments))
        else:
            writer.warn(f"skipped a malformed tool call: {piece.reason}", raw=piece.raw)


def _as_xml(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    # Calls become tags in the assistant's text; each run of results, one user message.
    out: list[ChatMessage] = []
    results: list[str] = []
    for message in [*messages, None]:
        if message is not None and message.role == "tool":
            name = message.name or "unknown"
            results.append(xml.render_result(name, message.content, ok=not message.is_error))
            continue
        if results:
            out.append(ChatMessage.user("\n".join(results)))
            results = []
        if message is not None and message.role == "assistant" and message.tool_calls:
            tags = [xml.render_call(call.name, call.arguments) for call in message.tool_calls]
            out.append(ChatMessage.assistant("\n".join([message.content, *tags]).strip()))
        elif message is not None:
            out.append(message)
    return out
