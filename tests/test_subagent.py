"""Subagents as handles: an invocation's every event attributed, and its end always sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

import ag_ui.core as official
import pytest
from pydantic import JsonValue, TypeAdapter

from agui import Interrupt, RunAgentInput, RunContext, RunOutcome, UsageError
from agui._emit.receiver import run_receiver
from agui.agents import ToolLoopAgent, subagent_tool, tool
from agui.agents.models import Call, ScriptedModel, Turn
from agui.errors import AgentError, Cancelled
from agui.events import (
    AttributableEvent,
    CustomEvent,
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
)
from agui.fold import fold
from agui.handles import Delegation, SubagentHandle
from agui.messages import TextPart, UserMessage
from agui.sse import encode_sse, event_json
from agui.testing import assert_valid, collect
from agui.types import SubagentSuspendedOutcome, SuccessOutcome

Ctx = RunContext[JsonValue]
_OFFICIAL: TypeAdapter[official.Event] = TypeAdapter(official.Event)


def assert_whole(events: Sequence[Event]) -> None:
    """A harness run's events are valid as a whole run (the harness sends no boundaries)."""
    boundaries = (
        RunStartedEvent(thread_id="t", run_id="r"),
        RunFinishedEvent(thread_id="t", run_id="r"),
    )
    assert_valid([boundaries[0], *events, boundaries[1]])


def tags(events: Sequence[Event]) -> list[tuple[str, str | None]]:
    return [(e.type, getattr(e, "subagent_run_id", None)) for e in events]


def everything(sub: SubagentHandle[JsonValue, Ctx], *, parts: bool = True) -> None:
    """One of each thing a subagent can say (`parts`: a tool result made of content parts)."""
    with sub.message() as message:
        message.delta("Looking ")
        message.delta("it up.")
    sub.say("Found it.")
    with sub.reasoning() as thought:
        thought.delta("Paris is in France.")
        thought.encrypted_value("opaque")
    sub.think("Sure.")
    with sub.step("search"), sub.tool_call("search") as call:
        call.args_json({"q": "capital"})
        call.result([TextPart(text="Paris")] if parts else "Paris")
    with sub.tool_call("pick") as pending:
        pending.end()
    sub.tool_result(pending.id, "done")
    sub.emit(CustomEvent(name="acme.note", value=1))
    sub.context.state = {"found": "Paris"}
    sub.publish_state()


def test_every_event_of_a_subagent_carries_its_id_and_the_block_brackets_them() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r", state={}))

    with ctx.subagent("researcher", description="Finds facts") as sub:
        everything(sub)
    events = ctx.receiver.drain()

    assert isinstance(events[0], SubagentStartedEvent)
    assert events[0].model_dump(by_alias=True, exclude_none=True) == {
        "type": "SUBAGENT_STARTED",
        "subagentRunId": "r-sub-1",
        "name": "researcher",
        "description": "Finds facts",
    }
    assert isinstance(events[-1], SubagentFinishedEvent)
    inner = events[1:-1]
    assert {e.type for e in inner} >= {
        "TEXT_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_ENCRYPTED_VALUE",
        "STEP_STARTED",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_RESULT",
        "CUSTOM",
        "STATE_SNAPSHOT",
    }
    assert all(isinstance(e, AttributableEvent) and e.subagent_run_id == "r-sub-1" for e in inner)
    assert ctx.state == {"found": "Paris"}
    assert_whole(events)


def test_a_subagent_whose_name_is_not_text_is_refused_naming_the_argument() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    with pytest.raises(
        UsageError, match=r"ctx.subagent\(\): the name given \(an int\) does not fit: Input"
    ):
        ctx.subagent(5)  # type: ignore[arg-type]
    assert events.drain() == []
    assert ctx.open_handles == ()


def test_a_subagents_ids_are_its_own_and_deterministic() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("a") as first:
        said = first.say("one")
        with first.tool_call("f") as call:
            call.end()
    with ctx.subagent("b") as second:
        nested = second.subagent("c")
        with nested:
            deep = nested.say("deep")

    assert (first.id, said, call.id) == ("r-sub-1", "r-sub-1-msg-1", "r-sub-1-call-1")
    assert (second.id, nested.id, deep) == ("r-sub-2", "r-sub-2-sub-1", "r-sub-2-sub-1-msg-1")
    assert ctx.say("parent") == "r-msg-1"


