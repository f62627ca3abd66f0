"""The LangGraph bridge: a compiled LangGraph graph with a checkpointer served as an agui agent.

The chat models are `langchain-openai`'s `ChatOpenAI` pointed at the scripted endpoint on
loopback, or the example's scripted stand-in where a test needs no HTTP: no network, no key.
Collected from Python 3.11 on (`conftest.py`), where the `dev` extra installs LangGraph: a
missing LangGraph fails there.
"""

# LangGraph's builder methods carry parameters of partly unknown types (its cache policy).
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
import json
import operator
import sys
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Literal, cast

import ag_ui.core as foreign
import httpx
import httpx2  # the openai SDK's HTTP client
import openai
import pytest
from ag_ui.core import RunAgentInput as ForeignInput
from ag_ui_langgraph import LangGraphAgent
from examples.bridges import langgraph_app as desk
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, BaseMessage, HumanMessage
from langchain_core.messages import ToolMessage as LangChainToolMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Send, interrupt
from pydantic import BaseModel, JsonValue

from agui import Event, RunAgentInput, RunContext, asgi_app, parse_event, run
from agui.bridges import foreign_input, from_events, langgraph
from agui.client import AGUIClient
from agui.client._parser import SSEParser
from agui.errors import UsageError
from agui.events import RunErrorEvent, StateDeltaEvent
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
    UrlSource,
    UserMessage,
)
from agui.messages import ToolMessage as AguiToolMessage
from agui.runs import MemoryRunLog
from agui.testing import assert_valid, collect, fold, serving
from agui.types import ResumeEntry
from bridge_runs import assert_coded_error, cancelled_after, stalled_read, synced, terminal, types
from fake_endpoint import FakeEndpoint, Reply
from fake_endpoint import serving as serving_endpoint
from node_clients import node, run_script
from test_backpressure import CHUNK, CHUNKS
from test_backpressure import INPUT as BIG_INPUT
from test_hitl_clients import CLIENTS, drive
from test_openai import sse

Json = dict[str, JsonValue]
picture = UrlSource(value="https://example.com/a.png")


def _input(
    *messages: Message,
    run_id: str = "r1",
    resume: list[ResumeEntry] | None = None,
    state: JsonValue = None,
) -> RunAgentInput:
    history = list(messages) or [UserMessage(id="u1", content="Hi")]
    return RunAgentInput(thread_id="t", run_id=run_id, messages=history, resume=resume, state=state)


def _unstepped(events: list[Event]) -> list[str]:
    """The stream's event types, less the steps of the graph's nodes."""
    return [kind for kind in types(events) if not kind.startswith("STEP_")]


def _chunk(delta: Json, finish: str | None = None) -> Json:
    choice: Json = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [choice]}  # fmt: skip


def _call(piece: str, call_id: str | None = None) -> Json:
    call: Json = {"index": 0, "function": {"arguments": piece}}
    if call_id is not None:
        call = {**call, "id": call_id, "type": "function",
                "function": {"name": "weather", "arguments": piece}}  # fmt: skip
    return _chunk({"tool_calls": [call]})


def _chat(url: str) -> ChatOpenAI:
    """`ChatOpenAI` on the scripted endpoint at `url`, never retrying."""
    return ChatOpenAI.model_validate(
        {"model": "scripted", "base_url": url, "api_key": "test", "max_retries": 0}
    )


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"21C in {city}"


class StreamingModel(BaseChatModel):
    """A chat model whose answer is what `pieces()` streams, in the loop, with no I/O."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> ChatResult:
        raise NotImplementedError  # the graphs here stream

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> AsyncIterator[ChatGenerationChunk]:
        del messages, stop, run_manager, kwargs
        async for piece in self.pieces():
            yield ChatGenerationChunk(message=piece)

    def pieces(self) -> AsyncIterator[AIMessageChunk]:
        """The answer's chunks."""
        raise NotImplementedError

    @property
    def _llm_type(self) -> str:
        return type(self).__name__


def _agent_graph(model: ChatOpenAI) -> StateGraph[MessagesState]:
    bound = model.bind_tools([weather])

    async def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def route(state: MessagesState) -> Literal["tools", "__end__"]:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "__end__"

    builder = StateGraph(MessagesState)
    builder.add_node(chat)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "chat")
    builder.add_conditional_edges("chat", route)
    builder.add_edge("tools", "chat")
    return builder


async def _served_graph(
    replies: list[Reply], *given: RunAgentInput
) -> tuple[list[list[Event]], FakeEndpoint]:
    """Each input run in turn on one graph whose `ChatOpenAI` talks to the scripted endpoint."""
    endpoint = FakeEndpoint(replies)
    runs: list[list[Event]] = []
    async with serving_endpoint(endpoint, "/v1") as url:
        model = _chat(url)
        agent = langgraph(_agent_graph(model).compile(checkpointer=InMemorySaver()))
        for one in given:
            runs.append(await collect(agent, one))  # noqa: PERF401 - each waits for the last
    return runs, endpoint


