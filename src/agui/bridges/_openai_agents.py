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
the app gives it, so any worker sharing the store resumes it. The next run on that thread that
answers takes it and settles each call by agui's approval contract (`agui.agents.loop`: a
`resume[]` entry decides, else a tool message the client added for the call; an approval runs
the tool, anything else rejects it), each result sent with `approval_result_id`, so a later run
knows the call settled; it continues the paused run. An approval with `editedArgs` is refused
(`AgentError`, the state kept), since the SDK runs a call only with the arguments the model gave
it. A `resume[]` answer with nothing kept to resume (expired, or taken by an earlier answer)
fails the run with `InterruptExpired`, unless the history shows the call settled already, whose
answer is then skipped. A client that leaves, or a cancel, calls the run's `cancel()`, so the
model is not called again; so does any failure of the bridge, since the SDK runs the agent in a
task of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Generic, TypeVar

import openai
from agents import Agent, Runner, RunState
from agents.items import ToolApprovalItem, TResponseInputItem
from agents.result import RunResultStreaming
from agents.stream_events import RunItemStreamEvent
from pydantic import JsonValue

from agui.agents.loop import (
    APPROVAL_PREFIX,
    ApprovalAnswer,
    approval_answer,
    approval_interrupt_id,
    approval_result_id,
    approval_settled,
)
from agui.bridges._failure import model_failure
from agui.bridges._openai_items import input_items
from agui.bridges._openai_responses import AgentStream
from agui.bridges._openai_subagents import Subagents
from agui.bridges._openai_tools import ClientCalls
from agui.context import RunContext
from agui.errors import AgentError, InterruptExpired
from agui.runner import AgentFunction
from agui.runs import SHARED, MemoryRunLog, RunLog
from agui.runs._served import served
from agui.types import Interrupt, ResumeEntry, RunOutcome

__all__ = ["openai_agents"]

C = TypeVar("C")

_log = logging.getLogger("agui")

_ANSWER_SCHEMA: dict[str, JsonValue] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["approved"],
}


