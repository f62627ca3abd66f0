"""The LangGraph bridge: a compiled LangGraph graph with a checkpointer, served as an agui agent.

Each run is `graph.astream(..., stream_mode=["messages", "values", "tasks"])` on the checkpointer's
thread named by the run's thread id, mapped natively (the messages in `_langgraph_messages`,
out in `_langgraph_stream`, the nodes' steps in `_langgraph_steps`):

| LangGraph | agui |
|---|---|
| the client's messages the thread does not hold yet | the graph's input, `{"messages": [...]}` |
| the client's state | the graph's input too, beside the messages |
| a model's streamed reasoning, text, tool calls | `REASONING_*`, `TEXT_MESSAGE_*`, `TOOL_CALL_*` |
| a `ToolMessage` a node returns | `TOOL_CALL_RESULT` |
| a node's task starting and ending | `STEP_STARTED`, `STEP_FINISHED` named for the node |
| the graph's state after each step, less its messages | `ctx.publish_state()`: `STATE_DELTA` |
| `interrupt(value, response_schema=...)` in a node | the `interrupt` outcome, one per interrupt |
| the next run's `resume[]` answering them | `Command(resume={interrupt id: payload})` |

Everything else agui's run driver gives: a node that raises ends the run with a coded
`RUN_ERROR` and no exception text, the open message or call closed first; a model's HTTP
failure is `MODEL_*`; a client that leaves, or a cancel, closes the graph's stream, which
cancels its running nodes, so the model is not called again; between events the bridge waits
for the client to read (`ctx.writable()`), which paces the graph.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Generic, Literal, Protocol, cast

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Command, StreamMode
from langgraph.types import Interrupt as GraphInterrupt
from langgraph.typing import ContextT, InputT, OutputT, StateT
from pydantic import BaseModel, JsonValue
from pydantic_core import to_jsonable_python

from agui.bridges._failure import model_failure
from agui.bridges._langgraph_messages import langchain_messages
from agui.bridges._langgraph_steps import NodeSteps, ended_node
from agui.bridges._langgraph_stream import GraphMessages
from agui.context import RunContext
from agui.errors import Cancelled, ModelError, UsageError
from agui.runner import AgentFunction
from agui.types import Interrupt, RunOutcome

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["langgraph"]


class _Streaming(Protocol):
    """What the bridge calls of a compiled graph's stream, typed as `version="v2"` yields it."""

    def astream(
        self,
        input: object,  # noqa: A002 - LangGraph's name
        config: RunnableConfig,
        *,
        stream_mode: list[StreamMode],
        version: Literal["v2"],
    ) -> AsyncGenerator[Mapping[str, object], None]: ...


_STREAM: list[StreamMode] = ["messages", "values", "tasks"]
_MESSAGES = "messages"
_TASKS = "tasks"


