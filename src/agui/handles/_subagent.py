"""The subagent handle: one invocation of a named subagent, every event of it attributed.

AG-UI 1.0 lets a run speak for the agents it delegates to: `SUBAGENT_STARTED` announces an
invocation, each event it produces carries its `subagentRunId`, and `SUBAGENT_FINISHED` (with a
result, or suspended on interrupts) or `SUBAGENT_ERROR` ends it, not the run. Written by hand,
that is one more bracket to forget and an id to stamp on every event; the handle does both.

The handle is a block of its parent's (the run, or the subagent that spawned it): it nests
like a step, so it may open inside the parent's open tool call (and names it as its
`parentToolCallId`). What the subagent says goes through its own run context (`context`, a
`RunContext` whose pipeline stamps the id and holds an exclusive block of its own), so any
agent, the tool loop included, runs inside it unchanged (`run`). Leaving the block closes what
the subagent left open, then sends its terminal event; an exception becomes `SUBAGENT_ERROR`
with the code and message `RUN_ERROR` would carry, never the exception's text, and propagates;
`run(agent)` may contain it instead (`contain=True`), handing the parent the error's code.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Generic, Protocol, TypedDict, TypeVar, cast

from pydantic import JsonValue

from agui._emit.pipeline import Pipeline
from agui._protocol.text import check_json
from agui.errors import AgentError, AguiError
from agui.events import (
    Event,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
)
from agui.handles._activity import Activity
from agui.handles._handle import Handle, Owner, built
from agui.handles._message import MessageHandle, TextRole
from agui.handles._reasoning import ReasoningHandle
from agui.handles._step import StepHandle
from agui.handles._tool_call import ToolCallHandle
from agui.messages import UserMessage
from agui.types import (
    Interrupt,
    InterruptOutcome,
    RunAgentInput,
    RunOutcome,
    SubagentSuspendedOutcome,
    ToolResultContent,
)

__all__ = ["Delegation", "RunsIn", "SubagentHandle", "SubagentOptions", "invocation_input"]

S = TypeVar("S")
C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)

_MESSAGES = {
    "PROTOCOL_VIOLATION": "the subagent broke an AG-UI ordering rule",
    "STATE_ERROR": "the run state could not be read or published",
    "USAGE_ERROR": "the subagent used the agui SDK in a way it does not allow",
    "INVALID_ARGUMENTS": "a tool call's arguments could not be read",
    "CANCELLED": "the run was cancelled",
}


class RunsIn(Protocol[C_contra]):
    """An agent object: `async def run(self, ctx)` (a `ToolLoopAgent` is one)."""

    def run(self, ctx: C_contra, /) -> Awaitable[RunOutcome | None]:
        """Do one run in `ctx`."""
        ...


class _Speaks(Protocol[S, C]):
    """What the handle forwards to its subagent's run context (a `RunContext` has it all)."""

    result: JsonValue | None

    def message(self, role: TextRole = ..., *, name: str | None = ...) -> MessageHandle[S]: ...
    def say(self, text: str) -> str: ...
    def reasoning(self) -> ReasoningHandle[S]: ...
    def think(self, text: str) -> str: ...
    def tool_call(
        self, name: str, *, call_id: str | None = ..., parent_message_id: str | None = ...
    ) -> ToolCallHandle[S]: ...
    def step(self, name: str) -> StepHandle[S]: ...
    def tool_result(
        self, tool_call_id: str, content: ToolResultContent, *, message_id: str | None = ...
    ) -> str: ...
    def emit(self, event: Event, *, forced: bool = ...) -> None: ...
    def publish_state(self) -> None: ...
    def activity(
        self,
        activity_type: str,
        content: Mapping[str, JsonValue] | None = ...,
        *,
        message_id: str | None = ...,
    ) -> Activity: ...
    def subagent(
        self,
        name: str,
        *,
        description: str | None = ...,
        task: str | None = ...,
        contain: bool = ...,
    ) -> SubagentHandle[S, C]: ...