_LOOK_UP = sse(
    _chunk({"role": "assistant", "content": "Let me look."}),
    _call("", "c1"),
    _call('{"city": '),
    _call('"Seoul"}'),
    _chunk({}, "tool_calls"),
)
_ANSWER = sse(
    _chunk({"role": "assistant", "content": "It is "}), _chunk({"content": "21C."}, "stop")
)


@synced
async def test_streamed_text_tool_calls_and_results_map_onto_verified_agui_events() -> None:
    given = _input(UserMessage(id="u1", content="Weather in Seoul?"))
    [events], _ = await _served_graph([_LOOK_UP, _ANSWER], given)
    assert_valid(events, input=given)
    assert types(events) == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "STEP_FINISHED", "STEP_STARTED",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED", "STEP_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]  # fmt: skip
    steps = [e.model_dump(by_alias=True)["stepName"] for e in events if e.type == "STEP_STARTED"]
    assert steps == ["chat", "tools", "chat"]  # each node's task, a step
    start = events[5].model_dump(by_alias=True, exclude_none=True)
    assert (start["toolCallId"], start["toolCallName"]) == ("c1", "weather")
    assert start["parentMessageId"] == events[2].model_dump(by_alias=True)["messageId"]
    ui = fold(events, messages=given.messages)
    assert [m.role for m in ui.messages] == ["user", "assistant", "tool", "assistant"]
    assert [ui.messages[2].content, ui.messages[3].content] == ["21C in Seoul", "It is 21C."]


@synced
async def test_the_clients_messages_are_the_input_and_the_thread_is_the_checkpointers() -> None:
    first = _input(UserMessage(id="u1", content="Weather in Seoul?"))
    replies = [_LOOK_UP, _ANSWER, sse(_chunk({"content": "Still 21C."}, "stop"))]
    endpoint = FakeEndpoint(replies)
    async with serving_endpoint(endpoint, "/v1") as url:
        model = _chat(url)
        graph = _agent_graph(model).compile(checkpointer=InMemorySaver())
        agent = langgraph(graph)
        history = fold(await collect(agent, first), messages=first.messages).messages
        again = UserMessage(id="u2", content="And now?")
        events = await collect(agent, _input(*history, again, run_id="r2"))
    assert fold(events).messages[-1].content == "Still 21C."
    sent = endpoint.requests[-1]["messages"]
    assert isinstance(sent, list)
    said = [m["content"] for m in sent if isinstance(m, dict) and m["role"] == "user"]
    assert said == ["Weather in Seoul?", "And now?"]  # each once: the thread held the first
    held = await graph.aget_state({"configurable": {"thread_id": "t"}})
    assert [m.id for m in held.values["messages"]][:1] == ["u1"]


@synced
async def test_a_history_from_another_server_becomes_the_graphs_messages() -> None:
    call = ToolCall(id="c0", function=FunctionCall(name="weather", arguments='{"city":"Oslo"}'))
    history: list[Message] = [
        UserMessage(id="u0", content="Weather in Oslo?"),
        AssistantMessage(id="a0", tool_calls=[call]),
    ]
    reply = sse(_chunk({"content": "Oslo it is."}, "stop"))
    answer = AguiToolMessage(id="t0", tool_call_id="c0", content="3C in Oslo")
    [events], endpoint = await _served_graph([reply], _input(*history, answer))
    assert fold(events).messages[-1].content == "Oslo it is."
    sent = endpoint.requests[0]["messages"]
    assert isinstance(sent, list)
    assert [m["role"] for m in sent if isinstance(m, dict)] == ["user", "assistant", "tool"]


class Counter(BaseModel):
    """A state whose label makes a patch smaller than a snapshot."""

    count: int = 0
    label: str = "a counter whose label makes a patch smaller than a snapshot"


class Tally(MessagesState):
    count: int
    label: str
    seen: Annotated[list[str], operator.add]


def _tally() -> StateGraph[Tally]:
    def bump(state: Tally) -> dict[str, object]:
        return {"count": state.get("count", 0) + 1, "seen": ["bump"],
                "messages": [AIMessage(f"now {state.get('count', 0) + 1}")]}  # fmt: skip

    builder = StateGraph(Tally)
    builder.add_node(bump)
    builder.add_edge(START, "bump")
    return builder


@synced
async def test_the_graphs_state_reaches_the_client_as_deltas() -> None:
    agent = langgraph(_tally().compile(checkpointer=InMemorySaver()))
    given = _input(state=Counter(count=41).model_dump())
    events = await collect(agent, given)
    assert_valid(events, input=given)
    assert [kind for kind in types(events) if kind.startswith("STATE")] == [
        "STATE_SNAPSHOT", "STATE_DELTA"
    ]  # fmt: skip
    [delta] = [e for e in events if isinstance(e, StateDeltaEvent)]
    assert [op.model_dump(mode="json", exclude_none=True) for op in delta.delta] == [
        {"op": "replace", "path": "/count", "value": 42},
        {"op": "add", "path": "/seen/0", "value": "bump"},
    ]
    ui = fold(events, messages=given.messages, state=given.state)
    assert ui.state == {**Counter(count=42).model_dump(), "seen": ["bump"]}


