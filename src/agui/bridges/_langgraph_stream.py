"""The graph's messages out: what `astream(stream_mode="messages")` yields, as agui events.

| LangGraph | agui |
|---|---|
| an `AIMessageChunk`'s reasoning (its `reasoning` content blocks) | `REASONING_*` |
| an `AIMessageChunk`'s text | `TEXT_MESSAGE_*` under the message's id |
| an `AIMessageChunk`'s `tool_call_chunks` | `TOOL_CALL_*`, the arguments as they stream |
| a whole `AIMessage` a node returns | the same, sent at once |
| a `ToolMessage` | `TOOL_CALL_RESULT` under the message's id |

A model streams one message at a time: its reasoning, its text, then its calls one after the
other, so within a message each of these ends the one before (text the model streams after its
calls is a text message of its own, its id the message's with `-2`; reasoning gets the
message's id with `-reasoning`). Models in parallel nodes
stream at once, their chunks interleaved, so the events go out through `ctx.emit`, verified,
each message's blocks open beside the other's. A message ends at its last chunk, and whatever
is open at the end of each step of the graph.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections import Counter
from typing import cast

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk
from langchain_core.messages import ToolMessage as LangChainTool
from pydantic import JsonValue

from agui.context import RunContext
from agui.events import (
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

__all__ = ["GraphMessages"]

_log = logging.getLogger("agui")


@dataclasses.dataclass
class _Streaming:
    """A message whose chunks are coming: its node, and its blocks open now, if any."""

    node: object = None  # the node whose model streams it
    reasoning: str | None = None  # the ids of its open reasoning block, text message and call
    text: str | None = None
    call: tuple[int | None, str] | None = None  # the call's index in the message, and its id


class GraphMessages:
    """One run's messages out: the messages streaming now, and the text parts each was sent in."""

    def __init__(self, ctx: RunContext[JsonValue]) -> None:
        self._ctx = ctx
        self._streaming: dict[str, _Streaming] = {}
        self._parts: Counter[tuple[str, str]] = Counter()  # by message, "text" or "reasoning"

    def take(self, message: BaseMessage, metadata: object) -> None:
        """Send one message (or chunk of one) of the graph's `messages` stream.

        LangGraph sends each message once: streamed as chunks, or whole when a node returns
        a message no model streamed; never one the graph's state held before. Its metadata
        names the node it comes from.
        """
        if isinstance(message, AIMessageChunk):
            fields = cast("dict[str, object]", metadata) if isinstance(metadata, dict) else {}
            self._chunk(message, fields.get("langgraph_node"))
        elif isinstance(message, AIMessage):
            self._whole(message)
        elif isinstance(message, LangChainTool):
            self._ctx.tool_result(message.tool_call_id, message.text, message_id=message.id)

    def end(self, node: str | None = None) -> None:
        """End the messages `node`'s models stream now; every one, when a step of the graph ends."""
        for message_id, streaming in list(self._streaming.items()):
            if node is None or streaming.node == node:
                self._end(message_id)

    def _end(self, message_id: str) -> None:
        streaming = self._streaming.pop(message_id)
        self._end_reasoning(streaming)
        self._end_text(streaming)
        self._end_call(streaming)

    def _end_reasoning(self, streaming: _Streaming) -> None:
        if streaming.reasoning is not None:
            self._ctx.emit(ReasoningMessageEndEvent(message_id=streaming.reasoning))
            self._ctx.emit(ReasoningEndEvent(message_id=streaming.reasoning))
            streaming.reasoning = None

    def _end_text(self, streaming: _Streaming) -> None:
        if streaming.text is not None:
            self._ctx.emit(TextMessageEndEvent(message_id=streaming.text))
            streaming.text = None

    def _end_call(self, streaming: _Streaming) -> None:
        if streaming.call is not None:
            self._ctx.emit(ToolCallEndEvent(tool_call_id=streaming.call[1]))
            streaming.call = None

    def _chunk(self, chunk: AIMessageChunk, node: object) -> None:
        message_id = chunk.id or ""
        streaming = self._streaming.setdefault(message_id, _Streaming(node))
        if thought := _reasoning(chunk):
            self._think(message_id, streaming, thought)
        if chunk.text:
            self._say(message_id, streaming, chunk.text)
        for call in chunk.tool_call_chunks:
            self._call_chunk(message_id, streaming, call)
        if chunk.chunk_position == "last":
            self._end(message_id)

    def _think(self, message_id: str, streaming: _Streaming, text: str) -> None:
        if streaming.reasoning is None:
            self._end_text(streaming)
            self._end_call(streaming)
            self._parts[message_id, "reasoning"] += 1
            part = self._parts[message_id, "reasoning"]
            streaming.reasoning = f"{message_id}-reasoning" + (f"-{part}" if part > 1 else "")
            self._ctx.emit(ReasoningStartEvent(message_id=streaming.reasoning))
            self._ctx.emit(ReasoningMessageStartEvent(message_id=streaming.reasoning))
        self._ctx.emit(ReasoningMessageContentEvent(message_id=streaming.reasoning, delta=text))

    def _say(self, message_id: str, streaming: _Streaming, text: str) -> None:
        if streaming.text is None:
            self._end_reasoning(streaming)
            self._end_call(streaming)  # text after a call: a message of its own
            self._parts[message_id, "text"] += 1
            part = self._parts[message_id, "text"]
            streaming.text = f"{message_id}-{part}" if part > 1 else message_id
            self._ctx.emit(TextMessageStartEvent(message_id=streaming.text, role="assistant"))
        self._ctx.emit(TextMessageContentEvent(message_id=streaming.text, delta=text))

    def _call_chunk(self, message_id: str, streaming: _Streaming, chunk: ToolCallChunk) -> None:
        index, name = chunk["index"], chunk["name"]
        if streaming.call is None or index != streaming.call[0]:
            if not name:
                _log.warning(
                    "run %s: arguments of a call that is not open were dropped", self._ctx.run_id
                )
                return
            self._end_reasoning(streaming)
            self._end_text(streaming)
            self._end_call(streaming)
            call_id = chunk["id"] or f"{message_id}-call-{index}"
            self._ctx.emit(
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=name, parent_message_id=message_id
                )
            )
            streaming.call = (index, call_id)
        if chunk["args"]:
            self._ctx.emit(ToolCallArgsEvent(tool_call_id=streaming.call[1], delta=chunk["args"]))

    def _whole(self, message: AIMessage) -> None:
        message_id = message.id or uuid.uuid4().hex
        if thought := _reasoning(message):
            thinking = f"{message_id}-reasoning"
            self._ctx.emit(ReasoningStartEvent(message_id=thinking))
            self._ctx.emit(ReasoningMessageStartEvent(message_id=thinking))
            self._ctx.emit(ReasoningMessageContentEvent(message_id=thinking, delta=thought))
            self._ctx.emit(ReasoningMessageEndEvent(message_id=thinking))
            self._ctx.emit(ReasoningEndEvent(message_id=thinking))
        if message.text:
            self._ctx.emit(TextMessageStartEvent(message_id=message_id, role="assistant"))
            self._ctx.emit(TextMessageContentEvent(message_id=message_id, delta=message.text))
            self._ctx.emit(TextMessageEndEvent(message_id=message_id))
        for call in message.tool_calls:
            call_id = call["id"] or uuid.uuid4().hex
            self._ctx.emit(
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=call["name"], parent_message_id=message_id
                )
            )
            self._ctx.emit(ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps(call["args"])))
            self._ctx.emit(ToolCallEndEvent(tool_call_id=call_id))


def _reasoning(message: AIMessage) -> str:
    """The reasoning text of a message or chunk, from LangChain's standard content blocks.

    A provider's own form (Anthropic's `thinking` blocks, a `reasoning_content` field) is read
    through `content_blocks`; a message of plain text has none, and is not converted.
    """
    if isinstance(message.content, str) and not message.additional_kwargs:
        return ""
    blocks = cast("list[dict[str, object]]", message.content_blocks)
    found = [block.get("reasoning") for block in blocks if block.get("type") == "reasoning"]
    return "".join(text for text in found if isinstance(text, str))