def langgraph(
    graph: Pregel[StateT, ContextT, InputT, OutputT], *, config: RunnableConfig | None = None
) -> AgentFunction[JsonValue]:
    """An agui agent that runs the compiled LangGraph `graph` for each run.

    The graph's state has a `messages` channel (with the `add_messages` reducer, as
    `MessagesState` has), and the graph a checkpointer: the run's thread id is the
    checkpointer's thread, so a thread goes on where it stopped. `config` is merged into each
    run's config (a `recursion_limit`, tags). A node that calls `interrupt(value)` ends the run
    with the `interrupt` outcome, one interrupt per pending `interrupt()` (its id LangGraph's):
    the next run that answers one in `resume[]` resumes the graph with the answer's payload
    (`None` for an answer `cancelled`).

    Examples:
        >>> import asyncio
        >>> from langchain_core.messages import AIMessage
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from langgraph.graph import START, MessagesState, StateGraph
        >>> from agui import RunAgentInput
        >>> from agui.messages import UserMessage
        >>> from agui.testing import collect, fold
        >>> def greet(state: MessagesState) -> dict[str, list[AIMessage]]:
        ...     return {"messages": [AIMessage("Hello there!")]}
        >>> builder = StateGraph(MessagesState).add_node(greet).add_edge(START, "greet")
        >>> agent = langgraph(builder.compile(checkpointer=InMemorySaver()))
        >>> given = RunAgentInput(
        ...     thread_id="t", run_id="r", messages=[UserMessage(id="u", content="Hi")]
        ... )
        >>> fold(asyncio.run(collect(agent, given))).messages[-1].content
        'Hello there!'
    """
    saver: object = getattr(graph, "checkpointer", None)
    if not isinstance(saver, BaseCheckpointSaver):
        message = (
            "agui.bridges.langgraph serves a graph compiled with a checkpointer, which keeps "
            "each thread between runs: compile it with one, such as "
            "graph.compile(checkpointer=InMemorySaver())"
        )
        raise UsageError(message)
    extra = config or {}

    async def run(ctx: RunContext[JsonValue]) -> RunOutcome | None:
        thread: RunnableConfig = {
            **extra,
            "configurable": {**extra.get("configurable", {}), "thread_id": ctx.thread_id},
        }
        return await _Run(ctx, graph, thread).drive()

    return run


class _Run(Generic[StateT, ContextT, InputT, OutputT]):
    """One run: the graph's input, its stream, and its outcome."""

    def __init__(
        self,
        ctx: RunContext[JsonValue],
        graph: Pregel[StateT, ContextT, InputT, OutputT],
        config: RunnableConfig,
    ) -> None:
        self._ctx = ctx
        self._graph = graph
        self._config = config

    async def drive(self) -> RunOutcome | None:
        """Run the graph; a model's HTTP failure becomes agui's coded error."""
        try:
            return await self._drive()
        except Exception as error:
            failure = _model_failure(error)
            if failure is None:
                raise
            raise failure from error

    async def _drive(self) -> RunOutcome | None:
        ctx = self._ctx
        before = await self._graph.aget_state(self._config)
        found: object = getattr(before, "values", None)
        values = cast("dict[str, object]", found if isinstance(found, dict) else {})
        held = cast("list[BaseMessage]", values.get(_MESSAGES, []))
        known = {message.id for message in held if message.id}
        given = self._input(before.interrupts, known, values)
        streaming = asyncio.ensure_future(self._stream(given))
        stopped: list[bool] = []

        def stop() -> None:  # a cancel stops the graph's nodes where they are
            stopped.append(True)
            streaming.cancel()

        ctx.token.on_cancel(stop)
        try:
            await streaming  # our own cancel (the client left) reaches the stream's task too
        except asyncio.CancelledError:
            if not stopped:
                raise
            raise Cancelled(ctx.token.reason or "the run was cancelled") from None
        after = await self._graph.aget_state(self._config)
        if not after.interrupts:
            return None
        return RunOutcome.interrupt([_interrupt(pending) for pending in after.interrupts])

    async def _stream(self, given: object) -> None:
        """Read the graph's stream to its end, closed on every way out (its nodes cancelled)."""
        ctx = self._ctx
        messages, steps = GraphMessages(ctx), NodeSteps(ctx)
        graph = cast("_Streaming", self._graph)
        stream = graph.astream(given, self._config, stream_mode=_STREAM, version="v2")
        async with aclosing(stream):
            async for part in stream:
                data = part["data"]
                if part["type"] == _MESSAGES:
                    messages.take(*cast("tuple[BaseMessage, object]", data))
                elif part["type"] == _TASKS:
                    task = cast("Mapping[str, object]", data)
                    if (node := ended_node(task)) is not None:
                        messages.end(node)  # a node's task ended: its messages end before it
                    steps.take(task)
                else:
                    messages.end()  # a step of the graph ended
                    self._publish(data)
                await ctx.writable()
        messages.end()
        steps.end()

    def _input(
        self, pending: tuple[GraphInterrupt, ...], known: set[str], values: dict[str, object]
    ) -> object:
        """A `Command` resuming the answered interrupts, or the client's news as input.

        The news are the messages the thread does not hold and the state keys the client
        changed: a key it sends back as the graph published it is left out, so a channel with
        a reducer (`operator.add`) does not take it twice.
        """
        ctx = self._ctx
        answers: dict[str, object] = {}
        for waiting in pending:
            answer = ctx.resume_for(waiting.id)
            if answer is not None:
                answers[waiting.id] = answer.payload if answer.status == "resolved" else None
        if answers:
            return Command(resume=answers)
        news = [message for message in ctx.messages if message.id not in known]
        state = ctx.state if isinstance(ctx.state, dict) else {}
        changed = {
            key: value
            for key, value in state.items()
            if key != _MESSAGES and value != to_jsonable_python(values.get(key), fallback=str)
        }
        return {**changed, _MESSAGES: langchain_messages(news)}

    def _publish(self, values: object) -> None:
        """Publish the graph's state, less its messages (which the client has as messages).

        A graph's state is a mapping (a `TypedDict` state) or a model (a pydantic state).
        """
        fields = cast(
            "Mapping[str, object]", dict(values) if isinstance(values, BaseModel) else values
        )
        kept = {key: value for key, value in fields.items() if key != _MESSAGES}
        if not kept and not self._ctx.state:
            return  # a graph of messages alone: no state to show
        self._ctx.state = cast("JsonValue", to_jsonable_python(kept, fallback=str))
        self._ctx.publish_state()