@synced
async def test_state_the_client_sends_back_unchanged_is_not_taken_twice_by_a_reducer() -> None:
    agent = langgraph(_tally().compile(checkpointer=InMemorySaver()))
    first = _input(state={"count": 1})
    ui = fold(await collect(agent, first), messages=first.messages, state=first.state)
    second = _input(
        *ui.messages, UserMessage(id="u2", content="Again"), run_id="r2", state=ui.state
    )
    ui = fold(await collect(agent, second), messages=second.messages, state=second.state)
    assert ui.state == {"count": 3, "seen": ["bump", "bump"]}


@synced
async def test_an_agent_without_a_checkpointer_is_refused_when_built() -> None:
    with pytest.raises(UsageError, match="compile it with one"):
        langgraph(_tally().compile())


@synced
async def test_text_of_every_role_reaches_the_model_and_the_rest_is_left_out() -> None:
    call = ToolCall(id="c0", function=FunctionCall(name="weather", arguments="{not json"))
    history: list[Message] = [
        SystemMessage(id="s", content="Be brief."),
        DeveloperMessage(id="d", content="No tables."),
        ReasoningMessage(id="r", content="private"),
        UserMessage(id="u", content=[TextPart(text="Look: "), ImagePart(source=picture)]),
        AssistantMessage(id="a", tool_calls=[call]),
        AguiToolMessage(id="t", tool_call_id="c0", content="3C"),
    ]
    [events], endpoint = await _served_graph([sse(_chunk({"content": "Noted."}, "stop"))],
                                             _input(*history))  # fmt: skip
    assert fold(events).messages[-1].content == "Noted."
    sent = endpoint.requests[0]["messages"]
    assert isinstance(sent, list)
    assert [(m["role"], m.get("content")) for m in sent if isinstance(m, dict)] == [
        ("system", "Be brief."), ("system", "No tables."), ("user", "Look: "),
        ("assistant", None), ("tool", "3C"),
    ]  # fmt: skip
    assert json.dumps(sent).count('"arguments": "{}"') == 1  # the unreadable arguments


@synced
async def test_a_stream_with_text_around_calls_and_a_stray_argument_stays_verified(
    caplog: pytest.LogCaptureFixture,
) -> None:
    second: Json = {"index": 1, "id": "c2", "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}  # fmt: skip
    turn = sse(
        _chunk({"role": "assistant", "content": "Looking"}),
        _call('{"city": ', "c1"),
        _chunk({"tool_calls": [second]}),
        _call('"Rome"}'),
        _chunk({"content": " late"}),
        _chunk({}, "tool_calls"),
    )
    given = _input(UserMessage(id="u1", content="Weather?"))
    with caplog.at_level("WARNING", logger="agui"):
        [events], _ = await _served_graph([turn, sse(_chunk({"content": "Sunny."}, "stop"))], given)
    assert_valid(events, input=given)
    texts = [
        e.model_dump(by_alias=True)["messageId"] for e in events if e.type == "TEXT_MESSAGE_START"
    ]
    assert texts[1] == texts[0] + "-2"  # the text after the calls, a message of its own
    ui = fold(events, messages=given.messages)
    assert [m.content for m in ui.messages if m.role == "tool"] == ["21C in Rome", "21C in Oslo"]
    assert "arguments of a call that is not open were dropped" in caplog.text


@synced
async def test_messages_a_node_returns_whole_are_sent_and_known_ones_are_not() -> None:
    oslo = {"id": "c1", "name": "weather", "args": {"city": "Oslo"}}
    rome = {"id": "c2", "name": "weather", "args": {"city": "Rome"}}

    def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [
            state["messages"][0],  # the client's own message, sent back
            HumanMessage("a note of the graph's"),
            AIMessage("Checking.", tool_calls=[oslo]),
            LangChainToolMessage("3C", tool_call_id="c1"),
            AIMessage("", tool_calls=[rome]),
        ]}  # fmt: skip

    builder = StateGraph(MessagesState).add_node(answer).add_edge(START, "answer")
    given = _input()
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), given)
    assert_valid(events, input=given)
    assert _unstepped(events) == [  # the nodes' steps aside
        "RUN_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    assert [m.role for m in fold(events, messages=given.messages).messages] == [
        "user", "assistant", "tool", "assistant"
    ]  # fmt: skip


