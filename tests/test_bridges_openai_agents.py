"""The OpenAI Agents SDK bridge: an Agents SDK `Agent` served as an agui agent.

The models are the SDK's own `ScriptedModel`, or its OpenAI models pointed at the scripted
endpoint on loopback: no network, no key. Collected from Python 3.11 on (`conftest.py`), where
the `dev` extra installs the SDK: a missing SDK fails there.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import openai
import pytest
import redis as redis_client
from agents import (
    Agent,
    FunctionTool,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.items import TResponseStreamEvent
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.testing.model import ModelStepResult, _stream_events_for_step  # pyright: ignore[reportPrivateUsage]
from examples.bridges import openai_agents_app as desk
from openai.types.responses import (
    ResponseFunctionWebSearch,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseReasoningItem,
    ResponseTextDeltaEvent,
)
from openai.types.responses.response_function_web_search import ActionSearch
from openai.types.responses.response_reasoning_item import Summary
from pydantic import JsonValue

from agui import Event, RunAgentInput, RunContext, asgi_app, run
from agui.agents.loop import approval_result_id
from agui.bridges import openai_agents, stream_as_subagent
from agui.bridges._openai_responses import ResponseItems
from agui.client import AGUIClient
from agui.events import RunErrorEvent
from agui.messages import (
    AssistantMessage,
    DeveloperMessage,
    FunctionCall,
    ImagePart,
    Message,
    ReasoningMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
)
from agui.runs import MemoryRunLog
from agui.testing import assert_valid, collect, fold
from agui.testing import serving as serving_app
from agui.types import ResumeEntry, Tool
from bridge_runs import (
    assert_coded_error,
    cancelled_after,
    live_and_replayed,
    stalled_read,
    synced,
    terminal,
    types,
)
from fake_endpoint import FakeEndpoint, Reply, serving
from redis_server import RedisServer, running_redis
from test_backpressure import CHUNK, CHUNKS
from test_durable import Worker, worker_pair

set_tracing_disabled(disabled=True)  # the SDK would send each run's trace to OpenAI's servers


def _input(
    *messages: Message, run_id: str = "r1", resume: list[ResumeEntry] | None = None
) -> RunAgentInput:
    history = list(messages) or [UserMessage(id="u1", content="Hi")]
    return RunAgentInput(thread_id="t", run_id=run_id, messages=history, resume=resume)


picture = UrlSource(value="https://example.com/a.png")


def _reasoning(text: str) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id="rs1", type="reasoning", summary=[Summary(text=text, type="summary_text")]
    )


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"21C in {city}"


@synced
async def test_text_reasoning_tool_calls_and_results_map_onto_verified_agui_events() -> None:
    model = ScriptedModel(
        [
            [_reasoning("Look it up."), assistant_message("Let me look."),
             function_call("weather", {"city": "Seoul"}, call_id="c1")],
            [assistant_message("It is 21C.", item_id="m2")],
        ]
    )  # fmt: skip
    agent = openai_agents(Agent(name="forecaster", model=model, tools=[weather]))
    given = _input()
    events = await collect(agent, given)
    assert_valid(events, input=given)
    assert types(events) == [
        "RUN_STARTED", "STEP_STARTED",
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "STEP_FINISHED", "RUN_FINISHED",
    ]  # fmt: skip
    start = events[10].model_dump(by_alias=True, exclude_none=True)
    assert start["toolCallId"] == "c1"
    assert start["parentMessageId"] == events[7].model_dump(by_alias=True)["messageId"]
    ui = fold(events, messages=given.messages)
    assert [m.role for m in ui.messages] == ["user", "reasoning", "assistant", "tool", "assistant"]
    assert ui.messages[3].content == "21C in Seoul"


@synced
async def test_the_clients_history_becomes_the_sdks_input_items() -> None:
    earlier = ScriptedModel(
        [[function_call("weather", {"city": "Oslo"}, call_id="c1")], [assistant_message("Sunny.")]]
    )
    first = _input(UserMessage(id="u0", content="Weather in Oslo?"))
    events = await collect(openai_agents(Agent(name="a", model=earlier, tools=[weather])), first)
    history = fold(events, messages=first.messages).messages
    model = ScriptedModel([[assistant_message("Again?")]])
    await collect(openai_agents(Agent(name="a", model=model)), _input(*history, run_id="r2"))
    call = model.last_call
    assert call is not None
    assert call.input == [
        {"role": "user", "content": "Weather in Oslo?"},
        {"type": "function_call", "call_id": "c1", "name": "weather",
         "arguments": '{"city":"Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "21C in Oslo"},
        {"role": "assistant", "content": "Sunny."},
    ]  # fmt: skip


@synced
async def test_a_handoff_ends_one_agents_step_and_starts_the_next() -> None:
    expert = Agent(name="expert", model=ScriptedModel([[assistant_message("Expert here.")]]))
    triage = Agent(
        name="triage",
        model=ScriptedModel([[function_call("transfer_to_expert", {}, call_id="h1")]]),
        handoffs=[expert],
    )
    events = await collect(openai_agents(triage), _input())
    assert_valid(events)
    steps = [(e.type, e.model_dump(by_alias=True)["stepName"]) for e in events if "STEP" in e.type]
    assert steps == [
        ("STEP_STARTED", "triage"), ("STEP_FINISHED", "triage"),
        ("STEP_STARTED", "expert"), ("STEP_FINISHED", "expert"),
    ]  # fmt: skip
    results = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert [r["toolCallId"] for r in results] == ["h1"]
    assert fold(events).messages[-1].content == "Expert here."


def _booking(model: ScriptedModel, booked: list[str]) -> Agent[None]:
    @function_tool(needs_approval=True)
    def book(hotel: str) -> str:
        """Book a hotel."""
        booked.append(hotel)
        return f"booked {hotel}"

    return Agent(name="desk", model=model, tools=[book])


class _Desk:
    """A desk that asks to book Lumen, then says `reply`; its paused runs kept in `log`."""

    def __init__(self, reply: str, log: MemoryRunLog | None = None) -> None:
        self.booked: list[str] = []
        self.model = ScriptedModel(
            [[function_call("book", {"hotel": "Lumen"}, call_id="c2")], [assistant_message(reply)]]
        )
        self.log = MemoryRunLog() if log is None else log
        self.agent = openai_agents(_booking(self.model, self.booked), runs=self.log)

    async def ask(self) -> list[Message]:
        """The history once the desk asked for its approval."""
        first = _input()
        return fold(await collect(self.agent, first), messages=first.messages).messages


def _approve(payload: JsonValue) -> ResumeEntry:
    return ResumeEntry(interrupt_id="approve-c2", status="resolved", payload=payload)


@synced
async def test_a_tool_that_needs_approval_ends_the_run_with_an_interrupt_and_keeps_its_state() -> (
    None
):
    booked: list[str] = []
    log = MemoryRunLog()
    model = ScriptedModel([[function_call("book", {"hotel": "Lumen"}, call_id="c2")]])
    events = await collect(openai_agents(_booking(model, booked), runs=log), _input())
    assert_valid(events)
    outcome = terminal(events).model_dump(by_alias=True, exclude_none=True)["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    assert (interrupt["id"], interrupt["reason"], interrupt["toolCallId"]) == (
        "approve-c2", "tool_call", "c2"
    )  # fmt: skip
    assert interrupt["message"] == 'Approve book({"hotel":"Lumen"})?'
    kept = await log.take_blob("t")
    assert kept is not None
    assert '"call_id":"c2"' in kept.decode().replace(" ", "")
    assert booked == []


async def _answered(payload: JsonValue, booked: list[str]) -> tuple[list[Event], ModelCall]:
    desk = _Desk("Done.")
    second = _input(*await desk.ask(), run_id="r2", resume=[_approve(payload)])
    events = await collect(desk.agent, second)
    booked.extend(desk.booked)
    assert_valid(events, input=second)
    assert await desk.log.take_blob("t") is None  # a resumed state is used once
    model = desk.model
    assert model.last_call is not None
    return events, model.last_call


@synced
async def test_an_approved_call_resumes_the_kept_run_and_runs_the_tool() -> None:
    booked: list[str] = []
    events, _ = await _answered({"approved": True}, booked)
    assert booked == ["Lumen"]
    [result] = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == ("c2", "booked Lumen")
    assert fold(events).messages[-1].content == "Done."


@pytest.mark.parametrize(
    "payload", [{"approved": False, "reason": "too dear"}, {"approved": "yes"}, None]
)
@synced
async def test_any_answer_but_an_approval_rejects_the_call(payload: JsonValue) -> None:
    booked: list[str] = []
    events, last = await _answered(payload, booked)
    assert booked == []
    assert terminal(events).model_dump(by_alias=True)["outcome"]["type"] == "success"
    if payload == {"approved": False, "reason": "too dear"}:
        assert "too dear" in json.dumps(last.input)


@synced
async def test_a_new_message_instead_of_an_answer_starts_afresh() -> None:
    desk = _Desk("Hi!")
    await desk.ask()
    events = await collect(
        desk.agent, _input(UserMessage(id="u2", content="Never mind"), run_id="r2")
    )
    assert fold(events).messages[-1].content == "Hi!"
    assert (desk.booked, await desk.log.take_blob("t")) == ([], None)


@synced
async def test_a_placeholder_and_an_entry_in_one_request_settle_the_call_once() -> None:
    desk = _Desk("Booked.")
    history = await desk.ask()
    placeholder = ToolMessage(id="ck-1", tool_call_id="c2", content="")
    again = RunAgentInput(
        thread_id="t", run_id="r1", messages=[*history, placeholder],
        resume=[_approve({"approved": True})],
    )  # fmt: skip
    events = await collect(desk.agent, again)
    assert_valid(events, input=again)
    settled = fold(events, messages=again.messages).messages
    assert desk.booked == ["Lumen"]
    assert approval_result_id("c2") in [m.id for m in settled]
    model = ScriptedModel([[assistant_message("Anything else?")]])
    repeat = _input(*settled, run_id="r2", resume=[_approve({"approved": True})])
    events = await collect(openai_agents(_booking(model, desk.booked)), repeat)
    assert_valid(events, input=repeat)
    assert desk.booked == ["Lumen"]
    assert model.last_call is not None
    outputs = [i for i in model.last_call.input if i.get("type") == "function_call_output"]
    assert outputs == [{"type": "function_call_output", "call_id": "c2", "output": "booked Lumen"}]


@pytest.mark.parametrize(
    ("content", "booked", "said"),
    [
        ('{"approved": true}', ["Lumen"], "booked Lumen"),
        ('{"approved": false}', [], "Error: the user declined this call; the tool did not run."),
        ("sure", [], "could not be read as one, so the call was declined"),
    ],
)
@synced
async def test_a_tool_message_alone_answers_as_its_payload_would(
    content: str, booked: list[str], said: str
) -> None:
    desk = _Desk("Noted.")
    history = await desk.ask()
    answer = ToolMessage(id="m-answer", tool_call_id="c2", content=content)
    given = _input(*history, answer, run_id="r2")
    events = await collect(desk.agent, given)
    assert_valid(events, input=given)
    [result] = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert result["messageId"] == approval_result_id("c2")
    assert said in result["content"]
    assert desk.booked == booked


@synced
async def test_a_cancelled_entry_rejects_the_call_saying_so() -> None:
    desk = _Desk("Fine.")
    history = await desk.ask()
    cancel = ResumeEntry(interrupt_id="approve-c2", status="cancelled")
    given = _input(*history, run_id="r2", resume=[cancel])
    events = await collect(desk.agent, given)
    assert_valid(events, input=given)
    [result] = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert result["content"] == "Error: the user cancelled this call; the tool did not run."
    assert desk.booked == []


def _failed(events: list[Event], code: str) -> str:
    """The message of the `RUN_ERROR` of `code` a valid stream ends with."""
    assert_valid(events)
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == code
    return error.message


@synced
async def test_an_approval_with_edited_arguments_is_refused_and_the_question_stays_open() -> None:
    desk = _Desk("Done.")
    history = await desk.ask()
    edited = _approve({"approved": True, "editedArgs": {"hotel": "Aurora"}})
    events = await collect(desk.agent, _input(*history, run_id="r2", resume=[edited]))
    message = _failed(events, "AGENT_ERROR")
    assert "'approve-c2' approves the call with edited arguments (editedArgs)" in message
    assert (desk.booked, len(desk.model.calls)) == ([], 1)
    plain = _approve({"approved": True, "editedArgs": None})
    events = await collect(desk.agent, _input(*history, run_id="r3", resume=[plain]))
    assert fold(events).messages[-1].content == "Done."
    assert desk.booked == ["Lumen"]


@synced
async def test_an_answer_whose_paused_run_is_gone_fails_the_run_and_runs_nothing() -> None:
    desk = _Desk("no")
    history = await desk.ask()
    elsewhere = _Desk("no", MemoryRunLog())  # another log: nothing kept there
    answer = _input(*history, run_id="r2", resume=[_approve({"approved": True})])
    events = await collect(elsewhere.agent, answer)
    assert "'approve-c2'" in _failed(events, "INTERRUPT_EXPIRED")
    assert (desk.booked, elsewhere.booked, len(elsewhere.model.calls)) == ([], [], 0)


@synced
async def test_an_answer_sent_again_for_a_settled_call_acts_on_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    booked: list[str] = []
    events, _ = await _answered({"approved": True}, booked)
    model = ScriptedModel([[assistant_message("Anything else?")]])
    settled = fold(events, messages=_input().messages).messages
    other = ResumeEntry(interrupt_id="ask-1", status="resolved", payload="yes")
    again = _input(*settled, run_id="r3", resume=[_approve({"approved": True}), other])
    with caplog.at_level("WARNING", logger="agui"):
        repeat = await collect(openai_agents(_booking(model, booked)), again)
    assert_valid(repeat, input=again)
    assert fold(repeat).messages[-1].content == "Anything else?"
    assert booked == ["Lumen"]
    assert "the call 'c2' is settled; its answer is skipped" in caplog.text
    assert "resume[] answers an unknown interrupt 'ask-1'" in caplog.text


CONFIRM = Tool(
    name="confirm",
    description="Ask the user to confirm a choice.",
    parameters={"type": "object", "properties": {"choice": {"type": "string"}}},
)


def _client_turns(model: ScriptedModel, *more: Tool) -> tuple[Agent[None], RunAgentInput]:
    agent = Agent(name="a", model=model, tools=[weather])
    given = RunAgentInput(
        thread_id="t", run_id="r1", messages=[UserMessage(id="u1", content="Hi")],
        tools=[CONFIRM, *more],
    )  # fmt: skip
    return agent, given


@synced
async def test_a_call_of_a_client_tool_ends_the_run_with_the_call_pending() -> None:
    model = ScriptedModel(
        [[function_call("weather", {"city": "Oslo"}, call_id="c1"),
          function_call("confirm", {"choice": "Oslo"}, call_id="c2")],
         [assistant_message("never")]]
    )  # fmt: skip
    agent, given = _client_turns(model)
    events = await collect(openai_agents(agent), given)
    assert_valid(events, input=given)
    outcome = terminal(events).model_dump(by_alias=True, exclude_none=True)["outcome"]
    assert outcome == {"type": "success", "pendingToolCallIds": ["c2"]}
    results = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert [(r["toolCallId"], r["content"]) for r in results] == [("c1", "21C in Oslo")]
    await asyncio.sleep(0.05)
    assert len(model.calls) == 1
    assert model.calls[0].tools is not None
    offered = {tool.name: tool for tool in model.calls[0].tools}
    assert set(offered) == {"weather", "confirm"}
    confirm = offered["confirm"]
    assert isinstance(confirm, FunctionTool)
    assert confirm.params_json_schema == CONFIRM.parameters
    assert confirm.description == CONFIRM.description


@synced
async def test_the_apps_answer_to_a_client_call_reaches_the_model_in_the_next_run() -> None:
    model = ScriptedModel(
        [[function_call("confirm", {"choice": "Oslo"}, call_id="c2")],
         [assistant_message("Oslo it is.")]]
    )  # fmt: skip
    agent, given = _client_turns(model)
    bridge = openai_agents(agent)
    held = fold(await collect(bridge, given), messages=given.messages).messages
    answer = ToolMessage(id="m-answer", tool_call_id="c2", content="yes")
    second = given.model_copy(update={"run_id": "r2", "messages": [*held, answer]})
    events = await collect(bridge, second)
    assert_valid(events, input=second)
    assert fold(events).messages[-1].content == "Oslo it is."
    assert model.last_call is not None
    assert model.last_call.input[-2:] == [
        {"type": "function_call", "call_id": "c2", "name": "confirm",
         "arguments": '{"choice":"Oslo"}'},
        {"type": "function_call_output", "call_id": "c2", "output": "yes"},
    ]  # fmt: skip


@synced
async def test_a_client_tool_named_as_the_agents_own_is_not_offered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel([[assistant_message("Hi.")]])
    clash = Tool(name="weather", description="The app's weather.")
    loose = Tool(name="note", description="Take a note.", parameters=None)
    agent, given = _client_turns(model, clash, loose)
    with caplog.at_level("WARNING", logger="agui"):
        await collect(openai_agents(agent), given)
    assert model.last_call is not None
    assert model.last_call.tools is not None
    offered = {tool.name: tool for tool in model.last_call.tools}
    assert set(offered) == {"weather", "confirm", "note"}
    assert offered["weather"] is weather
    note = offered["note"]
    assert isinstance(note, FunctionTool)
    assert note.params_json_schema == {"type": "object", "properties": {}}
    assert "the client's tool 'weather' is not offered" in caplog.text


def _lead(*, streamed: bool) -> Agent[None]:
    scout = Agent(
        name="scout",
        model=ScriptedModel(
            [[function_call("weather", {"city": "Lisbon"}, call_id="s1")],
             [assistant_message("Lisbon: 21C in Lisbon.", item_id="sm")]]
        ),
        tools=[weather],
    )  # fmt: skip
    tool = scout.as_tool(
        "scout", "Finds a city.", on_stream=stream_as_subagent if streamed else None
    )
    model = ScriptedModel(
        [[function_call("scout", {"input": "Where is it warm?"}, call_id="c1")],
         [assistant_message("Lisbon it is.", item_id="lm")]]
    )  # fmt: skip
    return Agent(name="lead", model=model, tools=[tool])


@synced
async def test_an_agent_used_as_a_tool_streams_as_a_subagent_of_the_run() -> None:
    events = await collect(openai_agents(_lead(streamed=True)), _input())
    assert_valid(events)
    wire = [e.model_dump(by_alias=True, exclude_none=True) for e in events]
    started = next(w for w in wire if w["type"] == "SUBAGENT_STARTED")
    sub = started["subagentRunId"]
    assert started["name"] == "scout"
    inside = [w["type"] for w in wire if w.get("subagentRunId") == sub]
    assert inside == [
        "SUBAGENT_STARTED", "STEP_STARTED",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "STEP_FINISHED", "SUBAGENT_FINISHED",
    ]  # fmt: skip
    finished = next(w for w in wire if w["type"] == "SUBAGENT_FINISHED")
    assert finished["result"] == "Lisbon: 21C in Lisbon."
    outer = [(w["type"], w.get("toolCallId")) for w in wire if "subagentRunId" not in w]
    assert outer.index(("TOOL_CALL_RESULT", "c1")) > outer.index(("TOOL_CALL_END", "c1"))
    assert types(events).index("SUBAGENT_FINISHED") < next(
        i for i, w in enumerate(wire) if w["type"] == "TOOL_CALL_RESULT" and w["toolCallId"] == "c1"
    )
    assert fold(events).messages[-1].content == "Lisbon it is."


@synced
async def test_an_agent_tool_without_the_callback_is_one_tool_call() -> None:
    events = await collect(openai_agents(_lead(streamed=False)), _input())
    assert_valid(events)
    assert not [t for t in types(events) if t.startswith("SUBAGENT")]
    results = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert [(r["toolCallId"], r["content"]) for r in results] == [("c1", "Lisbon: 21C in Lisbon.")]


@synced
async def test_an_agent_tool_that_fails_ends_its_subagent_with_an_error_then_the_run() -> None:
    scout = Agent(name="scout", model=ScriptedModel([ModelStep.respond(_broken)]))
    tool = scout.as_tool(
        "scout", "Finds a city.", on_stream=stream_as_subagent, failure_error_function=None
    )
    model = ScriptedModel(
        [[function_call("scout", {"input": "Where?"}, call_id="c1")], [assistant_message("no")]]
    )
    events = await collect(openai_agents(Agent(name="lead", model=model, tools=[tool])), _input())
    assert_valid(events)
    assert types(events)[-4:] == ["STEP_FINISHED", "SUBAGENT_ERROR", "STEP_FINISHED", "RUN_ERROR"]
    assert "db-7" not in json.dumps([e.model_dump(mode="json") for e in events])
    assert len(model.calls) == 1


@synced
async def test_the_callback_outside_the_bridge_does_nothing() -> None:
    result = Runner.run_streamed(_lead(streamed=True), "Where?")
    seen = [event async for event in result.stream_events()]
    assert seen
    assert result.final_output == "Lisbon it is."


@synced
async def test_a_tool_that_raises_never_shows_its_text() -> None:
    @function_tool
    def leak() -> str:
        """Fails with a secret."""
        message = "password=sk-secret-123"
        raise ValueError(message)

    @function_tool(failure_error_function=None)
    def leak_loudly() -> str:
        """Fails with a secret, and fails the run."""
        message = "password=sk-secret-456"
        raise ValueError(message)

    model = ScriptedModel(
        [[function_call("leak", {}, call_id="c1")],
         [function_call("leak_loudly", {}, call_id="c2")], [assistant_message("never")]]
    )  # fmt: skip
    events = await collect(
        openai_agents(Agent(name="a", model=model, tools=[leak, leak_loudly])), _input()
    )
    assert_valid(events)
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == "AGENT_ERROR"
    assert "sk-secret" not in json.dumps([e.model_dump(mode="json") for e in events])
    assert len(model.calls) == 2


async def _broken(call: ModelCall) -> ModelStepResult:
    del call
    message = "internal host db-7:5432"
    raise RuntimeError(message)


@synced
async def test_a_framework_error_ends_the_run_with_a_coded_error_and_no_text() -> None:
    model = ScriptedModel([ModelStep.respond(_broken)])
    events = await collect(openai_agents(Agent(name="a", model=model)), _input())
    assert_valid(events)
    assert types(events)[-2:] == ["STEP_FINISHED", "RUN_ERROR"]
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == "AGENT_ERROR"
    assert "db-7" not in error.message


@synced
async def test_a_model_that_answers_500_ends_the_run_with_model_unavailable() -> None:
    endpoint = FakeEndpoint([Reply(status=500, pieces=[b'{"error": "key sk-secret"}'])])
    async with (
        serving(endpoint, "/v1") as url,
        openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0) as client,
    ):
        model = OpenAIResponsesModel("scripted", openai_client=client)
        events = await collect(openai_agents(Agent(name="a", model=model)), _input())
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'scripted' answered HTTP 500")
    assert len(endpoint.requests) == 1


@synced
async def test_a_model_that_cannot_be_reached_ends_the_run_with_model_unavailable() -> None:
    endpoint = FakeEndpoint([])
    async with serving(endpoint) as url:
        closed = url  # served, then stopped below: nothing listens there any more
    async with openai.AsyncOpenAI(base_url=closed, api_key="test", max_retries=0) as client:
        model = OpenAIResponsesModel("scripted", openai_client=client)
        events = await collect(openai_agents(Agent(name="a", model=model)), _input())
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'scripted' could not be reached")


def _chunk(delta: dict[str, JsonValue], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    return b"data: " + json.dumps({**body, "choices": [choice]}).encode() + b"\n\n"


@synced
async def test_a_chat_completions_stream_with_text_around_a_call_stays_verified(
    caplog: pytest.LogCaptureFixture,
) -> None:
    call: dict[str, JsonValue] = {"index": 0, "id": "c1", "type": "function"}
    arguments: dict[str, JsonValue] = {"index": 0, "function": {"arguments": '{"city": "Oslo"}'}}
    turn = [
        _chunk({"role": "assistant", "content": "Looking"}),
        _chunk({"tool_calls": [{**call, "function": {"name": "weather", "arguments": ""}}]}),
        _chunk({"tool_calls": [arguments]}),
        _chunk({"content": " late"}),
        _chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
    answer = [_chunk({"role": "assistant", "content": "Sunny."}, "stop"), b"data: [DONE]\n\n"]
    endpoint = FakeEndpoint([Reply(pieces=turn), Reply(pieces=answer)])
    async with (
        serving(endpoint, "/v1") as url,
        openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0) as client,
    ):
        model = OpenAIChatCompletionsModel("scripted", openai_client=client)
        with caplog.at_level("WARNING", logger="agui"):
            events = await collect(
                openai_agents(Agent(name="a", model=model, tools=[weather])), _input()
            )
    assert_valid(events)
    ui = fold(events)
    assert [m.content for m in ui.messages if m.role == "tool"] == ["21C in Oslo"]
    assert ui.messages[-1].content == "Sunny."
    assert "a delta of an item that is not open was dropped" in caplog.text


def _gated(gate: asyncio.Event, ran: list[str]) -> tuple[ScriptedModel, Agent[None]]:
    async def slow(call: ModelCall) -> ModelStepResult:
        del call
        await gate.wait()
        return [function_call("tick", {}, call_id="c1")]

    @function_tool
    def tick() -> str:
        """Runs only if the run went on."""
        ran.append("tick")
        return "tock"

    model = ScriptedModel([ModelStep.respond(slow), [assistant_message("never")]])
    return model, Agent(name="a", model=model, tools=[tick])


@synced
async def test_a_client_that_leaves_mid_run_cancels_the_sdk_run() -> None:
    gate, ran = asyncio.Event(), list[str]()
    model, agent = _gated(gate, ran)
    stream = run(openai_agents(agent), _input())
    seen = [await anext(stream) for _ in range(2)]
    assert types(seen) == ["RUN_STARTED", "STEP_STARTED"]
    await asyncio.sleep(0.05)  # the model call is in flight
    await stream.aclose()
    gate.set()
    await asyncio.sleep(0.1)
    assert (len(model.calls), ran) == (1, [])


@synced
async def test_a_cancelled_run_ends_cancelled_and_stops_the_sdk_run() -> None:
    gate, ran = asyncio.Event(), list[str]()
    model, agent = _gated(gate, ran)
    await cancelled_after(openai_agents(agent), _input(), 2)
    gate.set()
    await asyncio.sleep(0.1)
    assert (len(model.calls), ran) == (1, [])


@synced
async def test_text_of_every_role_reaches_the_model_and_the_rest_is_left_out() -> None:
    model = ScriptedModel([[assistant_message("Noted.")]])
    history: list[Message] = [
        SystemMessage(id="s", content="Be brief."),
        DeveloperMessage(id="d", content="No tables."),
        ReasoningMessage(id="r", content="private"),
        UserMessage(id="u", content=[TextPart(text="Look: "), ImagePart(source=picture)]),
    ]
    await collect(openai_agents(Agent(name="a", model=model)), _input(*history))
    assert model.last_call is not None
    assert model.last_call.input == [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": "No tables."},
        {"role": "user", "content": "Look: "},
    ]


def test_an_output_item_of_the_providers_own_tools_streams_nothing() -> None:
    search = ResponseFunctionWebSearch(
        id="ws1", status="completed", type="web_search_call",
        action=ActionSearch(type="search", query="Oslo weather"),
    )  # fmt: skip
    ctx, events = RunContext.new(_input())
    items = ResponseItems(ctx)
    added = ResponseOutputItemAddedEvent(
        type="response.output_item.added", item=search, output_index=0, sequence_number=1
    )
    done = ResponseOutputItemDoneEvent(
        type="response.output_item.done", item=search, output_index=0, sequence_number=2
    )
    items.take(added)
    items.take(done)
    assert events.drain() == []


@synced
async def test_a_call_id_the_thread_already_has_ends_the_run_and_stops_the_sdk_run() -> None:
    ran: list[str] = []

    @function_tool
    def tick() -> str:
        """Runs only if the run went on."""
        ran.append("tick")
        return "tock"

    model = ScriptedModel([[function_call("tick", {}, call_id="c1")], [assistant_message("no")]])
    history: list[Message] = [
        UserMessage(id="u0", content="Tick"),
        AssistantMessage(
            id="a0",
            tool_calls=[ToolCall(id="c1", function=FunctionCall(name="tick", arguments="{}"))],
        ),
        ToolMessage(id="t0", tool_call_id="c1", content="tock"),
    ]
    events = await collect(
        openai_agents(Agent(name="a", model=model, tools=[tick])), _input(*history)
    )
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == "PROTOCOL_VIOLATION"
    await asyncio.sleep(0.05)
    assert (len(model.calls), ran) == (1, [])


@synced
async def test_a_task_cancelled_without_its_token_still_stops_the_sdk_run() -> None:
    gate, ran = asyncio.Event(), list[str]()
    model, agent = _gated(gate, ran)
    ctx, _ = RunContext.new(_input())
    ctx.init_state()
    task = asyncio.ensure_future(openai_agents(agent)(ctx))
    await asyncio.sleep(0.05)  # the model call is in flight
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    await asyncio.sleep(0.1)
    assert (len(model.calls), ran, ctx.token.cancelled) == (1, [], False)


@pytest.mark.parametrize("given", [False, True])
@synced
async def test_a_durable_endpoint_keeps_the_paused_run_in_its_log_in_the_owners_space(
    given: bool,  # noqa: FBT001 - a parameter of the test
) -> None:
    log = MemoryRunLog()
    desk = _Desk("Done.", log if given else None)
    if not given:
        desk.agent = openai_agents(_booking(desk.model, desk.booked))
    app = asgi_app(desk.agent, runs=log, authorize=lambda _: "alice")
    with serving_app(app) as url:
        async with AGUIClient(url) as client:
            asked = await client.fold(_input(run_id="d-r1"))
            assert list(log._blobs) == ["alice/t"]  # pyright: ignore[reportPrivateUsage]
            resumed = _input(*asked.messages, run_id="d-r2", resume=[_approve({"approved": True})])
            done = await client.fold(resumed)
    assert done.messages[-1].content == "Done."
    assert (desk.booked, list(log._blobs)) == (["Lumen"], [])  # pyright: ignore[reportPrivateUsage]


# -- two workers sharing one Redis -------------------------------------------------------------

ALICE = {"Authorization": "Bearer alice-token"}


@pytest.fixture(scope="module")
def desks() -> Iterator[tuple[Worker, Worker, RedisServer]]:
    with running_redis() as redis:
        for a, b in worker_pair(redis, "openai_agents_worker.py"):
            yield a, b, redis


@synced
async def test_an_approval_asked_on_one_worker_is_resumed_on_another(
    desks: tuple[Worker, Worker, RedisServer],
) -> None:
    a, b, redis = desks
    given = _input(UserMessage(id="u1", content="Book Lumen"), run_id="w-r1")
    async with AGUIClient(a.url, headers=ALICE) as on_a:
        asked = await on_a.fold(given)
    assert asked.outcome is not None
    assert asked.outcome.type == "interrupt"
    [interrupt] = asked.outcome.interrupts
    with redis_client.Redis(host="127.0.0.1", port=redis.port) as store:
        assert store.exists("agui:blob:alice/t") == 1  # kept in Alice's space
    answer = ResumeEntry(interrupt_id=interrupt.id, status="resolved", payload={"approved": True})
    resumed = _input(*asked.messages, run_id="w-r2", resume=[answer])
    async with AGUIClient(b.url, headers=ALICE) as on_b:
        done = await on_b.fold(resumed)
    assert done.outcome is not None
    assert done.outcome.type == "success"
    assert done.messages[-1].content == f"booked Lumen in process {b.process.pid}"
    with redis_client.Redis(host="127.0.0.1", port=redis.port) as store:
        assert store.exists("agui:blob:alice/t") == 0  # taken by the run that resumed


# -- the example -------------------------------------------------------------------------------


@synced
async def test_the_example_hands_off_looks_up_and_books_once_approved() -> None:
    with serving_app(desk.app) as url:
        async with AGUIClient(url) as client:
            ui = await client.fold(_input(UserMessage(id="u1", content="hotels in Lisbon")))
            assert ui.messages[-1].content == "Lumen, Aurora"
            ask = _input(*ui.messages, UserMessage(id="u2", content="book Lumen"), run_id="r2")
            ui = await client.fold(ask)
            assert ui.outcome is not None
            assert ui.outcome.type == "interrupt"
            [interrupt] = ui.outcome.interrupts
            answer = ResumeEntry(
                interrupt_id=interrupt.id, status="resolved", payload={"approved": True}
            )
            ui = await client.fold(_input(*ui.messages, run_id="r3", resume=[answer]))
    assert ui.messages[-1].content == "Booked a room at Lumen."


@synced
async def test_a_durable_log_replays_the_run_as_its_client_read_it() -> None:
    given = _input(UserMessage(id="u1", content="hotels in Lisbon"), run_id="r-durable")
    live, replayed = await live_and_replayed(desk.agent, given)
    assert types(replayed) == types(live)
    assert fold(replayed).messages[-1].content == "Lumen, Aurora"


# -- backpressure --------------------------------------------------------------------------------


def _talking(pulled: list[int]) -> ModelStep:
    """A model step that streams `CHUNKS` text deltas of `CHUNK` bytes, noting each one pulled."""
    scripted = _stream_events_for_step(
        ModelStep(output=[assistant_message("x")]), preserve_raw_usage=False
    )

    async def stream(call: ModelCall) -> AsyncIterator[TResponseStreamEvent]:
        del call
        for event in scripted:
            if not isinstance(event, ResponseTextDeltaEvent):
                yield event
                continue
            for number in range(CHUNKS):
                pulled.append(number)
                yield event.model_copy(update={"delta": "x" * CHUNK})

    return ModelStep.stream(stream)


def test_a_client_that_stops_reading_holds_agui_s_queue_at_its_mark_not_the_sdks() -> None:
    pulled: list[int] = []
    model = ScriptedModel([_talking(pulled)])
    bridge = openai_agents(Agent(name="talker", model=model))

    # Past the mark the bridge waits in `ctx.writable()`; the SDK's own task reads the model to
    # its end meanwhile, into a queue of the SDK's that has no bound.
    stalled_read(bridge, _input(), pulled, upstream_ahead=True)
