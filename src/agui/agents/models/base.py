"""The model boundary: a small protocol of ours instead of any LLM SDK.

A `ChatModel` takes a provider-side conversation (`ChatMessage`s, four roles, the shape every
`/chat/completions`-style API shares) and the tool specs to offer, and streams back `ChatDelta`s:
text, reasoning, tool-call fragments, usage and a finish reason. That is everything the tool loop
needs, so a hosted API, a local server or a scripted test double plug in the same way, and agui
depends on no vendor package.

Tool-call fragments are kept raw (`index`, maybe `id`, maybe `name`, a piece of argument text)
because that is how providers stream them, interleaved by index; assembling them is the
dispatcher's job, once, for every model. All types here are frozen dataclasses: cheap to build
per delta, hashable, and printable in a doctest.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from typing import Literal, Protocol, runtime_checkable

from agui.messages import (
    AssistantMessage,
    ContentPart,
    DeveloperMessage,
    Message,
    ReasoningMessage,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)
from agui.types import TokenUsage, Tool

__all__ = [
    "ChatDelta",
    "ChatMessage",
    "ChatModel",
    "ChatReasoning",
    "ChatRole",
    "ChatToolCall",
    "FinishDelta",
    "PartialToolCall",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallAssembler",
    "ToolCallDelta",
    "UsageDelta",
    "chat_messages",
]

ChatRole = Literal["system", "user", "assistant", "tool"]
"""The four roles a provider conversation uses."""


@dataclasses.dataclass(frozen=True)
class ChatToolCall:
    """A tool call the model made, as it goes back to the model: id, name, argument text.

    Examples:
        >>> ChatToolCall(id="c1", name="get_weather", arguments='{"location":"Paris"}').name
        'get_weather'
    """

    id: str
    name: str
    arguments: str


@dataclasses.dataclass(frozen=True)
class ChatReasoning:
    """Reasoning an assistant message carries back to its provider, with the opaque value.

    Some providers need the reasoning of a turn returned with it, signed (Anthropic's thinking
    blocks, with their `signature`, when a turn calls tools); `encrypted_value` is that value as
    the client kept it (`REASONING_ENCRYPTED_VALUE`).

    Examples:
        >>> ChatReasoning("Paris, so the weather tool.", encrypted_value="sig-1").encrypted_value
        'sig-1'
    """

    text: str
    encrypted_value: str | None = None


@dataclasses.dataclass(frozen=True)
class ChatMessage:
    """One message of a provider conversation; build it with the role-named constructors.

    `tool_calls` and `reasoning` are only used on assistant messages; `tool_call_id`, `name`
    (the tool's name) and `is_error` only on tool messages. `parts` is set on a user message
    that holds media: all its parts in order, text included (`content` is then its text alone,
    for a model that reads text only); each provider model maps the media parts its API takes
    and refuses the others.

    Examples:
        >>> ChatMessage.user("What's the weather in Paris?").role
        'user'
        >>> ChatMessage.tool("c1", "sunny", name="get_weather").tool_call_id
        'c1'
    """

    role: ChatRole
    content: str = ""
    tool_calls: tuple[ChatToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool = False
    reasoning: tuple[ChatReasoning, ...] = ()
    parts: tuple[ContentPart, ...] = ()

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        """A system prompt."""
        return cls("system", content)

    @classmethod
    def user(cls, content: str, *, parts: Sequence[ContentPart] = ()) -> ChatMessage:
        """What the user said: its text, and all its parts when it holds media."""
        return cls("user", content, parts=tuple(parts))

    @classmethod
    def assistant(
        cls,
        content: str = "",
        tool_calls: Sequence[ChatToolCall] = (),
        reasoning: Sequence[ChatReasoning] = (),
    ) -> ChatMessage:
        """A reply of the model: text, tool calls, or both, and the reasoning that preceded it."""
        return cls("assistant", content, tool_calls=tuple(tool_calls), reasoning=tuple(reasoning))

    @classmethod
    def tool(
        cls, tool_call_id: str, content: str, *, name: str | None = None, is_error: bool = False
    ) -> ChatMessage:
        """The result of the call `tool_call_id`."""
        return cls("tool", content, tool_call_id=tool_call_id, name=name, is_error=is_error)


@dataclasses.dataclass(frozen=True)
class TextDelta:
    """A piece of the model's answer text.

    Examples:
        >>> TextDelta("It is sunny").text
        'It is sunny'
    """

    text: str


@dataclasses.dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's visible reasoning (`reasoning_content` and the like).

    `encrypted_value`, when given, is the provider's opaque value for the reasoning block this
    delta ends (Anthropic's thinking `signature`): the client keeps it on the reasoning message
    (`REASONING_ENCRYPTED_VALUE`) and returns it with the history, as `ChatReasoning`.

    Examples:
        >>> ReasoningDelta("The user wants Paris.").text
        'The user wants Paris.'
        >>> ReasoningDelta("", encrypted_value="sig-1").encrypted_value
        'sig-1'
    """

    text: str
    encrypted_value: str | None = None


@dataclasses.dataclass(frozen=True)
class ToolCallDelta:
    """A fragment of a tool call; fragments of one call share an `index`.

    Providers send the `id` and `name` in a call's first fragment only, and the argument text in
    pieces that may split anywhere, even inside a string or an escape.

    Examples:
        >>> ToolCallDelta(index=0, id="c1", name="get_weather", arguments='{"loc').arguments
        '{"loc'
    """

    index: int | None = None
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclasses.dataclass(frozen=True)
class UsageDelta:
    """Token counts for the response (often in the last chunk, or only when asked for).

    Examples:
        >>> UsageDelta(TokenUsage(input_tokens=12, output_tokens=3)).usage.output_tokens
        3
    """

    usage: TokenUsage


@dataclasses.dataclass(frozen=True)
class FinishDelta:
    """Why the model stopped: `stop`, `tool_calls`, `length`, or a provider's own value.

    Examples:
        >>> FinishDelta("tool_calls").reason
        'tool_calls'
    """

    reason: str


ChatDelta = TextDelta | ReasoningDelta | ToolCallDelta | UsageDelta | FinishDelta
"""Anything a `ChatModel` streams."""


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: a conversation and tool specs in, a stream of deltas out.

    `supports_native_tools` says whether the model takes tool specs and answers with structured
    tool calls; the `"auto"` dispatcher uses XML tags in the text when it does not.

    Examples:
        >>> import asyncio
        >>> from agui.agents.models import ScriptedModel, Turn
        >>> model: ChatModel = ScriptedModel([Turn.text("Hello!")])
        >>> async def main():
        ...     return [delta async for delta in model.stream([ChatMessage.user("Hi")])]
        >>> asyncio.run(main())
        [TextDelta(text='Hello!'), FinishDelta(reason='stop')]
    """

    @property
    def supports_native_tools(self) -> bool:
        """Whether tool specs go in the request and calls come back structured."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] = (),
    ) -> AsyncIterator[ChatDelta]:
        """Stream the model's response to `messages`, offering it `tools`, ending at `stop`."""
        ...