class SubagentOptions(TypedDict, total=False):
    """What `ctx.subagent(name, ...)` takes besides the name; every key is optional.

    `description` goes on `SUBAGENT_STARTED`; `task` makes the subagent's run context hold only
    that question (see `invocation_input`); `contain` makes `run(agent)` return the agent's
    failure (after `SUBAGENT_ERROR`) rather than raise it; a cancellation always propagates.

    Examples:
        >>> SubagentOptions(description="Looks things up", contain=True)
        {'description': 'Looks things up', 'contain': True}
    """

    description: str | None
    task: str | None
    contain: bool


@dataclasses.dataclass(frozen=True)
class Delegation:
    """What a delegated agent gave back: its result, its interrupts, or the code it failed with.

    `result` is the result the agent set (`ctx.result`), else the text of the last message it
    sent. `interrupts` carry the invocation's `subagentRunId`; a supervisor that cannot go on
    without their answers returns `RunOutcome.interrupt(delegation.interrupts)`.

    Examples:
        >>> Delegation("r-sub-1", result="Paris").suspended
        False
    """

    subagent_run_id: str
    result: JsonValue | None = None
    interrupts: tuple[Interrupt, ...] = ()
    error: str | None = None
    """The error code of a contained failure (`None`: the agent did not fail)."""

    @property
    def suspended(self) -> bool:
        """Whether the agent stopped on interrupts that need the client's answers."""
        return bool(self.interrupts)


def invocation_input(input: RunAgentInput, subagent_run_id: str, task: str | None) -> RunAgentInput:  # noqa: A002
    """The input a subagent's run context reads: its own run id, and its task as the question.

    With a `task`, the subagent sees only that (as a user message), and none of the client's
    tools or resume answers: those are the supervisor's conversation, not the subagent's.

    Examples:
        >>> sub = invocation_input(RunAgentInput(thread_id="t", run_id="r"), "r-sub-1", "Why?")
        >>> sub.run_id, sub.messages[0].content
        ('r-sub-1', 'Why?')
    """
    update: dict[str, object] = {"run_id": subagent_run_id}
    if task is not None:
        question = UserMessage(id=f"{subagent_run_id}-task", content=task)
        update |= {"messages": [question], "tools": [], "resume": None}
    return input.model_copy(update=update)


