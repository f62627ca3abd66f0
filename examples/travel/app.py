"""A travel assistant: a model calls two backend tools, then answers from what they return.

This is the backend-tools case. `get_weather` and `search_restaurants` are ordinary Python
functions made tools with `agui.agents.tool` (their JSON Schema comes from the signatures), and
`ToolLoopAgent` runs the loop: the model asks for the tools, each call streams to the app
as its own block (`TOOL_CALL_START`, `ARGS`, `END`, `RESULT`), the results go back to the model,
and its answer streams as text. The data is fake but deterministic: the same city always has the
same weather and the same restaurants.

The model is a `ScriptedModel` unless an OpenAI-compatible endpoint is configured, in which
case it is an `OpenAIModel` (the official `openai` SDK, extra `openai`):

- `AGUI_MODEL_BASE_URL`: the API root, such as `https://api.openai.com/v1`,
  `http://localhost:11434/v1` (Ollama) or `http://127.0.0.1:8080/v1` (llama.cpp's server);
- `AGUI_MODEL`: the model's name, such as `gpt-4o-mini` (a local server takes any name);
- `AGUI_API_KEY`: the key, when the endpoint needs one.

The scripted model plays a model without any network: its turn is a function of the
conversation. Asked a question, it picks the city (the capitalised words after "in", "for",
"to", "at" or "near") and the cuisine (a known one named in the question, else "any") out of the
user's last message and calls the tools the question is about (the weather, restaurants, or both
when it names neither); without a city it asks for one. Given the results, it writes its answer
from them.

Run it (from the repository root):

    agui serve examples/travel/app.py:agent
    agui watch http://127.0.0.1:8000/ -m "Weather in Rome? And some good pizza."

`agui demo` does both in one command.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Annotated

from pydantic import BaseModel, Field, JsonValue, TypeAdapter, ValidationError

import agui
from agui.agents import ToolLoopAgent, tool
from agui.agents.models import (
    Call,
    ChatMessage,
    ChatModel,
    OpenAIModel,
    ScriptedModel,
    Turn,
)
from agui.asgi import AguiApp

QUESTION = "What's the weather like in Paris and suggest some Italian restaurants?"
"""The question `agui demo` asks."""

INSTRUCTIONS = (
    "You are a friendly travel assistant. Use get_weather for the weather in a city and "
    "search_restaurants for places to eat there. Answer in a few sentences, from what the tools "
    "return."
)
STREAM_DELAY = 0.02
"""Seconds the scripted model waits before each piece it streams, so streaming can be seen."""

# -- the tools ---------------------------------------------------------------------------------


class Weather(BaseModel):
    """The weather in a city, as `get_weather` reports it."""

    location: str
    condition: str
    temperature_c: int
    humidity_percent: int


class Restaurant(BaseModel):
    """One place to eat, as `search_restaurants` reports it."""

    name: str
    cuisine: str
    rating: float
    price: str


_CONDITIONS = ("sunny", "partly cloudy", "overcast", "drizzly", "clear and breezy")
_KITCHENS: dict[str, tuple[str, ...]] = {
    "italian": ("Trattoria da Luca", "Osteria del Ponte", "Pizzeria Bella Napoli", "Il Giardino"),
    "french": ("Le Petit Bistro", "Brasserie du Marché", "Chez Margot", "La Table d'Hugo"),
    "japanese": ("Sushi Kaito", "Ramen Ichiban", "Izakaya Hoshi", "Tempura Mori"),
    "chinese": ("Golden Dragon", "Dim Sum House", "Sichuan Garden", "Jade Palace"),
    "indian": ("Tandoor Nights", "Masala Corner", "The Spice Route", "Bombay Kitchen"),
    "mexican": ("La Cantina", "Taquería El Sol", "Casa Oaxaca", "Mercado Verde"),
    "thai": ("Bangkok Street", "Lemongrass", "Thai Orchid", "Baan Suan"),
    "spanish": ("Tapas y Vino", "La Bodega", "Casa Paella", "El Rincón"),
    "greek": ("Taverna Santorini", "The Olive Tree", "Meze House", "Athena Grill"),
}
_CUISINE_WORDS = {**{kitchen: kitchen for kitchen in _KITCHENS}, "sushi": "japanese"}
_CUISINE_WORDS.update({"pizza": "italian", "pasta": "italian", "tapas": "spanish"})
_PRICES = ("€", "€€", "€€€")


def _seed(*parts: str) -> int:
    """A number that depends only on the text: `hash()` changes between processes, crc32 not."""
    return zlib.crc32(" ".join(part.strip().lower() for part in parts).encode())


@tool
def get_weather(
    location: Annotated[str, Field(description="The city, such as Paris or New York")],
) -> Weather:
    """Get the current weather in a city."""
    seed = _seed(location)
    return Weather(
        location=location.strip().title(),
        condition=_CONDITIONS[seed % len(_CONDITIONS)],
        temperature_c=8 + seed % 20,
        humidity_percent=40 + seed % 45,
    )


@tool
def search_restaurants(
    location: Annotated[str, Field(description="The city, such as Paris or New York")],
    cuisine: Annotated[str, Field(description="A cuisine, such as italian, or any")] = "any",
) -> list[Restaurant]:
    """Find well-rated restaurants in a city, of one cuisine or any."""
    wanted = cuisine.strip().lower()
    kitchens = [wanted] if wanted in _KITCHENS else sorted(_KITCHENS)
    places: list[Restaurant] = []
    for number in range(3):
        seed = _seed(location, wanted, str(number))
        kitchen = kitchens[(seed + number) % len(kitchens)]
        names = [name for name in _KITCHENS[kitchen] if name not in {p.name for p in places}]
        places.append(
            Restaurant(
                name=names[seed % len(names)],
                cuisine=kitchen,
                rating=round(4.0 + (seed % 10) / 10, 1),
                price=_PRICES[seed % len(_PRICES)],
            )
        )
    return sorted(places, key=lambda place: -place.rating)


# -- the scripted model ------------------------------------------------------------------------


class TravelRequest(BaseModel):
    """What the scripted model reads out of a question."""

    location: str | None
    cuisine: str
    weather: bool
    restaurants: bool


_CITY = re.compile(r"\b(?:in|for|to|at|near)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_CITY_LOWER = re.compile(r"\bin\s+([a-z][\w'-]+)")
_NOT_CITIES = {"a", "an", "the", "my", "our", "your", "this", "town", "general"}
_WEATHER = re.compile(
    r"\b(weather|forecast|temperature|rain\w*|sunny|cold|warm|hot)\b", re.IGNORECASE
)
_FOOD = re.compile(
    r"\b(restaurants?|eat|food|dinner|lunch|breakfast|cuisine|din(e|ing))\b", re.IGNORECASE
)


def read_request(text: str) -> TravelRequest:
    """Pick the city, the cuisine and the topics out of a question, with simple rules.

    Examples:
        >>> read_request("What's the weather like in Paris and suggest some Italian restaurants?")
        TravelRequest(location='Paris', cuisine='italian', weather=True, restaurants=True)
    """
    found = _CITY.search(text)
    location = found.group(1) if found else None
    if location is None:
        lower = _CITY_LOWER.search(text)
        if lower is not None and lower.group(1) not in _NOT_CITIES:
            location = lower.group(1).title()
    words = re.findall(r"[a-z]+", text.lower())
    cuisine = next((_CUISINE_WORDS[word] for word in words if word in _CUISINE_WORDS), "any")
    weather = _WEATHER.search(text) is not None
    restaurants = _FOOD.search(text) is not None or cuisine != "any"
    if not weather and not restaurants:
        weather = restaurants = True  # a bare "Paris?" gets both
    return TravelRequest(
        location=location, cuisine=cuisine, weather=weather, restaurants=restaurants
    )


def scripted_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted model's turn: call the tools a question needs, or answer from their results.

    Examples:
        >>> turn = scripted_turn([ChatMessage.user("Is it raining in Oslo?")])
        >>> [(call.name, call.arguments) for call in turn.calls]
        [('get_weather', {'location': 'Oslo'})]
    """
    results = _trailing_results(messages)
    if results:
        return Turn.text(_answer(results))
    question = next((m.content for m in reversed(messages) if m.role == "user"), "")
    request = read_request(question)
    if request.location is None:
        return Turn.text(
            "Which city are you travelling to? I can tell you its weather and where to eat."
        )
    calls: list[Call] = []
    if request.weather:
        calls.append(Call("get_weather", {"location": request.location}))
    if request.restaurants:
        wanted: dict[str, JsonValue] = {"location": request.location, "cuisine": request.cuisine}
        calls.append(Call("search_restaurants", wanted))
    return Turn.tool_calls(*calls)


