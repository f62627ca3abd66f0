"""The OpenAI Agents SDK bridge: an Agents SDK `Agent` served as an agui agent.

Each run is `Runner.run_streamed` on the client's history, turned into the SDK's input items
(`_openai_items`). The stream's events map onto agui's handles, one output item at a time (a
response streams its items in turn, each done before the next is added):

| Agents SDK | agui |
|---|---|
| a `message` item, its text (or refusal) deltas | `ctx.message()`: `TEXT_MESSAGE_*` |
| a `reasoning` item, its summary or text deltas | `ctx.reasoning()`: `REASONING_*` |
| a `function_call` item, its argument deltas | `ctx.tool_call(name, call_id=...)` |
| a `tool_output` or `handoff_occured` run item | `ctx.tool_result(call_id, output)` |
| the agent that runs (the first, then each handoff's) | `ctx.step(agent.name)`: `STEP_*` |
| `needs_approval` calls left in `interruptions` | the `interrupt` outcome |
| a call of one of the client's tools (`_openai_tools`) | no result: the run ends, it pending |

An interrupted run's `RunState` (`to_state().to_string()`) is kept as its thread's value in
the run log (`RunLog.keep_blob`, in the space of the thread's owner), the endpoint's own when
the app gives it, so any worker sharing the store resumes it; the next run on that thread that
answers in `resume[]` takes it, approves each call answered `{"approved": true}` and rejects
every other, and continues it; an approval with `editedArgs` is refused (`AgentError`, the state
kept), since the SDK runs a call only with the arguments the model gave it. An answer with
nothing kept to resume (expired, or taken by an earlier answer) fails the run with
`InterruptExpired`, unless the history shows the call settled already, whose answer is then
skipped. A client that leaves, or a cancel, calls the run's `cancel()`, so the model is not
called again; so does any failure of the bridge, since the SDK runs the agent in a task of its
own.
"""

from __future__ import annotations

import logging
from typing import Generic, TypeVar

import openai
from agents import Agent, Runner, RunState
from agents.items import ToolApprovalItem, TResponseInputItem
from agents.result import RunResultStreaming
from agents.stream_events import RunItemStreamEvent
from pydantic import JsonValue

from agui.bridges._failure import model_failure
from agui.bridges._openai_items import input_items
from agui.bridges._openai_responses import AgentStream
from agui.bridges._openai_subagents import Subagents
from agui.bridges._openai_tools import ClientCalls
from agui.context import RunContext
from agui.errors import AgentError, InterruptExpired
from agui.messages import ToolMessage
from agui.runner import AgentFunction
from agui.runs import SHARED, MemoryRunLog, RunLog
from agui.types import Interrupt, ResumeEntry, RunOutcome

__all__ = ["openai_agents"]

C = TypeVar("C")

_log = logging.getLogger("agui")

_PREFIX = "approve-"
_ANSWER_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}


def openai_agents(agent: Agent[C], *, runs: RunLog | None = None) -> AgentFunction[JsonValue]:
    """An agui agent that runs the Agents SDK `agent` with `Runner.run_streamed` for each run.

    A tool with `needs_approval` ends the run with the `interrupt` outcome, one interrupt per
    call (id `approve-<call id>`, reason `tool_call`), and the run's `RunState` is kept as the
    thread's value in `runs` (`RunLog.keep_blob`, for the log's TTL). Give the log the app
    serves (`asgi_app(agent, runs=log)`) so that any worker resumes it; without one, a log of
    this process keeps it. The next run answers each interrupt in `resume[]`:
    `{"approved": true}` runs the tool; anything else rejects it, with the answer's `reason`
    as the message the model reads. An answer whose paused run is gone fails the run with
    `INTERRUPT_EXPIRED`.

    Examples:
        >>> import asyncio
        >>> from agents import Agent
        >>> from agents.testing import ScriptedModel, assistant_message
        >>> from agui import RunAgentInput
        >>> from agui.messages import UserMessage
        >>> from agui.testing import collect, fold
        >>> model = ScriptedModel([[assistant_message("Hello there!")]])
        >>> agent = openai_agents(Agent(name="greeter", model=model))
        >>> given = RunAgentInput(
        ...     thread_id="t", run_id="r", messages=[UserMessage(id="u", content="Hi")]
        ... )
        >>> fold(asyncio.run(collect(agent, given))).messages[-1].content
        'Hello there!'
    """
    log: RunLog = MemoryRunLog() if runs is None else runs

    async def run(ctx: RunContext[JsonValue]) -> RunOutcome | None:
        return await _Run(ctx, agent, log).drive()

    return run