def openai_agents(agent: Agent[C], *, runs: RunLog | None = None) -> AgentFunction[JsonValue]:
    """An agui agent that runs the Agents SDK `agent` with `Runner.run_streamed` for each run.

    A tool with `needs_approval` ends the run with the `interrupt` outcome, one interrupt per
    call (id `approve-<call id>`, reason `tool_call`), and the run's `RunState` is kept as the
    thread's value in a run log (`RunLog.keep_blob`, for the log's TTL): `runs` when given, else
    the log the endpoint serves the run from (`asgi_app(agent, runs=log)`, `agui serve --runs`),
    so that any worker sharing it resumes the run, else a log of this process. The next run
    answers each interrupt, in `resume[]` or with a tool message (agui's approval contract):
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
    own = MemoryRunLog()

    async def run(ctx: RunContext[JsonValue]) -> RunOutcome | None:
        return await _Run(ctx, agent, (runs, own)).drive()

    return run


class _Run(Generic[C]):
    """One run: the SDK's stream, the output item open now, the agent's step."""

    def __init__(
        self, ctx: RunContext[JsonValue], agent: Agent[C], logs: tuple[RunLog | None, RunLog]
    ) -> None:
        self._ctx = ctx
        self._calls = ClientCalls()
        offered = self._calls.tools(ctx.tools, agent.tools)
        self._agent = agent.clone(tools=[*agent.tools, *offered]) if offered else agent
        self._given, self._runs = logs  # the log given, if any, and the bridge's own
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
        """The paused run this one answers, settled, or else the client's history."""
        ctx = self._ctx
        self._runs, self._owner = await self._space()
        entries = _entries(ctx)
        kept = await self._runs.take_blob(ctx.thread_id, owner=self._owner)
        if kept is None:
            if entries:
                raise _expired(entries)
            return input_items(ctx.messages)
        state: RunState[C] = await RunState.from_string(self._agent, kept.decode())
        calls = {_call_id(item): item for item in state.get_interruptions()}
        answers = {call: approval_answer(ctx, call) for call in calls}
        if all(answer is None for answer in answers.values()):
            return input_items(ctx.messages)  # the user moved on: what was paused is dropped
        if any(answer is not None and answer.arguments for answer in answers.values()):
            await self._runs.keep_blob(ctx.thread_id, kept, owner=self._owner)  # still open
            raise _edited(answers)
        for call, item in calls.items():
            self._settle(state, item, answers[call])
        return state

    async def _space(self) -> tuple[RunLog, str]:
        """Where the thread's paused run is kept: the log given, else the endpoint's, else ours.

        The endpoint that serves the run with a log names the owner whose space the thread is
        in; without one, the log given knows the thread's owner, if it has one.
        """
        given, where = self._given, served()
        if where is not None:
            return (where.log if given is None else given), where.owner
        if given is None:
            return self._runs, SHARED
        return given, await given.owner(self._ctx.thread_id) or SHARED

    def _settle(
        self, state: RunState[C], item: ToolApprovalItem, answer: ApprovalAnswer | None
    ) -> None:
        """Approve a call only on an answer that says so; reject it on anything else."""
        call = _call_id(item)
        self._events.result_ids[call] = approval_result_id(call)  # the answer that settles it
        if answer is not None and answer.approved:
            state.approve(item)
            return
        entry = self._ctx.resume_for(approval_interrupt_id(call))
        payload = entry.payload if entry is not None else None
        reason = payload.get("reason") if isinstance(payload, dict) else None
        refusal = (answer or ApprovalAnswer("declined", "resume")).refusal
        state.reject(item, rejection_message=reason if isinstance(reason, str) else refusal)

    async def _stream(self, result: RunResultStreaming) -> None:
        try:
            async for event in result.stream_events():
                if isinstance(event, RunItemStreamEvent):
                    self._subagents.finish(event.item)  # an agent tool's: its subagent ends first
                self._events.take(event)
                await self._ctx.writable()
        except BaseException as error:
            self._subagents.fail(error)  # each one open ends with SUBAGENT_ERROR, then the run
            raise
        self._events.next_step(None)

    async def _outcome(self, result: RunResultStreaming) -> RunOutcome | None:
        calls = result.interruptions
        if not calls:
            return None
        paused = result.to_state().to_string().encode()
        await self._runs.keep_blob(self._ctx.thread_id, paused, owner=self._owner)
        return RunOutcome.interrupt([_interrupt(item) for item in calls])


def _entries(ctx: RunContext[JsonValue]) -> list[ResumeEntry]:
    """The run's `resume[]` answers to this bridge's interrupts, but for settled calls.

    A call is settled when the history holds the result the bridge sent for it once it was
    answered (`approval_result_id`): an answer sent again acts on nothing.
    """
    entries: list[ResumeEntry] = []
    for entry in ctx.resume:
        call_id = entry.interrupt_id.removeprefix(APPROVAL_PREFIX)
        if not entry.interrupt_id.startswith(APPROVAL_PREFIX):
            _log.warning("run %s: resume[] answers an unknown interrupt %r", ctx.run_id, call_id)
        elif approval_settled(ctx.messages, call_id):
            _log.warning(
                "run %s: the call %r is settled; its answer is skipped", ctx.run_id, call_id
            )
        else:
            entries.append(entry)
    return entries


def _edited(answers: Mapping[str, ApprovalAnswer | None]) -> AgentError:
    """Refuse an approval with `editedArgs`: the SDK runs a call only as the model made it."""
    named = ", ".join(
        repr(approval_interrupt_id(call))
        for call, answer in answers.items()
        if answer is not None and answer.arguments
    )
    return AgentError(
        f"the answer to {named} approves the call with edited arguments (editedArgs), which the "
        "OpenAI Agents SDK cannot run: it approves a call only as the model made it, and refuses "
        "a call whose arguments changed; the question is still open: approve it without "
        "editedArgs, or decline it with a reason that tells the model which call to make instead"
    )


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
        id=approval_interrupt_id(_call_id(item)),
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