@dataclasses.dataclass
class PartialToolCall:
    """A tool call being assembled from its fragments.

    Examples:
        >>> call = PartialToolCall(index=0, id="c1", name="f", parts=['{"a":', "1}"])
        >>> call.arguments
        '{"a":1}'
    """

    index: int | None
    id: str | None
    name: str = ""
    parts: list[str] = dataclasses.field(default_factory=list[str])

    @property
    def arguments(self) -> str:
        """The argument text received so far."""
        return "".join(self.parts)


class ToolCallAssembler:
    """Merges streamed fragments into calls: by index, else by id, else onto the last call.

    A fragment with a known index continues that call, unless it brings a different id (some
    servers reuse an index for the next call); one without an index follows its id; one with
    neither continues the last call. Two indexes are two calls, even under one id. A call keeps
    its first id and name; argument text is appended, never parsed.

    Examples:
        >>> calls = ToolCallAssembler()
        >>> for delta in [
        ...     ToolCallDelta(index=0, id="c1", name="get_weather"),
        ...     ToolCallDelta(index=1, id="c2", name="get_time"),
        ...     ToolCallDelta(index=0, arguments='{"location":'),
        ...     ToolCallDelta(index=1, arguments="{}"),
        ...     ToolCallDelta(index=0, arguments='"Paris"}'),
        ... ]:
        ...     _ = calls.add(delta)
        >>> [(call.id, call.name, call.arguments) for call in calls.calls]
        [('c1', 'get_weather', '{"location":"Paris"}'), ('c2', 'get_time', '{}')]
    """

    def __init__(self) -> None:
        self.calls: list[PartialToolCall] = []

    def add(self, delta: ToolCallDelta) -> PartialToolCall:
        """Merge one fragment; return the call it belongs to."""
        call = self._find(delta)
        if call is None:
            call = PartialToolCall(delta.index, delta.id)
            self.calls.append(call)
        call.id = call.id or delta.id or None
        call.index = call.index if call.index is not None else delta.index
        call.name = call.name or delta.name or ""
        if delta.arguments:
            call.parts.append(delta.arguments)
        return call

    def _find(self, delta: ToolCallDelta) -> PartialToolCall | None:
        for call in reversed(self.calls):
            if delta.index is not None and call.index == delta.index:
                if delta.id and call.id and delta.id != call.id:
                    return None
                return call
            # An id joins a call only where no index says otherwise: some models give
            # parallel calls one id, and each index is still a call of its own.
            if delta.id and call.id == delta.id and None in (delta.index, call.index):
                return call
        if delta.index is None and not delta.id and self.calls:
            return self.calls[-1]
        return None