class _Run(Generic[C]):
    """One run: the SDK's stream, the output item open now, the agent's step."""

    def __init__(self, ctx: RunContext[JsonValue], agent: Agent[C], runs: RunLog) -> None:
        self._ctx = ctx
        self._calls = ClientCalls()
        offered = self._calls.tools(ctx.tools, agent.tools)
        self._agent = agent.clone(tools=[*agent.tools, *offered]) if offered else agent
        self._runs = runs
        self._owner = SHARED  # the thread's owner: the space its paused run is kept in
        self._events = AgentStream(ctx, left=self._calls.made)
        self._subagents = Subagents(ctx)

    async def drive(self) -> RunOutcome | None:
        """Run the agent; its failures become agui's coded errors."""
        start = await self._start()
        with self._subagents.current():  # the SDK's run task, and its tools', see them
            result = Runner.run_streamed(self._agent, start)
        self._calls.stopping(result)
        self._ctx.token.on_cancel(result.cancel)
        try:
            await self._stream(result)
        except openai.APIStatusError as error:
            raise model_failure(_model_name(result), error.status_code) from error
        except openai.APIConnectionError as error:
            raise model_failure(_model_name(result), None) from error
        finally:
            if not result.is_complete:
                result.cancel()  # the SDK's run is a task of its own: it stops with ours
        return await self._outcome(result)

    async def _start(self) -> list[TResponseInputItem] | RunState[C]:
        """The interrupted run this one answers, or the client's history."""
        ctx = self._ctx
        self._owner = await self._runs.owner(ctx.thread_id) or SHARED
        answers = _answers(ctx)
        _refuse_edits(answers)  # before the paused run is taken: it stays, to be answered again
        kept = await self._runs.take_blob(ctx.thread_id, owner=self._owner)
        if not answers:
            return input_items(ctx.messages)  # a new message: what was paused is dropped
        if kept is None:
            raise _expired(answers)
        state: RunState[C] = await RunState.from_string(self._agent, kept.decode())
        for item in state.get_interruptions():
            self._settle(state, item)
        return state

    def _settle(self, state: RunState[C], item: ToolApprovalItem) -> None:
        """Approve a call only on an answer that says so; reject it on anything else."""
        answer = self._ctx.resume_for(_PREFIX + _call_id(item))
        payload = answer.payload if answer is not None else None
        fields = payload if isinstance(payload, dict) else {}
        if answer is not None and answer.status == "resolved" and fields.get("approved") is True:
            state.approve(item)
            return
        reason = fields.get("reason")
        state.reject(item, rejection_message=reason if isinstance(reason, str) else None)

    async def _stream(self, result: RunResultStreaming) -> None:
        async for event in result.stream_events():
            if isinstance(event, RunItemStreamEvent):
                self._subagents.finish(event.item)  # an agent tool's: its subagent ends first
            self._events.take(event)
            await self._ctx.writable()
        self._events.next_step(None)

    async def _outcome(self, result: RunResultStreaming) -> RunOutcome | None:
        calls = result.interruptions
        if not calls:
            return None
        paused = result.to_state().to_string().encode()
        await self._runs.keep_blob(self._ctx.thread_id, paused, owner=self._owner)
        return RunOutcome.interrupt([_interrupt(item) for item in calls])


def _answers(ctx: RunContext[JsonValue]) -> list[ResumeEntry]:
    """The run's answers to this bridge's interrupts, but for calls the history shows settled.

    A call with a tool message is settled: it ran, or was rejected, in the run that resumed it,
    and an answer sent again acts on nothing.
    """
    settled = {m.tool_call_id for m in ctx.messages if isinstance(m, ToolMessage)}
    answers: list[ResumeEntry] = []
    for entry in ctx.resume:
        call_id = entry.interrupt_id.removeprefix(_PREFIX)
        if not entry.interrupt_id.startswith(_PREFIX):
            _log.warning("run %s: resume[] answers an unknown interrupt %r", ctx.run_id, call_id)
        elif call_id in settled:
            _log.warning(
                "run %s: the call %r is settled; its answer is skipped", ctx.run_id, call_id
            )
        else:
            answers.append(entry)
    return answers


def _refuse_edits(answers: list[ResumeEntry]) -> None:
    """Refuse an approval with `editedArgs`: the SDK runs a call only as the model made it."""
    for entry in answers:
        payload = entry.payload if isinstance(entry.payload, dict) else {}
        if payload.get("approved") is True and payload.get("editedArgs") is not None:
            message = (
                f"the answer to {entry.interrupt_id!r} approves the call with edited arguments "
                "(editedArgs), which the OpenAI Agents SDK cannot run: it approves a call only as "
                "the model made it, and refuses a call whose arguments changed; the question is "
                "still open: approve it without editedArgs, or decline it with a reason that "
                "tells the model which call to make instead"
            )
            raise AgentError(message)


def _expired(answers: list[ResumeEntry]) -> InterruptExpired:
    named = ", ".join(repr(entry.interrupt_id) for entry in answers)
    return InterruptExpired(
        f"the paused run that {named} asked about is no longer kept (it expired, or an earlier "
        "answer resumed it), so there is nothing to resume; send the request again to be asked "
        "again"
    )


def _interrupt(item: ToolApprovalItem) -> Interrupt:
    arguments = item.arguments or "{}"
    return Interrupt(
        id=_PREFIX + _call_id(item),
        reason="tool_call",
        tool_call_id=_call_id(item),
        message=f"Approve {item.tool_name}({arguments})?",
        response_schema=_ANSWER_SCHEMA,
    )


def _call_id(item: ToolApprovalItem) -> str:
    return item.call_id or ""


def _model_name(result: RunResultStreaming) -> str:
    model = result.current_agent.model
    name = model if isinstance(model, str) else getattr(model, "model", None)
    return name if isinstance(name, str) else type(model).__name__
