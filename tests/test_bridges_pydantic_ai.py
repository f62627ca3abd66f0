"""The pydantic-ai bridge: a pydantic-ai `Agent` served as an agui agent.

The models are pydantic-ai's own `FunctionModel` (scripted in the test) or its OpenAI model
pointed at the scripted endpoint on loopback: no network, no key. Collected from Python 3.11 on
(`conftest.py`), where the `dev` extra installs pydantic-ai: a missing framework fails there.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import ag_ui.core
import openai
import pytest
from examples.bridges import pydantic_ai_app as shopping
from pydantic import BaseModel, JsonValue
from pydantic_ai import Agent, CustomEvent, ModelRetry, ToolReturn
from pydantic_ai import RunContext as ToolContext
from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError
from pydantic_ai.messages import ModelMessage, NativeToolCallPart
from pydantic_ai.models.function import (
    AgentInfo,
    BuiltinToolCallsReturns,
    DeltaThinkingCalls,
    DeltaThinkingPart,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.ui import StateDeps

from agui import Event, RunAgentInput, run
from agui.bridges import pydantic_ai
from agui.client import AGUIClient
from agui.events import RunErrorEvent, StateDeltaEvent, StateSnapshotEvent
from agui.messages import Message, ToolMessage, UserMessage
from agui.testing import assert_valid, collect, fold, serving
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
from fake_endpoint import FakeEndpoint, Reply
from fake_endpoint import serving as serving_model
from test_backpressure import CHUNK, CHUNKS

Piece = str | DeltaToolCalls | DeltaThinkingCalls | BuiltinToolCallsReturns
Script = AsyncIterator[Piece]


@dataclass
class Scripted:
    """A FunctionModel stream: each model call takes the next turn; the calls are counted."""

    turns: list[list[Piece]]
    calls: int = 0
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    wait_after: int | None = None  # park the stream after this many pieces of the first turn

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> Script:
        del messages, info
        turn = self.turns[self.calls]
        self.calls += 1
        for number, piece in enumerate(turn):
            if number == self.wait_after:
                await self.gate.wait()
            yield piece


def _input(
    *messages: Message,
    run_id: str = "r1",
    resume: list[ResumeEntry] | None = None,
    state: JsonValue = None,
    tools: list[Tool] | None = None,
) -> RunAgentInput:
    history = list(messages) or [UserMessage(id="u1", content="Hi")]
    return RunAgentInput(
        thread_id="t", run_id=run_id, messages=history, resume=resume, state=state, tools=tools
    )


def _call(name: str, args: str, call_id: str) -> dict[int, DeltaToolCall]:
    return {0: DeltaToolCall(name=name, json_args=args, tool_call_id=call_id)}


@synced
async def test_text_tool_calls_and_results_map_onto_verified_agui_events() -> None:
    script = Scripted(
        [
            [
                "Let me ",
                "look.",
                {0: DeltaToolCall(name="weather", json_args='{"city":', tool_call_id="c1")},
                {0: DeltaToolCall(json_args='"Seoul"}')},
            ],
            ["It is 21C."],
        ]
    )
    agent = Agent(FunctionModel(stream_function=script))

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"21C in {city}"

    given = _input()
    events = await collect(pydantic_ai(agent), given)
    assert_valid(events, input=given)
    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    start = events[5].model_dump(by_alias=True, exclude_none=True)
    assert start["toolCallId"] == "c1"  # the framework's id, verbatim: the client echoes it
    assert start["parentMessageId"] == events[1].model_dump(by_alias=True)["messageId"]
    ui = fold(events, messages=given.messages)
    assert [m.role for m in ui.messages] == ["user", "assistant", "tool", "assistant"]
    assert ui.messages[2].content == "21C in Seoul"
    assert ui.messages[-1].content == "It is 21C."
    assert script.calls == 2


@synced
async def test_thinking_parts_become_reasoning_blocks() -> None:
    script = Scripted(
        [[{0: DeltaThinkingPart(content="Hmm, ")}, {0: DeltaThinkingPart(content="greet.")}, "Hi!"]]
    )
    events = await collect(pydantic_ai(Agent(FunctionModel(stream_function=script))), _input())
    assert_valid(events)
    assert types(events)[1:6] == [
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
    ]  # fmt: skip
    assert fold(events).messages[-1].content == "Hi!"


@synced
async def test_a_structured_output_is_the_runs_result() -> None:
    class Answer(BaseModel):
        city: str

    script = Scripted([[_call("final_result", '{"city": "Seoul"}', "out1")]])
    agent = Agent(FunctionModel(stream_function=script), output_type=Answer)
    events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    finished = terminal(events).model_dump(by_alias=True, exclude_none=True)
    assert finished["result"] == {"city": "Seoul"}
    assert finished["outcome"] == {"type": "success"}  # the output call is answered, not pending


@synced
async def test_a_tool_the_client_offers_ends_the_run_with_its_call_pending() -> None:
    script = Scripted([[_call("confirm", '{"question": "Sure?"}', "c9")]])
    given = _input(tools=[Tool(name="confirm", description="Ask the user")])
    events = await collect(pydantic_ai(Agent(FunctionModel(stream_function=script))), given)
    assert_valid(events, input=given)
    outcome = terminal(events).model_dump(by_alias=True, exclude_none=True)["outcome"]
    assert outcome == {"type": "success", "pendingToolCallIds": ["c9"]}


def _approval_agent(script: Scripted, ran: list[dict[str, JsonValue]]) -> Agent[None, str]:
    agent = Agent(FunctionModel(stream_function=script))

    @agent.tool_plain(requires_approval=True)
    def book(hotel: str) -> str:
        ran.append({"hotel": hotel})
        return f"booked {hotel}"

    return agent


@synced
async def test_a_tool_that_requires_approval_ends_the_run_with_an_interrupt() -> None:
    ran: list[dict[str, JsonValue]] = []
    script = Scripted([[_call("book", '{"hotel": "Lumen"}', "c1")]])
    given = _input()
    events = await collect(pydantic_ai(_approval_agent(script, ran)), given)
    assert_valid(events, input=given)
    outcome = terminal(events).model_dump(by_alias=True, exclude_none=True)["outcome"]
    assert outcome["type"] == "interrupt"
    [interrupt] = outcome["interrupts"]
    assert (interrupt["id"], interrupt["reason"], interrupt["toolCallId"]) == (
        "int-c1", "tool_call", "c1"
    )  # fmt: skip
    assert interrupt["responseSchema"]["required"] == ["approved"]
    assert ran == []


async def _resumed(
    payload: JsonValue, ran: list[dict[str, JsonValue]], *, app_answer: str | None = None
) -> list[Event]:
    """The approval's run, then its resume; `app_answer`: the app's tool message for the call."""
    script = Scripted([[_call("book", '{"hotel": "Lumen"}', "c1")], ["Done."]])
    agent = pydantic_ai(_approval_agent(script, ran))
    first = _input()
    history = fold(await collect(agent, first), messages=first.messages).messages
    if app_answer is not None:
        history.append(ToolMessage(id="app-1", tool_call_id="c1", content=app_answer))
    answer = ResumeEntry(interrupt_id="int-c1", status="resolved", payload=payload)
    second = _input(*history, run_id="r2", resume=[answer])
    events = await collect(agent, second)
    assert_valid(events, input=second)
    return events


@synced
async def test_an_approved_call_runs_the_tool_with_edited_arguments() -> None:
    ran: list[dict[str, JsonValue]] = []
    events = await _resumed({"approved": True, "editedArgs": {"hotel": "Aurora"}}, ran)
    assert ran == [{"hotel": "Aurora"}]
    results = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert [(r["toolCallId"], r["content"]) for r in results] == [("c1", "booked Aurora")]
    assert terminal(events).model_dump(by_alias=True)["outcome"]["type"] == "success"


@synced
async def test_a_declined_call_does_not_run_the_tool() -> None:
    ran: list[dict[str, JsonValue]] = []
    events = await _resumed({"approved": False, "reason": "too dear"}, ran)
    assert ran == []
    [result] = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == "c1"
    assert "too dear" in result["content"]


@synced
async def test_an_approval_the_app_also_answered_with_a_tool_message_is_taken_from_resume() -> None:
    """CopilotKit's `useInterrupt` sends a tool message for the call as well as `resume[]`."""
    ran: list[dict[str, JsonValue]] = []
    events = await _resumed({"approved": True}, ran, app_answer='{"approved":true}')
    assert ran == [{"hotel": "Lumen"}]
    assert terminal(events).model_dump(by_alias=True)["outcome"]["type"] == "success"
    declined: list[dict[str, JsonValue]] = []
    await _resumed({"approved": False}, declined, app_answer='{"approved":false}')
    assert declined == []


