"""A run's history as the Agents SDK's input items (the Responses API's input form).

Text is what carries over: a user's, system's or developer's message, an assistant's text and
its tool calls, and each tool's result, the calls and results by the model's call ids. Parts
of other kinds (images, files), reasoning and activity messages have no input item here and are
left out, and so is a tool message a client added for a call whose approval the bridge settled
(its answer, or a placeholder): the result the bridge sent (`approval_result_id`) is the one.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.items import TResponseInputItem

from agui.agents.loop import approval_result_id
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

__all__ = ["input_items"]


def input_items(messages: Sequence[Message]) -> list[TResponseInputItem]:
    """The input items of `messages`, in order.

    Examples:
        >>> from agui.messages import UserMessage, ToolMessage
        >>> answer = ToolMessage(id="t", tool_call_id="c", content="4")
        >>> input_items([UserMessage(id="u", content="Hi"), answer])
        [{'role': 'user', 'content': 'Hi'},
         {'type': 'function_call_output', 'call_id': 'c', 'output': '4'}]
    """
    settled = {
        m.tool_call_id
        for m in messages
        if isinstance(m, ToolMessage) and m.id == approval_result_id(m.tool_call_id)
    }
    items: list[TResponseInputItem] = []
    for message in messages:
        if not _superseded(message, settled):
            items.extend(_items(message))
    return items


def _superseded(message: Message, settled: set[str]) -> bool:
    """A client's tool message for a settled call: the bridge's own result answers it."""
    return (
        isinstance(message, ToolMessage)
        and message.tool_call_id in settled
        and message.id != approval_result_id(message.tool_call_id)
    )


def _items(message: Message) -> list[TResponseInputItem]:
    match message:
        case UserMessage(content=content):
            return [{"role": "user", "content": _text(content)}]
        case SystemMessage(content=content) | DeveloperMessage(content=content):
            return [{"role": message.role, "content": content}]
        case AssistantMessage(content=content, tool_calls=calls):
            said: list[TResponseInputItem] = [{"role": "assistant", "content": content or ""}]
            return (said if content else []) + [
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.function.name,
                    "arguments": call.function.arguments,
                }
                for call in calls or ()
            ]
        case ToolMessage(tool_call_id=call_id, content=content):
            return [{"type": "function_call_output", "call_id": call_id, "output": _text(content)}]
        case _:
            return []


def _text(content: str | list[ContentPart]) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.text for part in content if isinstance(part, TextPart))