def test_a_nested_subagent_names_its_parent_invocation() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("planner") as planner, planner.subagent("critic") as critic:
        critic.say("Fine.")
    events = ctx.receiver.drain()

    started = [e for e in events if isinstance(e, SubagentStartedEvent)]
    assert [(s.subagent_run_id, s.parent_subagent_run_id) for s in started] == [
        ("r-sub-1", None),
        ("r-sub-1-sub-1", "r-sub-1"),
    ]
    assert [e.type for e in events if e.type.startswith("SUBAGENT")] == [
        "SUBAGENT_STARTED",
        "SUBAGENT_STARTED",
        "SUBAGENT_FINISHED",
        "SUBAGENT_FINISHED",
    ]
    assert_whole(events)


def test_a_subagent_started_inside_an_open_tool_call_names_the_call_and_its_message() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.message() as text:
        text.delta("Let me ask.")
    with ctx.tool_call("ask_researcher", parent_message_id=text.id) as call:
        with ctx.subagent("researcher") as sub:
            sub.say("Paris.")
        call.result("Paris.")
    with ctx.tool_call("ask_again") as orphan, ctx.subagent("researcher") as again:
        again.say("Still Paris.")
        orphan.end()

    started = [e for e in ctx.receiver.drain() if isinstance(e, SubagentStartedEvent)]
    assert [(s.parent_tool_call_id, s.parent_message_id) for s in started] == [
        (call.id, text.id),
        (orphan.id, None),
    ]


def test_the_parent_and_a_subagent_may_each_hold_a_block_open_but_not_two() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.message() as parent, ctx.subagent("researcher") as sub:
        parent.delta("Asking. ")
        with sub.message() as own:
            own.delta("Reading.")
            parent.delta("Still asking.")
            with pytest.raises(UsageError, match=r"cannot open a tool call: text message "):
                sub.tool_call("f")
        with pytest.raises(UsageError, match=r"cannot open a text message: text message 'r-msg-1'"):
            ctx.message()
    events = ctx.receiver.drain()

    contents = [
        (e.subagent_run_id, e.delta) for e in events if isinstance(e, TextMessageContentEvent)
    ]
    assert contents == [(None, "Asking. "), ("r-sub-1", "Reading."), (None, "Still asking.")]
    assert_whole(events)


def test_leaving_the_block_closes_the_subagents_blocks_but_not_the_parents() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("researcher") as sub:
        left = sub.message()
        left.delta("Half")
        with sub.subagent("critic") as critic:
            critic.reasoning().delta("Hmm")
            assert [h.describe() for h in critic.context.open_handles] == [
                "reasoning block 'r-sub-1-sub-1-msg-1'"
            ]
        parents = ctx.message()
        parents.delta("Meanwhile.")
    events = ctx.receiver.drain()

    assert (left.closed, parents.closed) == (True, False)
    assert tags(events)[-3:] == [
        ("TEXT_MESSAGE_CONTENT", None),
        ("TEXT_MESSAGE_END", "r-sub-1"),
        ("SUBAGENT_FINISHED", "r-sub-1"),
    ]
    parents.end()
    assert_whole([*events, *ctx.receiver.drain()])


def test_finish_gives_the_result_and_ends_the_invocation_at_once() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("researcher") as sub:
        sub.say("Paris.")
        sub.finish(result={"city": "Paris"})
        with pytest.raises(UsageError, match=r"cannot call say\(\) on subagent 'r-sub-1'"):
            sub.say("more")
        with pytest.raises(UsageError, match=r"cannot call finish\(\)"):
            sub.finish()
        ctx.say("The parent goes on.")
    events = ctx.receiver.drain()

    finished = [e for e in events if isinstance(e, SubagentFinishedEvent)]
    assert [f.model_dump(by_alias=True, exclude_none=True) for f in finished] == [
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "r-sub-1", "result": {"city": "Paris"}}
    ]
    assert events[-1].type == "TEXT_MESSAGE_END"


