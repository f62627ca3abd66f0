"""The model each dojo route runs on, and what the scripted models read of a conversation.

Every route is a `ToolLoopAgent` (or a small agent around one) whose model is a `ScriptedModel`
unless an OpenAI-compatible endpoint is configured, as in the travel example:
`AGUI_MODEL_BASE_URL` (the API root), `AGUI_MODEL` (the model's name) and, when the endpoint
needs one, `AGUI_API_KEY`. A scripted model plays a model without any network: its turn is a
function of the conversation, built from the helpers below.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from agui.agents.models import ChatMessage, ChatModel, OpenAIModel, ScriptedModel, TurnFunction

STREAM_DELAY = 0.01
"""Seconds the scripted models wait before each piece they stream, so streaming can be seen."""


def build_model(scripted: TurnFunction, env: Mapping[str, str] | None = None) -> ChatModel:
    """The scripted model playing `scripted`, or an `OpenAIModel` when an endpoint is set.

    Examples:
        >>> from agui.agents.models import Turn
        >>> type(build_model(lambda messages: Turn.text("Hi"), {})).__name__
        'ScriptedModel'
        >>> build_model(lambda messages: Turn.text("Hi"), {"AGUI_MODEL_BASE_URL": "http://x/v1"})
        Traceback (most recent call last):
        ...
        RuntimeError: AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not: ...
    """
    env = os.environ if env is None else env
    base_url = env.get("AGUI_MODEL_BASE_URL", "").strip()
    if not base_url:
        return ScriptedModel(scripted, delay=STREAM_DELAY)
    model = env.get("AGUI_MODEL", "").strip()
    if not model:
        message = (
            "AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not: name the model to use, "
            "such as AGUI_MODEL=gpt-4o-mini (or unset AGUI_MODEL_BASE_URL for the scripted models)"
        )
        raise RuntimeError(message)
    return OpenAIModel(model, base_url=base_url, api_key=env.get("AGUI_API_KEY"))


def last_user_text(messages: Sequence[ChatMessage]) -> str:
    """What the user said last, or "".

    Examples:
        >>> last_user_text([ChatMessage.user("Hi"), ChatMessage.assistant("Hello")])
        'Hi'
    """
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def system_text(messages: Sequence[ChatMessage]) -> str:
    """The system prompt the model was given, or "".

    Examples:
        >>> system_text([ChatMessage.system("Be brief."), ChatMessage.user("Hi")])
        'Be brief.'
    """
    return next((m.content for m in messages if m.role == "system"), "")


def answered(messages: Sequence[ChatMessage]) -> ChatMessage | None:
    """The tool result the conversation ends with (the answer to the model's last call), if any.

    Examples:
        >>> answered([ChatMessage.user("Hi")]) is None
        True
        >>> answered([ChatMessage.tool("c1", "done", name="change_background")]).name
        'change_background'
    """
    last = messages[-1] if messages else None
    return last if last is not None and last.role == "tool" else None


def read_json(text: str) -> JsonValue:
    """`text` as JSON, or the text itself when it is not JSON.

    Examples:
        >>> read_json('{"accepted": true}'), read_json("fine")
        ({'accepted': True}, 'fine')
    """
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        return text
    return value


def context_value(messages: Sequence[ChatMessage], description: str) -> str | None:
    r"""The value of the app's context entry with that description, as the system prompt holds it.

    `ToolLoopAgent` writes each context entry as a line `- <description>: <value>`.

    Examples:
        >>> prompt = ChatMessage.system("Context from the application:\n- Name of the user: Ada")
        >>> context_value([prompt], "Name of the user")
        'Ada'
    """
    prefix = f"- {description}: "
    for line in system_text(messages).splitlines():
        if line.startswith(prefix):
            return line.removeprefix(prefix).strip()
    return None
