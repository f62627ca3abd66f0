"""`RunContext`: everything about one run, owned in one place.

The context holds the input, the typed state, the id counters, the cancellation token and the
run's pipeline (`agui._emit`), the one way its events leave: transformers, the verifier, the
queue. It hands out the handles (`message`, `reasoning`, `tool_call`, `step`), each given its
ids and the pipeline, which holds them open: one exclusive block at a time, and the run driver
closes whatever is still open, innermost first, when the run ends.

Agents stay stateless: nothing of a run lives on the agent, so one agent serves many runs at once.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Sequence
from typing import Generic, TypeVar, cast, overload

from pydantic import JsonValue
from typing_extensions import Unpack

from agui._emit.attributed import attributed
from agui._emit.numbering import numbered_past, tool_call_ids
from agui._emit.pipeline import Pipeline
from agui._emit.verifier import RunVerifier
from agui._protocol.text import JsonAttribute
from agui.cancellation import CancellationToken
from agui.errors import Cancelled, InvalidInput, UsageError
from agui.events import Event, StateDeltaEvent, StateSnapshotEvent
from agui.handles import (
    ActivityOpener,
    Handle,
    MessageHandle,
    ReasoningHandle,
    StepHandle,
    SubagentHandle,
    SubagentOptions,
    TextRole,
    ToolCallHandle,
    invocation_input,
    result_event,
    whole_text,
)
from agui.messages import Message, UserMessage
from agui.sink import EventReceiver
from agui.state import StateManager, carries_state
from agui.transform import Transformer
from agui.types import Context, ResumeEntry, RunAgentInput, TokenUsage, Tool, ToolResultContent
from agui.verify import Verifier

__all__ = ["RunContext"]

S = TypeVar("S")
T = TypeVar("T")


class RunContext(ActivityOpener, Generic[S]):
    """One run: its input, state, handles, and the verified pipeline to the client.

    Build one for a unit test with `RunContext.new`; the run driver builds its own.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
        >>> with ctx.tool_call("get_weather") as call:
        ...     call.args_json({"city": "Seoul"})
        ...     call.result_json({"tempC": 21})
        'r-msg-1'
        >>> [event.type for event in events.drain()]
        ['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']
    """

    result = JsonAttribute("ctx.result")
    """What the run gives back on `RUN_FINISHED` (`None`: nothing); JSON, refused otherwise."""

    def __init__(
        self,
        input: RunAgentInput,  # noqa: A002 - the protocol's name for it
        *,
        state: type[S] | None = None,
        transformers: Sequence[Transformer] = (),
        token: CancellationToken | None = None,
        started: bool = False,
    ) -> None:
        if not isinstance(cast("object", input), RunAgentInput):
            message = (
                f"a run's input is a RunAgentInput, got a {type(input).__name__}: read a wire dict "
                "with agui.parse_input(...), or build one: RunAgentInput(thread_id=..., run_id=...)"
            )
            raise UsageError(message)
        self.input = input
        self.token = token if token is not None else CancellationToken()
        self.usage: list[TokenUsage] = []
        self._state_type = state
        self._state: StateManager[S] | None = None
        known_calls = tool_call_ids(input.messages)
        ids = (input.thread_id, input.run_id) if started else None
        self._pipeline: Pipeline[Handle[S]] = Pipeline(
            RunVerifier(started=ids, known_tool_call_ids=known_calls),
            self.token,
            transformers=transformers,
            answered={call: None for call in known_calls},  # noqa: C420 - see Ledger.known_calls
            on_state=self._state_sent,
        )
        # Minted past what the history holds (a resumed run may keep the interrupted one's id).
        self._minted = list(numbered_past(input, known_calls)[:3])  # message, call, subagent
        self._published: Event | None = None

    @overload
    @classmethod
    def new(
        cls,
        input: RunAgentInput,
        *,
        state: None = None,
        transformers: Sequence[Transformer] = (),
    ) -> tuple[RunContext[JsonValue], EventReceiver]: ...
    @overload
    @classmethod
    def new(
        cls,
        input: RunAgentInput,
        *,
        state: type[T],
        transformers: Sequence[Transformer] = (),
    ) -> tuple[RunContext[T], EventReceiver]: ...
    @classmethod
    def new(
        cls,
        input: RunAgentInput,  # noqa: A002
        *,
        state: type[T] | None = None,
        transformers: Sequence[Transformer] = (),
    ) -> tuple[RunContext[T], EventReceiver] | tuple[RunContext[JsonValue], EventReceiver]:
        """A context for unit tests: emits nothing by itself (no RUN_STARTED); verifier live.

        `state` is the state type; its first value comes from `input.state`, or its defaults.
        """
        ctx: RunContext[T] = RunContext(input, state=state, transformers=transformers, started=True)
        ctx.init_state()
        return ctx, ctx.receiver

    # -- input -----------------------------------------------------------------------------

    @property
    def receiver(self) -> EventReceiver:
        """Where this run's events are queued."""
        return self._pipeline.receiver

    @property
    def thread_id(self) -> str:
        """The conversation's id."""
        return self.input.thread_id

    @property
    def run_id(self) -> str:
        """This run's id; message and call ids are derived from it."""
        return self.input.run_id

    @property
    def messages(self) -> list[Message]:
        """The history the client sent."""
        return self.input.messages

    @property
    def last_user_text(self) -> str | None:
        """The text of the latest user message (text parts joined), or `None`."""
        for message in reversed(self.input.messages):
            if isinstance(message, UserMessage):
                if isinstance(message.content, str):
                    return message.content
                return "".join(getattr(part, "text", "") for part in message.content)
        return None

    @property
    def tools(self) -> list[Tool]:
        """The tools the client offered (a capability list, never an allow-list)."""
        return self.input.tools or []

    def tool(self, name: str) -> Tool | None:
        """The offered tool of that name, or `None`; nothing in agui refuses an unoffered name."""
        return next((tool for tool in self.tools if tool.name == name), None)

    @property
    def context(self) -> list[Context]:
        """The application context the client sent."""
        return self.input.context or []

    @property
    def forwarded_props(self) -> JsonValue | None:
        """The opaque application props the client forwarded."""
        return self.input.forwarded_props

    @property
    def resume(self) -> list[ResumeEntry]:
        """The client's answers to the previous run's interrupts."""
        return self.input.resume or []

    def resume_for(self, interrupt_id: str) -> ResumeEntry | None:
        """The client's answer to the interrupt of that id, or `None`.

        Raises `InvalidInput` if the input answers it more than once, differently (the same
        answer sent twice is one): acting on either answer would be a guess.
        """
        found = [entry for entry in self.resume if entry.interrupt_id == interrupt_id]
        if len({json.dumps([e.status, e.payload], sort_keys=True) for e in found}) > 1:
            message = (
                f"the run's input answers interrupt {interrupt_id!r} {len(found)} times, "
                "differently; a client sends one answer per interrupt in `resume`"
            )
            raise InvalidInput(message, errors=[("/resume", message)])
        return found[0] if found else None

    # -- state -----------------------------------------------------------------------------

    def init_state(self) -> None:
        """Decode the initial state from the input (the driver calls this after RUN_STARTED)."""
        if self._state is None:
            self._state = StateManager(self._state_type, self.input.state)

    @property
    def state(self) -> S:
        """The live state object; mutate it, then `publish_state()`."""
        return self._manager().value

    @state.setter
    def state(self, value: S) -> None:
        self._manager().value = value

    def publish_state(self) -> None:
        """Send the state if it changed: a snapshot first, then deltas when smaller."""
        manager = self._manager()
        event = manager.publish()
        if event is None:
            return
        self._published = event
        try:
            self._pipeline.send(event)
        finally:
            if self._published is event:
                # A transformer dropped it (or the send failed): the client's copy is unknown.
                self._published = None
                manager.reset()

    def _state_sent(self, event: StateSnapshotEvent | StateDeltaEvent) -> None:
        """A state event left: unless it is the one just published, the client's copy moved."""
        published, self._published = self._published, None
        if self._state is None or (published is not None and carries_state(event, published)):
            return  # the publish itself (or a copy of it): the baseline moved with it
        if published is None or isinstance(event, StateSnapshotEvent):
            self._state.observe(event)  # emitted another way, or a whole state the client holds
        else:
            # A transformer sent another patch in place of the published one: the client's copy
            # is no longer the baseline, so the next publish is a snapshot.
            self._state.reset()

    def _manager(self) -> StateManager[S]:
        if self._state is None:
            message = "the run state is not ready yet: it is decoded once the run has started"
            raise UsageError(message)
        return self._state

    # -- cancellation ----------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """Whether the run was cancelled; every emit now raises `Cancelled`."""
        return self.token.cancelled

    def check_cancelled(self) -> None:
        """Raise `Cancelled` if the run was cancelled."""
        if self.token.cancelled:
            raise Cancelled(self.token.reason)

    async def until_cancelled(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`, but stop it and raise `Cancelled` as soon as the run is cancelled.

        A `SystemExit` or `KeyboardInterrupt` it raises ends the run, not the server (see
        `agui.cancellation`).
        """
        return await self.token.until_cancelled(awaitable)

    async def writable(self) -> None:
        """Return once the client has read all but `max_buffered_bytes` (see `agui.sink`).

        >>> import asyncio
        >>> asyncio.run(RunContext.new(RunAgentInput(thread_id="t", run_id="r"))[0].writable())
        """
        await self._pipeline.receiver.writable()

    # -- openers ---------------------------------------------------------------------------

    def message(
        self,
        role: TextRole = "assistant",
        *,
        name: str | None = None,
        message_id: str | None = None,
    ) -> MessageHandle[S]:
        """Open a text message; use it in a `with` block.

        `message_id` continues a message the stream already named, such as the assistant message
        a turn's tool calls name as their parent: the client appends the text to that message.
        """
        given = self._new_message_id() if message_id is None else message_id
        return MessageHandle(self, self._pipeline, given, role=role, name=name)

    def say(self, text: str) -> str:
        """Send a whole assistant text message; returns its id."""
        text = whole_text(text, "ctx.say()")  # before the message opens: a refusal sends nothing
        with self.message() as message:
            message.delta(text)
        return message.id

    def reasoning(self) -> ReasoningHandle[S]:
        """Open a reasoning block; use it in a `with` block."""
        return ReasoningHandle(self, self._pipeline, self._new_message_id())

    def think(self, text: str) -> str:
        """Send a whole reasoning block; returns its message id."""
        text = whole_text(text, "ctx.think()")
        with self.reasoning() as reasoning:
            reasoning.delta(text)
        return reasoning.id

    def tool_call(
        self, name: str, *, call_id: str | None = None, parent_message_id: str | None = None
    ) -> ToolCallHandle[S]:
        """Open a tool call; use it in a `with` block."""
        return ToolCallHandle(
            self,
            self._pipeline,
            name,
            call_id=call_id if call_id is not None else self._mint(1),
            result_message_id=self._new_message_id(),
            parent_message_id=parent_message_id,
        )

    def step(self, name: str) -> StepHandle[S]:
        """Open a named step; steps nest."""
        return StepHandle(self, self._pipeline, name)

    def subagent(
        self, name: str, **options: Unpack[SubagentOptions]
    ) -> SubagentHandle[S, RunContext[S]]:
        """Open a subagent's invocation, every event of it attributed; see `SubagentHandle`."""
        return SubagentHandle(self, self._pipeline, name, spawn=self._spawn, **options)

    def _spawn(self, task: str | None) -> tuple[RunContext[S], Pipeline[Handle[S]]]:
        sub = invocation_input(self.input, self._mint(2), task)
        child = RunContext(sub, state=self._state_type, token=self.token, started=True)
        child._state, child.usage = self._state, self.usage
        child._pipeline = attributed(self._pipeline, sub.run_id, on_state=child._state_sent)
        return child, child._pipeline

    def tool_result(
        self, tool_call_id: str, content: ToolResultContent, *, message_id: str | None = None
    ) -> str:
        """Send the result of a call that is not open here (say, one from a previous run)."""
        message_id = message_id if message_id is not None else self._new_message_id()
        call, as_json = "ctx.tool_result()", "json.dumps(value)"
        event = result_event(call, as_json, message_id, tool_call_id, content)
        self._pipeline.send(event)
        return message_id

    def emit(self, event: Event, *, forced: bool = False) -> None:
        """Emit any event: the escape hatch for chunks and interleaved calls; still verified.

        `forced` sends it even once the run is cancelled, as the driver sends its terminal
        event (every other emit of a cancelled run raises `Cancelled`).

        Examples:
            >>> from agui.events import RunFinishedEvent
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> ctx.token.cancel()
            >>> ctx.emit(RunFinishedEvent(thread_id="t", run_id="r"), forced=True)
            >>> [event.type for event in events.drain()], ctx.terminated
            (['RUN_FINISHED'], True)
        """
        self._pipeline.send(event, forced=forced)

    @property
    def terminated(self) -> bool:
        """Whether a terminal event (RUN_FINISHED or RUN_ERROR) has gone out."""
        return self._pipeline.terminated

    @property
    def pending_tool_call_ids(self) -> list[str]:
        """Calls started in this run and not answered, in call order."""
        answered = self._pipeline.answered
        return [call for call in self._pipeline.calls if call not in answered]

    @property
    def verifier(self) -> Verifier:
        """The verifier that checks every event of this run."""
        return self._pipeline.verifier

    def _new_message_id(self) -> str:
        return self._mint(0)

    def _mint(self, form: int) -> str:
        self._minted[form] += 1
        return f"{self.input.run_id}-{('msg', 'call', 'sub')[form]}-{self._minted[form]}"

    @property
    def open_handles(self) -> tuple[Handle[S], ...]:
        """The handles still open, outermost first.

        Examples:
            >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> with ctx.step("plan"):
            ...     [handle.describe() for handle in ctx.open_handles]
            ["step 'plan'"]
        """
        return self._pipeline.blocks

    def close_open_handles(self) -> list[Exception]:
        """Close every open handle, innermost first; returns the closes that failed (released)."""
        return self._pipeline.close_open()

    def close_open(self) -> list[Exception]:
        """Close the open handles, then each block `emit` opened; returns the closes that failed.

        Each gets its closing event (`Verifier.open_blocks`), innermost first, even once cancelled.

        Examples:
            >>> from agui.events import StepStartedEvent
            >>> ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
            >>> ctx.emit(StepStartedEvent(step_name="search"))
            >>> message = ctx.message()
            >>> ctx.close_open(), message.closed, [event.type for event in events.drain()][2:]
            ([], True, ['TEXT_MESSAGE_END', 'STEP_FINISHED'])
        """
        failures = self.close_open_handles()
        for closing in [b.closing for b in reversed(self.verifier.open_blocks) if b.closing]:
            try:
                self._pipeline.send(closing, forced=True)
            except Exception as error:  # noqa: BLE001 - keep closing what can be closed
                failures.append(error)
        return failures