def test_a_result_set_on_the_context_goes_out_when_the_block_is_left() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("researcher") as sub:
        sub.context.result = "Paris"

    assert ctx.receiver.drain()[-1] == SubagentFinishedEvent(
        subagent_run_id="r-sub-1", result="Paris"
    )


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        (float("nan"), "the root is NaN or an infinity"),
        ({"k": {1, 2}}, "/k is a set"),
        (["\ud800"], "it holds text that is not valid Unicode"),
    ],
    ids=["nan", "set", "surrogate"],
)
def test_a_result_that_is_not_json_is_refused_by_finish_and_the_invocation_still_closes(
    result: object, problem: str
) -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("researcher") as sub:
        with pytest.raises(
            UsageError,
            match=rf"the result given to finish\(\) on subagent 'r-sub-1' \(researcher\) must "
            rf"be a JSON value, but {problem}",
        ):
            sub.finish(result=cast("JsonValue", result))
        assert sub.context.result is None
    events = ctx.receiver.drain()

    assert events[-1] == SubagentFinishedEvent(subagent_run_id="r-sub-1")
    assert_whole(events)


def test_a_subagent_agent_setting_a_result_that_is_not_json_ends_it_with_an_error() -> None:
    async def researcher(ctx: Ctx) -> None:
        ctx.result = {"when": {1, 2}}

    async def supervisor(ctx: Ctx) -> None:
        delegation = await ctx.subagent("researcher", contain=True).run(researcher)
        ctx.say(f"The researcher failed: {delegation.error}.")

    events = asyncio.run(collect(supervisor, ask()))

    assert_valid(events)
    errors = [e for e in events if isinstance(e, SubagentErrorEvent)]
    assert [(e.subagent_run_id, e.code) for e in errors] == [("r-sub-1", "USAGE_ERROR")]
    assert events[-1].type == "RUN_FINISHED"


def test_finishing_on_interrupts_suspends_the_invocation_with_their_ids() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    question = Interrupt(id="ask-1", reason="confirmation", message="Book it?")

    with ctx.subagent("booker") as sub:
        sub.finish(interrupts=[question])

    assert ctx.receiver.drain()[-1].model_dump(by_alias=True, exclude_none=True) == {
        "type": "SUBAGENT_FINISHED",
        "subagentRunId": "r-sub-1",
        "outcome": {"type": "suspended", "interruptIds": ["ask-1"]},
    }
    assert sub.interrupts == (question.model_copy(update={"subagent_run_id": "r-sub-1"}),)


def test_an_exception_ends_the_invocation_with_a_code_and_no_text_then_propagates() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    sub = ctx.subagent("researcher")

    def fail_half_way() -> None:
        with sub:
            sub.message().delta("Half a")
            msg = "a secret"
            raise ValueError(msg)

    with pytest.raises(ValueError, match="a secret"):
        fail_half_way()
    events = ctx.receiver.drain()

    assert tags(events[-2:]) == [("TEXT_MESSAGE_END", "r-sub-1"), ("SUBAGENT_ERROR", "r-sub-1")]
    assert events[-1] == SubagentErrorEvent(
        subagent_run_id="r-sub-1",
        code="AGENT_ERROR",
        message="the subagent failed with an unexpected error",
    )
    assert b"secret" not in b"".join(event_json(e) for e in events)
    assert isinstance(sub.error, ValueError)
    assert ctx.open_handles == ()


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (AgentError("no notes on that"), "AGENT_ERROR", "no notes on that"),
        (UsageError("a secret"), "USAGE_ERROR", "the subagent used the agui SDK in a way it does "),
        (SystemExit(3), "AGENT_EXIT", "the subagent tried to exit"),
    ],
)
def test_a_subagent_error_has_the_code_and_message_a_run_error_would(
    error: BaseException, code: str, message: str
) -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with pytest.raises(type(error)), ctx.subagent("researcher"):
        raise error
    last = ctx.receiver.drain()[-1]

    assert isinstance(last, SubagentErrorEvent)
    assert (last.code, last.message[: len(message)]) == (code, message)


def test_a_with_block_always_propagates_its_exception_even_when_it_contains_runs() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    sub = ctx.subagent("researcher", contain=True)

    def fail() -> None:
        with sub:
            message = "no notes on that"
            raise AgentError(message)

    with pytest.raises(AgentError, match="no notes"):
        fail()

    assert [e.type for e in ctx.receiver.drain()] == ["SUBAGENT_STARTED", "SUBAGENT_ERROR"]


