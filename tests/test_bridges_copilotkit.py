"""CopilotKit in front of the framework bridges, through each framework's own approval.

`tests/js/copilotkit.mjs` runs CopilotKit's runtime (1.75.0, whose agents are `HttpAgent`s of
`@ag-ui/client` 0.0.59) and its browser half (`CopilotKitCore`) headless, as
`tests/test_copilotkit.py` does for agui's own examples; here its agents are the bridges'
examples on uvicorn (127.0.0.1, port 0): a pydantic-ai agent whose tool has
`requires_approval=True`, and an OpenAI Agents SDK agent whose tool has `needs_approval=True`,
each on its framework's scripted model (no network, no key). The app asks, the approval is
answered in the browser half as `useInterrupt` answers it, and the tool runs, or, declined, does
not; nothing is left pending. Collected from Python 3.11 on, as the bridges are (`conftest.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from examples.bridges import openai_agents_app as desk
from examples.bridges import pydantic_ai_app as shopping

from agui.testing import serving
from node_clients import node, run_script
from test_copilotkit import SCRIPT, Recorder, assert_clean, texts

Json = dict[str, Any]


@dataclasses.dataclass
class Served:
    """The bridges' examples on uvicorn, each behind a recorder of what it was sent."""

    shopping: Recorder
    desk: Recorder
    urls: dict[str, str]


@pytest.fixture
def served() -> Iterator[Served]:
    recorded_shopping, recorded_desk = Recorder(shopping.app), Recorder(desk.app)
    with serving(recorded_shopping) as shopping_url, serving(recorded_desk) as desk_url:
        urls = {"AGUI_SHOPPING_URL": shopping_url, "AGUI_DESK_URL": desk_url}
        yield Served(recorded_shopping, recorded_desk, urls)


def run_scenario(served: Served, scenario: str) -> Json:
    """Run one scenario of the CopilotKit script against the bridges; what the app ends with."""
    found = node("@copilotkit/runtime", "the CopilotKit tests")
    env = {
        **served.urls,
        "AGUI_SCENARIO": scenario,
        # CopilotKit's runtime reports usage to its vendor unless told not to; loopback only.
        "COPILOTKIT_TELEMETRY_DISABLED": "true",
        "DO_NOT_TRACK": "1",
    }
    return run_script(found, [SCRIPT], env)


def assert_asked_then_settled(result: Json, recorder: Recorder) -> None:
    """One approval asked (its run interrupted), answered with that run's id, nothing pending."""
    assert_clean(result, recorder)
    [asked] = result["asked"]["pendingInterrupts"]
    assert asked["reason"] == "tool_call", recorder.describe()
    interrupted = [o["runId"] for o in result["outcomes"] if o["outcome"] == "interrupt"]
    assert interrupted == [result["sent"]["runId"]], recorder.describe()
    assert result["sent"]["resume"][0]["interruptId"] == asked["id"]
    assert result["pendingInterrupts"] == [], recorder.describe()
    last = recorder.exchanges[-1].events[-1]
    assert last["type"] == "RUN_FINISHED", recorder.describe()
    assert last.get("outcome", {"type": "success"}) == {"type": "success"}, recorder.describe()


# -- pydantic-ai: requires_approval=True -----------------------------------------------------


def test_a_pydantic_ai_tool_approved_in_copilotkit_runs(served: Served) -> None:
    result = run_scenario(served, "shopping-approve")

    assert_asked_then_settled(result, served.shopping)
    assert result["asked"]["state"] == {"items": ["milk"]}
    assert result["state"] == {"items": []}, served.shopping.describe()
    assert texts(result)[-1] == "Cleared the list.", served.shopping.describe()


def test_a_pydantic_ai_tool_declined_in_copilotkit_does_not_run(served: Served) -> None:
    result = run_scenario(served, "shopping-decline")

    assert_asked_then_settled(result, served.shopping)
    assert result["sent"]["resume"][0]["payload"] == {"approved": False}
    assert result["state"] == {"items": ["milk"]}, served.shopping.describe()
    assert "Cleared the list." not in texts(result), served.shopping.describe()


# -- the OpenAI Agents SDK: needs_approval=True ----------------------------------------------


def booked(recorder: Recorder) -> list[str]:
    """The results of `book` calls the resumed run sent that say a room was booked.

    Read from what agui sent: the app keeps its own tool message for the interrupted call (what
    `useInterrupt` adds), and the client keeps the first answer of a call.
    """
    events = recorder.exchanges[-1].events
    results = [str(event["content"]) for event in events if event["type"] == "TOOL_CALL_RESULT"]
    return [text for text in results if text.startswith("Booked")]


def test_an_openai_agents_tool_approved_in_copilotkit_runs(served: Served) -> None:
    result = run_scenario(served, "desk-approve")

    assert_asked_then_settled(result, served.desk)
    assert booked(served.desk) == ["Booked a room at Lumen."], served.desk.describe()
    assert texts(result)[-1] == "Booked a room at Lumen.", served.desk.describe()


def test_an_openai_agents_tool_declined_in_copilotkit_does_not_run(served: Served) -> None:
    result = run_scenario(served, "desk-decline")

    assert_asked_then_settled(result, served.desk)
    assert result["sent"]["resume"][0]["payload"] == {"approved": False}
    assert booked(served.desk) == [], served.desk.describe()
    assert not [text for text in texts(result) if "Booked" in text], served.desk.describe()
