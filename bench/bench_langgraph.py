"""Benchmark: serving a LangGraph graph, natively or through the official adapter, CPU per event.

Run: `.venv/bin/python bench/bench_langgraph.py [--rounds 11]` (with the `langgraph` extra and
`ag-ui-langgraph[fastapi]`, as the `dev` extra installs them; Python 3.11 or later).

Workload: a graph of a model node, a `ToolNode` and the model again, on a checkpointer. Its
stand-in chat model streams, with no I/O, 400 text chunks and one tool call in 40 argument
chunks, then, once the tool answered, 400 more text chunks. Each contender is one whole run on a
fresh thread, timed whole:

- graph, the reference: LangGraph alone, `graph.astream(stream_mode=["messages", "values",
  "tasks"])` read to its end: the framework's own cost of the stream the bridge reads.
- native, the target: `agui.bridges.langgraph(graph)`, that stream mapped onto agui's handles
  in a fresh run context (the verifier live, the events queued).
- adapter: `agui.bridges.from_events` over `ag-ui-langgraph`'s `LangGraphAgent` (its structured
  interrupt on, raw events off), which reads `astream_events(version="v2")`.

**Method.** One process and one event loop. Each contender runs once to warm up; a round then
runs each once, in an order that rotates from round to round, with `gc.collect()` before each
run. Times are the benchmark thread's CPU time (`time.thread_time`; the stand-in model runs in
the loop, not in a worker thread). **Report.** Per contender: the median over rounds of its
ratio to the graph alone, with min-max; the events it sent; microseconds per sent event.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import platform
import statistics
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from itertools import count
from typing import Literal, cast

from ag_ui.core import RunAgentInput as ForeignInput
from ag_ui_langgraph import LangGraphAgent
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import StreamMode
from pydantic import JsonValue

from agui import RunAgentInput, RunContext
from agui.bridges import from_events, langgraph
from agui.messages import UserMessage

TEXT_CHUNKS = 400
ARGUMENT_CHUNKS = 40

Contender = Callable[[str], Awaitable[int]]
"""One whole run on the thread named; the number of events it sent."""

clock = time.thread_time


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {len(query)} characters"


class StandIn(BaseChatModel):
    """A chat model that streams its scripted answer in the loop, with no I/O."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> ChatResult:
        raise NotImplementedError  # the graph streams

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> AsyncIterator[ChatGenerationChunk]:
        del stop, kwargs
        for piece in _pieces(answered=isinstance(messages[-1], ToolMessage)):
            if run_manager is not None and isinstance(piece.content, str) and piece.content:
                await run_manager.on_llm_new_token(piece.content, chunk=_chunk(piece))
            yield _chunk(piece)

    @property
    def _llm_type(self) -> str:
        return "stand-in"


def _chunk(piece: AIMessageChunk) -> ChatGenerationChunk:
    return ChatGenerationChunk(message=piece)


def _pieces(*, answered: bool) -> Iterator[AIMessageChunk]:
    for number in range(TEXT_CHUNKS):
        yield AIMessageChunk(content=f"word{number} ")
    if answered:
        return
    name: str | None = "lookup"
    for number in range(ARGUMENT_CHUNKS):
        text = '{"query": "' if number == 0 else ("x" if number < ARGUMENT_CHUNKS - 1 else '"}')
        made = tool_call_chunk(name=name, args=text, id="call-1" if name else None, index=0)
        yield AIMessageChunk(content="", tool_call_chunks=[made])
        name = None


def _graph() -> CompiledStateGraph[MessagesState]:
    model = StandIn()

    async def chat(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def route(state: MessagesState) -> Literal["tools", "__end__"]:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "__end__"

    builder = StateGraph(MessagesState)
    builder.add_node(chat)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode([lookup]))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "chat")
    builder.add_conditional_edges("chat", route)
    builder.add_edge("tools", "chat")
    return builder.compile(checkpointer=InMemorySaver())  # pyright: ignore[reportUnknownMemberType]


def _input(thread: str) -> RunAgentInput:
    question = UserMessage(id=f"{thread}-u", content="Look it up")
    return RunAgentInput(thread_id=thread, run_id=f"{thread}-r", messages=[question])


async def _agui_run(
    agent: Callable[[RunContext[JsonValue]], Awaitable[object]], thread: str
) -> int:
    ctx = RunContext.new(_input(thread))[0]
    ctx.init_state()
    await agent(ctx)
    return len(ctx.receiver.drain())


def contenders() -> dict[str, Contender]:
    """Each contender's run."""
    graph = _graph()
    native = langgraph(graph)

    def official(given: ForeignInput) -> AsyncIterator[object]:
        agent = LangGraphAgent(
            name="bench",
            graph=graph,
            emit_interrupt_outcome=True,
            enable_legacy_on_interrupt_event=False,
            emit_raw_events=False,
        )
        return cast("AsyncIterator[object]", agent.run(given))

    adapter = from_events(official).run

    async def alone(thread: str) -> int:
        question: MessagesState = {"messages": [HumanMessage("Look it up")]}
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        modes: list[StreamMode] = ["messages", "values", "tasks"]  # what the bridge reads
        stream = graph.astream(question, config, stream_mode=modes, version="v2")  # pyright: ignore[reportUnknownMemberType]
        return sum([1 async for _ in stream])

    async def served(thread: str) -> int:
        return await _agui_run(native, thread)

    async def relayed(thread: str) -> int:
        return await _agui_run(adapter, thread)

    return {"graph": alone, "native": served, "adapter": relayed}


async def measure(rounds: int) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Each contender's CPU time per round, and the events it sends."""
    runs = contenders()
    names = list(runs)
    threads = map("thread-{}".format, count())
    sent = {name: await runs[name](next(threads)) for name in names}  # warm up
    times: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names[index % len(names) :] + names[: index % len(names)]:
            gc.collect()
            start = clock()
            await runs[name](next(threads))
            times[name].append(clock() - start)
    return times, sent


def report(times: dict[str, list[float]], sent: dict[str, int]) -> None:
    """Print each contender's ratio to the graph alone and its CPU per sent event."""
    reference = times["graph"]
    print(f"{'contender':<10} {'x graph (median, min-max)':>28} {'events':>8} {'us/event':>10}")
    for name, values in times.items():
        ratios = [value / base for value, base in zip(values, reference, strict=True)]
        spread = f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
        per_event = statistics.median(values) / sent[name] * 1e6
        print(f"{name:<10} {spread:>28} {sent[name]:>8} {per_event:>10.2f}")


def main() -> None:
    """Parse the options, measure, report."""
    parser = argparse.ArgumentParser(description="serving a LangGraph graph: CPU per event")
    parser.add_argument("--rounds", type=int, default=11)
    rounds = parser.parse_args().rounds
    print(
        f"Python {platform.python_version()}, langgraph {importlib.metadata.version('langgraph')}, "
        f"{rounds} rounds, CPU time"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the adapter's use of a 1.0 API
        report(*asyncio.run(measure(rounds)))


if __name__ == "__main__":
    main()