async def stops(ctx: Ctx) -> None:
    ctx.token.cancel()
    ctx.say("too late")


async def cancelled_task(_ctx: Ctx) -> None:
    raise asyncio.CancelledError


@pytest.mark.parametrize(
    ("agent", "error"), [(stops, Cancelled), (cancelled_task, asyncio.CancelledError)]
)
def test_a_cancellation_is_never_contained(
    agent: Callable[[Ctx], Awaitable[None]], error: type[BaseException]
) -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with pytest.raises(error):
        asyncio.run(ctx.subagent("researcher", contain=True).run(agent))

    assert ctx.receiver.drain()[-1] == SubagentErrorEvent(
        subagent_run_id="r-sub-1", code="CANCELLED", message="the run was cancelled"
    )


def test_a_subagent_cannot_send_the_runs_own_boundaries() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("rogue") as sub, pytest.raises(UsageError, match=r"a run's boundaries are"):
        sub.emit(RunFinishedEvent(thread_id="t", run_id="r"))


@pytest.mark.parametrize(
    "end",
    [
        SubagentFinishedEvent(subagent_run_id="r-sub-1"),
        SubagentErrorEvent(subagent_run_id="r-sub-1", message="gave up"),
    ],
    ids=["finished", "error"],
)
def test_a_subagent_cannot_send_its_own_end_through_its_handle(end: Event) -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with (
        pytest.raises(UsageError, match=r"call finish\(result=\.\.\.\) or leave the block"),
        ctx.subagent("rogue") as sub,
    ):
        sub.emit(end)

    events = ctx.receiver.drain()
    assert tags(events) == [("SUBAGENT_STARTED", "r-sub-1"), ("SUBAGENT_ERROR", "r-sub-1")]
    assert_whole(events)
    assert ctx.open_handles == ()


@pytest.mark.parametrize(
    "end",
    [
        SubagentFinishedEvent(subagent_run_id="r-sub-1"),
        SubagentErrorEvent(subagent_run_id="r-sub-1", message="gave up"),
    ],
    ids=["finished", "error"],
)
def test_an_agent_inside_a_subagent_cannot_send_the_subagents_end_through_its_context(
    end: Event,
) -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with (
        pytest.raises(UsageError, match=r"for subagent 'r-sub-1' from inside it: its handle"),
        ctx.subagent("rogue") as sub,
    ):
        sub.context.emit(end)

    events = ctx.receiver.drain()
    assert tags(events) == [("SUBAGENT_STARTED", "r-sub-1"), ("SUBAGENT_ERROR", "r-sub-1")]
    assert_whole(events)
    assert ctx.open_handles == ()


def test_a_subagent_may_send_the_end_of_an_invocation_it_started_by_hand() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("a") as sub:
        sub.emit(SubagentStartedEvent(subagent_run_id="x", name="b", parent_subagent_run_id=sub.id))
        sub.emit(SubagentFinishedEvent(subagent_run_id="x"))

    events = ctx.receiver.drain()
    assert tags(events) == [
        ("SUBAGENT_STARTED", "r-sub-1"),
        ("SUBAGENT_STARTED", "x"),
        ("SUBAGENT_FINISHED", "x"),
        ("SUBAGENT_FINISHED", "r-sub-1"),
    ]
    assert_whole(events)


def test_an_event_already_tagged_keeps_its_tag() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with ctx.subagent("a") as a, a.subagent("b") as b:
        b.emit(CustomEvent(name="x", value=1, subagent_run_id="r-sub-1"))

    custom = [e for e in ctx.receiver.drain() if isinstance(e, CustomEvent)]
    assert [e.subagent_run_id for e in custom] == ["r-sub-1"]


def test_a_subagents_state_events_move_the_baseline_so_the_next_one_is_a_delta() -> None:
    notes: list[JsonValue] = ["a long note about Paris and its towers"] * 4
    big: dict[str, JsonValue] = {"notes": notes, "n": 0}
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r", state=big))

    with ctx.subagent("researcher") as sub:
        sub.publish_state()
        cast("dict[str, JsonValue]", sub.state)["n"] = 1
        sub.publish_state()
    cast("dict[str, JsonValue]", ctx.state)["n"] = 2
    ctx.publish_state()
    events = ctx.receiver.drain()

    published = [e for e in events if isinstance(e, (StateSnapshotEvent, StateDeltaEvent))]
    assert tags(published) == [
        ("STATE_SNAPSHOT", "r-sub-1"),
        ("STATE_DELTA", "r-sub-1"),
        ("STATE_DELTA", None),
    ]


