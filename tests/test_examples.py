"""The examples: the travel assistant (scripted, and on a fake OpenAI-compatible server), the task
board over real HTTP with its approval round trip, and hello.

Servers listen on 127.0.0.1, port 0, and are stopped by the test that started them; every wait is
bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from pathlib import Path
from typing import Any, cast

import pytest
from examples import hello, progress
from examples.bridges import adapter, proxy
from examples.supervisor import app as supervisor
from examples.task_board import app as board
from examples.travel import app as travel
from pydantic import JsonValue

import agui
from agui import ResumeEntry, RunAgentInput, Tool, testing
from agui.agents.a2ui import A2UIOperations
from agui.agents.models import ChatMessage, OpenAIModel, ScriptedModel
from agui.asgi import AguiApp
from agui.client import AGUIClient
from agui.events import (
    Event,
    RunErrorEvent,
    RunFinishedEvent,
    SubagentStartedEvent,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import ActivityMessage, Message, UserMessage
from agui.testing import FoldedRun, assert_valid, collect, fold
from agui.types import InterruptOutcome

ROOT = Path(__file__).resolve().parents[1]
SECONDS = 20.0
SCRIPTED = travel.build_agent(travel.build_model({}))
"""The travel example's agent as `agui serve` builds it when no model endpoint is configured."""
_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_App = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


def ask(text: str, *, run_id: str = "r1") -> RunAgentInput:
    return RunAgentInput(
        thread_id="t", run_id=run_id, messages=[UserMessage(id="u1", content=text)]
    )


# -- hello -------------------------------------------------------------------------------------


def test_hello_says_hello() -> None:
    events = asyncio.run(collect(hello.agent, ask("Hi")))

    assert_valid(events)
    assert [m.content for m in fold(events).messages] == ["Hello from agui!"]


# -- travel, scripted --------------------------------------------------------------------------


def test_the_travel_assistant_calls_both_tools_then_answers_from_their_results() -> None:
    question = ask(travel.QUESTION)
    events = asyncio.run(collect(SCRIPTED, question))

    assert_valid(events)
    types = [event.type for event in events]
    calls = [
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
    ]  # fmt: skip
    assert types[:9] == ["RUN_STARTED", *calls, *calls]
    assert types[9] == "TEXT_MESSAGE_START"
    assert set(types[10:-2]) == {"TEXT_MESSAGE_CONTENT"}
    assert types[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert [e.tool_call_name for e in starts] == ["get_weather", "search_restaurants"]
    arguments = [json.loads(e.delta) for e in events if isinstance(e, ToolCallArgsEvent)]
    assert arguments == [{"location": "Paris"}, {"location": "Paris", "cuisine": "italian"}]
    results = [e for e in events if isinstance(e, ToolCallResultEvent)]
    weather = json.loads(cast("str", results[0].content))
    places = json.loads(cast("str", results[1].content))
    assert weather["location"] == "Paris"
    assert {place["cuisine"] for place in places} == {"italian"}
    answer = fold(events, messages=question.messages).messages[-1]
    assert answer.role == "assistant"
    assert isinstance(answer.content, str)
    assert f"In Paris it is {weather['temperature_c']} °C" in answer.content
    assert all(place["name"] in answer.content for place in places)


def test_the_fake_data_is_deterministic() -> None:
    assert travel.get_weather("Paris") == travel.get_weather(" paris ")
    assert travel.search_restaurants("Rome", "italian") == travel.search_restaurants(
        " rome ", "Italian"
    )
    places = travel.search_restaurants("Rome")
    assert len(places) == 3
    assert len({place.name for place in places}) == 3
    assert [place.rating for place in places] == sorted((p.rating for p in places), reverse=True)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (travel.QUESTION, ("Paris", "italian", True, True)),
        ("Where should we eat sushi in New York?", ("New York", "japanese", False, True)),
        ("is it raining in lisbon", ("Lisbon", "any", True, False)),
        ("Heading to Berlin", ("Berlin", "any", True, True)),
        ("What's good for dinner?", (None, "any", False, True)),
        ("Pizza near Naples please", ("Naples", "italian", False, True)),
    ],
)
def test_the_scripted_model_reads_city_cuisine_and_topics_from_the_question(
    question: str, expected: tuple[str | None, str, bool, bool]
) -> None:
    request = travel.read_request(question)

    assert (request.location, request.cuisine, request.weather, request.restaurants) == expected