@synced
async def test_models_streaming_at_once_in_parallel_nodes_send_whole_interleaved_messages() -> None:
    english_model = GenericFakeChatModel(messages=iter([AIMessage("one two three four")]))
    spanish_model = GenericFakeChatModel(messages=iter([AIMessage("uno dos tres cuatro")]))
    # Neither goes on past its first word before the other has said its own.
    spoke = {"english": asyncio.Event(), "spanish": asyncio.Event()}

    async def speak(
        model: BaseChatModel, me: str, other: str, state: MessagesState
    ) -> dict[str, list[BaseMessage]]:
        pieces: list[BaseMessage] = []
        async for piece in model.astream(state["messages"]):
            pieces.append(piece)
            if len(pieces) == 1:
                spoke[me].set()
                await spoke[other].wait()
        said = "".join(str(piece.content) for piece in pieces)
        return {"messages": [AIMessage(said, id=pieces[0].id)]}  # the message it streamed

    async def english(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return await speak(english_model, "english", "spanish", state)

    async def spanish(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return await speak(spanish_model, "spanish", "english", state)

    builder = StateGraph(MessagesState).add_node(english).add_node(spanish)
    builder.add_edge(START, "english").add_edge(START, "spanish")
    given = _input()
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), given)
    assert_valid(events, input=given)
    starts = [i for i, kind in enumerate(types(events)) if kind == "TEXT_MESSAGE_START"]
    assert len(starts) == 2
    assert types(events)[starts[1] - 1] == "TEXT_MESSAGE_CONTENT"  # the first still streaming
    said = sorted(str(m.content) for m in fold(events).messages)
    assert said == ["one two three four", "uno dos tres cuatro"]


@synced
async def test_a_message_a_node_stops_reading_mid_stream_ends_with_the_nodes_step() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("one two three four")]))

    async def impatient(state: MessagesState) -> dict[str, list[BaseMessage]]:
        async for _piece in model.astream(state["messages"]):
            break  # the first word is enough
        return {"messages": [AIMessage("Enough.", id="enough")]}

    builder = StateGraph(MessagesState).add_node(impatient).add_edge(START, "impatient")
    given = _input()
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), given)
    assert_valid(events, input=given)
    assert _unstepped(events) == [  # the nodes' steps aside
        "RUN_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",  # the word read, its message left open
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",  # what the node said
        "TEXT_MESSAGE_END",  # the step over: the word's message ended
        "RUN_FINISHED",
    ]  # fmt: skip
    assert [m.content for m in fold(events).messages] == ["one", "Enough."]


class Thinker(StreamingModel):
    """A chat model that reasons, in Anthropic's form, before it answers."""

    async def pieces(self) -> AsyncIterator[AIMessageChunk]:
        anthropic = {"model_provider": "anthropic"}
        for thought in ("Paris is ", "in France."):
            block = {"type": "thinking", "thinking": thought, "index": 0}
            yield AIMessageChunk(content=[block], response_metadata=anthropic)
        yield AIMessageChunk(content="Paris.")


@synced
async def test_a_models_reasoning_and_a_nodes_reasoning_become_reasoning_blocks() -> None:
    model = Thinker()

    async def think(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def recall(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        noted = AIMessage("", additional_kwargs={"reasoning_content": "Checked twice."})
        return {"messages": [noted]}

    builder = StateGraph(MessagesState).add_node(think).add_node(recall)
    builder.add_edge(START, "think").add_edge("think", "recall")
    given = _input()
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), given)
    assert_valid(events, input=given)
    assert _unstepped(events) == [  # the nodes' steps aside
        "RUN_STARTED",
        "REASONING_START", "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    ui = fold(events, messages=given.messages)
    assert [(m.role, m.content) for m in ui.messages[1:]] == [
        ("reasoning", "Paris is in France."), ("assistant", "Paris."),
        ("reasoning", "Checked twice."),
    ]  # fmt: skip


@synced
async def test_a_fan_out_to_one_node_is_one_step_and_parallel_nodes_steps_interleave() -> None:
    def fan_out(state: MessagesState) -> list[Send]:
        return [Send("echo", state), Send("echo", state), Send("quick", state)]

    async def echo(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        await asyncio.sleep(0.05)
        return {}

    def quick(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        return {}

    builder = StateGraph(MessagesState).add_node(echo).add_node(quick)
    builder.add_conditional_edges(START, fan_out, ["echo", "quick"])
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), _input())
    assert_valid(events)
    steps = [(e.type, e.model_dump(by_alias=True)["stepName"]) for e in events if "STEP" in e.type]
    assert steps == [
        ("STEP_STARTED", "echo"), ("STEP_STARTED", "quick"),
        ("STEP_FINISHED", "quick"), ("STEP_FINISHED", "echo"),
    ]  # fmt: skip


class Slow(StreamingModel):
    """A chat model that says its first word at once and its second a moment later."""

    async def pieces(self) -> AsyncIterator[AIMessageChunk]:
        yield AIMessageChunk(content="Still")
        await asyncio.sleep(0.2)
        yield AIMessageChunk(content=" here.")


@synced
async def test_a_node_that_ends_ends_its_own_messages_not_those_another_node_streams() -> None:
    model = Slow()

    async def talk(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def note(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        await asyncio.sleep(0.05)  # ends while `talk`'s model is between its words
        return {}

    builder = StateGraph(MessagesState).add_node(talk).add_node(note)
    builder.add_edge(START, "talk").add_edge(START, "note")
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), _input())
    assert_valid(events)
    assert _unstepped(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    assert fold(events).messages[-1].content == "Still here."


class Pantry(BaseModel):
    """A pydantic state: the graph's values stream as this model."""

    messages: Annotated[list[AnyMessage], add_messages] = []
    items: list[str] = []


@synced
async def test_a_pydantic_state_is_published_like_a_typed_dict() -> None:
    def stock(state: Pantry) -> dict[str, list[str]]:
        return {"items": [*state.items, "milk"]}

    builder = StateGraph(Pantry).add_node(stock).add_edge(START, "stock")
    given = _input(state={"items": ["eggs"]})
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), given)
    assert fold(events, state=given.state).state == {"items": ["eggs", "milk"]}


