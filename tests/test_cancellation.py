"""Cancellation: the token, `until_cancelled`, and how a cancelled run still ends cleanly."""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import cast

import pytest
from pydantic import JsonValue

from agui import CancellationToken, EventType, RunAgentInput, RunContext, RunOutcome, run
from agui.errors import Cancelled, UnclosedHandleWarning, UsageError
from agui.events import CustomEvent, Event, RunErrorEvent, RunFinishedEvent, TextMessageEndEvent
from agui.runner import drive
from agui.testing import assert_valid
from agui.types import CancelledOutcome, Interrupt

Ctx = RunContext[JsonValue]


def request() -> RunAgentInput:
    return RunAgentInput(thread_id="t", run_id="r")


def new() -> tuple[Ctx, list[Event]]:
    ctx, receiver = RunContext.new(request())
    return ctx, receiver.drain()


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def finished(events: Sequence[Event]) -> RunFinishedEvent:
    last = events[-1]
    assert isinstance(last, RunFinishedEvent), types_of(events)
    return last


async def forever() -> None:
    await asyncio.sleep(3600)


# -- the token --------------------------------------------------------------------------------


def test_a_new_token_has_not_tripped() -> None:
    token = CancellationToken()
    assert not token.cancelled
    assert token.reason == ""


def test_cancel_trips_the_token_once_and_keeps_the_first_reason() -> None:
    token = CancellationToken()
    token.cancel("the client disconnected")
    token.cancel("a second reason")
    assert token.cancelled
    assert token.reason == "the client disconnected"


def test_cancel_without_a_reason_gives_a_default_one() -> None:
    token = CancellationToken()
    token.cancel()
    assert token.reason == "the run was cancelled"


def test_wait_returns_at_once_on_a_tripped_token() -> None:
    token = CancellationToken()
    token.cancel()
    asyncio.run(asyncio.wait_for(token.wait(), timeout=1))


def test_wait_wakes_every_waiter_when_the_token_trips() -> None:
    token = CancellationToken()

    async def main() -> None:
        waiters = [asyncio.ensure_future(token.wait()) for _ in range(3)]
        await asyncio.sleep(0)
        assert not any(w.done() for w in waiters)
        token.cancel()
        await asyncio.wait_for(asyncio.gather(*waiters), timeout=1)

    asyncio.run(main())
    assert token._waiters == []  # pyright: ignore[reportPrivateUsage]


def test_a_waiter_that_is_cancelled_removes_itself() -> None:
    token = CancellationToken()

    async def main() -> None:
        waiter = asyncio.ensure_future(token.wait())
        await asyncio.sleep(0)
        assert len(token._waiters) == 1  # pyright: ignore[reportPrivateUsage]
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)

    asyncio.run(main())
    assert token._waiters == []  # pyright: ignore[reportPrivateUsage]


def test_tripping_the_token_skips_a_waiter_that_was_cancelled_but_has_not_run() -> None:
    token = CancellationToken()

    async def main() -> None:
        waiter = asyncio.ensure_future(token.wait())
        await asyncio.sleep(0)
        waiter.cancel()
        token.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter

    asyncio.run(main())
    assert token.cancelled


# -- the context ------------------------------------------------------------------------------


def test_the_context_reports_its_token() -> None:
    ctx, _ = new()
    before = ctx.cancelled
    ctx.check_cancelled()
    ctx.token.cancel("server shutdown")
    assert (before, ctx.cancelled) == (False, True)
    with pytest.raises(Cancelled, match="server shutdown") as caught:
        ctx.check_cancelled()
    assert caught.value.code == "CANCELLED"


Action = Callable[[Ctx], object]
ACTIONS: list[tuple[str, Action]] = [
    ("say", lambda ctx: ctx.say("hi")),
    ("think", lambda ctx: ctx.think("hmm")),
    ("message", lambda ctx: ctx.message()),
    ("reasoning", lambda ctx: ctx.reasoning()),
    ("tool_call", lambda ctx: ctx.tool_call("f")),
    ("step", lambda ctx: ctx.step("s")),
    ("emit", lambda ctx: ctx.emit(CustomEvent(name="x", value=None))),
    ("publish_state", lambda ctx: ctx.publish_state()),
]


