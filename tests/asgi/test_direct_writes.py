"""Frames sent from the agent's own step, and what the pump takes over when it cannot be."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import warnings
from collections.abc import Awaitable, Callable, Coroutine

import pytest

from agui import RunAgentInput, RunContext
from agui._emit.record import Item
from agui.asgi import asgi_app
from agui.asgi._admission import Message
from agui.asgi._encoding import SSE
from agui.asgi._writer import MAX_SEND_BYTES, Writer
from agui.events import CustomEvent, RunFinishedEvent, TextMessageContentEvent
from agui.runner import drive as run_agent
from asgi_calls import BODY, App, Ctx, Exchange, call, drive, frame_count

QUIET = 0.01  # seconds between two events: longer than a burst's 2 ms


def test_an_event_after_a_quiet_spell_is_sent_from_the_step_that_emitted_it() -> None:
    async def main() -> tuple[Exchange, list[str]]:
        log: list[str] = []

        async def agent(ctx: Ctx) -> None:
            ctx.say("first")
            for index in range(3):
                await asyncio.sleep(QUIET)
                ctx.emit(CustomEvent(name="tick", value=index))
                await asyncio.sleep(0)
                log.append(f"resumed after {index}")

        def on_send(message: Message, exchange: Exchange) -> None:
            if message.get("body"):
                task = asyncio.current_task()
                assert task is not None
                log.append(f"{frame_count(exchange.body)} frames, sent by {task.get_name()}")

        return await call(asgi_app(agent), on_send=on_send), log

    exchange, log = drive(main())

    # The first batch goes out from the pump; each tick from the run's step, before it resumes;
    # the run's end from the step that ended it.
    assert log[0].startswith("4 frames, sent by ")
    assert log[0] != "4 frames, sent by agui run r"
    assert log[1:] == [
        "5 frames, sent by agui run r",
        "resumed after 0",
        "6 frames, sent by agui run r",
        "resumed after 1",
        "7 frames, sent by agui run r",
        "resumed after 2",
        "8 frames, sent by agui run r",
    ]
    assert len(exchange.events()) == 8


async def _serve(app: App, send: Callable[[Message], Awaitable[None]], gone: asyncio.Event) -> None:
    """POST a run to `app` in process; the client leaves once `gone` is set."""
    incoming: list[Message] = [{"type": "http.request", "body": BODY}]

    async def receive() -> Message:
        if incoming:
            return incoming.pop()
        await gone.wait()
        return {"type": "http.disconnect"}

    headers = [(b"content-type", b"application/json")]
    await app({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive, send)


def _gated(gate: asyncio.Event, exchange: Exchange) -> Callable[[Message], Awaitable[None]]:
    """A send that waits on `gate` for every body after the first, as a paused transport does."""

    async def send(message: Message) -> None:
        if message.get("body") and len(exchange.sent) > 1:
            await gate.wait()
        exchange.sent.append(message)

    return send


def test_a_send_that_waits_in_the_agents_step_is_finished_by_the_pump_weighing_what_follows() -> (
    None
):
    async def main() -> tuple[Exchange, list[int]]:
        gate = asyncio.Event()
        held: list[int] = []
        exchange = Exchange()

        async def agent(ctx: Ctx) -> None:
            with ctx.message() as message:
                await asyncio.sleep(QUIET)
                message.delta("a" * 1000)
                await asyncio.sleep(0)  # the step ends: its send waits on the gate
                message.delta("b" * 1000)
                held.append(ctx.receiver.queued_bytes)
                gate.set()
                await ctx.writable()

        await _serve(asgi_app(agent), _gated(gate, exchange), asyncio.Event())
        return exchange, held

    exchange, held = drive(main())

    assert held[0] > 2000  # the waiting send's frame and the delta queued behind it
    text = "".join(e.delta for e in exchange.events() if isinstance(e, TextMessageContentEvent))
    assert text == "a" * 1000 + "b" * 1000
    assert exchange.events()[-1].type == "RUN_FINISHED"


async def _second_send_stalls(send: Callable[[Message], Awaitable[None]]) -> list[str]:
    """A run sends "second" from its step after a quiet spell, then its client leaves."""
    log: list[str] = []
    gone = asyncio.Event()

    async def agent(ctx: Ctx) -> None:
        ctx.say("first")
        try:
            await asyncio.sleep(QUIET)
            ctx.say("second")
            await asyncio.sleep(0)  # the step ends, and sends "second"
            gone.set()
            await asyncio.Event().wait()
        finally:
            log.append(f"cancelled={ctx.cancelled}")

    def on_disconnect(run_input: RunAgentInput) -> None:
        log.append(f"told about {run_input.run_id}")

    await _serve(asgi_app(agent, on_disconnect=on_disconnect), send, gone)
    return log


def test_a_client_that_leaves_while_a_send_of_the_agents_step_waits_cancels_the_run() -> None:
    log = drive(_second_send_stalls(_gated(asyncio.Event(), Exchange())))

    assert log == ["cancelled=True", "told about r"]


@pytest.mark.parametrize("when", ["at-once", "after-waiting"])
def test_a_send_from_the_agents_step_that_fails_is_a_client_gone(when: str) -> None:
    exchange = Exchange()

    async def send(message: Message) -> None:
        if message.get("body") and len(exchange.sent) > 1:
            if when == "after-waiting":
                await asyncio.sleep(0)
            raise ConnectionResetError
        exchange.sent.append(message)

    assert drive(_second_send_stalls(send)) == ["cancelled=True", "told about r"]


def test_a_send_from_the_agents_step_that_raises_otherwise_is_logged_and_ends_the_stream(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("first")
        await asyncio.sleep(QUIET)
        ctx.say("second")
        await asyncio.Event().wait()  # the step ends here, and sends "second"

    def broken(message: Message) -> bool:
        return b"second" in message.get("body", b"")

    exchange = drive(call(asgi_app(agent), send_error=broken, send_exception=RuntimeError))

    assert "streaming failed; treating the client as gone" in caplog.text
    assert frame_count(exchange.body) == 4


def test_events_emitted_from_another_task_go_out_while_the_agent_waits_for_it() -> None:
    async def main() -> Exchange:
        seen = asyncio.Event()

        async def child(ctx: Ctx) -> None:
            await asyncio.sleep(QUIET)
            ctx.say("from a child task")
            await seen.wait()  # only the pump can send it: the agent is waiting for this task

        async def agent(ctx: Ctx) -> None:
            await asyncio.create_task(child(ctx))

        def on_send(message: Message, _exchange: Exchange) -> None:
            if b"from a child task" in message.get("body", b""):
                seen.set()

        return await call(asgi_app(agent), on_send=on_send)

    exchange = drive(main())

    assert [frame_count(body) for body in exchange.bodies] == [1, 3, 1, 0]


def test_a_large_or_broken_batch_after_a_quiet_spell_goes_out_as_the_pump_writes_it() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("first")
        await asyncio.sleep(QUIET)
        ctx.say("x" * (2 * MAX_SEND_BYTES))
        await asyncio.sleep(QUIET)
        ctx.emit(CustomEvent(name="ok", value=1))
        ctx.emit(CustomEvent(name="bad", value=float("nan")))

    exchange = drive(call(asgi_app(agent)))

    sizes = [len(body) for body in exchange.bodies]
    assert sizes[1:3] == [MAX_SEND_BYTES, MAX_SEND_BYTES]
    events = exchange.events()
    assert [e.type for e in events][-2:] == ["CUSTOM", "RUN_ERROR"]


def test_a_step_queueing_more_events_than_one_send_carries_goes_out_in_the_pumps_sends() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("first")
        await asyncio.sleep(QUIET)
        for index in range(1100):
            ctx.emit(CustomEvent(name="tick", value=index))
        await asyncio.sleep(QUIET)

    exchange = drive(call(asgi_app(agent)))

    assert [frame_count(body) for body in exchange.bodies] == [4, 1024, 76, 1, 0]
    assert [e.value for e in exchange.events() if isinstance(e, CustomEvent)] == list(range(1100))


def test_closing_the_run_coroutine_closes_the_agents() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        ctx: Ctx = RunContext(RunAgentInput(thread_id="t", run_id="r"))

        async def send(_message: Message) -> None:
            pass

        async def agent() -> None:
            try:
                await asyncio.Event().wait()
            finally:
                log.append("closed")

        run = Writer(send, ctx.receiver, None).run(agent)
        run.send(None)
        run.close()
        return log

    assert drive(main()) == ["closed"]


def test_a_run_cancelled_before_its_first_step_never_makes_its_agents_coroutine() -> None:
    made: list[str] = []

    async def main() -> bool:
        ctx: Ctx = RunContext(RunAgentInput(thread_id="t", run_id="r"))

        async def send(_message: Message) -> None:
            pass

        async def agent() -> None:
            made.append("ran")

        def start() -> Coroutine[object, object, None]:
            made.append("made")
            return agent()

        run = asyncio.create_task(Writer(send, ctx.receiver, None).run(start))
        run.cancel()  # before the loop ever steps it: its client left at once
        await asyncio.wait({run})
        return run.cancelled()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert drive(main()) is True
        gc.collect()  # a coroutine never awaited is reported when it is collected

    assert made == []
    assert [str(warning.message) for warning in caught] == []


def test_a_run_that_ends_itself_and_returns_later_ends_its_stream_then() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("hi")
        await asyncio.sleep(QUIET)
        ctx.emit(RunFinishedEvent(thread_id="t", run_id="r"))
        await asyncio.sleep(QUIET)  # the stream ends only once the run does

    exchange = drive(call(asgi_app(agent)))

    assert [frame_count(body) for body in exchange.bodies] == [4, 1, 0]
    assert exchange.events()[-1].type == "RUN_FINISHED"


def test_a_framing_failure_in_the_agents_step_is_raised_by_the_pump_and_the_run_goes_on() -> None:
    async def main() -> tuple[list[Message], str]:
        ctx: Ctx = RunContext(RunAgentInput(thread_id="t", run_id="r"))
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        def frames(items: list[Item]) -> bytes:
            if len(sent) == 1:
                message = "framing broke"
                raise RuntimeError(message)
            return SSE.frames(items)

        async def agent(ctx: Ctx) -> None:
            ctx.say("first")
            await asyncio.sleep(QUIET)
            ctx.say("second")
            await asyncio.sleep(QUIET)

        writer = Writer(send, ctx.receiver, None, dataclasses.replace(SSE, frames=frames))
        writer.start()
        await writer.run(lambda: run_agent(agent, ctx))
        with pytest.raises(RuntimeError, match="framing broke"):
            await writer.ended
        return sent, ctx.receiver.drain()[-1].type

    sent, last = drive(main())

    assert len(sent) == 1  # the first batch; the rest stayed queued, and the run ended
    assert last == "RUN_FINISHED"