def chat_messages(history: Sequence[Message]) -> list[ChatMessage]:
    """The AG-UI history as a provider conversation.

    System and developer messages become system messages; user messages keep their text, and
    their parts when they hold media (images, audio, video, documents: `ChatMessage.parts`);
    consecutive assistant messages merge (a turn may reach the client as several); tool
    messages keep their call id and gain the tool's name; activity messages are dropped, and so
    is reasoning, unless it carries a provider's value (`encrypted_value`): then it rides on the
    next assistant message as `ChatReasoning`. A call left without a result gets an error
    result, which providers require.

    Examples:
        >>> from agui.messages import AssistantMessage, UserMessage
        >>> history = [UserMessage(id="u1", content="Hi")]
        >>> history.append(AssistantMessage(id="a1", content="Hello"))
        >>> [(message.role, message.content) for message in chat_messages(history)]
        [('user', 'Hi'), ('assistant', 'Hello')]
    """
    out: list[ChatMessage] = []
    names: dict[str, str] = {}
    answered = {m.tool_call_id for m in history if isinstance(m, ToolMessage)}
    unanswered: list[ChatToolCall] = []
    kept: list[ChatReasoning] = []
    for message in history:
        if isinstance(message, ReasoningMessage):
            if message.encrypted_value is not None:
                kept.append(ChatReasoning(message.content, message.encrypted_value))
            continue
        converted = _convert(message, names)
        if converted is None:
            continue
        if converted.role != "tool":
            out += _no_result(unanswered)
            unanswered = []
            if converted.role == "assistant":
                converted = dataclasses.replace(converted, reasoning=tuple(kept))
            kept = []
        last = out[-1] if out else None
        if converted.role == "assistant" and last is not None and last.role == "assistant":
            text = "\n".join(part for part in (last.content, converted.content) if part)
            calls, reasoning = last.tool_calls + converted.tool_calls, last.reasoning
            converted = ChatMessage.assistant(text, calls, reasoning + converted.reasoning)
            out.pop()
        out.append(converted)
        unanswered += [call for call in converted.tool_calls if call.id not in answered]
    return out + _no_result(unanswered)


def _text_of(content: str | list[ContentPart]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def _media_parts(content: str | list[ContentPart]) -> list[ContentPart]:
    # Media reaches the model in its provider's own form (each model maps it), so the parts
    # travel whole, text and all, to keep their order.
    if isinstance(content, str) or all(isinstance(part, TextPart) for part in content):
        return []
    return content


def _convert(message: Message, names: dict[str, str]) -> ChatMessage | None:
    if isinstance(message, (SystemMessage, DeveloperMessage)):
        return ChatMessage.system(message.content)
    if isinstance(message, UserMessage):
        return ChatMessage.user(_text_of(message.content), parts=_media_parts(message.content))
    if isinstance(message, AssistantMessage):
        calls = [
            ChatToolCall(call.id, call.function.name, call.function.arguments)
            for call in message.tool_calls or ()
        ]
        names.update((call.id, call.name) for call in calls)
        if not message.content and not calls:
            return None
        return ChatMessage.assistant(message.content or "", calls)
    if isinstance(message, ToolMessage):
        content = _text_of(message.content) or (message.error or "")
        name = names.get(message.tool_call_id)
        error = message.error is not None
        return ChatMessage.tool(message.tool_call_id, content, name=name, is_error=error)
    return None  # activity is for the UI, not the model


def _no_result(calls: Sequence[ChatToolCall]) -> list[ChatMessage]:
    content = "Error: no result was received for this call."
    return [ChatMessage.tool(c.id, content, name=c.name, is_error=True) for c in calls]
