"""Messages between agui and LangGraph: the client's history in, the graph's messages out.

In: each client message becomes the LangChain message of its role, its id kept, so that the
checkpointer's `add_messages` reducer recognises a message it already holds. Parts other than
text, reasoning and activity messages have no LangChain counterpart here and are left out.

Out: what `astream(stream_mode="messages")` yields, onto agui's handles:

| LangGraph | agui |
|---|---|
| an `AIMessageChunk`'s text | `ctx.message(message_id=<its id>)`: `TEXT_MESSAGE_*` |
| an `AIMessageChunk`'s `tool_call_chunks` | `ctx.tool_call(name, call_id=...)`, streamed |
| a whole `AIMessage` a node returns | the same, sent at once |
| a `ToolMessage` | `ctx.tool_result(tool_call_id, content, message_id=<its id>)` |

A model streams one message at a time, its text before its calls and its calls one after the
other, so one block is open at a time: a new one ends the one before. Text a model streams
after its calls is sent as a message of its own (its id the message's, with `-2`); so are the
pieces of two models streaming at once in parallel nodes, their chunks interleaved.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolCallChunk,
)
from langchain_core.messages import SystemMessage as LangChainSystem
from langchain_core.messages import ToolMessage as LangChainTool
from pydantic import JsonValue

from agui.context import RunContext
from agui.handles import MessageHandle, ToolCallHandle
from agui.messages import (
    AssistantMessage,
    ContentPart,
    DeveloperMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)

__all__ = ["GraphMessages", "langchain_messages"]

_log = logging.getLogger("agui")


def langchain_messages(messages: Sequence[Message]) -> list[BaseMessage]:
    """The LangChain messages of `messages`, in order, ids kept.

    Examples:
        >>> from agui.messages import UserMessage
        >>> [human] = langchain_messages([UserMessage(id="u1", content="Hi")])
        >>> type(human).__name__, human.id, human.content
        ('HumanMessage', 'u1', 'Hi')
    """
    converted = (_langchain(message) for message in messages)
    return [message for message in converted if message is not None]


def _langchain(message: Message) -> BaseMessage | None:
    match message:
        case UserMessage(id=id_, content=content):
            return HumanMessage(content=_text(content), id=id_)
        case SystemMessage(id=id_, content=content) | DeveloperMessage(id=id_, content=content):
            return LangChainSystem(content=content, id=id_)
        case AssistantMessage(id=id_, content=content, tool_calls=calls):
            return AIMessage(
                content=content or "",
                id=id_,
                tool_calls=[
                    {
                        "id": call.id,
                        "name": call.function.name,
                        "args": _args(call.function.arguments),
                    }
                    for call in calls or ()
                ],
            )
        case ToolMessage(id=id_, tool_call_id=call_id, content=content):
            return LangChainTool(content=_text(content), tool_call_id=call_id, id=id_)
        case _:
            return None


def _args(arguments: str) -> dict[str, object]:
    try:
        parsed: object = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _text(content: str | list[ContentPart]) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.text for part in content if isinstance(part, TextPart))


class GraphMessages:
    """One run's messages out: the message streaming now, and the message or call open."""

    def __init__(self, ctx: RunContext[JsonValue]) -> None:
        self._ctx = ctx
        self._streaming: str | None = None  # the id of the message whose chunks come now
        self._parts: Counter[str] = Counter()  # the texts each message was sent in
        self._text: MessageHandle[JsonValue] | None = None
        self._call: tuple[int | None, ToolCallHandle[JsonValue]] | None = None

    def take(self, message: BaseMessage) -> None:
        """Send one message (or chunk of one) of the graph's `messages` stream.

        LangGraph sends each message once: streamed as chunks, or whole when a node returns
        a message no model streamed; never one the graph's state held before.
        """
        if isinstance(message, AIMessageChunk):
            self._chunk(message)
        elif isinstance(message, AIMessage):
            self._whole(message)
        elif isinstance(message, LangChainTool):
            self.end()
            self._ctx.tool_result(message.tool_call_id, message.text, message_id=message.id)

    def end(self) -> None:
        """End the message or call open now, if any."""
        if self._text is not None:
            self._text.end()
            self._text = None
        if self._call is not None:
            self._call[1].end()
            self._call = None

    def _chunk(self, chunk: AIMessageChunk) -> None:
        message_id = chunk.id or ""
        if message_id != self._streaming:
            self.end()  # another message's chunks (a model in a parallel node) end the open one
            self._streaming = message_id
        if chunk.text:
            self._say(message_id, chunk.text)
        for call in chunk.tool_call_chunks:
            self._call_chunk(message_id, call)
        if chunk.chunk_position == "last":
            self.end()

    def _say(self, message_id: str, text: str) -> None:
        if self._text is None:
            self.end()  # text after a call: a message of its own, under a derived id
            self._parts[message_id] += 1
            part = self._parts[message_id]
            self._text = self._ctx.message(
                message_id=f"{message_id}-{part}" if part > 1 else message_id
            )
        self._text.delta(text)

    def _call_chunk(self, message_id: str, chunk: ToolCallChunk) -> None:
        index, name = chunk["index"], chunk["name"]
        if self._call is None or index != self._call[0]:
            if not name:
                _log.warning(
                    "run %s: arguments of a call that is not open were dropped", self._ctx.run_id
                )
                return
            self.end()
            call = self._ctx.tool_call(name, call_id=chunk["id"], parent_message_id=message_id)
            self._call = (index, call)
        self._call[1].args(chunk["args"] or "")

    def _whole(self, message: AIMessage) -> None:
        self.end()
        message_id = message.id or None
        if message.text:
            with self._ctx.message(message_id=message_id) as said:
                said.delta(message.text)
            message_id = said.id
        for call in message.tool_calls:
            with self._ctx.tool_call(
                call["name"], call_id=call["id"], parent_message_id=message_id
            ) as made:
                made.args_json(call["args"])