def _interrupt(pending: GraphInterrupt) -> Interrupt:
    """The agui interrupt for a pending LangGraph `interrupt(value, response_schema=...)`.

    A dict value gives the interrupt's `message`, `reason` and `toolCallId` where it has them,
    and is kept whole as its `metadata`; a string value is the message.
    """
    value = cast("JsonValue", to_jsonable_python(pending.value, fallback=str))
    fields: dict[str, JsonValue] = value if isinstance(value, dict) else {"value": value}
    message = value if isinstance(value, str) else fields.get("message")
    reason = fields.get("reason")
    call_id = fields.get("toolCallId", fields.get("tool_call_id"))
    return Interrupt(
        id=pending.id,
        reason=reason if isinstance(reason, str) else "interrupt",
        message=message if isinstance(message, str) else None,
        tool_call_id=call_id if isinstance(call_id, str) else None,
        response_schema=_schema(pending.response_schema),
        metadata=fields,
    )


def _schema(schema: object) -> dict[str, JsonValue] | None:
    """A response schema as the JSON Schema LangGraph keeps (it converts a model's to one)."""
    if not isinstance(schema, dict):
        return None
    return cast("dict[str, JsonValue]", to_jsonable_python(schema, fallback=str))


def _model_failure(error: Exception) -> ModelError | None:
    """The agui coded error for an OpenAI client's HTTP failure inside a chat model; else `None`.

    `openai` is looked up only if something imported it: a graph on another provider's model
    has its failures end the run as the framework's (`AGENT_ERROR`).
    """
    openai = sys.modules.get("openai")
    if openai is None:
        return None
    if isinstance(error, openai.APIStatusError):
        status: object = getattr(error, "status_code", None)
        return model_failure(_model_name(error), status if isinstance(status, int) else None)
    if isinstance(error, openai.APIConnectionError):
        return model_failure(_model_name(error), None)
    return None


def _model_name(error: Exception) -> str:
    """The model the failed request asked for, read from its body."""
    request = getattr(error, "request", None)
    try:
        body: object = json.loads(getattr(request, "content", b"") or b"{}")
    except (ValueError, TypeError):
        body = {}
    fields = cast("dict[str, object]", body) if isinstance(body, dict) else {}
    name = fields.get("model")
    return name if isinstance(name, str) else "unknown"
