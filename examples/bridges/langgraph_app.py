"""A LangGraph graph served by agui: a booking desk that asks before it books.

Serve it with either of these, from the repository root (with the `langgraph` extra):

    agui serve examples/bridges/langgraph_app.py:agent
    uvicorn examples.bridges.langgraph_app:app

and talk to it with `agui watch http://127.0.0.1:8000/ -m "hotels in Lisbon"`.

The graph is a plain LangGraph graph with a checkpointer: a model node that calls tools, a
`ToolNode` that runs them, and a booking node that calls `interrupt()` and books only once the
user approves. agui serves it with the model's text and tool calls streamed, the graph's state
(the bookings made) sent as `STATE_DELTA`, the interrupt as the run's `interrupt` outcome that
the app answers in `resume[]`, coded errors, and a client that leaves cancelling the graph. The
chat model here is a scripted stand-in, so the example runs with no key: give the graph any
LangChain chat model instead, such as `ChatOpenAI(model="gpt-4.1-mini")`.
"""

# LangGraph's builder methods carry parameters of partly unknown types (its cache policy).
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from typing import Annotated, Literal, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt

import agui
from agui.bridges import langgraph

HOTELS = {"lisbon": ["Lumen", "Aurora"], "porto": ["Ribeira"]}
_numbers = itertools.count(1)


@tool
def find_hotels(city: str) -> str:
    """The hotels with rooms free in `city`."""
    found = HOTELS.get(city.strip().lower(), [])
    return ", ".join(found) if found else f"no hotels in {city}"


class Desk(MessagesState):
    """The graph's state: the conversation, and the bookings made (the client sees them)."""

    bookings: Annotated[list[str], operator.add]


class StandIn(BaseChatModel):
    """A scripted chat model: look hotels up, ask to book one, or say what a tool answered."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> ChatResult:
        del stop, run_manager, kwargs
        return ChatResult(generations=[ChatGeneration(message=reply(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> Iterator[ChatGenerationChunk]:
        del stop, run_manager, kwargs
        answer = reply(messages)
        words = answer.text.split(" ") if answer.text else []
        for number, word in enumerate(words):
            piece = word if number == 0 else " " + word
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        for index, call in enumerate(answer.tool_calls):
            arguments = f'{{"city": "{call["args"]["city"]}"}}'
            made = tool_call_chunk(name=call["name"], args=arguments, id=call["id"], index=index)
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[made]))

    def bind_tools(self, tools: Sequence[object], **kwargs: object) -> StandIn:
        """The stand-in knows its one tool already."""
        del tools, kwargs
        return self

    @property
    def _llm_type(self) -> str:
        return "stand-in"


def reply(messages: Sequence[BaseMessage]) -> AIMessage:
    """What the stand-in answers to the conversation so far."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(last.text)
    city = last.text.lower().removeprefix("hotels in ").strip()
    call = {"id": f"call-{next(_numbers)}", "name": "find_hotels", "args": {"city": city}}
    return AIMessage("", tool_calls=[call])


model = StandIn()


async def desk(state: Desk) -> dict[str, list[BaseMessage]]:
    """The model's turn."""
    return {"messages": [await model.ainvoke(state["messages"])]}


def book(state: Desk) -> dict[str, object]:
    """Book the hotel the user named, once they approve."""
    hotel = state["messages"][-1].text.removeprefix("book ").strip()
    answer: object = interrupt(
        {"message": f"Book a room at {hotel}?", "hotel": hotel},
        response_schema={"type": "object", "properties": {"approved": {"type": "boolean"}}},
    )
    if isinstance(answer, dict) and cast("dict[str, object]", answer).get("approved") is True:
        return {"messages": [AIMessage(f"Booked a room at {hotel}.")], "bookings": [hotel]}
    return {"messages": [AIMessage(f"I did not book {hotel}.")], "bookings": []}


def route(state: Desk) -> Literal["book", "desk"]:
    """A request to book goes to the booking node; anything else to the model."""
    return "book" if state["messages"][-1].text.startswith("book ") else "desk"


def after_desk(state: Desk) -> Literal["tools", "__end__"]:
    """The model's calls run; its answer ends the turn."""
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "__end__"


builder = StateGraph(Desk)
builder.add_node(desk)
builder.add_node(book)
builder.add_node("tools", ToolNode([find_hotels]))
builder.add_conditional_edges(START, route)
builder.add_conditional_edges("desk", after_desk)
builder.add_edge("tools", "desk")
graph = builder.compile(checkpointer=InMemorySaver())

agent = langgraph(graph)
"""The agui agent: `agui serve` serves it, `agui.run` and `agui.testing.collect` drive it."""

app = agui.asgi_app(agent)