@pytest.mark.parametrize("act", [a[1] for a in ACTIONS], ids=[a[0] for a in ACTIONS])
def test_every_emit_after_the_token_trips_raises_cancelled(act: Action) -> None:
    ctx, events = RunContext.new(request())
    ctx.token.cancel("stop")
    with pytest.raises(Cancelled, match="stop"):
        act(ctx)
    assert events.drain() == []


def test_a_block_left_by_cancelled_still_sends_its_closing_events() -> None:
    ctx, events = RunContext.new(request())

    def cancel_while_thinking() -> None:
        with ctx.step("s"), ctx.reasoning() as thinking:
            thinking.delta("a")
            ctx.token.cancel("stop")
            thinking.delta("b")

    with pytest.raises(Cancelled, match="stop"):
        cancel_while_thinking()
    assert types_of(events.drain())[-3:] == [
        EventType.REASONING_MESSAGE_END,
        EventType.REASONING_END,
        EventType.STEP_FINISHED,
    ]


def test_until_cancelled_returns_the_result_when_the_work_finishes_first() -> None:
    ctx, _ = new()

    async def work() -> int:
        await asyncio.sleep(0)
        return 7

    assert asyncio.run(ctx.until_cancelled(work())) == 7


def test_until_cancelled_lets_an_exception_from_the_work_propagate() -> None:
    ctx, _ = new()

    async def work() -> int:
        message = "the model is down"
        raise ConnectionError(message)

    with pytest.raises(ConnectionError, match="the model is down"):
        asyncio.run(ctx.until_cancelled(work()))


def test_until_cancelled_stops_the_work_and_raises_cancelled_when_the_token_trips() -> None:
    ctx, _ = new()
    stopped: list[str] = []

    async def work() -> None:
        try:
            await forever()
        finally:
            stopped.append("work")

    async def main() -> None:
        waiting = asyncio.ensure_future(ctx.until_cancelled(work()))
        await asyncio.sleep(0)
        ctx.token.cancel("user pressed stop")
        with pytest.raises(Cancelled, match="user pressed stop"):
            await waiting

    asyncio.run(main())
    assert stopped == ["work"]


def test_until_cancelled_on_a_tripped_token_raises_at_once_and_closes_the_coroutine() -> None:
    ctx, _ = new()
    ctx.token.cancel("already")
    work = forever()
    try:
        with pytest.raises(Cancelled, match="already"):
            asyncio.run(ctx.until_cancelled(work))
        assert inspect.getcoroutinestate(work) == inspect.CORO_CLOSED
    finally:
        work.close()


def test_until_cancelled_on_a_tripped_token_leaves_a_future_it_was_given_alone() -> None:
    ctx, _ = new()
    ctx.token.cancel("already")

    async def main() -> bool:
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        with pytest.raises(Cancelled, match="already"):
            await ctx.until_cancelled(future)
        return future.cancelled()

    assert asyncio.run(main()) is False


def test_cancelling_the_task_awaiting_until_cancelled_stops_the_work() -> None:
    ctx, _ = new()
    stopped: list[str] = []

    async def work() -> None:
        try:
            await forever()
        finally:
            stopped.append("work")

    async def main() -> None:
        waiting = asyncio.ensure_future(ctx.until_cancelled(work()))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.sleep(0)

    asyncio.run(main())
    assert stopped == ["work"]
    assert ctx.token._waiters == []  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("exit_", [SystemExit(3), KeyboardInterrupt()], ids=["exit", "interrupt"])
def test_until_cancelled_raises_a_systemexit_of_the_work_in_its_awaiter_not_the_loop(
    exit_: BaseException,
) -> None:
    """asyncio re-raises these out of the loop when they leave a task: past the run's driver."""
    token = CancellationToken()

    async def work() -> None:
        await asyncio.sleep(0)
        raise exit_

    async def main() -> str:
        try:
            await token.until_cancelled(work())
        except (SystemExit, KeyboardInterrupt) as error:
            return f"caught {type(error).__name__}, the loop still runs"
        return "not raised"

    expected = f"caught {type(exit_).__name__}, the loop still runs"
    assert asyncio.run(main()) == expected