def test_the_run_driver_closes_an_abandoned_subagent_before_the_run_ends() -> None:
    async def agent(ctx: Ctx) -> None:
        sub = ctx.subagent("researcher")
        sub.message().delta("never ended")

    with pytest.warns(ResourceWarning):
        events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))

    assert tags(events[-3:]) == [
        ("TEXT_MESSAGE_END", "r-sub-1"),
        ("SUBAGENT_FINISHED", "r-sub-1"),
        ("RUN_FINISHED", None),
    ]


def test_text_that_is_not_unicode_is_refused_before_the_subagent_starts() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with pytest.raises(UsageError, match=r"the task given to ctx.subagent\(\)"):
        ctx.subagent("researcher", task="\ud800")

    assert ctx.receiver.drain() == []


# -- delegation --------------------------------------------------------------------------------


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: Paris"


def researcher(*turns: Turn) -> ToolLoopAgent:
    script = turns or (Turn.tool_calls(Call("lookup", {"topic": "capital"})), Turn.text("Paris."))
    return ToolLoopAgent(ScriptedModel(list(script)), tools=[lookup], instructions="Research.")


def ask(text: str = "What is the capital of France?") -> RunAgentInput:
    return RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[UserMessage(id="u1", content=text)],
        protocol_version="1.0",
    )


def test_a_tool_loop_runs_as_a_subagent_on_its_task_and_returns_its_answer() -> None:
    seen: list[Delegation] = []

    async def supervisor(ctx: Ctx) -> None:
        agent = researcher()
        done = await ctx.subagent("researcher", task="capital of France?").run(agent)
        seen.append(done)
        ctx.say(f"The researcher says: {done.result}")

    question = ask()
    events = asyncio.run(collect(supervisor, question))

    assert seen == [Delegation("r-sub-1", result="Paris.")]
    assert_valid(events)
    folded = fold(events, messages=question.messages)
    assert [(m.role, m.subagent_run_id) for m in folded.messages] == [
        ("user", None),
        ("assistant", "r-sub-1"),
        ("tool", "r-sub-1"),
        ("assistant", "r-sub-1"),
        ("assistant", None),
    ]
    assert folded.messages[-1].content == "The researcher says: Paris."
    assert [(s.id, s.name, s.status, s.result) for s in folded.subagents] == [
        ("r-sub-1", "researcher", "finished", "Paris.")
    ]


def test_a_delegated_agent_sees_only_its_task() -> None:
    heard: list[RunAgentInput] = []

    async def listener(ctx: Ctx) -> None:
        heard.append(ctx.input)
        ctx.result = "noted"

    async def supervisor(ctx: Ctx) -> None:
        done = await ctx.subagent("listener", task="Just this.").run(listener)
        assert done.result == "noted"

    offered = ask().model_copy(update={"tools": [lookup.spec]})
    asyncio.run(collect(supervisor, offered))

    [sub] = heard
    assert (sub.run_id, sub.thread_id, sub.tools) == ("r-sub-1", "t", [])
    assert [(m.role, m.content) for m in sub.messages] == [("user", "Just this.")]


def test_a_delegated_interrupt_suspends_the_subagent_and_the_supervisor_passes_it_up() -> None:
    async def booker(_ctx: Ctx) -> RunOutcome:
        return RunOutcome.interrupt([Interrupt(id="book-1", reason="confirmation")])

    async def supervisor(ctx: Ctx) -> RunOutcome | None:
        done = await ctx.subagent("booker").run(booker)
        return RunOutcome.interrupt(list(done.interrupts)) if done.suspended else None

    events = asyncio.run(collect(supervisor, ask()))

    finished = [e for e in events if isinstance(e, SubagentFinishedEvent)]
    assert [f.outcome for f in finished] == [SubagentSuspendedOutcome(interrupt_ids=["book-1"])]
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.outcome is not None
    assert last.outcome.type == "interrupt"
    assert [i.subagent_run_id for i in last.outcome.interrupts] == ["r-sub-1"]


