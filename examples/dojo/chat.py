"""The dojo's chat pages: agentic chat, backend tool rendering, reasoning and multimodal input.

- **agentic_chat**: the page offers a frontend tool, `change_background {background}`, and a
  context entry with the user's name. The agent streams text; asked for another background it
  calls the page's tool and leaves the call to the page (the run ends with it pending); the page
  runs it and asks again with the result, and the agent says what changed.
- **backend_tool_rendering**: the agent's own `get_weather {location}` runs on the server; the
  page renders its call and result as a weather card reading `temperature`, `conditions`,
  `humidity`, `wind_speed` and `feelsLike`; then the agent answers in text.
- **agentic_chat_reasoning**: the agent thinks first (`REASONING_*` events, shown as "Thought
  for ..."), then answers.
- **agentic_chat_multimodal**: the page attaches images (`{type: "image", source: {type: "data",
  value, mimeType}}`); they reach the model in its API's own form, and it says what it sees.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Annotated, TypedDict

from pydantic import Field

from agui.agents import ToolLoopAgent, tool
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from agui.messages import ContentPart, DataSource, TextPart, UrlSource
from examples.dojo.models import answered, build_model, context_value, last_user_text

# -- agentic_chat ------------------------------------------------------------------------------

CHAT_INSTRUCTIONS = (
    "You are a helpful, friendly assistant. When the user asks for another background, call "
    "change_background with a CSS background (a colour name, a hex code or a gradient)."
)
_COLOUR = re.compile(
    r"\b(red|orange|yellow|green|blue|purple|pink|black|white|grey|gray|teal|navy)\b", re.IGNORECASE
)


def chat_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted agentic chat: greet by name, or change the background through the page.

    Examples:
        >>> chat_turn([ChatMessage.user("Make the background blue")]).calls
        (Call(name='change_background', arguments={'background': 'blue'}, id=None),)
    """
    result = answered(messages)
    if result is not None:
        return Turn.text("Done: the background is changed. Anything else?")
    text = last_user_text(messages)
    colour = _COLOUR.search(text)
    if "background" in text.lower():
        background = colour.group(1).lower() if colour else "linear-gradient(#a1c4fd, #c2e9fb)"
        return Turn.tool_calls(Call("change_background", {"background": background}))
    name = context_value(messages, "Name of the user")
    greeting = f"Hello {name}!" if name else "Hello!"
    return Turn.text(f"{greeting} How can I assist you today?")


def agentic_chat(model: ChatModel | None = None) -> ToolLoopAgent:
    """The agentic chat route's agent.

    Examples:
        >>> agentic_chat().toolbox.specs()
        []
    """
    return ToolLoopAgent(model or build_model(chat_turn), instructions=CHAT_INSTRUCTIONS)


# -- backend_tool_rendering --------------------------------------------------------------------

WEATHER_INSTRUCTIONS = (
    "You are a weather assistant. Use get_weather for the weather in a place, then answer in "
    "one or two sentences from what it returns."
)
_CONDITIONS = ("Sunny", "Partly cloudy", "Overcast", "Light rain", "Clear")


class Weather(TypedDict):
    """The weather as the dojo's weather card reads it."""

    temperature: int
    conditions: str
    humidity: int
    wind_speed: int
    feelsLike: int


@tool
def get_weather(
    location: Annotated[str, Field(description="The city, such as San Francisco")],
) -> Weather:
    """Get the current weather in a place (°C, %, km/h)."""
    seed = zlib.crc32(location.strip().lower().encode())
    temperature = 8 + seed % 20
    return Weather(
        temperature=temperature,
        conditions=_CONDITIONS[seed % len(_CONDITIONS)],
        humidity=40 + seed % 45,
        wind_speed=5 + seed % 25,
        feelsLike=temperature - seed % 4,
    )


_PLACE = re.compile(r"\b(?:in|for|at)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")