@synced
async def test_a_malformed_resume_payload_ends_the_run_with_invalid_input() -> None:
    ran: list[dict[str, JsonValue]] = []
    script = Scripted([["never"]])
    answer = ResumeEntry(interrupt_id="int-c1", status="resolved", payload={"approved": "yes"})
    events = await collect(pydantic_ai(_approval_agent(script, ran)), _input(resume=[answer]))
    assert_valid(events)
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == "INVALID_INPUT"
    assert "approved" not in error.message  # the detail is for the log and debug mode
    assert (ran, script.calls) == ([], 0)


class Board(BaseModel):
    items: list[str] = []
    notes: str = ""


@synced
async def test_a_state_a_tool_changes_reaches_the_client_as_a_delta() -> None:
    script = Scripted(
        [[_call("add", '{"item": "milk"}', "c1")], [_call("add", '{"item": "eggs"}', "c2")], ["ok"]]
    )
    agent = Agent(FunctionModel(stream_function=script), deps_type=StateDeps[Board])

    @agent.tool
    def add(ctx: ToolContext[StateDeps[Board]], item: str) -> str:
        ctx.deps.state.items.append(item)
        return "added"

    shared = StateDeps(Board())
    notes = "a state large enough that a patch is smaller than a snapshot " * 3
    given = _input(state={"items": ["bread"], "notes": notes})
    events = await collect(pydantic_ai(agent, deps=shared), given)
    assert_valid(events, input=given)
    state_events = [e for e in events if isinstance(e, StateSnapshotEvent | StateDeltaEvent)]
    assert [e.type for e in state_events] == ["STATE_SNAPSHOT", "STATE_DELTA", "STATE_DELTA"]
    assert fold(events).state == {"items": ["bread", "milk", "eggs"], "notes": notes}
    assert shared.state.items == []  # each run has its own copy of the deps


