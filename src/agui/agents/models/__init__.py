"""Chat models: the `ChatModel` protocol, a scripted model, and the OpenAI and Anthropic SDKs'.

agui depends on no LLM SDK. A model is anything that streams `ChatDelta`s for a conversation of
`ChatMessage`s (`agui.agents.models.base`); `ScriptedModel` replays a script with no network, and
`OpenAIModel` speaks Chat Completions (OpenAI, Azure, Ollama, llama.cpp, vLLM, LM Studio) through
the official `openai` SDK, from the `agui-server[openai]` extra; `AnthropicModel` speaks
Anthropic's Messages API (thinking and tools included) through the official `anthropic` SDK,
from the `agui-server[anthropic]` extra.
"""

from __future__ import annotations

from agui.agents.models.anthropic import AnthropicModel
from agui.agents.models.base import (
    ChatDelta,
    ChatMessage,
    ChatModel,
    ChatReasoning,
    ChatRole,
    ChatToolCall,
    FinishDelta,
    PartialToolCall,
    ReasoningDelta,
    TextDelta,
    ToolCallAssembler,
    ToolCallDelta,
    UsageDelta,
    chat_messages,
)
from agui.agents.models.openai import OpenAIModel
from agui.agents.models.scripted import Call, ScriptedModel, ScriptedRequest, Turn, TurnFunction

__all__ = [
    "AnthropicModel",
    "Call",
    "ChatDelta",
    "ChatMessage",
    "ChatModel",
    "ChatReasoning",
    "ChatRole",
    "ChatToolCall",
    "FinishDelta",
    "OpenAIModel",
    "PartialToolCall",
    "ReasoningDelta",
    "ScriptedModel",
    "ScriptedRequest",
    "TextDelta",
    "ToolCallAssembler",
    "ToolCallDelta",
    "Turn",
    "TurnFunction",
    "UsageDelta",
    "chat_messages",
]