class SubagentHandle(Handle[S], Generic[S, C]):
    """A subagent invocation: `SUBAGENT_STARTED` now, its events attributed, then its end.

    `context` is the subagent's own run context; the handle forwards the usual openers to it
    (`message`, `say`, `reasoning`, `think`, `tool_call`, `step`, `tool_result`, `emit`,
    `publish_state`, `activity`, `subagent`). `finish(result=..., interrupts=...)` ends it now;
    leaving the block ends it as success with `context.result`; an exception ends it with
    `SUBAGENT_ERROR`.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.subagent("researcher") as sub:
        ...     sub.say("Paris.")
        ...     sub.finish(result={"city": "Paris"})
        'r-sub-1-msg-1'
        >>> [(e.type, e.subagent_run_id) for e in events.drain()]
        [('SUBAGENT_STARTED', 'r-sub-1'), ('TEXT_MESSAGE_START', 'r-sub-1'),
         ('TEXT_MESSAGE_CONTENT', 'r-sub-1'), ('TEXT_MESSAGE_END', 'r-sub-1'),
         ('SUBAGENT_FINISHED', 'r-sub-1')]
    """

    kind = "subagent"
    nests = True

    def __init__(
        self,
        owner: Owner[S],
        pipeline: Pipeline[Handle[S]],
        name: str,
        *,
        spawn: Callable[[str | None], tuple[C, Pipeline[Handle[S]]]],
        description: str | None = None,
        task: str | None = None,
        contain: bool = False,
    ) -> None:
        super().__init__(owner, pipeline)
        self.name = name
        self.id = ""  # the invocation's, once its context is spawned below
        self.contain = contain
        self.interrupts: tuple[Interrupt, ...] = ()
        """The interrupts it finished on, each carrying its `subagentRunId`."""
        self.error: BaseException | None = None
        """The exception that ended it, once it has (contained or not)."""
        self._check_unicode(name, "the name given to ctx.subagent()")
        self._check_unicode(description, "the description given to ctx.subagent()")
        spawner = pipeline.exclusive
        call = spawner.id if isinstance(spawner, ToolCallHandle) else None
        self._check_unicode(task, "the task given to ctx.subagent()")
        self.context, self._view = spawn(task)
        self.id = cast("str", self._view.subagent_run_id)
        self._start(
            built(
                SubagentStartedEvent,
                "ctx.subagent()",
                {},
                subagent_run_id=self.id,
                name=name,
                description=description,
                parent_subagent_run_id=pipeline.subagent_run_id,
                parent_tool_call_id=call,
                parent_message_id=pipeline.parents.get(call) if call is not None else None,
            )
        )

    def describe(self) -> str:
        return f"subagent '{self.id}' ({self.name})"

    def _speaks(self, action: str) -> _Speaks[S, C]:
        self._check_open(action)
        return cast("_Speaks[S, C]", self.context)

    # -- what the subagent says, through its own context ------------------------------------

    def message(self, role: TextRole = "assistant", *, name: str | None = None) -> MessageHandle[S]:
        """Open a text message of the subagent's."""
        return self._speaks("message").message(role, name=name)

    def say(self, text: str) -> str:
        """Send a whole text message of the subagent's; returns its id."""
        return self._speaks("say").say(text)

    def reasoning(self) -> ReasoningHandle[S]:
        """Open a reasoning block of the subagent's."""
        return self._speaks("reasoning").reasoning()

    def think(self, text: str) -> str:
        """Send a whole reasoning block of the subagent's; returns its message id."""
        return self._speaks("think").think(text)

    def tool_call(
        self, name: str, *, call_id: str | None = None, parent_message_id: str | None = None
    ) -> ToolCallHandle[S]:
        """Open a tool call of the subagent's."""
        return self._speaks("tool_call").tool_call(
            name, call_id=call_id, parent_message_id=parent_message_id
        )

    def step(self, name: str) -> StepHandle[S]:
        """Open a step of the subagent's (its steps are its own, apart from the parent's)."""
        return self._speaks("step").step(name)

    def tool_result(
        self, tool_call_id: str, content: ToolResultContent, *, message_id: str | None = None
    ) -> str:
        """Send a result for a call that is not open here, attributed to the subagent."""
        return self._speaks("tool_result").tool_result(tool_call_id, content, message_id=message_id)

    def emit(self, event: Event) -> None:
        """Emit any event as the subagent's (its id is stamped on, when it has none)."""
        self._speaks("emit").emit(event)

    def publish_state(self) -> None:
        """Publish the run's state now, as the subagent's state events."""
        self._speaks("publish_state").publish_state()

    def activity(
        self,
        activity_type: str,
        content: Mapping[str, JsonValue] | None = None,
        *,
        message_id: str | None = None,
    ) -> Activity:
        """Start an activity message of the subagent's; its events carry the subagent's id."""
        return self._speaks("activity").activity(activity_type, content, message_id=message_id)

    def subagent(
        self,
        name: str,
        *,
        description: str | None = None,
        task: str | None = None,
        contain: bool = False,
    ) -> SubagentHandle[S, C]:
        """Open a subagent of this subagent's (it names this one as its parent)."""
        return self._speaks("subagent").subagent(
            name, description=description, task=task, contain=contain
        )

    # -- running an agent, and ending --------------------------------------------------------

    async def run(
        self, agent: Callable[[C], Awaitable[RunOutcome | None]] | RunsIn[C]
    ) -> Delegation:
        """Run `agent` as this subagent, then finish it; returns what the agent gave back.

        The agent gets `context` as its run context. Its interrupts end the invocation as
        suspended; its result is `context.result`, else the text of the last message it sent.
        It ends the invocation on the way out, inside a `with` block or not: an exception ends
        it with `SUBAGENT_ERROR` and propagates, unless the handle contains it (`contain=True`):
        then `run` returns a `Delegation` with the error's code, and the parent goes on.
        """
        self._check_open("run")
        method = getattr(agent, "run", None)
        runs = method if callable(method) else agent
        try:
            outcome = await cast("Callable[[C], Awaitable[RunOutcome | None]]", runs)(self.context)
        except BaseException as error:
            # Not only in a `with` block: `ctx.subagent(...).run(agent)` ends it all the same.
            if self._open and self._fail(error):
                return Delegation(self.id, error=_error_fields(error)[0])
            raise
        interrupts = outcome.interrupts if isinstance(outcome, InterruptOutcome) else ()
        result = self._speaks("run").result
        if result is None and self._view.last_text:
            result = self._view.last_text
        self.finish(result=result, interrupts=interrupts)
        return Delegation(self.id, result=result, interrupts=self.interrupts)

    def finish(
        self, result: JsonValue | None = None, *, interrupts: Sequence[Interrupt] = ()
    ) -> None:
        """End the invocation now: `SUBAGENT_FINISHED`, suspended when given `interrupts`.

        Each interrupt is kept in `interrupts` with this invocation's `subagentRunId`.
        """
        self._check_open("finish")
        check_json(result, f"the result given to finish() on {self.describe()}")
        self.interrupts = tuple(
            i
            if i.subagent_run_id is not None
            else i.model_copy(update={"subagent_run_id": self.id})
            for i in interrupts
        )
        if result is not None:
            self._speaks("finish").result = result
        self._end_now()

    def _finish(self) -> None:
        self._close_inner()
        outcome = None
        if self.interrupts:
            outcome = SubagentSuspendedOutcome(interrupt_ids=[i.id for i in self.interrupts])
        result = cast("_Speaks[S, C]", self.context).result
        event = SubagentFinishedEvent(subagent_run_id=self.id, result=result, outcome=outcome)
        self._pipeline.send(event, forced=True)
        self._closed()

    def _close_inner(self) -> None:
        """Close what the subagent opened and left open, innermost first (not the parent's)."""
        while blocks := self._view.blocks:
            blocks[-1].close()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None or not self._open:
            super().__exit__(exc_type, exc, tb)
        else:
            self._fail(exc)  # and the exception propagates: a block never swallows one

    def _fail(self, exc: BaseException) -> bool:
        """End with `SUBAGENT_ERROR` for `exc`; whether the handle contains it (`run` returns)."""
        self.error = exc
        self._ending = True
        try:
            self._close_inner()
            code, message = _error_fields(exc)
            event = SubagentErrorEvent(subagent_run_id=self.id, message=message, code=code)
            self._pipeline.send(event, forced=True)
        finally:
            self._closed()
        return self.contain and isinstance(exc, Exception) and not _stops(exc)


def _stops(error: BaseException) -> bool:
    """Whether `error` stops the run itself (a cancellation), which no block may contain."""
    return isinstance(error, asyncio.CancelledError) or getattr(error, "code", None) == "CANCELLED"


def _error_fields(error: BaseException) -> tuple[str, str]:
    """The code and message `RUN_ERROR` would carry for `error`, without its text."""
    if isinstance(error, AgentError):
        return error.code, str(error) or type(error).__name__
    if isinstance(error, AguiError):
        return error.code, _MESSAGES.get(error.code, "the subagent failed")
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED", _MESSAGES["CANCELLED"]
    if isinstance(error, Exception):
        return "AGENT_ERROR", "the subagent failed with an unexpected error"
    return "AGENT_EXIT", "the subagent tried to exit, which ends only its invocation"
