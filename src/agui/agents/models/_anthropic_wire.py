"""The Messages API's shapes for `agui.agents.models.anthropic`: requests out, events in.

Kept apart from the model so that each side of the mapping reads on its own. Out: a provider
conversation becomes Anthropic's alternating turns of content blocks (tool results grouped
into the next user turn, as the API requires; a turn's thinking blocks first, as it also
requires; a user message's images and documents as `image` and `document` blocks, from inline
data or a URL). In: the SDK's stream events, read back through models of our own
(`from_attributes`, since the SDK builds streamed events without validating them), become
`ChatDelta`s.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence

from pydantic import BaseModel, JsonValue

from agui._protocol.text import read_json
from agui.agents.models._media import MediaKind, MediaRules
from agui.agents.models.base import (
    ChatDelta,
    ChatMessage,
    ChatReasoning,
    ChatToolCall,
    FinishDelta,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
from agui.messages import ContentPart, DataSource, DocumentPart, ImagePart, JsonObject, TextPart
from agui.types import TokenUsage, Tool

__all__ = [
    "API_MEDIA",
    "REDACTED",
    "StreamReader",
    "ThinkingMemory",
    "request_messages",
    "system_prompt",
    "wire_tool",
]

REDACTED = "redacted_thinking:"
"""How a `redacted_thinking` block's data starts, as an encrypted value, to tell it from a
signature (both are base64, which has no colon)."""

API_MEDIA: tuple[MediaKind, ...] = ("image", "document")
"""The media the Messages API carries in a user turn."""

_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_MAX_COUNT = 2**53 - 1
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls"}
_FINISH["max_tokens"] = "length"


class ThinkingMemory:
    """The signed thinking blocks that came before each `tool_use` a model streamed, recently.

    The tool loop sends a turn back before any client history holds its reasoning, and the
    API wants that turn's thinking blocks with it; this remembers them by tool-use id, keeping
    the latest `size` ids.
    """

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._blocks: dict[str, tuple[JsonObject, ...]] = {}

    def remember(self, tool_use_id: str, blocks: Sequence[JsonObject]) -> None:
        """Keep the blocks that preceded the call `tool_use_id`, forgetting the oldest."""
        self._blocks.pop(tool_use_id, None)
        self._blocks[tool_use_id] = tuple(blocks)
        while len(self._blocks) > self.size:
            del self._blocks[next(iter(self._blocks))]

    def recall(self, tool_use_id: str) -> tuple[JsonObject, ...] | None:
        """The blocks remembered for `tool_use_id`, or `None` if it is not (or no longer) known."""
        return self._blocks.get(tool_use_id)


# -- out: the request --------------------------------------------------------------------------


def system_prompt(messages: Sequence[ChatMessage]) -> str:
    """The system messages' text: the API takes it in a field, not as messages."""
    return "\n\n".join(m.content for m in messages if m.role == "system" and m.content)


def request_messages(
    messages: Sequence[ChatMessage], memory: ThinkingMemory, media: MediaRules
) -> list[JsonValue]:
    """The conversation as alternating user and assistant turns of content blocks."""
    turns: list[tuple[str, list[JsonValue]]] = []
    users = 0
    for message in messages:
        users += message.role == "user"
        if message.role == "system":
            continue
        if message.role == "assistant":
            role, blocks = "assistant", _assistant_blocks(message, memory)
        elif message.parts:
            role, blocks = "user", [_part_block(part, media, users) for part in message.parts]
        else:
            role, blocks = "user", _user_blocks(message)
        if not blocks:
            continue  # the API refuses empty turns and empty text blocks
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return [{"role": role, "content": blocks} for role, blocks in turns]


def wire_tool(tool: Tool) -> JsonObject:
    """A tool spec as the API takes it: its JSON Schema is the `input_schema`."""
    schema: JsonValue = tool.parameters
    if not isinstance(schema, dict):
        schema = {"type": "object", "properties": {}}
    spec: JsonObject = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["input_schema"] = schema
    return spec


def _user_blocks(message: ChatMessage) -> list[JsonValue]:
    if message.role == "tool":
        result: JsonObject = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        if message.content:
            result["content"] = message.content
        if message.is_error:
            result["is_error"] = True
        return [result]
    return [{"type": "text", "text": message.content}] if message.content.strip() else []


