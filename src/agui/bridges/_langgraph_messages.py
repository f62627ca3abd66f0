"""The client's history as LangGraph's input: each message as the LangChain message of its role.

Ids are kept, so that the checkpointer's `add_messages` reducer recognises a message it already
holds. Parts other than text, reasoning and activity messages have no LangChain counterpart
here and are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages import SystemMessage as LangChainSystem
from langchain_core.messages import ToolMessage as LangChainTool

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

__all__ = ["langchain_messages"]


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
