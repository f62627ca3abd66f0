"""The AG-UI dojo's pages, as CopilotKit drives them, on the dojo example's routes.

`tests/js/dojo.mjs` plays each page of the dojo headless: CopilotKit's runtime (1.75.0, A2UI on
for the a2ui agents, as the dojo's runtime has it) in front of `examples.dojo.app:app` on
uvicorn, and `CopilotKitCore` with what the page registers (frontend tools, human-in-the-loop
tools, context, state) and the answers its buttons give. Each test asserts what the page would
show: the weather card's fields, the steps turning completed, the document growing before the
confirm, the recipe, the haiku, the meeting booked, the A2UI surface the runtime derives.

Every stream agui sent is also checked twice more: by agui's own verifier, on the bytes the
recorder saw, and by the official client (`@ag-ui/client` 1.0.0, its verifier on), to which
the script replays every request. The pages run on the example's scripted models, and again on
`@copilotkit/aimock` (the LLM mock the dojo's own tests use), through the example's OpenAI-
compatible path, with the fixtures of `tests/js/aimock/dojo.json`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import itertools
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from examples.dojo import app as dojo
from examples.dojo import chat, document, flights, models, recipe
from pydantic import JsonValue

import agui
from agui import RunAgentInput, Tool
from agui.agents import ToolLoopAgent
from agui.agents.models import ChatModel, OpenAIModel, TurnFunction
from agui.asgi._profile import LegacyProfile
from agui.events import RunFinishedEvent, StateDeltaEvent, ToolCallStartEvent
from agui.messages import UserMessage
from agui.testing import assert_valid, collect, serving
from agui.types import AddOperation, SuccessOutcome
from node_clients import node
from test_copilotkit import Recorder
from test_examples import FakeOpenAI, call_fragment, calling, chunk, saying

JS_DIR = Path(__file__).parent / "js"
SCENARIO_SECONDS = 90.0

Json = dict[str, Any]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Recorder, str]]:
    recorder = Recorder(dojo.app)
    with serving(recorder) as url:
        yield recorder, url.rstrip("/")


def play(served: tuple[Recorder, str], scenario: str) -> Json:
    """Play one page; what it ends with, once every stream passed both verifiers."""
    recorder, url = served
    recorder.exchanges.clear()
    found = node("@copilotkit/runtime", "the dojo tests")
    with tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        env = {
            **os.environ,
            "AGUI_DOJO_URL": url,
            "AGUI_SCENARIO": scenario,
            "AGUI_RESULT_FILE": str(result_file),
            "COPILOTKIT_TELEMETRY_DISABLED": "true",
            "DO_NOT_TRACK": "1",
        }
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [found, "dojo.mjs"],
            cwd=JS_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=SCENARIO_SECONDS,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        result = cast("Json", json.loads(result_file.read_text()))
    assert result["errors"] == [], recorder.describe()
    assert result["complaints"] == [], recorder.describe()
    assert result["duplicateMessageIds"] == [], recorder.describe()
    assert result["pendingInterrupts"] == [], recorder.describe()
    assert recorder.exchanges, "agui was sent nothing"
    for exchange in recorder.exchanges:
        given = agui.parse_input(exchange.request)
        assert_valid([agui.parse_event(event) for event in exchange.events], input=given)
    replayed = result["replayed"]
    # The page's requests, then their replays: agui's verifier checked the replayed streams too.
    assert len(recorder.exchanges) == 2 * len(replayed)
    assert [(r["failures"], r["last"]) for r in replayed] == [([], "RUN_FINISHED")] * len(replayed)
    return result


def texts(result: Json) -> list[str]:
    """What the assistant said, message by message."""
    return [m["content"] for m in result["messages"] if m["role"] == "assistant" and m["content"]]


def calls(result: Json) -> list[str]:
    """The names of the calls the page saw, in order."""
    return [call["name"] for call in result["calls"]]


def offered(recorder: Recorder) -> list[str]:
    """The tools the page offered with its first request."""
    return [tool["name"] for tool in recorder.exchanges[0].request["tools"]]


# -- chat pages ---------------------------------------------------------------------------------


def test_agentic_chat_greets_by_the_context_name_and_changes_the_background_through_the_page(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "agentic_chat")

    assert offered(served[0]) == ["change_background"]
    assert result["backgrounds"] == ["blue"]
    assert calls(result) == ["change_background"]
    [call] = result["calls"]
    assert json.loads(result["results"][call["id"]][0])["status"] == "success"
    assert texts(result) == [
        "Hello duaa! How can I assist you today?",
        "Done: the background is changed. Anything else?",
    ]


def test_backend_tool_rendering_gives_the_weather_card_every_field_it_reads(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "backend_tool_rendering")

    [call] = result["calls"]
    assert (call["name"], json.loads(call["arguments"])) == (
        "get_weather",
        {"location": "San Francisco"},
    )
    [content] = result["results"][call["id"]]
    card = json.loads(content)
    assert card == dict(chat.get_weather("San Francisco"))
    assert set(card) == {"temperature", "conditions", "humidity", "wind_speed", "feelsLike"}
    assert texts(result)[-1].startswith("Here is the weather:")


def test_reasoning_streams_a_thought_before_the_answer(served: tuple[Recorder, str]) -> None:
    result = play(served, "agentic_chat_reasoning")

    events = result["events"]
    assert events.index("REASONING_START") < events.index("TEXT_MESSAGE_START")
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["user", "reasoning", "assistant"]
    assert "Why is the sky blue?" in result["messages"][1]["content"]


def test_multimodal_chat_is_told_of_the_image_the_page_attached(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "agentic_chat_multimodal")

    request = served[0].exchanges[0].request
    parts = request["messages"][0]["content"]
    assert [part["type"] for part in parts] == ["text", "image"]
    assert parts[1]["source"]["mimeType"] == "image/png"
    [answer] = texts(result)
    assert "an image (image/png, 70 bytes)" in answer


# -- tools the page runs ------------------------------------------------------------------------


def test_human_in_the_loop_proposes_steps_and_does_only_the_ones_the_user_kept(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "human_in_the_loop")

    assert offered(served[0]) == ["generate_task_steps"]
    [proposed] = result["proposed"]
    assert len(proposed) == 5
    assert {step["status"] for step in proposed} == {"enabled"}
    kept = [step["description"] for i, step in enumerate(proposed) if i != 1]
    assert texts(result) == [f"On it: doing 4 steps: {'; '.join(kept)}."]


def test_tool_based_generative_ui_hands_the_page_a_whole_haiku(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "tool_based_generative_ui")

    [haiku] = result["haikus"]
    assert len(haiku["japanese"]) == len(haiku["english"]) == 3
    assert haiku["image_name"].endswith(".jpg")
    assert haiku["gradient"].startswith("linear-gradient(")
    assert texts(result) == ["Here is your haiku. I hope you like it!"]


# -- state --------------------------------------------------------------------------------------


def test_agentic_generative_ui_turns_the_steps_completed_one_by_one(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "agentic_generative_ui")

    progress = result["progress"]
    assert progress == [["completed"] * done + ["pending"] * (5 - done) for done in range(6)]
    events = result["events"]
    assert events.count("STATE_SNAPSHOT") == 1
    assert events.count("STATE_DELTA") == 5
    assert "ACTIVITY_SNAPSHOT" not in events
    assert texts(result) == ["Done: every step is completed."]


def test_shared_state_answers_from_the_recipe_the_user_edited_and_improves_it(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "shared_state")

    first, second, third = texts(result)
    assert first == "The ingredients: Carrots (3 large, grated), All-Purpose Flour (2 cups)."
    assert second.endswith("All-Purpose Flour (2 cups), Potatoes (2).")
    assert third == "I updated the recipe: have a look."
    recipe = result["state"]["recipe"]
    names = [ingredient["name"] for ingredient in recipe["ingredients"]]
    assert names == ["Carrots", "All-Purpose Flour", "Potatoes", "Fresh basil"]
    assert recipe["special_preferences"] == ["Low Carb", "Spicy"]


@pytest.mark.parametrize(
    ("scenario", "reply"),
    [
        ("predictive_state_updates", "Great: the changes are in the document."),
        ("predictive_state_updates-reject", "Understood: I left the document as it was."),
    ],
    ids=["confirmed", "rejected"],
)
def test_predictive_state_grows_the_document_while_it_is_written_then_asks_to_confirm(
    served: tuple[Recorder, str], scenario: str, reply: str
) -> None:
    result = play(served, scenario)

    timeline = result["timeline"]
    assert timeline[0] == {"call": "write_document_local"}
    assert timeline[-1] == {"call": "confirm_changes"}
    documents = [entry["document"] for entry in timeline[1:-1]]
    assert len(documents) > 10
    assert all(b.startswith(a) and len(b) > len(a) for a, b in itertools.pairwise(documents))
    assert "dragon named Atlantis" in documents[-1]
    assert result["asked"] == [documents[-1]]
    assert calls(result) == ["write_document_local", "confirm_changes"]
    assert texts(result) == [reply]


# -- interrupts and A2UI ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "reply"),
    [
        (
            "interrupt",
            "All set. Booked 'discuss pricing' with the sales team for Tue, Jan 5, 10:00 AM.",
        ),
        ("interrupt-cancel", "No problem: I did not book anything."),
    ],
    ids=["picked", "cancelled"],
)
def test_the_interrupt_page_picks_a_meeting_time_and_the_agent_books_it(
    served: tuple[Recorder, str], scenario: str, reply: str
) -> None:
    result = play(served, scenario)

    [asked] = result["asked"]
    assert asked["reason"] == "tool_call"
    assert asked["metadata"]["reason"] == {"topic": "discuss pricing", "attendee": "the sales team"}
    assert [o["outcome"] for o in result["outcomes"]] == ["interrupt", "success"]
    assert result["resumed"]["runId"] == result["outcomes"][0]["runId"]
    assert texts(result) == [reply]


def test_a2ui_fixed_schema_results_become_the_surface_the_runtime_derives(
    served: tuple[Recorder, str],
) -> None:
    result = play(served, "a2ui_fixed_schema")

    assert calls(result) == ["search_flights"]
    [surface] = [m for m in result["messages"] if m["role"] == "activity"]
    assert surface["activityType"] == "a2ui-surface"
    operations = surface["content"]["a2ui_operations"]
    assert [next(key for key in op if key != "version") for op in operations] == [
        "createSurface",
        "updateComponents",
        "updateDataModel",
    ]
    assert {op["version"] for op in operations} == {"v0.9"}
    assert operations[1]["updateComponents"]["components"] == flights.COMPONENTS
    data = operations[2]["updateDataModel"]["value"]
    assert data == {"flights": flights.flights_between("SFO", "JFK")}
    assert texts(result) == ["Here are the flights I found."]


# -- the app ------------------------------------------------------------------------------------


def test_every_dojo_feature_has_its_route_and_capabilities(served: tuple[Recorder, str]) -> None:
    _, url = served
    for feature in dojo.endpoints():
        answer = httpx.get(f"{url}/{feature}/capabilities", timeout=10)
        assert answer.status_code == 200, feature
    missing = httpx.post(f"{url}/nowhere", json={}, timeout=10)
    assert missing.status_code == 404
    assert missing.json()["code"] == "NOT_FOUND"
    assert "/agentic_chat" in missing.json()["message"]


# -- on an OpenAI-compatible endpoint -----------------------------------------------------------

ENV_KEYS = ("AGUI_MODEL_BASE_URL", "AGUI_MODEL", "AGUI_API_KEY")


def test_with_a_model_endpoint_every_route_runs_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGUI_MODEL_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("AGUI_MODEL", "tiny")
    spec = importlib.util.spec_from_file_location("dojo_on_a_model", Path(dojo.__file__).resolve())
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    for feature in dojo.endpoints():
        agent = getattr(module, feature)
        loop = agent if isinstance(agent, ToolLoopAgent) else agent.agent
        assert isinstance(loop.model, OpenAIModel), feature
        assert repr(loop.model) == "OpenAIModel(model='tiny', base_url='http://127.0.0.1:9/v1/')"


def test_a_model_endpoint_without_a_model_name_is_refused() -> None:
    with pytest.raises(RuntimeError, match="AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not"):
        models.build_model(chat.chat_turn, {"AGUI_MODEL_BASE_URL": "http://127.0.0.1:9/v1"})


def on_endpoint(url: str, turn: TurnFunction) -> ChatModel:
    return models.build_model(turn, {"AGUI_MODEL_BASE_URL": f"{url}/v1", "AGUI_MODEL": "fake-4o"})


def test_the_shared_recipe_is_in_the_prompt_a_real_model_gets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    fake = FakeOpenAI(
        saying("You need carrots and flour."),
    )
    carrots: JsonValue = {
        "recipe": {"title": "Soup", "ingredients": [{"name": "Carrots", "amount": "3"}]}
    }
    given = RunAgentInput(
        thread_id="t",
        run_id="r1",
        messages=[UserMessage(id="u1", content="Give me all the ingredients")],
        state=carrots,
    )
    with serving(fake) as url:
        agent = recipe.shared_state(on_endpoint(url.rstrip("/"), recipe.recipe_turn))
        events = asyncio.run(collect(agent, given, state=recipe.Kitchen))

    assert_valid(events, input=given)
    [request] = fake.requests
    system = request["messages"][0]["content"]
    assert system.startswith(recipe.INSTRUCTIONS)
    shown = json.loads(system.splitlines()[-1])
    assert shown["title"] == "Soup"
    assert shown["ingredients"] == [{"icon": "🍴", "name": "Carrots", "amount": "3"}]
    assert [t["function"]["name"] for t in request["tools"]] == ["generate_recipe"]


def test_a_real_models_streamed_document_grows_the_state_fragment_by_fragment() -> None:
    pieces = ['{"docu', 'ment":"Once', " upon a", ' time"}']
    fake = FakeOpenAI(
        [
            call_fragment(0, "call_w", "write_document_local", pieces[0]),
            *[
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
                for p in pieces[1:]
            ],
            chunk({}, "tool_calls"),
            b"data: [DONE]\n\n",
        ],
        calling("call_c", "confirm_changes", "{}"),
    )
    confirm = Tool(name="confirm_changes", description="the page's confirm")
    given = RunAgentInput(
        thread_id="t",
        run_id="r1",
        messages=[UserMessage(id="u1", content="Write a story")],
        tools=[confirm],
        state={"document": ""},
    )
    with serving(fake) as url:
        agent = document.predictive_state_updates(
            on_endpoint(url.rstrip("/"), document.document_turn)
        )
        events = asyncio.run(
            collect(
                agent, given, state=document.Draft, transformers=[document.document_arguments()]
            )
        )

    assert_valid(events, input=given)
    types = [event.type for event in events]
    grown = [
        op.value
        for event in events
        if isinstance(event, StateDeltaEvent)
        for op in event.delta
        if isinstance(op, AddOperation)
    ]
    assert grown == ["Once", "Once upon a", "Once upon a time"]
    assert types.index("STATE_DELTA") < types.index("TOOL_CALL_END")
    starts = [e.tool_call_name for e in events if isinstance(e, ToolCallStartEvent)]
    assert starts == ["write_document_local", "confirm_changes"]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, SuccessOutcome)
    assert finished.outcome.pending_tool_call_ids == ["call_c"]
    [sent] = LegacyProfile().transform(finished)  # what CopilotKit's 0.0.59 client is sent
    assert json.loads(sent.model_dump_json())["outcome"] == {"type": "success"}


# -- on aimock, the dojo's own LLM mock ---------------------------------------------------------

AIMOCK = JS_DIR / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"
AIMOCK_FIXTURES = JS_DIR / "aimock" / "dojo.json"
AIMOCK_SECONDS = 20.0


@contextlib.contextmanager
def aimock() -> Generator[str, None, None]:
    """`@copilotkit/aimock` on 127.0.0.1, a free port, with the dojo's fixtures; its URL."""
    found = node("@copilotkit/aimock", "the dojo tests on aimock")
    command = [found, str(AIMOCK), "-p", "0", "-f", str(AIMOCK_FIXTURES), "--validate-on-load"]
    process = subprocess.Popen(  # noqa: S603 - a fixed command line
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + AIMOCK_SECONDS
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, "aimock exited before it listened"
            found_url = re.search(r"listening on (http://\S+)", line)
            url = found_url.group(1) if found_url else None
        assert url is not None, "aimock did not listen in time"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=AIMOCK_SECONDS)
        if process.stdout is not None:
            process.stdout.close()