def _trailing_results(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The tool results the conversation ends with (the answers to the model's last calls)."""
    results: list[ChatMessage] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.insert(0, message)
    return results


_PLACES = TypeAdapter(list[Restaurant])


def _answer(results: Sequence[ChatMessage]) -> str:
    parts: list[str] = []
    for result in results:
        try:
            if result.name == "get_weather":
                parts.append(_weather_sentence(Weather.model_validate_json(result.content)))
            elif result.name == "search_restaurants":
                parts.append(_places_sentence(_PLACES.validate_json(result.content)))
        except ValidationError:
            parts.append(f"I could not use what {result.name} returned: {result.content}")
    return " ".join(parts) or "I found nothing to tell you, sorry."


def _weather_sentence(weather: Weather) -> str:
    return (
        f"In {weather.location} it is {weather.temperature_c} °C and {weather.condition}, "
        f"with {weather.humidity_percent}% humidity."
    )


def _places_sentence(places: Sequence[Restaurant]) -> str:
    if not places:
        return "I found no restaurants there."
    kitchens = {place.cuisine for place in places}
    kind = f"{kitchens.pop().title()} restaurants" if len(kitchens) == 1 else "Restaurants"
    named = [f"{place.name} ({place.rating}, {place.price})" for place in places]
    listed = ", ".join(named[:-1]) + f" and {named[-1]}" if len(named) > 1 else named[0]
    return f"{kind} worth a visit: {listed}. Enjoy your trip!"


# -- the agent ---------------------------------------------------------------------------------


def build_model(env: Mapping[str, str] | None = None) -> ChatModel:
    """The scripted model, or an `OpenAIModel` when `AGUI_MODEL_BASE_URL` is set.

    Examples:
        >>> type(build_model({})).__name__
        'ScriptedModel'
        >>> build_model({"AGUI_MODEL_BASE_URL": "http://localhost:11434/v1", "AGUI_MODEL": "qwen3"})
        OpenAIModel(model='qwen3', base_url='http://localhost:11434/v1/')
    """
    env = os.environ if env is None else env
    base_url = env.get("AGUI_MODEL_BASE_URL", "").strip()
    if not base_url:
        return ScriptedModel(scripted_turn, delay=STREAM_DELAY)
    model = env.get("AGUI_MODEL", "").strip()
    if not model:
        message = (
            "AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not: name the model to use, "
            "such as AGUI_MODEL=gpt-4o-mini (or unset AGUI_MODEL_BASE_URL for the scripted model)"
        )
        raise RuntimeError(message)
    return OpenAIModel(model, base_url=base_url, api_key=env.get("AGUI_API_KEY"))


def build_agent(model: ChatModel | None = None) -> ToolLoopAgent:
    """The travel assistant: the two tools in a tool loop, on `model` or `build_model()`.

    Examples:
        >>> build_agent().toolbox.specs()[0].name
        'get_weather'
    """
    return ToolLoopAgent(
        model if model is not None else build_model(),
        tools=[get_weather, search_restaurants],
        instructions=INSTRUCTIONS,
    )


agent = build_agent()
"""The agent `agui serve examples/travel/app.py:agent` serves."""

app: AguiApp[JsonValue] = agui.asgi_app(agent)
"""The same agent as an ASGI application: `uvicorn examples.travel.app:app`."""