# -- interrupts --------------------------------------------------------------------------------


def _asking(booked: list[JsonValue]) -> StateGraph[MessagesState]:
    def book(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        answer = interrupt(
            {"message": "Book Lumen?", "reason": "tool_call", "toolCallId": "c9"},
            response_schema={"type": "object", "properties": {"approved": {"type": "boolean"}}},
        )
        booked.append(answer)
        return {"messages": [AIMessage("Booked." if answer else "Not booked.", id="done")]}

    builder = StateGraph(MessagesState)
    builder.add_node(book)
    builder.add_edge(START, "book")
    return builder


@synced
async def test_an_interrupt_ends_the_run_with_an_interrupt_outcome_and_its_schema() -> None:
    booked: list[JsonValue] = []
    events = await collect(
        langgraph(_asking(booked).compile(checkpointer=InMemorySaver())), _input()
    )
    assert_valid(events)
    outcome = terminal(events).model_dump(by_alias=True, exclude_none=True)["outcome"]
    [asked] = outcome["interrupts"]
    assert outcome["type"] == "interrupt"
    assert (asked["reason"], asked["message"], asked["toolCallId"]) == (
        "tool_call",
        "Book Lumen?",
        "c9",
    )
    assert asked["responseSchema"] == {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}},
    }
    assert booked == []


async def _resumed(entry: ResumeEntry | None, booked: list[JsonValue]) -> list[Event]:
    agent = langgraph(_asking(booked).compile(checkpointer=InMemorySaver()))
    first = await collect(agent, _input())
    asked = terminal(first).model_dump(by_alias=True)["outcome"]["interrupts"][0]["id"]
    resume = None if entry is None else [entry.model_copy(update={"interrupt_id": asked})]
    second = _input(run_id="r2", resume=resume)
    events = await collect(agent, second)
    assert_valid(events, input=second)
    return events


@synced
async def test_an_answer_in_resume_resumes_the_graph_with_its_payload() -> None:
    booked: list[JsonValue] = []
    answer = ResumeEntry(interrupt_id="?", status="resolved", payload={"approved": True})
    events = await _resumed(answer, booked)
    assert booked == [{"approved": True}]
    assert fold(events).messages[-1].content == "Booked."


@synced
async def test_a_cancelled_answer_resumes_the_graph_with_none() -> None:
    booked: list[JsonValue] = []
    events = await _resumed(ResumeEntry(interrupt_id="?", status="cancelled"), booked)
    assert booked == [None]
    assert fold(events).messages[-1].content == "Not booked."


@synced
async def test_a_run_that_does_not_answer_is_interrupted_again() -> None:
    booked: list[JsonValue] = []
    events = await _resumed(None, booked)
    assert terminal(events).model_dump(by_alias=True)["outcome"]["type"] == "interrupt"
    assert booked == []