def test_a_failing_delegated_agent_fails_the_invocation_and_then_the_run() -> None:
    async def broken(_ctx: Ctx) -> None:
        msg = "no notes"
        raise AgentError(msg)

    async def supervisor(ctx: Ctx) -> None:
        await ctx.subagent("broken").run(broken)

    events = asyncio.run(collect(supervisor, ask()))

    assert [e.type for e in events] == [
        "RUN_STARTED",
        "SUBAGENT_STARTED",
        "SUBAGENT_ERROR",
        "RUN_ERROR",
    ]


def test_a_contained_delegation_returns_the_error_code_and_the_supervisor_goes_on() -> None:
    async def broken(_ctx: Ctx) -> None:
        msg = "a secret"
        raise ValueError(msg)

    async def supervisor(ctx: Ctx) -> None:
        with ctx.subagent("broken", contain=True) as sub:
            done = await sub.run(broken)
        ctx.say(f"failed with {done.error}")

    events = asyncio.run(collect(supervisor, ask()))

    assert fold(events).messages[-1].content == "failed with AGENT_ERROR"
    assert events[-1].type == "RUN_FINISHED"


def test_a_supervisor_hands_a_question_to_a_researcher_through_its_tool_loop() -> None:
    ask_researcher = subagent_tool(researcher(), name="researcher", description="Finds facts.")
    supervisor = ToolLoopAgent(
        ScriptedModel(
            [
                Turn.tool_calls(Call("ask_researcher", {"task": "capital of France?"})),
                Turn.text("It is Paris."),
            ]
        ),
        tools=[ask_researcher],
    )

    events = asyncio.run(collect(supervisor, ask()))

    assert_valid(events)
    [started] = [e for e in events if isinstance(e, SubagentStartedEvent)]
    [call] = [e for e in events if e.type == "TOOL_CALL_START" and e.subagent_run_id is None]
    assert started.parent_tool_call_id == call.tool_call_id
    results = [e for e in events if e.type == "TOOL_CALL_RESULT"]
    assert [(r.subagent_run_id, r.content) for r in results] == [
        ("r-sub-1", "capital: Paris"),
        (None, "Paris."),
    ]


@pytest.mark.parametrize(
    ("agent_turns", "answer"),
    [
        ((Turn.text(""),), "The researcher gave no answer."),
        ((Turn.tool_calls(Call("nothing", {})),) * 2, "Error: the researcher failed (AGENT_ERROR)"),
    ],
)
def test_a_subagent_tool_tells_the_model_what_came_of_the_delegation(
    agent_turns: tuple[Turn, ...], answer: str
) -> None:
    agent = ToolLoopAgent(ScriptedModel(list(agent_turns)), max_turns=1)
    ask_it = subagent_tool(agent, name="researcher", description="Finds facts.")

    async def supervisor(ctx: Ctx) -> None:
        with ctx.tool_call("ask_researcher") as call:
            result = await ask_it.run({"task": "?"}, ctx=ctx, call_id=call.id)
            call.result(result.content)

    events = asyncio.run(collect(supervisor, ask()))

    assert [e.content for e in events if e.type == "TOOL_CALL_RESULT"][-1] == answer


def test_a_subagent_tool_reports_a_delegation_stopped_on_an_interrupt_and_json_results() -> None:
    async def asks(_ctx: Ctx) -> RunOutcome:
        return RunOutcome.interrupt([Interrupt(id="i1", reason="confirmation")])

    async def structured(ctx: Ctx) -> None:
        ctx.result = {"city": "Paris"}

    async def supervisor(ctx: Ctx) -> None:
        for agent in (asks, structured):
            tool_ = subagent_tool(agent, name="helper", description="Helps.", tool_name="help")
            with ctx.tool_call("help") as call:
                call.result((await tool_.run({"task": "?"}, ctx=ctx, call_id=call.id)).content)

    events = asyncio.run(collect(supervisor, ask()))

    assert_valid(events)
    stopped = (
        "The helper could not finish: it needed the user's answer (confirmation), which it cannot "
        "ask for inside a delegated task, so that step did not run. Tell the user, or do it "
        "another way."
    )
    assert [e.content for e in events if e.type == "TOOL_CALL_RESULT"] == [
        stopped,
        '{"city":"Paris"}',
    ]
    # Nobody could answer the interrupt: the invocation ends, not suspended, and the app is told.
    finished = [e for e in events if isinstance(e, SubagentFinishedEvent)]
    assert [e.outcome for e in finished] == [None, None]
    [warning] = [e for e in events if e.type == "CUSTOM"]
    assert warning.model_dump(include={"subagent_run_id", "name", "value"}) == {
        "subagentRunId": "r-sub-1",
        "name": "agui.warning",
        "value": {
            "message": "a delegated subagent stopped on an interrupt nobody can answer inside "
            "its task; it was ended instead",
            "interrupt": "i1",
        },
    }