def weather_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted weather assistant: call `get_weather`, then say what it returned.

    Examples:
        >>> weather_turn([ChatMessage.user("What's the weather in San Francisco?")]).calls
        (Call(name='get_weather', arguments={'location': 'San Francisco'}, id=None),)
    """
    result = answered(messages)
    if result is not None:
        return Turn.text(f"Here is the weather: {result.content}")
    place = _PLACE.search(last_user_text(messages))
    if place is None:
        return Turn.text("Which place would you like the weather for?")
    return Turn.tool_calls(Call("get_weather", {"location": place.group(1)}))


def backend_tool_rendering(model: ChatModel | None = None) -> ToolLoopAgent:
    """The backend tool rendering route's agent: `get_weather` runs on the server.

    Examples:
        >>> [spec.name for spec in backend_tool_rendering().toolbox.specs()]
        ['get_weather']
    """
    return ToolLoopAgent(
        model or build_model(weather_turn), tools=[get_weather], instructions=WEATHER_INSTRUCTIONS
    )


# -- agentic_chat_reasoning --------------------------------------------------------------------

REASONING_INSTRUCTIONS = "You are a helpful assistant. Think step by step, then answer briefly."


def reasoning_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted reasoner: a thought about the question, then an answer.

    Examples:
        >>> turn = reasoning_turn([ChatMessage.user("Why is the sky blue?")])
        >>> turn.reasoning
        'The user asks: Why is the sky blue? Answer it in a sentence.'
    """
    question = last_user_text(messages).strip()
    return Turn.text(
        "Here is my answer, after thinking it through: short questions get short answers.",
        reasoning=f"The user asks: {question} Answer it in a sentence.",
    )


def agentic_chat_reasoning(model: ChatModel | None = None) -> ToolLoopAgent:
    """The reasoning route's agent.

    Examples:
        >>> agentic_chat_reasoning().instructions
        'You are a helpful assistant. Think step by step, then answer briefly.'
    """
    return ToolLoopAgent(model or build_model(reasoning_turn), instructions=REASONING_INSTRUCTIONS)


# -- agentic_chat_multimodal -------------------------------------------------------------------

MULTIMODAL_INSTRUCTIONS = "You are a helpful assistant. Describe the images the user attaches."


def attachments(parts: Sequence[ContentPart]) -> list[str]:
    """What a message attaches, described in a few words each.

    Examples:
        >>> from agui.messages import ImagePart
        >>> picture = ImagePart(source=DataSource(value="iVBORw0KGgo=", mime_type="image/png"))
        >>> attachments([TextPart(text="What's this?"), picture])
        ['an image (image/png, 8 bytes)']
    """
    found: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            continue
        source = part.source
        if isinstance(source, DataSource):
            size = len(source.value) * 3 // 4 - source.value.count("=")
            found.append(f"an {part.type} ({source.mime_type}, {size} bytes)")
        elif isinstance(source, UrlSource):
            found.append(f"an {part.type} at {source.value}")
        else:
            found.append(f"an {part.type} (file {source.value})")
    return found


def multimodal_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted viewer: say what the user's last message attached.

    Examples:
        >>> multimodal_turn([ChatMessage.user("Hi")]).content
        'I see no image in your message; attach one and ask me about it.'
    """
    last = next((m for m in reversed(messages) if m.role == "user"), None)
    seen = attachments(last.parts) if last is not None else []
    if not seen:
        return Turn.text("I see no image in your message; attach one and ask me about it.")
    return Turn.text(
        f"I can see the content you attached: {'; '.join(seen)}. It is a clear visual."
    )


def agentic_chat_multimodal(model: ChatModel | None = None) -> ToolLoopAgent:
    """The multimodal route's agent: the user's images reach the model as its API takes them.

    Examples:
        >>> agentic_chat_multimodal().instructions
        'You are a helpful assistant. Describe the images the user attaches.'
    """
    return ToolLoopAgent(
        model or build_model(multimodal_turn), instructions=MULTIMODAL_INSTRUCTIONS
    )