def _two_questions(answers: dict[str, JsonValue]) -> StateGraph[MessagesState]:
    def hotel(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        answers["hotel"] = interrupt("hotel?")
        return {}

    def flight(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        answers["flight"] = interrupt("flight?")
        return {}

    builder = StateGraph(MessagesState).add_node(hotel).add_node(flight)
    return builder.add_edge(START, "hotel").add_edge(START, "flight")


@synced
async def test_interrupts_of_parallel_nodes_are_one_outcome_and_each_answer_resumes_its_own() -> (
    None
):
    answers: dict[str, JsonValue] = {}
    agent = langgraph(_two_questions(answers).compile(checkpointer=InMemorySaver()))
    first = terminal(await collect(agent, _input())).model_dump(by_alias=True)["outcome"]
    asked = {interrupt["message"]: interrupt["id"] for interrupt in first["interrupts"]}
    assert sorted(asked) == ["flight?", "hotel?"]
    hotel = ResumeEntry(interrupt_id=asked["hotel?"], status="resolved", payload="Lumen")
    second = await collect(agent, _input(run_id="r2", resume=[hotel]))
    [left] = terminal(second).model_dump(by_alias=True)["outcome"]["interrupts"]
    assert (left["message"], answers) == ("flight?", {"hotel": "Lumen"})
    flight = ResumeEntry(interrupt_id=left["id"], status="resolved", payload="TP 123")
    third = await collect(agent, _input(run_id="r3", resume=[flight]))
    assert terminal(third).model_dump(by_alias=True)["outcome"] == {"type": "success"}
    assert answers == {"hotel": "Lumen", "flight": "TP 123"}


@pytest.mark.parametrize(("schema", "title"), [(Counter, "Counter"), (None, None)])
@synced
async def test_an_interrupt_whose_value_is_text_and_schema_a_model_or_none_is_read(
    schema: type[Counter] | None, title: str | None
) -> None:
    def confirm(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        interrupt("Go on?", response_schema=schema)
        return {}

    builder = StateGraph(MessagesState).add_node(confirm).add_edge(START, "confirm")
    events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), _input())
    [asked] = terminal(events).model_dump(by_alias=True)["outcome"]["interrupts"]
    assert (asked["reason"], asked["message"], asked["metadata"]) == (
        "interrupt", "Go on?", {"value": "Go on?"}
    )  # fmt: skip
    assert asked.get("responseSchema", {}).get("title") == title


# -- failures ----------------------------------------------------------------------------------


@synced
async def test_a_node_that_raises_closes_the_open_message_and_shows_no_text() -> None:
    endpoint = FakeEndpoint([sse(_chunk({"content": "Half an ans"}), done=False)])
    async with serving_endpoint(endpoint, "/v1") as url:
        model = _chat(url)

        async def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
            async for _piece in model.astream(state["messages"]):
                message = "password=sk-secret-123"
                raise ValueError(message)
            return {}

        builder = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat")
        events = await collect(langgraph(builder.compile(checkpointer=InMemorySaver())), _input())
    assert_valid(events)
    assert types(events)[-4:] == [
        "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_ERROR"
    ]  # fmt: skip
    error = terminal(events)
    assert isinstance(error, RunErrorEvent)
    assert error.code == "AGENT_ERROR"
    assert "sk-secret" not in json.dumps([e.model_dump(mode="json") for e in events])


@synced
async def test_a_model_that_answers_500_ends_the_run_with_model_unavailable() -> None:
    failing = Reply(
        status=500, pieces=[b'{"error": "key sk-secret"}'], content_type=b"application/json"
    )
    [events], endpoint = await _served_graph([failing], _input())
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'scripted' answered HTTP 500")
    assert len(endpoint.requests) == 1


@synced
async def test_a_model_that_cannot_be_reached_ends_the_run_with_model_unavailable() -> None:
    async with serving_endpoint(FakeEndpoint([])) as url:
        closed = url
    model = _chat(closed)
    events = await collect(
        langgraph(_agent_graph(model).compile(checkpointer=InMemorySaver())), _input()
    )
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'scripted' could not be reached")


def _gated(gate: asyncio.Event, calls: list[str]) -> StateGraph[MessagesState]:
    async def first(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        calls.append("first")
        await gate.wait()
        return {"messages": [AIMessage("one", id="m1")]}

    def second(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        calls.append("second")
        return {"messages": [AIMessage("two", id="m2")]}

    builder = StateGraph(MessagesState).add_node(first).add_node(second)
    return builder.add_edge(START, "first").add_edge("first", "second")


@synced
async def test_a_client_that_leaves_mid_run_stops_the_graph() -> None:
    gate, calls = asyncio.Event(), list[str]()
    stream = run(langgraph(_gated(gate, calls).compile(checkpointer=InMemorySaver())), _input())
    seen = [await anext(stream)]
    assert types(seen) == ["RUN_STARTED"]
    await asyncio.sleep(0.05)  # the first node is running
    await stream.aclose()
    gate.set()
    await asyncio.sleep(0.1)
    assert calls == ["first"]


@synced
async def test_a_cancelled_run_ends_cancelled_and_stops_the_graph() -> None:
    gate, calls = asyncio.Event(), list[str]()
    agent = langgraph(_gated(gate, calls).compile(checkpointer=InMemorySaver()))
    await cancelled_after(agent, _input(), 1)
    gate.set()
    await asyncio.sleep(0.1)
    assert calls == ["first"]


@synced
async def test_a_task_cancelled_without_its_token_still_stops_the_graph() -> None:
    gate, calls = asyncio.Event(), list[str]()
    agent = langgraph(_gated(gate, calls).compile(checkpointer=InMemorySaver()))
    ctx, _ = RunContext.new(_input())
    ctx.init_state()
    task = asyncio.ensure_future(agent(ctx))
    await asyncio.sleep(0.05)  # the first node is running
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    await asyncio.sleep(0.1)
    assert (calls, ctx.token.cancelled) == (["first"], False)


def _raising(error: Exception) -> StateGraph[MessagesState]:
    def fail(state: MessagesState) -> dict[str, list[BaseMessage]]:
        del state
        raise error

    return StateGraph(MessagesState).add_node(fail).add_edge(START, "fail")


@synced
async def test_a_failure_with_no_request_body_to_name_the_model_says_unknown() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat", content=b"not json")
    failure = openai.InternalServerError(
        "key sk-secret", response=httpx2.Response(502, request=request), body=None
    )
    events = await collect(
        langgraph(_raising(failure).compile(checkpointer=InMemorySaver())), _input()
    )
    assert_coded_error(events, "MODEL_UNAVAILABLE", "the model 'unknown' answered HTTP 502")


@synced
async def test_without_the_openai_sdk_loaded_a_failure_is_the_frameworks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    graph = _raising(RuntimeError("internal host db-7")).compile(checkpointer=InMemorySaver())
    events = await collect(langgraph(graph), _input())
    assert_coded_error(events, "AGENT_ERROR", terminal(events).model_dump()["message"])
    assert "db-7" not in json.dumps([e.model_dump(mode="json") for e in events])


class Talker(StreamingModel):
    """A chat model that streams `CHUNKS` chunks of `CHUNK` bytes, noting each it makes."""

    made: list[int] = []  # noqa: RUF012 - pydantic copies a field's default per instance

    async def pieces(self) -> AsyncIterator[AIMessageChunk]:
        for number in range(CHUNKS):
            self.made.append(number)
            yield AIMessageChunk(content="x" * CHUNK)


def test_a_client_that_stops_reading_holds_agui_s_queue_at_its_mark_not_the_graphs() -> None:
    model = Talker()

    async def talk(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    bridge = langgraph(
        StateGraph(MessagesState)
        .add_node(talk)
        .add_edge(START, "talk")
        .compile(checkpointer=InMemorySaver())
    )
    # The rest waits in LangGraph's own queue, which has no bound.
    stalled_read(bridge, BIG_INPUT, model.made, upstream_ahead=True)


# -- the official adapter, compared -------------------------------------------------------------
# `ag-ui-langgraph`'s `LangGraphAgent`, its structured interrupt on, served through `from_events`:
# what the bridge maps natively instead, and why (the bridges guide says which is chosen).


# The adapter calls an API LangGraph 1.0 deprecated (to be removed in 2.0); the suite makes
# every warning an error, so these tests let that one through.
uses_a_deprecated_api = pytest.mark.filterwarnings("ignore:`get_config_jsonschema` is deprecated")


def _official(graph: object) -> Callable[[ForeignInput], AsyncIterator[foreign.BaseEvent]]:
    def factory(given: ForeignInput) -> AsyncIterator[foreign.BaseEvent]:
        agent = LangGraphAgent(
            name="graph", graph=cast("CompiledStateGraph[MessagesState]", graph),
            emit_interrupt_outcome=True,
            enable_legacy_on_interrupt_event=False, emit_raw_events=False,
        )  # fmt: skip
        return cast("AsyncIterator[foreign.BaseEvent]", agent.run(given))

    return factory


def _streams_then_fails() -> CompiledStateGraph[MessagesState]:
    async def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
        async for _piece in desk.model.astream(
            [LangChainToolMessage("Half an answer", tool_call_id="c")]
        ):
            message = "password=sk-secret-123"
            raise ValueError(message)
        del state
        return {}

    builder = StateGraph(MessagesState).add_node(chat).add_edge(START, "chat")
    return builder.compile(checkpointer=InMemorySaver())


@uses_a_deprecated_api
@synced
async def test_the_official_adapter_sends_the_exception_text_and_leaves_its_message_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("CRITICAL"):  # the adapter logs the failure with its traceback
        raw = [event async for event in _official(_streams_then_fails())(foreign_input(_input()))]
    wire = [event.model_dump(mode="json", by_alias=True, exclude_none=True) for event in raw]
    assert [event["type"] for event in wire][-3:] == [
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "RUN_ERROR"
    ]  # fmt: skip
    assert wire[-1]["message"] == "password=sk-secret-123"
    with caplog.at_level("CRITICAL"):
        relayed = await collect(from_events(_official(_streams_then_fails())), _input())
        native = await collect(langgraph(_streams_then_fails()), _input())
    assert_coded_error(relayed, "UPSTREAM_ERROR", terminal(relayed).model_dump()["message"])
    assert_coded_error(native, "AGENT_ERROR", terminal(native).model_dump()["message"])
    for events in (relayed, native):
        assert "sk-secret" not in json.dumps([e.model_dump(mode="json") for e in events])


@uses_a_deprecated_api
@synced
async def test_the_official_adapter_drops_the_interrupts_schema_which_from_events_cannot_mend() -> (
    None
):
    relayed = await collect(
        from_events(_official(_asking([]).compile(checkpointer=InMemorySaver()))), _input()
    )
    native = await collect(langgraph(_asking([]).compile(checkpointer=InMemorySaver())), _input())
    [lost] = terminal(relayed).model_dump(by_alias=True)["outcome"]["interrupts"]
    [kept] = terminal(native).model_dump(by_alias=True)["outcome"]["interrupts"]
    assert (lost["message"], lost["toolCallId"]) == (kept["message"], kept["toolCallId"])
    assert (lost.get("responseSchema"), kept["responseSchema"]["type"]) == (None, "object")


@uses_a_deprecated_api
@synced
async def test_the_official_adapter_sends_state_as_snapshots_holding_the_messages_again() -> None:
    given = _input(state=Counter(count=41).model_dump())
    raw = [
        e
        async for e in _official(_tally().compile(checkpointer=InMemorySaver()))(
            foreign_input(given)
        )
    ]
    kinds = [getattr(event, "type", None) for event in raw]
    snapshots = [event.snapshot for event in raw if isinstance(event, foreign.StateSnapshotEvent)]
    assert foreign.EventType.STATE_DELTA not in kinds
    assert all("messages" in snapshot for snapshot in snapshots)
    native = await collect(langgraph(_tally().compile(checkpointer=InMemorySaver())), given)
    assert types(native).count("STATE_DELTA") == 1
    assert all(
        "messages" not in json.dumps(e.model_dump(mode="json"))
        for e in native
        if e.type.startswith("STATE")
    )


# -- the example -------------------------------------------------------------------------------


async def _booked(client: AGUIClient) -> list[Message]:
    ui = await client.fold(_input(UserMessage(id="u1", content="hotels in Lisbon")))
    assert ui.messages[-1].content == "Lumen, Aurora"
    ask = _input(*ui.messages, UserMessage(id="u2", content="book Lumen"), run_id="r2")
    ui = await client.fold(ask)
    assert ui.outcome is not None
    assert ui.outcome.type == "interrupt"
    [asked] = ui.outcome.interrupts
    assert asked.message == "Book a room at Lumen?"
    answer = ResumeEntry(interrupt_id=asked.id, status="resolved", payload={"approved": True})
    ui = await client.fold(_input(*ui.messages, run_id="r3", resume=[answer]))
    assert ui.state == {"bookings": ["Lumen"]}
    return ui.messages


@synced
async def test_the_example_looks_up_and_books_once_approved() -> None:
    with serving(asgi_app(langgraph(desk.builder.compile(checkpointer=InMemorySaver())))) as url:
        async with AGUIClient(url) as client:
            messages = await _booked(client)
    assert messages[-1].content == "Booked a room at Lumen."


@synced
async def test_a_second_reader_of_a_durable_run_resumes_it_by_last_event_id() -> None:
    given = _input(UserMessage(id="u1", content="hotels in Porto"), run_id="r-durable")
    app = asgi_app(
        langgraph(desk.builder.compile(checkpointer=InMemorySaver())), runs=MemoryRunLog()
    )
    with serving(app) as url:
        async with AGUIClient(url) as client:
            live = await client.run(given)
        async with httpx.AsyncClient(timeout=30) as http:
            later = await http.get(f"{url}runs/r-durable/events", headers={"last-event-id": "4"})
    rest = [parse_event(data) for data in SSEParser().feed(later.content)]
    assert types(rest) == types(live)[4:]
    assert fold(live).messages[-1].content == "Ribeira"


# -- the official TypeScript client, 1.0.0 and 0.0.59 (CopilotKit's) ------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_the_example_books_once_the_typescript_client_approves(client: str) -> None:
    app = asgi_app(langgraph(desk.builder.compile(checkpointer=InMemorySaver())))
    with serving(app) as url:
        result = drive({"AGUI_GRAPH_URL": url}, client, "graph")
    outcomes = [run["outcome"]["type"] if run["outcome"] else "none" for run in result["runs"]]
    assert (result["error"], outcomes) == (None, ["success", "interrupt", "success"])
    assert result["runs"][1]["pendingInterrupts"][0]["id"] != ""
    assert result["runs"][-1]["pendingInterrupts"] == []
    assert result["state"] == {"bookings": ["Lumen"]}
    assert result["messages"][-1]["content"] == "Booked a room at Lumen."
    assert result["complaints"] == []


# -- CopilotKit's runtime, through the graph's approval ------------------------------------------


def test_copilotkit_books_through_the_graphs_interrupt_once_approved() -> None:
    found = node("@copilotkit/runtime", "the CopilotKit tests")
    app = asgi_app(langgraph(desk.builder.compile(checkpointer=InMemorySaver())))
    with serving(app) as url:
        result = run_script(
            found,
            ["copilotkit-langgraph.mjs"],
            {
                "AGUI_GRAPH_URL": url,
                "AGUI_SCENARIO": "approve",
                # CopilotKit's runtime reports usage to its vendor unless told not to.
                "COPILOTKIT_TELEMETRY_DISABLED": "true",
                "DO_NOT_TRACK": "1",
            },
        )
    assert (result["errors"], result["complaints"], result["duplicateMessageIds"]) == ([], [], [])
    [asked] = result["asked"]["pendingInterrupts"]
    assert asked["message"] == "Book a room at Lumen?"
    assert result["sent"]["resume"] == [
        {"interruptId": asked["id"], "status": "resolved", "payload": {"approved": True}}
    ]
    assert result["pendingInterrupts"] == []
    assert result["state"] == {"bookings": ["Lumen"]}
    assert result["messages"][-1]["content"] == "Booked a room at Lumen."