@pytest.fixture(scope="module")
def on_aimock() -> Iterator[tuple[Recorder, str]]:
    with aimock() as model_url, pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGUI_MODEL_BASE_URL", f"{model_url}/v1")
        patch.setenv("AGUI_MODEL", "gpt-4o")
        patch.setenv("AGUI_API_KEY", "mock")
        spec = importlib.util.spec_from_file_location(
            "dojo_on_aimock", Path(dojo.__file__).resolve()
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        recorder = Recorder(module.app)
        with serving(recorder) as url:
            yield recorder, url.rstrip("/")


AIMOCKED: dict[str, tuple[list[str], list[str]]] = {
    "agentic_chat": (
        ["change_background"],
        ["Hello duaa! How can I help?", "The background is blue now."],
    ),
    "backend_tool_rendering": (["get_weather"], ["It is mild in San Francisco today."]),
    "human_in_the_loop": (["generate_task_steps"], ["On it: building the rocket and launching."]),
    "agentic_generative_ui": (["generate_task_steps"], ["We are on our way to Mars."]),
    "tool_based_generative_ui": (["generate_haiku"], ["A haiku about the sea, for you."]),
    "shared_state": (
        ["generate_recipe"],
        [
            "Carrots and All-Purpose Flour.",
            "Carrots, All-Purpose Flour and Potatoes.",
            "I made it a carrot cake.",
        ],
    ),
    "predictive_state_updates": (
        ["write_document_local", "confirm_changes"],
        ["Great, the story is yours."],
    ),
    "predictive_state_updates-reject": (
        ["write_document_local", "confirm_changes"],
        ["OK, I dropped the story."],
    ),
    "agentic_chat_reasoning": ([], ["Because air scatters blue light the most."]),
    "agentic_chat_multimodal": ([], ["I see a tiny image."]),
    "interrupt": (["schedule_meeting"], ["Your call is booked."]),
    "interrupt-cancel": (["schedule_meeting"], ["Nothing was booked."]),
    "a2ui_fixed_schema": (["search_flights"], ["Here are your flights."]),
}


@pytest.mark.parametrize("scenario", list(AIMOCKED))
def test_each_page_works_on_aimock_as_on_the_scripted_models(
    on_aimock: tuple[Recorder, str], scenario: str
) -> None:
    result = play(on_aimock, scenario)

    names, replies = AIMOCKED[scenario]
    assert calls(result) == names, on_aimock[0].describe()
    assert texts(result) == replies, on_aimock[0].describe()
    events = result["events"]
    if scenario == "agentic_chat_reasoning":
        assert events.index("REASONING_START") < events.index("TEXT_MESSAGE_START")
    if scenario == "agentic_generative_ui":
        assert result["progress"][0] == ["pending"] * 3
        assert result["progress"][-1] == ["completed"] * 3
    if scenario.startswith("predictive_state_updates"):
        documents = [entry["document"] for entry in result["timeline"][1:-1]]
        assert len(documents) > 1
        assert all(b.startswith(a) for a, b in itertools.pairwise(documents))
    if scenario == "shared_state":
        assert result["state"]["recipe"]["title"] == "Carrot Cake"
    if scenario == "a2ui_fixed_schema":
        assert [m["activityType"] for m in result["messages"] if m["role"] == "activity"] == [
            "a2ui-surface"
        ]