def test_a_delegated_call_that_needs_approval_is_answered_as_not_run_and_left_to_no_one() -> None:
    @tool(requires_approval=True)
    def wire_money(amount: int) -> str:
        """Send money."""
        return f"sent {amount}"

    banker = ToolLoopAgent(
        ScriptedModel([Turn.tool_calls(Call("wire_money", {"amount": 5}))]), tools=[wire_money]
    )
    supervisor = ToolLoopAgent(
        ScriptedModel([Turn.tool_calls(Call("ask_banker", {"task": "pay"})), Turn.text("No.")]),
        tools=[subagent_tool(banker, name="banker", description="Moves money.")],
    )

    events = asyncio.run(collect(supervisor, ask()))

    assert_valid(events)
    results = [(e.subagent_run_id, e.content) for e in events if e.type == "TOOL_CALL_RESULT"]
    not_run = (
        "Error: this call needs the user's answer (an approval), which cannot be asked for inside "
        "a delegated task; it did not run"
    )
    assert results[0] == ("r-sub-1", not_run)
    assert str(results[1][1]).startswith("The banker could not finish: it needed the user's")
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.outcome == SuccessOutcome()  # no call left for the client to run


# -- external judges ---------------------------------------------------------------------------


async def refuses(_ctx: Ctx) -> None:
    message = "no"
    raise AgentError(message)


def full_stream(*, parts: bool = True) -> list[Event]:
    async def agent(ctx: Ctx) -> None:
        with ctx.message() as parent:
            parent.delta("Asking.")
            with ctx.subagent("researcher", description="Finds facts") as sub:
                everything(sub, parts=parts)
                with sub.subagent("critic") as critic:
                    critic.say("Looks right.")
        await ctx.subagent("broken", contain=True).run(refuses)
        with ctx.subagent("booker") as booker:
            booker.finish(interrupts=[Interrupt(id="i1", reason="confirmation")])

    return asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r", state={})))


def test_the_official_python_models_read_every_subagent_event_we_write() -> None:
    for event in full_stream():
        wire = json.loads(event_json(event))
        parsed = _OFFICIAL.validate_python(wire)
        assert json.loads(parsed.model_dump_json(by_alias=True, exclude_none=True)) == wire


@pytest.mark.ag_ui_validate
def test_ag_ui_validate_accepts_a_stream_with_subagents() -> None:
    from ag_ui_validate.pytest_plugin import validate_agui  # noqa: PLC0415 - Python >= 3.11 only

    # ag-ui-validate predates tool results made of parts, which it reports as an error.
    frames = [encode_sse(event) for event in full_stream(parts=False)]

    report = validate_agui([frame[len(b"data: ") : -2].decode() for frame in frames])

    assert [d.message for d in report.diagnostics if d.severity in ("error", "warning")] == []
    assert report.summary.errors == 0


def test_a_plain_run_queues_records_while_a_subagent_takes_the_event_path() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    ctx.say("parent")
    with ctx.subagent("researcher") as sub:
        sub.say("sub")
    items = run_receiver(ctx.receiver).items()

    assert [type(item).__name__ for item in items] == [
        "tuple",
        "tuple",
        "tuple",
        "SubagentStartedEvent",
        "TextMessageStartEvent",
        "TextMessageContentEvent",
        "TextMessageEndEvent",
        "SubagentFinishedEvent",
    ]
    assert isinstance(items[4], TextMessageStartEvent)