def test_without_a_city_the_scripted_model_asks_for_one() -> None:
    events = asyncio.run(collect(SCRIPTED, ask("Any tips?")))

    assert_valid(events)
    assert "TOOL_CALL_START" not in [event.type for event in events]
    assert fold(events).messages[-1].content == (
        "Which city are you travelling to? I can tell you its weather and where to eat."
    )


def test_the_scripted_answer_survives_a_result_it_cannot_read() -> None:
    messages = [
        ChatMessage.user("Weather in Oslo?"),
        ChatMessage.tool("c1", "Error: the tool failed", name="get_weather", is_error=True),
    ]

    turn = travel.scripted_turn(messages)

    assert turn.content == "I could not use what get_weather returned: Error: the tool failed"


def test_without_a_model_endpoint_the_travel_example_is_scripted() -> None:
    assert isinstance(travel.build_model({}), ScriptedModel)
    assert isinstance(travel.build_model({"AGUI_MODEL": "ignored"}), ScriptedModel)


def test_a_model_endpoint_without_a_model_name_is_refused() -> None:
    with pytest.raises(RuntimeError, match="AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not"):
        travel.build_model({"AGUI_MODEL_BASE_URL": "http://127.0.0.1:9/v1"})


def test_the_environment_chooses_the_model_when_the_example_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGUI_MODEL_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("AGUI_MODEL", "tiny")
    monkeypatch.setenv("AGUI_API_KEY", "sk-test")
    spec = importlib.util.spec_from_file_location(
        "travel_with_a_model", ROOT / "examples" / "travel" / "app.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    model = module.agent.model
    assert isinstance(model, OpenAIModel)
    assert repr(model) == "OpenAIModel(model='tiny', base_url='http://127.0.0.1:9/v1/')"
    assert model.client.api_key == "sk-test"


# -- travel, on a fake OpenAI-compatible server ------------------------------------------------


def chunk(delta: dict[str, JsonValue], finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def call_fragment(index: int, call_id: str, name: str, arguments: str) -> bytes:
    fragment: dict[str, JsonValue] = {
        "index": index,
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return chunk({"tool_calls": [fragment]})


TOOL_CALLS = [
    call_fragment(0, "call_w", "get_weather", '{"location":'),
    call_fragment(1, "call_r", "search_restaurants", '{"location":"Paris",'),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
    chunk({"tool_calls": [{"index": 1, "function": {"arguments": '"cuisine":"italian"}'}}]}),
    chunk({}, "tool_calls"),
    b"data: [DONE]\n\n",
]
ANSWER = [
    chunk({"role": "assistant", "content": "Paris is mild today; "}),
    chunk({"content": "try Il Giardino for pasta."}),
    chunk({}, "stop"),
    b"data: [DONE]\n\n",
]


class FakeOpenAI:
    """Answers each POST to /v1/chat/completions with the next scripted SSE body."""

    def __init__(self, *bodies: list[bytes]) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += cast("bytes", message.get("body", b""))
            if not message.get("more_body"):
                break
        self.requests.append(json.loads(body))
        self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in self.bodies.pop(0):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@contextlib.contextmanager
def serving(
    app: Callable[[_Scope, _Receive, _Send], Awaitable[None]],
) -> Generator[str, None, None]:
    """`agui.testing.serving`, with the base URL given without its trailing slash."""
    with testing.serving(app, timeout=SECONDS) as url:
        yield url.rstrip("/")


def test_the_travel_assistant_runs_on_an_openai_compatible_endpoint() -> None:
    fake = FakeOpenAI(TOOL_CALLS, ANSWER)
    with serving(fake) as url:
        env = {"AGUI_MODEL_BASE_URL": f"{url}/v1", "AGUI_MODEL": "fake-4o", "AGUI_API_KEY": "k"}
        agent = travel.build_agent(travel.build_model(env))
        question = ask(travel.QUESTION)
        events = asyncio.run(collect(agent, question))

    assert_valid(events)
    starts = [e.tool_call_name for e in events if isinstance(e, ToolCallStartEvent)]
    assert starts == ["get_weather", "search_restaurants"]
    results = [e for e in events if isinstance(e, ToolCallResultEvent)]
    assert json.loads(cast("str", results[0].content)) == travel.get_weather("Paris").model_dump(
        mode="json"
    )
    ui = fold(events, messages=question.messages)
    assert ui.messages[-1].content == "Paris is mild today; try Il Giardino for pasta."
    first, second = fake.requests
    assert first["model"] == "fake-4o"
    assert first["stream"] is True
    assert [tool["function"]["name"] for tool in first["tools"]] == [
        "get_weather",
        "search_restaurants",
    ]
    assert first["messages"][0] == {"role": "system", "content": travel.INSTRUCTIONS}
    assert [m["role"] for m in second["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]
    assert fake.headers[0]["authorization"] == "Bearer k"


# -- task board, in process --------------------------------------------------------------------

OFFERED = [Tool(name=name, description=f"the app's {name}") for name in board.BOARD_TOOLS]


def tasks(*held: tuple[int, str, bool]) -> JsonValue:
    return {"tasks": [{"id": id_, "title": title, "done": done} for id_, title, done in held]}


TWO_TASKS = tasks((1, "buy milk", False), (2, "call mum", False))


def board_run(
    text: str,
    *,
    state: JsonValue = TWO_TASKS,
    tools: tuple[Tool, ...] = tuple(OFFERED),
    history: tuple[Message, ...] = (),
    run_id: str = "r1",
) -> tuple[list[Event], FoldedRun]:
    messages = [*history, UserMessage(id=f"u-{run_id}", content=text)]
    given = RunAgentInput(
        thread_id="t", run_id=run_id, messages=messages, state=state, tools=list(tools)
    )
    events = asyncio.run(collect(board.agent, given, state=board.Board))
    assert_valid(events, input=given)
    return events, fold(events, messages=given.messages, state=state)


def replies(ui: FoldedRun) -> list[str]:
    return [m.content for m in ui.messages if m.role == "assistant" and isinstance(m.content, str)]


def call_names(events: list[Event]) -> list[str]:
    return [e.tool_call_name for e in events if isinstance(e, ToolCallStartEvent)]


def test_adding_publishes_the_board_inside_each_call_then_renders_it() -> None:
    events, ui = board_run("add water plants, pay rent", state=None)

    types = [event.type for event in events]
    first_call = types.index("TOOL_CALL_START")
    assert types[first_call : first_call + 5] == [
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "STATE_SNAPSHOT", "TOOL_CALL_END", "TOOL_CALL_RESULT",
    ]  # fmt: skip
    assert types[first_call + 5 : first_call + 10] == [
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "STATE_DELTA", "TOOL_CALL_END", "TOOL_CALL_RESULT",
    ]  # fmt: skip
    assert types[:3] == ["RUN_STARTED", "STEP_STARTED", "REASONING_START"]
    assert types[-2:] == ["STEP_FINISHED", "RUN_FINISHED"]
    assert call_names(events) == ["add_task", "add_task", "render_a2ui"]
    assert ui.state == tasks((1, "water plants", False), (2, "pay rent", False))
    assert replies(ui)[-1] == "Added #1 water plants, #2 pay rent."
    surface = json.loads(cast("str", ui.messages[-1].content))
    assert _kinds(surface) == ["createSurface", "updateComponents", "updateDataModel"]
    assert surface["a2ui_operations"][2]["updateDataModel"]["value"] == ui.state


@pytest.mark.parametrize(
    ("text", "calls", "state", "reply"),
    [
        (
            "complete milk",
            ["complete_task", "render_a2ui"],
            tasks((1, "buy milk", True), (2, "call mum", False)),
            "Marked #1 buy milk as done.",
        ),
        (
            "Rename #2 to call dad.",
            ["rename_task", "render_a2ui"],
            tasks((1, "buy milk", False), (2, "call dad", False)),
            "Renamed #2 from 'call mum' to 'call dad'.",
        ),
        ("list", ["render_a2ui"], TWO_TASKS, "The board: #1 buy milk, #2 call mum."),
        ("done laundry", [], TWO_TASKS, "No task matches 'laundry'. The board: #1 buy milk, #2 "),
        ("hello", [], TWO_TASKS, board.HELP),
        ("rename 1 dad", [], TWO_TASKS, board.HELP),
        ("add", [], TWO_TASKS, board.HELP),
    ],
)
def test_each_command_changes_the_board_through_its_tool(
    text: str, calls: list[str], state: JsonValue, reply: str
) -> None:
    events, ui = board_run(text)

    assert call_names(events) == calls
    assert ui.state == state
    assert replies(ui)[-1].startswith(reply)


def test_a_change_publishes_the_board_while_its_call_is_open() -> None:
    events, _ = board_run("complete 2")

    types = [event.type for event in events]
    start = types.index("TOOL_CALL_START")
    assert types[start : start + 5] == [
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "STATE_SNAPSHOT", "TOOL_CALL_END", "TOOL_CALL_RESULT",
    ]  # fmt: skip


def test_the_board_is_drawn_anew_only_once_per_conversation() -> None:
    _, first = board_run("list")
    events, _ = board_run("list", history=tuple(first.messages), run_id="r2")

    result = next(e for e in events if isinstance(e, ToolCallResultEvent))
    surface = json.loads(cast("str", result.content))
    assert _kinds(surface) == ["updateComponents", "updateDataModel"]


def _kinds(surface: dict[str, list[dict[str, JsonValue]]]) -> list[str]:
    """The kinds of an `a2ui_operations` envelope's messages, checked to fit A2UI v0.9."""
    A2UIOperations.read(cast("JsonValue", surface))
    return [next(key for key in op if key != "version") for op in surface["a2ui_operations"]]


@pytest.mark.parametrize("text", ["add water plants", "complete 1", "rename 1 to x", "delete 1"])
def test_a_board_tool_the_app_did_not_offer_fails_the_run_with_an_agent_error(text: str) -> None:
    offered = tuple(tool for tool in OFFERED if tool.name == "render_a2ui")
    events, _ = board_run(text, tools=offered)

    assert [event.type for event in events] == ["RUN_STARTED", "RUN_ERROR"]
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "AGENT_ERROR"
    assert error.message.startswith("the app offered no '")
    assert "offer '" in error.message


def test_render_a2ui_needs_no_offer() -> None:
    events, _ = board_run("list", tools=())

    assert call_names(events) == ["render_a2ui"]


def test_an_unanswered_delete_is_asked_again_and_nothing_happens() -> None:
    _, asked = board_run("delete 1")
    given = RunAgentInput(
        thread_id="t", run_id="r2", messages=asked.messages, state=asked.state, tools=OFFERED
    )

    events = asyncio.run(collect(board.agent, given, state=board.Board))

    assert_valid(events, input=given)
    assert [event.type for event in events] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    again = fold(events, messages=given.messages, state=given.state)
    assert isinstance(again.outcome, InterruptOutcome)
    assert again.outcome.interrupts[0].id == "approve-r1-call-1"
    assert again.state == TWO_TASKS


# -- task board, over HTTP: the approval round trip --------------------------------------------


async def ask_over_http(url: str, text: str, tools: list[Tool]) -> list[Event]:
    async with AGUIClient(url, timeout=SECONDS) as client:
        given = RunAgentInput(
            thread_id="t",
            run_id="r1",
            messages=[UserMessage(id="u1", content=text)],
            state=TWO_TASKS,
            tools=tools,
        )
        return await client.run(given)


def test_a_board_tool_not_offered_over_http_ends_in_run_error() -> None:
    with serving(board.app) as url:
        events = asyncio.run(ask_over_http(url + "/", "complete 1", []))

    assert [event.type for event in events] == ["RUN_STARTED", "RUN_ERROR"]
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.message == (
        "the app offered no 'complete_task' tool: the board changes only through the board tools "
        "the app renders; offer 'complete_task' in the request's tools "
        "(with agui watch: --tool complete_task)"
    )


APPROVAL = "approve-r1-call-1"


async def delete_over_http(url: str, answer: ResumeEntry) -> tuple[FoldedRun, FoldedRun]:
    async with AGUIClient(url, timeout=SECONDS) as client:
        first = RunAgentInput(
            thread_id="t",
            run_id="r1",
            messages=[UserMessage(id="u1", content="delete buy milk")],
            state=TWO_TASKS,
            tools=OFFERED,
        )
        asked = await client.fold(first)
        second = RunAgentInput(
            thread_id="t",
            run_id="r2",
            messages=asked.messages,
            state=asked.state,
            tools=OFFERED,
            resume=[answer],
        )
        return asked, await client.fold(second)


def test_deleting_over_http_waits_for_approval_then_deletes() -> None:
    approve = ResumeEntry(
        interrupt_id="approve-r1-call-1", status="resolved", payload={"approved": True}
    )
    with serving(board.app) as url:
        asked, done = asyncio.run(delete_over_http(url + "/", approve))

    assert isinstance(asked.outcome, InterruptOutcome)
    [interrupt] = asked.outcome.interrupts
    assert interrupt.tool_call_id == "r1-call-1"
    assert interrupt.message == "Delete task #1 'buy milk'?"
    assert asked.state == TWO_TASKS
    assert done.outcome is not None
    assert done.outcome.type == "success"
    assert done.state == tasks((2, "call mum", False))
    answered = [m for m in done.messages if m.role == "tool" and m.tool_call_id == "r1-call-1"]
    assert json.loads(cast("str", answered[0].content)) == {
        "deleted": {"id": 1, "title": "buy milk", "done": False}
    }
    assert replies(done)[-1] == "Deleted #1 buy milk."


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            ResumeEntry(
                interrupt_id="approve-r1-call-1", status="resolved", payload={"approved": False}
            ),
            "the user declined",
        ),
        (
            ResumeEntry(interrupt_id="approve-r1-call-1", status="cancelled"),
            "the user cancelled the approval",
        ),
    ],
    ids=["declined", "cancelled"],
)
def test_a_declined_or_cancelled_delete_over_http_keeps_the_task_and_says_which(
    answer: ResumeEntry, reason: str
) -> None:
    with serving(board.app) as url:
        _, kept = asyncio.run(delete_over_http(url + "/", answer))

    assert kept.state == TWO_TASKS
    assert kept.outcome is not None
    assert kept.outcome.type == "success"
    assert replies(kept)[-1] == "Kept task #1."
    answered = [m for m in kept.messages if m.role == "tool" and m.tool_call_id == "r1-call-1"]
    assert json.loads(cast("str", answered[0].content)) == {
        "deleted": None,
        "reason": reason,
    }


def test_an_approved_delete_of_a_task_that_is_gone_says_so() -> None:
    _, asked = board_run("delete 1")
    approve = ResumeEntry(
        interrupt_id="approve-r1-call-1", status="resolved", payload={"approved": True}
    )
    gone = tasks((2, "call mum", False))
    given = RunAgentInput(
        thread_id="t", run_id="r2", messages=asked.messages, state=gone, tools=OFFERED,
        resume=[approve],
    )  # fmt: skip

    events = asyncio.run(collect(board.agent, given, state=board.Board))

    assert_valid(events, input=given)
    ui = fold(events, messages=given.messages, state=gone)
    assert ui.state == gone
    assert replies(ui)[-1] == "Task #1 is gone."


def test_the_run_finished_event_of_an_ask_carries_the_approval_schema() -> None:
    events, _ = board_run("remove call")

    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, InterruptOutcome)
    schema = finished.outcome.interrupts[0].response_schema
    assert schema is not None
    assert schema["required"] == ["approved"]


# -- supervisor and researcher -----------------------------------------------------------------


def test_the_supervisor_hands_the_question_to_its_researcher_and_answers_from_it() -> None:
    question = ask(supervisor.QUESTION)
    events = asyncio.run(collect(supervisor.agent, question))

    assert_valid(events)
    [started] = [e for e in events if isinstance(e, SubagentStartedEvent)]
    calls = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert [(c.tool_call_name, c.subagent_run_id) for c in calls] == [
        ("ask_researcher", None),
        ("look_up_project", "r1-sub-1"),
    ]
    assert (started.name, started.parent_tool_call_id) == ("researcher", calls[0].tool_call_id)
    ui = fold(events, messages=question.messages)
    # As a 1.0 client places them: a result right after the call it answers.
    assert [(m.role, m.subagent_run_id) for m in ui.messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", None),
        ("assistant", "r1-sub-1"),
        ("tool", "r1-sub-1"),
        ("assistant", "r1-sub-1"),
        ("assistant", None),
    ]
    assert ui.messages[-1].content == (
        "Here is what my researcher found: " + supervisor.NOTES["aurora"]
    )
    assert [(s.name, s.status) for s in ui.subagents] == [("researcher", "finished")]


def test_the_researcher_says_so_when_its_notes_have_nothing() -> None:
    events = asyncio.run(collect(supervisor.agent, ask("What about Project Zephyr?")))

    assert fold(events).messages[-1].content == (
        "Here is what my researcher found: My notes say nothing about that, sorry."
    )
    assert not supervisor.researcher_turn([ChatMessage.tool("c", "not json")]).calls


def test_without_a_model_endpoint_both_agents_are_scripted_and_a_bare_url_is_refused() -> None:
    assert isinstance(supervisor.build_model(supervisor.supervisor_turn, {}), ScriptedModel)
    with pytest.raises(RuntimeError, match="AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not"):
        supervisor.build_model(supervisor.supervisor_turn, {"AGUI_MODEL_BASE_URL": "http://x/v1"})


def calling(call_id: str, name: str, arguments: str) -> list[bytes]:
    return [
        call_fragment(0, call_id, name, arguments),
        chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]


def saying(text: str) -> list[bytes]:
    return [chunk({"role": "assistant", "content": text}), chunk({}, "stop"), b"data: [DONE]\n\n"]


def test_the_supervisor_runs_on_an_openai_compatible_endpoint_over_http() -> None:
    fake = FakeOpenAI(
        calling("call_s", "ask_researcher", '{"task":"When does Project Aurora launch?"}'),
        calling("call_n", "look_up_project", '{"project":"Aurora"}'),
        saying("It launches on 14 March 2027."),
        saying("Project Aurora launches on 14 March 2027."),
    )
    with serving(fake) as model_url:
        env = {"AGUI_MODEL_BASE_URL": f"{model_url}/v1", "AGUI_MODEL": "fake-4o"}
        app: AguiApp[JsonValue] = agui.asgi_app(
            supervisor.build_agent(
                supervisor.build_model(supervisor.supervisor_turn, env),
                supervisor.build_researcher(
                    supervisor.build_model(supervisor.researcher_turn, env)
                ),
            )
        )
        with serving(app) as url:
            events = asyncio.run(_over_http(url + "/", supervisor.QUESTION))

    assert_valid(events)
    assert [e.type for e in events if e.type.startswith("SUBAGENT_")] == [
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
    ]
    ui = fold(events)
    assert ui.messages[-1].content == "Project Aurora launches on 14 March 2027."
    supervising, researching, answering, _ = fake.requests
    assert supervising["messages"][0]["content"] == supervisor.SUPERVISOR_INSTRUCTIONS
    assert [t["function"]["name"] for t in supervising["tools"]] == ["ask_researcher"]
    assert researching["messages"][0]["content"] == supervisor.RESEARCHER_INSTRUCTIONS
    assert researching["messages"][1] == {
        "role": "user",
        "content": "When does Project Aurora launch?",
    }
    assert [t["function"]["name"] for t in researching["tools"]] == ["look_up_project"]
    assert json.loads(answering["messages"][-1]["content"]) == [supervisor.NOTES["aurora"]]


async def _over_http(url: str, text: str) -> list[Event]:
    async with AGUIClient(url, timeout=SECONDS) as client:
        given = RunAgentInput(
            thread_id="t",
            run_id="r1",
            messages=[UserMessage(id="u1", content=text)],
            protocol_version="1.0",
        )
        return await client.run(given)


# -- progress ----------------------------------------------------------------------------------


def test_the_progress_example_reports_each_step_as_a_patch_of_one_activity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "STEP_SECONDS", 0)

    events = asyncio.run(collect(progress.agent, ask("Build the Q3 report")))

    assert_valid(events)
    kinds = [event.type for event in events]
    assert kinds[:6] == ["RUN_STARTED", "ACTIVITY_SNAPSHOT"] + ["ACTIVITY_DELTA"] * 4
    (task,) = [m for m in fold(events).messages if isinstance(m, ActivityMessage)]
    assert task.activity_type == "background-task"
    assert task.content["status"] == "completed"
    assert task.content["steps"] == [
        {"title": title, "status": "completed"} for title in progress.STEPS
    ]
    assert task.content["result"] == {"total": 1250, "chart": "q3.png"}


# -- bridges -----------------------------------------------------------------------------------


def test_the_adapter_example_is_served_with_agui_s_rules_around_the_foreign_stream() -> None:
    events = asyncio.run(collect(adapter.agent, ask("Busan")))

    assert_valid(events)
    types = [event.type for event in events]
    assert types.count("RUN_STARTED") == 1
    assert "RAW" not in types
    assert "REASONING_MESSAGE_CONTENT" in types
    assert "STATE_DELTA" in types  # the adapter's second snapshot, sent as the smaller delta
    folded = fold(events)
    assert [m.content for m in folded.messages if m.role == "assistant"] == ["It is 21°C in Busan."]
    assert folded.state == {
        "city": "Busan",
        "status": "done",
        "log": ["received the question", "looked up the city", "asked the weather service"],
    }


def test_the_proxy_example_relays_the_adapter_example_over_real_http() -> None:
    direct = asyncio.run(collect(adapter.agent, ask("Busan")))
    with testing.serving(agui.asgi_app(adapter.agent)) as url:
        relayed = asyncio.run(collect(proxy.build(url), ask("Busan")))

    assert_valid(relayed)
    assert [event.type for event in relayed] == [event.type for event in direct]
    assert fold(relayed) == fold(direct)
