"""The dojo's A2UI fixed-schema page: flight results drawn from a surface the agent describes.

`search_flights` returns an A2UI v0.9 envelope built with `agui.agents.a2ui.render`,
`{"a2ui_operations": [createSurface, updateComponents, updateDataModel]}`: the component tree
is fixed (a row of `FlightCard`s bound to `/flights`, the page's own catalog), and only the data
changes per search. CopilotKit's runtime, with A2UI on for this agent, turns that tool result
into an `ACTIVITY_SNAPSHOT` of type `a2ui-surface` that the page renders.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Annotated

from pydantic import Field, JsonValue

from agui.agents import ToolLoopAgent, tool
from agui.agents.a2ui import A2UIOperations, render
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from examples.dojo.models import answered, build_model, last_user_text

SURFACE_ID = "flight-search-results"
CATALOG_ID = "https://a2ui.org/demos/dojo/fixed_catalog.json"
_CODE_LENGTH = 3
INSTRUCTIONS = (
    "You find flights. Call search_flights with the origin and destination airport codes; the "
    "results are drawn as cards, so afterwards say only a short sentence."
)
_CARD_FIELDS = (
    "airline", "airlineLogo", "flightNumber", "origin", "destination", "date",
    "departureTime", "arrivalTime", "duration", "status", "price",
)  # fmt: skip
COMPONENTS: list[dict[str, JsonValue]] = [
    {
        "id": "root",
        "component": "Row",
        "children": {"componentId": "flight-card", "path": "/flights"},
        "gap": 16,
    },
    {
        "id": "flight-card",
        "component": "FlightCard",
        **{name: {"path": name} for name in _CARD_FIELDS},
        "action": {
            "event": {
                "name": "book_flight",
                "context": {"flightNumber": {"path": "flightNumber"}, "price": {"path": "price"}},
            }
        },
    },
]
"""The fixed component tree: a row repeating a flight card for each item of `/flights`."""
_AIRLINES = (("United Airlines", "united.com", "UA"), ("Delta", "delta.com", "DL"))


def flights_between(origin: str, destination: str) -> list[JsonValue]:
    """Made-up but stable flights between two airports.

    Examples:
        >>> [flight["flightNumber"] for flight in flights_between("SFO", "JFK")]
        ['UA 443', 'DL 843']
    """
    seed = zlib.crc32(f"{origin}-{destination}".upper().encode())
    found: list[JsonValue] = []
    for number, (airline, domain, code) in enumerate(_AIRLINES):
        hour = 7 + (seed + 5 * number) % 12
        found.append(
            {
                "id": f"flight-{number + 1}",
                "airline": airline,
                "airlineLogo": f"https://www.google.com/s2/favicons?domain={domain}&sz=128",
                "flightNumber": f"{code} {(seed + 400 * number) % 900 + 100}",
                "origin": origin.upper(),
                "destination": destination.upper(),
                "date": "Tue, Mar 18",
                "departureTime": f"{hour:02d}:15",
                "arrivalTime": f"{hour + 5:02d}:40",
                "duration": "5h 25m",
                "status": "On Time",
                "price": f"${250 + (seed + 37 * number) % 200}",
            }
        )
    return found


@tool
def search_flights(
    origin: Annotated[str, Field(description="The origin airport code, such as SFO")],
    destination: Annotated[str, Field(description="The destination airport code, such as JFK")],
) -> A2UIOperations:
    """Search flights between two airports and show them as cards."""
    found = flights_between(origin, destination)
    return render(SURFACE_ID, COMPONENTS, data={"flights": found}, catalog_id=CATALOG_ID)


def flights_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted agent: search the flights the question names, then a short sentence.

    Examples:
        >>> flights_turn([ChatMessage.user("Find flights from SFO to JFK")]).calls[0].arguments
        {'origin': 'SFO', 'destination': 'JFK'}
    """
    if answered(messages) is not None:
        return Turn.text("Here are the flights I found.")
    words = last_user_text(messages).replace("?", " ").split()
    codes = [word for word in words if word.isupper() and len(word) == _CODE_LENGTH]
    origin, destination = ([*codes, "SFO", "JFK"])[:2] if len(codes) != 1 else ("SFO", codes[0])
    return Turn.tool_calls(Call("search_flights", {"origin": origin, "destination": destination}))


def a2ui_fixed_schema(model: ChatModel | None = None) -> ToolLoopAgent:
    """The A2UI fixed-schema route's agent.

    Examples:
        >>> [spec.name for spec in a2ui_fixed_schema().toolbox.specs()]
        ['search_flights']
    """
    return ToolLoopAgent(
        model or build_model(flights_turn), tools=[search_flights], instructions=INSTRUCTIONS
    )