@pytest.mark.parametrize("exit_", [SystemExit(3), KeyboardInterrupt()], ids=["exit", "interrupt"])
def test_a_run_whose_awaited_work_exits_ends_with_run_error_and_the_loop_lives_on(
    exit_: BaseException,
) -> None:
    async def agent(ctx: Ctx) -> None:
        async def work() -> None:
            await asyncio.sleep(0)
            raise exit_

        await ctx.until_cancelled(work())

    async def main() -> list[Event]:
        return [event async for event in run(agent, request())]

    events = asyncio.run(main())
    assert_valid(events)
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert last.code == ("AGENT_EXIT" if isinstance(exit_, SystemExit) else "AGENT_INTERRUPTED")


def test_work_stopped_with_its_awaiter_leaves_no_exception_never_retrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Stopped, the work often fails in its own way (its next emit raises `Cancelled`)."""
    token = CancellationToken()
    reported: list[dict[str, object]] = []

    async def work(error: BaseException) -> None:
        try:
            await forever()
        except asyncio.CancelledError:
            raise error from None

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: reported.append(context)
        )
        for error in (Cancelled("the reader left"), RuntimeError("cleanup failed")):
            waiting = asyncio.ensure_future(token.until_cancelled(work(error)))
            await asyncio.sleep(0)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            await asyncio.sleep(0)
        gc.collect()

    with caplog.at_level(logging.DEBUG, logger="agui"):
        asyncio.run(main())
    assert reported == []
    assert [r.getMessage() for r in caplog.records] == [
        "an await stopped by cancellation ended with RuntimeError('cleanup failed')"
    ]


# -- cancelled runs ---------------------------------------------------------------------------


AgentFn = Callable[[Ctx], Awaitable[RunOutcome | None]]


def stream_until(agent: AgentFn, *, cancel_after: EventType) -> tuple[list[Event], str]:
    """Read a run and trip its token once an event of type `cancel_after` arrives."""
    token = CancellationToken()

    async def main() -> list[Event]:
        events: list[Event] = []
        async for event in run(agent, request(), token=token):
            events.append(event)
            if event.type == cancel_after:
                token.cancel("the reader had enough")
        return events

    events = asyncio.run(main())
    assert_valid(events)
    return events, token.reason


def test_a_run_whose_token_trips_closes_open_blocks_then_finishes_cancelled() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.step("loop"), ctx.message() as message:
            while True:
                message.delta("tick ")
                await asyncio.sleep(0)

    events, reason = stream_until(agent, cancel_after=EventType.TEXT_MESSAGE_CONTENT)
    assert reason == "the reader had enough"
    assert types_of(events)[-3:] == [
        EventType.TEXT_MESSAGE_END,
        EventType.STEP_FINISHED,
        EventType.RUN_FINISHED,
    ]
    assert finished(events).outcome == CancelledOutcome()


def test_an_agent_waiting_in_until_cancelled_is_woken_and_the_run_finishes_cancelled() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.tool_call("slow_tool") as call:
            call.result_json(await ctx.until_cancelled(forever()))

    events, _ = stream_until(agent, cancel_after=EventType.TOOL_CALL_START)
    assert types_of(events) == [
        EventType.RUN_STARTED,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_END,
        EventType.RUN_FINISHED,
    ]
    assert finished(events).outcome == CancelledOutcome()


def test_an_agent_raising_cancelled_finishes_the_run_cancelled() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.message() as message:
            message.delta("stopping")
            reason = "the agent gave up"
            raise Cancelled(reason)

    events, _ = stream_until(agent, cancel_after=EventType.RUN_FINISHED)
    assert types_of(events)[-2:] == [EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]
    assert finished(events).outcome == CancelledOutcome()


async def _returns_none(ctx: Ctx) -> None:
    ctx.token.cancel("server shutdown")


async def _swallows_cancelled(ctx: Ctx) -> None:
    ctx.token.cancel("server shutdown")
    try:
        ctx.say("too late")
    except Cancelled:
        return


async def _returns_an_interrupt(ctx: Ctx) -> RunOutcome:
    ctx.token.cancel("server shutdown")
    return RunOutcome.interrupt([Interrupt(id="i1", reason="confirmation")])


@pytest.mark.parametrize(
    "agent",
    [_returns_none, _swallows_cancelled, _returns_an_interrupt],
    ids=["returns-none", "swallows-cancelled", "returns-interrupt"],
)
def test_an_agent_that_returns_after_the_token_tripped_still_finishes_cancelled(
    agent: AgentFn,
) -> None:
    events, _ = stream_until(agent, cancel_after=EventType.RUN_FINISHED)
    assert types_of(events) == [EventType.RUN_STARTED, EventType.RUN_FINISHED]
    assert finished(events).outcome == CancelledOutcome()


def test_a_block_that_cannot_close_during_cancellation_ends_the_run_with_run_error() -> None:
    async def agent(ctx: Ctx) -> None:
        message = ctx.message()
        ctx.emit(TextMessageEndEvent(message_id=message.id))
        reason = "stop"
        raise Cancelled(reason)

    with pytest.warns(UnclosedHandleWarning, match="'r-msg-1' was still open when its run"):
        events, _ = stream_until(agent, cancel_after=EventType.RUN_FINISHED)
    assert types_of(events) == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
    ]
    last = events[-1]
    assert isinstance(last, RunErrorEvent)
    assert last.code == "PROTOCOL_VIOLATION"


def test_closing_the_run_iterator_early_cancels_the_agent_and_runs_its_finally() -> None:
    unwound: list[str] = []
    token = CancellationToken()

    async def agent(ctx: Ctx) -> None:
        try:
            ctx.say("hello")
            await forever()
        finally:
            unwound.append("finally")

    async def main() -> Event:
        stream = run(agent, request(), token=token)
        first = await anext(stream)
        await stream.aclose()
        return first

    first = asyncio.run(main())
    assert first.type == EventType.RUN_STARTED
    assert unwound == ["finally"]
    assert token.reason == "the event stream was closed by its reader"


def test_cancelling_the_driver_task_finishes_the_run_cancelled_and_reraises() -> None:
    ctx: Ctx = RunContext(request())

    async def agent(ctx: Ctx) -> None:
        with ctx.message() as message:
            message.delta("working")
            await forever()

    async def main() -> None:
        task = asyncio.ensure_future(drive(agent, ctx))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    events = ctx.receiver.drain()
    assert_valid(events)
    assert types_of(events)[-2:] == [EventType.TEXT_MESSAGE_END, EventType.RUN_FINISHED]
    assert finished(events).outcome == CancelledOutcome()
    assert ctx.receiver.closed


def test_on_cancel_callbacks_run_once_when_the_token_trips_or_at_once_after() -> None:
    token = CancellationToken()
    calls: list[str] = []
    token.on_cancel(lambda: calls.append("first"))
    token.on_cancel(lambda: calls.append("second"))
    assert calls == []
    token.cancel("stop")
    token.cancel("again")
    assert calls == ["first", "second"]
    token.on_cancel(lambda: calls.append("late"))
    assert calls == ["first", "second", "late"]


def broken_callback() -> None:
    message = "the model stream was already closed"
    raise RuntimeError(message)


def test_a_failing_on_cancel_callback_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = CancellationToken()
    calls: list[str] = []
    token.on_cancel(broken_callback)
    token.on_cancel(lambda: calls.append("second"))
    with caplog.at_level(logging.ERROR, logger="agui"):
        token.cancel("stop")
    assert token.cancelled
    assert calls == ["second"]
    assert "a cancellation callback failed" in caplog.text
    assert "the model stream was already closed" in caplog.text


def test_a_failing_on_cancel_callback_does_not_stop_closing_the_stream_from_cancelling_the_agent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    unwound: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ctx.token.on_cancel(broken_callback)
        try:
            await forever()  # not through the token: only the task's cancel stops it
        finally:
            unwound.append("finally")

    async def main() -> None:
        stream = run(agent, request())
        await anext(stream)
        await asyncio.sleep(0)
        await stream.aclose()
        assert unwound == ["finally"]  # before asyncio.run's teardown cancels what is left

    with caplog.at_level(logging.ERROR, logger="agui"):
        asyncio.run(main())


@pytest.mark.parametrize("reason", [None, 42, RuntimeError("gone")], ids=["none", "int", "error"])
def test_a_cancellation_reason_that_is_not_text_is_refused(reason: object) -> None:
    token = CancellationToken()
    with pytest.raises(UsageError, match="a cancellation reason is text, got a"):
        token.cancel(cast("str", reason))
    assert not token.cancelled
