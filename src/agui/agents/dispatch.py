"""Tool dispatch: how a model is told about tools, and how its calls are read back.

There are two ways a model asks for a tool, and one `ToolDispatcher` protocol over both:

- `NativeDispatcher`: the provider's structured tool calls. Specs go in the request; calls come
  back as fragments interleaved by `index` (id and name in the first fragment only), which are
  assembled per call and returned whole when the response ends. With `stream_tool_calls=True`
  they are also streamed to the client as they arrive, interleaved, through `ctx.emit`.
- `XmlDispatcher`: for local models without tool calling. The system prompt lists the tools
  and teaches a call written as a fenced `json` block; a streaming parser separates answer
  text, `<think>` reasoning and calls (in that form, in `<tool_call>` tags, as bare JSON, or as
  `<function=name>`) while the text arrives; results go back as a user message of
  `<tool_result>` blocks; a call that repeats one made earlier in the same turn is skipped.

A call that cannot run (a tag whose JSON makes no call, a native call without a name) becomes an
`agui.warning` CUSTOM event for the client and a `MalformedCall` in the turn, which
`format_results` answers with an error saying what was wrong and what to write instead: told
nothing, the model would take the silence for success and never call again.

A dispatcher streams the turn's text and reasoning to the client through a `TurnWriter`
(`agui.agents.turn`: one assistant message per turn, reasoning blocks around it) and returns an
`AssistantTurn` listing the calls. Running them is the tool loop's job: one call at a time,
each in its own tool-call block, because a tool that changes state must do so while its call is
open.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, Sequence
from typing import Literal, Protocol, TypeVar, runtime_checkable

from typing_extensions import get_protocol_members

from agui.agents import _xml as xml
from agui.agents import _xml_prompt as prompt
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
from agui.agents.turn import TurnWriter
from agui.errors import UsageError
from agui.messages import Message
from agui.types import TokenUsage, Tool

__all__ = [
    "AssistantTurn",
    "CallResult",
    "DispatcherChoice",
    "MalformedCall",
    "NativeDispatcher",
    "ParsedCall",
    "ToolDispatcher",
    "XmlDispatcher",
    "XmlStreamParser",
    "select_dispatcher",
]

S = TypeVar("S")


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
class MalformedCall:
    """A call the model wrote that cannot run: what it wrote, and what is wrong with it.

    `raw` is the call as written (the tag, or a native call's arguments).

    Examples:
        >>> MalformedCall("<tool_call>{</tool_call>", "the tag does not hold JSON").reason
        'the tag does not hold JSON'
    """

    raw: str
    reason: str


@dataclasses.dataclass(frozen=True)
class AssistantTurn:
    """One model response, read: its text, its calls, usage, and why it stopped.

    `message_id` is the id of the text message the client saw, or of the synthetic assistant
    message the calls hang on when there was no text. `malformed` are the calls that cannot run;
    a turn with any wants an answer too, so the model can call again.

    Examples:
        >>> AssistantTurn(text="Hi", calls=()).calls
        ()
    """

    text: str
    calls: tuple[ParsedCall, ...]
    usage: TokenUsage | None = None
    finish_reason: str | None = None
    message_id: str | None = None
    malformed: tuple[MalformedCall, ...] = ()


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

    @property
    def stop_sequences(self) -> tuple[str, ...]:
        """Text the model must stop at, sent with the request (none for native calls)."""
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

    @property
    def stop_sequences(self) -> tuple[str, ...]:
        """None: structured calls leave the model no result to invent."""
        return ()

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
        """An assistant message with the calls, one tool message per result, then any errors.

        A call that cannot run has no id or name a provider takes back: its error is user text.
        """
        calls = [ChatToolCall(r.id, r.name, r.arguments) for r in results]
        out = [ChatMessage.assistant(turn.text, calls)] + [
            ChatMessage.tool(r.id, r.result.content, name=r.name, is_error=not r.result.ok)
            for r in results
        ]
        errors = [
            f"Error: a tool call in your reply did not run: {call.reason} (its arguments: "
            f"{call.raw or '{}'}). Call the tool again, by its name."
            for call in turn.malformed
        ]
        return out + ([ChatMessage.user("\n".join(errors))] if errors else [])

    def to_provider_messages(self, messages: Sequence[Message]) -> list[ChatMessage]:
        """Roles mapped one to one; reasoning and activity dropped; unanswered calls closed."""
        return chat_messages(messages)


class XmlDispatcher:
    """Tool calls written in the answer text, for models without native tool calling.

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
        """The tools, with their JSON Schemas, and the call format, with an example."""
        return prompt.prompt_instructions(tools)

    @property
    def stop_sequences(self) -> tuple[str, ...]:
        """`<tool_result`: a result the model writes itself would be invented."""
        return prompt.STOP_SEQUENCES

    async def parse_response(
        self, deltas: AsyncIterable[ChatDelta], writer: TurnWriter[S]
    ) -> AssistantTurn:
        """Parse the text as it streams; calls go out where they close, in order, once each."""
        parser = XmlStreamParser()
        tags: list[ParsedCall | MalformedCall] = []

        def on_text(text: str) -> None:
            _apply(parser.feed(text), writer, tags)

        read = await read_response(deltas, writer, on_text, None)
        _apply(parser.finish(), writer, tags)
        writer.close()
        return _turn(read, writer, tags + _parsed(read, writer, None))

    def format_results(
        self, turn: AssistantTurn, results: Sequence[CallResult]
    ) -> list[ChatMessage]:
        """The turn as the model wrote it, then a user message of `<tool_result>` blocks.

        The calls that ran are echoed in the taught form; one that cannot run is echoed as
        written, and its block is an error saying what was wrong and what to write instead.
        """
        written = [prompt.render_block(r.name, r.arguments) for r in results]
        written += [call.raw for call in turn.malformed]
        blocks = [prompt.render_result(r.name, r.result.content, ok=r.result.ok) for r in results]
        blocks += [prompt.render_malformed(call.reason) for call in turn.malformed]
        echo = ChatMessage.assistant("\n".join([turn.text, *written]).strip())
        return [echo, ChatMessage.user("\n".join(blocks))] if blocks else [echo]

    def to_provider_messages(self, messages: Sequence[Message]) -> list[ChatMessage]:
        """Calls as `json` blocks in the assistant's text; results as `<tool_result>` blocks."""
        return prompt.history(chat_messages(messages))


def select_dispatcher(
    choice: ToolDispatcher | DispatcherChoice, model: ChatModel
) -> ToolDispatcher:
    """The dispatcher for `choice`; `"auto"` asks the model whether it calls tools natively.

    Examples:
        >>> from agui.agents.models import ScriptedModel
        >>> type(select_dispatcher("auto", ScriptedModel([], supports_native_tools=False)))
        <class 'agui.agents.dispatch.XmlDispatcher'>
        >>> select_dispatcher(None, ScriptedModel([]))
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: dispatcher=None is not a ToolDispatcher: use 'native', 'xml', ...
    """
    if choice == "native" or (choice == "auto" and model.supports_native_tools):
        return NativeDispatcher()
    if choice in ("xml", "auto"):
        return XmlDispatcher()
    return _dispatcher(choice)


def _dispatcher(given: object) -> ToolDispatcher:
    # Refused here, when the agent is built, not as an AttributeError in every run.
    if isinstance(given, ToolDispatcher):
        return given
    accepted = "use 'native', 'xml', 'auto' or a ToolDispatcher"
    if isinstance(given, str):
        message = f"unknown dispatcher {given!r}: {accepted}"
    else:
        members = sorted(get_protocol_members(ToolDispatcher))
        missing = [name for name in members if not hasattr(given, name)]
        # Naming what is missing helps a dispatcher of one's own; for None it is noise.
        lacks = f" (it has no {', '.join(missing)})" if len(missing) < len(members) else ""
        message = (
            f"dispatcher={given!r} is not a ToolDispatcher{lacks}: {accepted}, such as "
            "NativeDispatcher(stream_tool_calls=True)"
        )
    raise UsageError(message)


# -- building a turn from a response ------------------------------------------------------------


def _parsed(
    read: Response, writer: TurnWriter[S], streamer: CallStreamer[S] | None
) -> list[ParsedCall | MalformedCall]:
    calls: list[ParsedCall | MalformedCall] = []
    for call in read.calls.calls:
        if not call.name.strip():
            # A START without a name is worse than no call at all; the model is told instead.
            writer.warn("skipped a tool call that had no name", arguments=call.arguments)
            calls.append(MalformedCall(call.arguments, "it has no name"))
        elif streamer is not None:
            call_id = streamer.end(call)
            calls.append(
                ParsedCall(call.name, call.arguments.strip() or "{}", call_id, started=True)
            )
        else:
            calls.append(ParsedCall(call.name, call.arguments.strip() or "{}", call.id))
    return calls


def _turn(
    read: Response, writer: TurnWriter[S], found: list[ParsedCall | MalformedCall]
) -> AssistantTurn:
    calls = tuple(call for call in found if isinstance(call, ParsedCall))
    malformed = tuple(call for call in found if isinstance(call, MalformedCall))
    text, parent = writer.text_so_far, writer.parent_id
    return AssistantTurn(text, calls, read.usage, read.finish_reason, parent, malformed)


def _apply(
    pieces: Sequence[xml.XmlPiece], writer: TurnWriter[S], tags: list[ParsedCall | MalformedCall]
) -> None:
    for piece in pieces:
        if isinstance(piece, xml.TextPiece):
            writer.text(piece.text)
        elif isinstance(piece, xml.ReasoningPiece):
            writer.reasoning(piece.text)
        elif isinstance(piece, xml.ToolCallTag):
            sent = [(tag.name, tag.arguments) for tag in tags if isinstance(tag, ParsedCall)]
            if (piece.name, piece.arguments) in sent:
                # Small models repeat a call (a tag, then the same JSON bare); it runs once.
                writer.warn(
                    "skipped a repeated tool call", name=piece.name, arguments=piece.arguments
                )
            else:
                tags.append(_send_call(writer, piece))
        else:
            writer.warn(f"skipped a malformed tool call: {piece.reason}", raw=piece.raw)
            tags.append(MalformedCall(piece.raw, piece.reason))


def _send_call(writer: TurnWriter[S], tag: xml.ToolCallTag) -> ParsedCall:
    # The call goes out where its tag closed: text before it ends its message, text after it
    # opens a new one. It runs after the turn, like every call.
    parent = writer.parent_id
    writer.close()
    with writer.ctx.tool_call(tag.name, parent_message_id=parent) as handle:
        handle.args(tag.arguments)
        handle.end()
    return ParsedCall(tag.name, tag.arguments, handle.id, started=True)
