"""A2UI v0.9: the `a2ui_operations` envelope a tool returns, built and checked."""

from __future__ import annotations

import asyncio
import json
from typing import cast

import pytest
from pydantic import JsonValue

from agui import RunAgentInput, RunContext
from agui.agents import ToolLoopAgent, tool
from agui.agents.a2ui import (
    BASIC_CATALOG_ID,
    A2UIOperations,
    create_surface,
    delete_surface,
    operations,
    render,
    update_components,
    update_data_model,
)
from agui.agents.models import Call, ScriptedModel, Turn
from agui.errors import InvalidA2UI
from agui.events import RunErrorEvent, ToolCallResultEvent
from agui.messages import UserMessage
from agui.testing import assert_valid, collect

FLIGHT: list[dict[str, JsonValue]] = [
    {"id": "root", "component": "Card", "child": "column"},
    {"id": "column", "component": "Column", "children": ["route", "price"]},
    {"id": "route", "component": "Text", "text": {"path": "/route"}},
    {"id": "price", "component": "Text", "text": {"path": "/price"}},
]


@tool
def search_flights(origin: str, destination: str) -> A2UIOperations:
    """Find flights between two airports."""
    data: JsonValue = {"route": f"{origin} to {destination}", "price": "$289"}
    return render("flight-search-results", FLIGHT, data=data)


def test_a_tool_returns_the_envelope_as_its_result_in_the_v0_9_shape() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(Call("search_flights", {"origin": "SFO", "destination": "JFK"})),
            Turn.text("Here is a flight."),
        ]
    )
    question = UserMessage(id="u1", content="Flights from SFO to JFK?")
    given = RunAgentInput(thread_id="t", run_id="r", messages=[question])

    events = asyncio.run(collect(ToolLoopAgent(model, tools=[search_flights]), given))

    assert_valid(events)
    (result,) = [e for e in events if isinstance(e, ToolCallResultEvent)]
    surface = "flight-search-results"
    assert json.loads(cast("str", result.content)) == {
        "a2ui_operations": [
            {
                "version": "v0.9",
                "createSurface": {"surfaceId": surface, "catalogId": BASIC_CATALOG_ID},
            },
            {"version": "v0.9", "updateComponents": {"surfaceId": surface, "components": FLIGHT}},
            {
                "version": "v0.9",
                "updateDataModel": {
                    "surfaceId": surface,
                    "path": "/",
                    "value": {"route": "SFO to JFK", "price": "$289"},
                },
            },
        ]
    }


def test_an_update_of_a_surface_made_earlier_needs_no_root_and_reads_back_the_same() -> None:
    envelope = operations(
        update_components("board", [{"id": "task-3", "component": "Text", "text": "New"}]),
        update_data_model("board", None, path="/tasks/3"),
    )

    again = A2UIOperations.read(json.loads(envelope.model_dump_json()))

    assert again == envelope
    assert render("board", FLIGHT, create=False).a2ui_operations[0]["updateComponents"]


def test_a_surface_may_be_made_with_its_options_and_then_deleted() -> None:
    made = create_surface("s", catalog_id="urn:mine", theme={"primaryColor": "#00BFFF"})
    template: dict[str, JsonValue] = {"componentId": "row", "path": "/items"}
    components: list[dict[str, JsonValue]] = [
        {"id": "root", "component": "List", "children": template},
        {"id": "row", "component": "Text", "text": {"path": "name"}},
    ]

    envelope = operations(
        made, update_components("s", components), delete_surface("s"), create_surface("t")
    )

    assert len(envelope.a2ui_operations) == 4
    assert create_surface("u", send_data_model=True)["createSurface"] == {
        "surfaceId": "u",
        "catalogId": BASIC_CATALOG_ID,
        "sendDataModel": True,
    }


_ROOT: list[dict[str, JsonValue]] = [{"id": "root", "component": "Text", "text": "Hi"}]


@pytest.mark.parametrize(
    ("messages", "shown"),
    [
        (
            [{"version": "v0.8", "deleteSurface": {"surfaceId": "s"}}],
            r"A2UI message 0 does not fit v0.9: Input should be 'v0.9' at 'version'",
        ),
        (
            [{"version": "v0.9"}],
            r"message 0 .*a message holds exactly one of createSurface, updateComponents",
        ),
        (
            [{**delete_surface("s"), **create_surface("s")}],
            r"a message holds exactly one of",
        ),
        (
            [{"version": "v0.9", "surfaceUpdate": {"surfaceId": "s"}}],
            r"Extra inputs are not permitted at 'surfaceUpdate'",
        ),
        (
            [update_components("s", [])],
            r"List should have at least 1 item .* at 'updateComponents/components'",
        ),
        (
            [update_components("s", [{"component": "Text"}])],
            r"Field required at 'updateComponents/components/0/id'",
        ),
        (
            [update_data_model("s", 1, path="count")],
            r"String should match pattern '\^/' at 'updateDataModel/path'",
        ),
        (
            [create_surface("s"), update_components("s", [{"id": "a", "component": "Text"}])],
            r"surface 's' is created in this envelope, and no component of it has the id 'root'",
        ),
        (
            [create_surface("s"), update_components("s", [*_ROOT, FLIGHT[1]])],
            r"component 'column' of surface 's' names children it does not have: 'route', 'pr",
        ),
        (
            [
                create_surface("s"),
                update_components(
                    "s",
                    [
                        {
                            "id": "root",
                            "component": "List",
                            "children": {"componentId": "x", "path": "/"},
                        }
                    ],
                ),
            ],
            r"component 'root' of surface 's' names children it does not have: 'x'",
        ),
        (
            [create_surface("s"), create_surface("s")],
            r"A2UI message 1 creates surface 's' a second time",
        ),
        (
            [delete_surface("s"), update_data_model("s", 1)],
            r"A2UI message 1 \(updateDataModel\) follows surface 's''s deleteSurface",
        ),
    ],
    ids=[
        "version",
        "no-kind",
        "two-kinds",
        "v0.8-kind",
        "no-components",
        "no-id",
        "path",
        "no-root",
        "missing-child",
        "missing-template",
        "created-twice",
        "after-delete",
    ],
)
def test_a_value_that_does_not_fit_v0_9_is_refused_where_the_envelope_is_built(
    messages: list[dict[str, JsonValue]], shown: str
) -> None:
    with pytest.raises(InvalidA2UI, match=shown):
        operations(*messages)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (
            {"operations": []},
            r'an A2UI envelope is a JSON object \{"a2ui_operations": \[\.\.\.\]\}',
        ),
        ([1], r"an A2UI envelope is a JSON object"),
        ({"a2ui_operations": ["createSurface"]}, r"A2UI message 0 is not a JSON object"),
    ],
    ids=["v0.8-key", "list", "text-message"],
)
def test_reading_what_is_no_envelope_is_refused(value: JsonValue, shown: str) -> None:
    with pytest.raises(InvalidA2UI, match=shown):
        A2UIOperations.read(value)


def test_an_agent_that_builds_a_bad_surface_ends_its_run_with_one_invalid_a2ui_error() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        with ctx.tool_call("render_a2ui") as call:
            call.result_json(render("s", [{"id": "a", "component": "Text"}]).model_dump())

    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))

    assert_valid(events)
    assert [e.type for e in events] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_END",
        "RUN_ERROR",
    ]
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "INVALID_SURFACE"