def _part_block(part: ContentPart, media: MediaRules, number: int) -> JsonValue:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    media.check(part, number)
    source = part.source
    if source.type == "url":
        return {"type": part.type, "source": {"type": "url", "url": source.value}}
    if isinstance(source, DataSource):
        mime = source.mime_type.lower()
        data: JsonObject = {"type": "base64", "media_type": mime, "data": source.value}
        if isinstance(part, ImagePart) and mime in _IMAGE_TYPES:
            return {"type": "image", "source": data}
        if isinstance(part, DocumentPart) and mime == "application/pdf":
            return {"type": "document", "source": data}
        text = _plain_text(source) if isinstance(part, DocumentPart) else None
        if text is not None:
            return {"type": "document", "source": {**data, "type": "text", "data": text}}
    how = {
        "image": "the API takes a JPEG, PNG, GIF or WebP image, as inline data or a URL",
        "document": "the API takes a PDF (inline data or a URL) or plain text (inline data)",
    }
    raise media.refusal(part, number, how[part.type])


def _plain_text(source: DataSource) -> str | None:
    if source.mime_type.lower().partition(";")[0] != "text/plain":
        return None
    try:
        return base64.b64decode(source.value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _assistant_blocks(message: ChatMessage, memory: ThinkingMemory) -> list[JsonValue]:
    # The blocks remembered from the stream are exact; the history's are what the client kept.
    recalled = [memory.recall(call.id) for call in message.tool_calls]
    if any(blocks is not None for blocks in recalled):
        before = [list(blocks or ()) for blocks in recalled]
    else:
        kept = [_reasoning_block(r) for r in message.reasoning if r.encrypted_value is not None]
        before = [kept] + [[] for _ in message.tool_calls[1:]]
    out: list[JsonValue] = list(before[0]) if before else []
    if message.content.strip():
        out.append({"type": "text", "text": message.content})
    for index, call in enumerate(message.tool_calls):
        out += before[index] if index else []
        out.append(_tool_use(call))
    return out


def _reasoning_block(reasoning: ChatReasoning) -> JsonObject:
    value = reasoning.encrypted_value or ""
    if value.startswith(REDACTED):
        return {"type": "redacted_thinking", "data": value[len(REDACTED) :]}
    return {"type": "thinking", "thinking": reasoning.text, "signature": value}


def _tool_use(call: ChatToolCall) -> JsonObject:
    try:
        arguments: JsonValue = read_json(call.arguments or "{}")
    except ValueError:
        arguments = None
    # The API wants an object; arguments the model garbled got an error result already.
    given = arguments if isinstance(arguments, dict) else {}
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": given}


# -- in: the stream ----------------------------------------------------------------------------


class _Block(BaseModel, from_attributes=True):
    type: str
    id: str | None = None
    name: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None
    input: JsonValue = None


class _Delta(BaseModel, from_attributes=True):
    type: str | None = None
    text: str | None = None
    partial_json: str | None = None
    thinking: str | None = None
    signature: str | None = None
    stop_reason: str | None = None


class _Details(BaseModel, from_attributes=True):
    thinking_tokens: JsonValue = None


class _Usage(BaseModel, from_attributes=True):
    input_tokens: JsonValue = None
    output_tokens: JsonValue = None
    cache_read_input_tokens: JsonValue = None
    cache_creation_input_tokens: JsonValue = None
    output_tokens_details: _Details | None = None


class _Message(BaseModel, from_attributes=True):
    model: str | None = None
    usage: _Usage | None = None


class _Event(BaseModel, from_attributes=True):
    type: str
    index: int | None = None
    message: _Message | None = None
    content_block: _Block | None = None
    delta: _Delta | None = None
    usage: _Usage | None = None


class StreamReader:
    """Reads one response's events into deltas, remembering its signed thinking blocks."""

    def __init__(self, memory: ThinkingMemory, provider: str | None, model: str) -> None:
        self.memory = memory
        self.provider = provider
        self.model = model
        self.finished = False
        self._thinking: dict[int | None, tuple[list[str], list[str]]] = {}  # index -> text, sig
        self._signed: list[JsonObject] = []  # thinking blocks since the last tool_use
        self._counts: dict[str, JsonValue] = {}

    def read(self, sdk_event: object) -> list[ChatDelta]:
        """The deltas of one event (raises `ValidationError` for a malformed one)."""
        event = _Event.model_validate(sdk_event, from_attributes=True)
        if event.type == "message_start" and event.message is not None:
            self.model = event.message.model or self.model
            self._count(event.message.usage)
        elif event.type == "content_block_start" and event.content_block is not None:
            return self._start(event.index, event.content_block)
        elif event.type == "content_block_delta" and event.delta is not None:
            return self._delta(event.index, event.delta)
        elif event.type == "content_block_stop":
            return self._stop(event.index)
        elif event.type == "message_delta":
            return self._finish(event)
        elif event.type == "message_stop":
            self.finished = True
        return []

    def _start(self, index: int | None, block: _Block) -> list[ChatDelta]:
        if block.type == "text" and block.text:
            return [TextDelta(block.text)]
        if block.type == "tool_use" and block.id is not None:
            self.memory.remember(block.id, self._signed)
            self._signed = []
            given = json.dumps(block.input) if isinstance(block.input, dict) and block.input else ""
            return [ToolCallDelta(index=index, id=block.id, name=block.name, arguments=given)]
        if block.type == "thinking":
            self._thinking[index] = ([block.thinking or ""], [block.signature or ""])
            return [ReasoningDelta(block.thinking)] if block.thinking else []
        if block.type == "redacted_thinking" and block.data:
            self._signed.append({"type": "redacted_thinking", "data": block.data})
            return [ReasoningDelta("", encrypted_value=REDACTED + block.data)]
        return []  # server tools' blocks and the like are the API's own business

    def _delta(self, index: int | None, delta: _Delta) -> list[ChatDelta]:
        if delta.type == "text_delta" and delta.text:
            return [TextDelta(delta.text)]
        if delta.type == "input_json_delta" and delta.partial_json:
            return [ToolCallDelta(index=index, arguments=delta.partial_json)]
        text, signature = self._thinking.get(index, ([], []))
        if delta.type == "thinking_delta" and delta.thinking:
            text.append(delta.thinking)
            return [ReasoningDelta(delta.thinking)]
        if delta.type == "signature_delta" and delta.signature:
            signature.append(delta.signature)
        return []

    def _stop(self, index: int | None) -> list[ChatDelta]:
        text, signature = self._thinking.pop(index, ([], []))
        value = "".join(signature)
        if not value:
            return []  # unsigned reasoning cannot go back; it was shown all the same
        self._signed.append({"type": "thinking", "thinking": "".join(text), "signature": value})
        return [ReasoningDelta("", encrypted_value=value)]

    def _finish(self, event: _Event) -> list[ChatDelta]:
        self._count(event.usage)
        reason = event.delta.stop_reason if event.delta is not None else None
        deltas: list[ChatDelta] = [FinishDelta(_FINISH.get(reason, reason))] if reason else []
        return [*deltas, UsageDelta(self._usage())]

    def _count(self, usage: _Usage | None) -> None:
        # Counts arrive in message_start and, cumulative, in message_delta: the last one holds.
        if usage is None:
            return
        details = usage.output_tokens_details
        fields = usage.model_dump(exclude={"output_tokens_details"})
        fields["thinking_tokens"] = details.thinking_tokens if details is not None else None
        self._counts.update((key, value) for key, value in fields.items() if value is not None)

    def _usage(self) -> TokenUsage:
        # AG-UI counts cache reads and writes inside the input; Anthropic counts them beside it.
        fresh, read, write = (
            _count(self._counts.get(name))
            for name in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        output = _count(self._counts.get("output_tokens"))
        total_input = None if fresh is None else fresh + (read or 0) + (write or 0)
        total = None if total_input is None or output is None else total_input + output
        return TokenUsage(
            provider=self.provider,
            model=self.model,
            input_tokens=_count(total_input),
            output_tokens=output,
            total_tokens=_count(total),
            reasoning_tokens=_count(self._counts.get("thinking_tokens")),
            cached_input_tokens=read,
            cache_write_input_tokens=write,
        )


def _count(value: JsonValue) -> int | None:
    # Absent means not reported; a count that breaks AG-UI's rules is dropped, never invented.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT:
        return value
    return None