@synced
async def test_a_tool_that_raises_ends_the_run_without_its_text() -> None:
    script = Scripted([["Working", _call("leak", "{}", "c1")], ["never"]])
    agent = Agent(FunctionModel(stream_function=script))

    @agent.tool_plain
    def leak() -> str:
        message = "password=sk-secret-123"
        raise ValueError(message)

    events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == "AGENT_ERROR"
    assert "sk-secret" not in json.dumps([e.model_dump(mode="json") for e in events])
    assert script.calls == 1


@synced
async def test_a_tool_retry_goes_back_to_the_model_as_a_result() -> None:
    script = Scripted([[_call("pick", '{"n": 7}', "c1")], ["fine"]])
    agent = Agent(FunctionModel(stream_function=script))

    @agent.tool_plain
    def pick(n: int) -> str:
        message = f"{n} is not allowed"
        raise ModelRetry(message)

    events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    [result] = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_RESULT"]
    assert "7 is not allowed" in result["content"]
    assert fold(events).messages[-1].content == "fine"


@synced
async def test_a_framework_error_closes_the_open_message_before_run_error() -> None:
    async def broken(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        del messages, info
        yield "partial "
        message = "internal host db-7:5432"
        raise RuntimeError(message)

    events = await collect(pydantic_ai(Agent(FunctionModel(stream_function=broken))), _input())
    assert_valid(events)
    assert types(events)[-3:] == ["TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_ERROR"]
    assert "db-7" not in events[-1].model_dump_json()


@synced
async def test_a_model_that_answers_500_ends_the_run_with_model_unavailable() -> None:
    endpoint = FakeEndpoint([Reply(status=500, pieces=[b'{"error": "key sk-secret"}'])])
    async with (
        serving_model(endpoint, "/v1") as url,
        openai.AsyncOpenAI(base_url=url, api_key="test", max_retries=0) as client,
    ):
        model = OpenAIChatModel("scripted", provider=OpenAIProvider(openai_client=client))
        events = await collect(pydantic_ai(Agent(model)), _input())
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'scripted' answered HTTP 500")
    assert len(endpoint.requests) == 1


@synced
async def test_a_client_that_leaves_mid_run_stops_the_model() -> None:
    script = Scripted([["Hello", " world", _call("slow", "{}", "c1")], ["never"]], wait_after=1)
    agent = Agent(FunctionModel(stream_function=script))
    ran: list[str] = []

    @agent.tool_plain
    def slow() -> str:
        ran.append("slow")
        return "done"

    stream = run(pydantic_ai(agent), _input())
    seen = [await anext(stream) for _ in range(3)]
    assert types(seen) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    await stream.aclose()
    script.gate.set()
    await asyncio.sleep(0.05)
    assert (script.calls, ran) == (1, [])


@synced
async def test_a_cancelled_run_ends_cancelled_and_stops_the_model() -> None:
    script = Scripted([["Hello", " world"], ["never"]], wait_after=1)
    agent = pydantic_ai(Agent(FunctionModel(stream_function=script)))
    await cancelled_after(agent, _input(), 3)
    script.gate.set()
    await asyncio.sleep(0.05)
    assert script.calls == 1


@synced
async def test_importing_the_bridges_imports_no_framework() -> None:
    code = (
        "import sys, agui, agui.bridges; "
        "print(sorted(m for m in ('pydantic_ai', 'agents') if m in sys.modules))"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await process.communicate()
    assert out.decode().strip() == "[]"


@pytest.mark.parametrize("status", [401, 429])
@synced
async def test_a_refused_model_call_is_coded_by_its_status(status: int) -> None:
    async def refused(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        del messages, info
        if status:  # always: the first step of this stream raises
            raise ModelHTTPError(status, "scripted", body={"secret": "sk-1"})
        yield ""

    events = await collect(pydantic_ai(Agent(FunctionModel(stream_function=refused))), _input())
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    codes = {401: "MODEL_AUTHENTICATION", 429: "MODEL_RATE_LIMITED"}
    assert error.code == codes[status]
    assert "sk-1" not in error.message


@synced
async def test_a_model_that_cannot_be_reached_ends_the_run_with_model_unavailable() -> None:
    async def unreachable(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        del info
        if messages:  # always: the first step of this stream raises
            name, refused = "scripted", "connect to 10.0.0.7 refused"
            raise ModelAPIError(name, refused)
        yield ""

    agent = Agent(FunctionModel(stream_function=unreachable))
    events = await collect(pydantic_ai(agent), _input())
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'scripted' could not be reached")


@synced
async def test_arguments_that_come_only_as_deltas_and_provider_native_parts() -> None:
    native: BuiltinToolCallsReturns = {
        0: NativeToolCallPart(tool_name="web_search", args={"q": "x"}, tool_call_id="n1")
    }
    script = Scripted(
        [[native, {1: DeltaToolCall(name="weather", tool_call_id="c1")},
          {1: DeltaToolCall(json_args='{"city": "Oslo"}')}], ["Sunny."]]
    )  # fmt: skip
    agent = Agent(FunctionModel(stream_function=script))

    @agent.tool_plain
    def weather(city: str) -> str:
        return city

    events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    assert types(events)[1:6] == [
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
    ]  # fmt: skip  # the provider's own tool has no AG-UI call: it ran at the provider
    assert fold(events).messages[-1].content == "Sunny."


@synced
async def test_interleaved_argument_deltas_of_an_ended_call_are_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    script = Scripted(
        [[{0: DeltaToolCall(name="a", json_args='{"x":', tool_call_id="c1")},
          {1: DeltaToolCall(name="b", json_args="{}", tool_call_id="c2")},
          {0: DeltaToolCall(json_args="1}")}], ["ok"]]
    )  # fmt: skip
    agent = Agent(FunctionModel(stream_function=script))

    @agent.tool_plain
    def a(x: int) -> int:
        return x

    @agent.tool_plain
    def b() -> int:
        return 0

    with caplog.at_level("WARNING", logger="agui"):
        events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    assert "a delta of a part that is not open was dropped" in caplog.text
    assert fold(events).messages[-1].content == "ok"


@synced
async def test_arguments_given_whole_as_an_object_stream_as_json() -> None:
    agent = Agent(TestModel(call_tools=["weather"], custom_output_text="Done."))

    @agent.tool_plain
    def weather(city: str) -> str:
        return city

    events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    [arguments] = [e.model_dump(by_alias=True) for e in events if e.type == "TOOL_CALL_ARGS"]
    assert json.loads(arguments["delta"]) == {"city": "a"}


# -- the example -------------------------------------------------------------------------------


@synced
async def test_the_example_keeps_its_list_in_the_apps_state_and_asks_before_clearing() -> None:
    with serving(shopping.app) as url:
        async with AGUIClient(url) as client:
            first = _input(UserMessage(id="u1", content="add milk"))
            ui = await client.fold(first)
            assert ui.state == {"items": ["milk"]}
            assert ui.messages[-1].content == "Added milk; the list has 1 items."
            ask = _input(
                *ui.messages, UserMessage(id="u2", content="clear"), run_id="r2", state=ui.state
            )
            ui = await client.fold(ask)
            assert ui.outcome is not None
            assert ui.outcome.type == "interrupt"
            [interrupt] = ui.outcome.interrupts
            answer = ResumeEntry(
                interrupt_id=interrupt.id, status="resolved", payload={"approved": True}
            )
            approve = _input(*ui.messages, run_id="r3", resume=[answer], state=ui.state)
            ui = await client.fold(approve)
    assert ui.state == {"items": []}
    assert ui.messages[-1].content == "Cleared the list."


@synced
async def test_a_durable_log_replays_the_run_as_its_client_read_it() -> None:
    given = _input(UserMessage(id="u1", content="add milk"), run_id="r-durable")
    live, replayed = await live_and_replayed(shopping.agent, given)
    assert types(replayed) == types(live)
    assert fold(replayed).messages[-1].content == "Added milk; the list has 1 items."


@dataclass(kw_only=True)
class Progress(CustomEvent):
    done: int


@dataclass(kw_only=True)
class Audit(CustomEvent, ui=False):
    who: str


@synced
async def test_events_a_tool_returns_or_emits_reach_the_client_verified() -> None:
    script = Scripted([[_call("report", "{}", "c1")], ["ok"]])
    agent = Agent(FunctionModel(stream_function=script), deps_type=type(None))

    @agent.tool
    async def report(ctx: ToolContext[None]) -> ToolReturn:
        await ctx.emit(Progress(done=1))
        await ctx.emit(Audit(who="server only"))
        snapshot = ag_ui.core.StateSnapshotEvent(snapshot={"stage": "reported"})
        return ToolReturn(return_value="reported", metadata=[snapshot])

    events = await collect(pydantic_ai(agent), _input())
    assert_valid(events)
    custom = [e.model_dump(by_alias=True) for e in events if e.type == "CUSTOM"]
    assert [(c["name"], c["value"]) for c in custom] == [("progress", {"done": 1})]
    assert fold(events).state == {"stage": "reported"}
    assert "server only" not in json.dumps([e.model_dump(mode="json") for e in events])


# -- backpressure --------------------------------------------------------------------------------


def test_a_client_that_stops_reading_stops_the_bridge_pulling_the_models_stream() -> None:
    pulled: list[int] = []

    async def talk(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        del messages, info
        for number in range(CHUNKS):
            pulled.append(number)
            yield "x" * CHUNK

    bridge = pydantic_ai(Agent(FunctionModel(stream_function=talk)))

    # Past the mark the bridge waits in `ctx.writable()`, and pydantic-ai pulls no more.
    assert stalled_read(bridge, _input(), pulled) < CHUNKS
