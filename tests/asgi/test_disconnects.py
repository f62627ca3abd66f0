"""A client that leaves: cancellation, the disconnect hook, grace, detached runs."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Awaitable, Callable

import pytest

from agui import RunAgentInput
from agui.asgi import asgi_app
from agui.asgi._admission import Message
from agui.asgi._writer import MAX_SEND_BYTES
from asgi_calls import BODY, PING, Ctx, Exchange, call, drive, lifespan, post_slowly

# -- disconnects -------------------------------------------------------------------------------


def _parked_agent(log: list[str], parked: asyncio.Event) -> Callable[[Ctx], Awaitable[None]]:
    async def agent(ctx: Ctx) -> None:
        ctx.say("working")
        try:
            parked.set()
            await asyncio.Event().wait()
        finally:
            log.append(f"finally ran, cancelled={ctx.cancelled}")

    return agent


def test_a_disconnect_mid_run_cancels_the_agent_and_tells_the_hook() -> None:
    async def main() -> tuple[Exchange, list[str]]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()

        def on_disconnect(run_input: RunAgentInput) -> None:
            log.append(f"told about {run_input.run_id}")

        def on_send(message: Message, _exchange: Exchange) -> None:
            if b"TEXT_MESSAGE_END" in message.get("body", b""):
                gone.set()

        app = asgi_app(_parked_agent(log, parked), on_disconnect=on_disconnect)
        return await call(app, gone=gone, on_send=on_send), log

    exchange, log = drive(main())

    assert log == ["finally ran, cancelled=True", "told about r"]
    assert b"TEXT_MESSAGE_END" in exchange.body
    assert b"RUN_FINISHED" not in exchange.body
    assert exchange.sent[-1].get("more_body") is True


def test_an_async_disconnect_hook_is_awaited_and_its_failure_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()

        async def on_disconnect(run_input: RunAgentInput) -> None:
            await asyncio.sleep(0)
            log.append("told")
            message = f"hook failed for {run_input.run_id}"
            raise RuntimeError(message)

        app = asgi_app(_parked_agent(log, parked), on_disconnect=on_disconnect)
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told"]
    assert "the on_disconnect hook failed for run r" in caplog.text


def test_a_failed_send_counts_as_a_disconnect() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()

        def fail_after_start(message: Message) -> bool:
            return parked.is_set() and message["type"] == "http.response.body"

        async def agent(ctx: Ctx) -> None:
            parked.set()
            await asyncio.sleep(0)
            try:
                ctx.say("nobody hears this")
                await asyncio.Event().wait()
            finally:
                log.append(f"finally ran, cancelled={ctx.cancelled}")

        app = asgi_app(agent, on_disconnect=lambda _input: log.append("told"))
        await call(app, send_error=fail_after_start)
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told"]


def test_a_failed_send_of_events_from_another_task_counts_as_a_disconnect() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        started = asyncio.Event()

        def fail_after_start(message: Message) -> bool:
            return started.is_set() and message["type"] == "http.response.body"

        async def agent(ctx: Ctx) -> None:
            ctx.say("the first batch goes out")
            await asyncio.sleep(0)
            started.set()

            async def helper() -> None:
                ctx.say("nobody hears this")  # from another task: the pump sends it

            try:
                await asyncio.gather(helper(), asyncio.Event().wait())
            finally:
                log.append(f"finally ran, cancelled={ctx.cancelled}")

        app = asgi_app(agent, on_disconnect=lambda _input: log.append("told"))
        exchange = await call(app, send_error=fail_after_start)
        log.append(f"{len(exchange.sent)} sent")  # the response's start and the first batch
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told", "2 sent"]


def test_a_send_that_fails_unexpectedly_is_logged_and_ends_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked), on_disconnect=lambda _: log.append("told"))

        def fail_once_parked(message: Message) -> bool:
            return parked.is_set() and message["type"] == "http.response.body"

        async def nudge() -> None:
            await parked.wait()
            await asyncio.sleep(0)

        await asyncio.gather(
            call(app, send_error=fail_once_parked, send_exception=RuntimeError), nudge()
        )
        return log

    assert drive(main()) == ["finally ran, cancelled=True", "told"]
    assert "streaming failed; treating the client as gone" in caplog.text


def test_a_receive_that_fails_while_streaming_is_logged_and_ends_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked))
        incoming: list[Message] = [{"type": "http.request", "body": BODY}]

        async def receive() -> Message:
            if incoming:
                return incoming.pop(0)
            await parked.wait()
            message = "the server lost the connection's state"
            raise RuntimeError(message)

        async def send(_message: Message) -> None:
            return None

        scope = {
            "type": "http",
            "method": "POST",
            "headers": [(b"content-type", b"application/json")],
        }
        await app(scope, receive, send)
        return log

    assert drive(main()) == ["finally ran, cancelled=True"]
    assert "watching the client failed; treating it as gone" in caplog.text


def test_a_client_gone_before_the_response_starts_runs_nothing() -> None:
    ran: list[bool] = []

    async def agent(_ctx: Ctx) -> None:
        ran.append(True)

    exchange = drive(call(asgi_app(agent), send_error=lambda _message: True))

    assert exchange.sent == []
    assert ran == []


def test_a_client_gone_at_once_is_told_to_the_hook_and_leaves_nothing_unawaited() -> None:
    told: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ctx.say("nobody hears this")

    def on_disconnect(run_input: RunAgentInput) -> None:
        told.append(run_input.run_id)

    app = asgi_app(agent, on_disconnect=on_disconnect)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exchange = drive(call(app, extra=[{"type": "http.disconnect"}]))
        gc.collect()  # a coroutine never awaited is reported when it is collected

    assert exchange.status == 200
    assert told == ["r"]
    assert [str(warning.message) for warning in caught] == []


def test_a_keepalive_that_cannot_be_sent_counts_as_a_disconnect() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked), keepalive=0.01)
        await call(app, send_error=lambda message: message.get("body") == PING)
        return log

    assert drive(main()) == ["finally ran, cancelled=True"]


def test_an_agent_that_ignores_cancellation_is_given_up_on_after_the_grace_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> list[str]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()
        stop = asyncio.Event()

        async def stubborn(_ctx: Ctx) -> None:
            try:
                parked.set()
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                log.append("ignored the cancel")
                await stop.wait()
                log.append("stopped")
                raise

        app = asgi_app(stubborn, cancel_grace=0.02)
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        log.append("request returned")
        stop.set()  # the test stops what it started
        for task in asyncio.all_tasks():
            if task.get_name() == "agui run r":
                await asyncio.wait({task})
        return log

    assert drive(main()) == ["ignored the cancel", "request returned", "stopped"]
    assert "run task 'agui run r' ignored being cancelled" in caplog.text


def test_a_shutdown_that_stops_a_stream_inside_a_frame_cuts_it_rather_than_glue_a_frame_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> Exchange:
        stop = asyncio.Event()
        first_slice = asyncio.Event()

        async def stubborn(ctx: Ctx) -> None:
            ctx.say("x" * (3 * MAX_SEND_BYTES))
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await stop.wait()  # ignores the shutdown for longer than the grace period
                raise

        async def pause(exchange: Exchange) -> None:
            if exchange.bodies and not first_slice.is_set():
                first_slice.set()  # the client read the first slice of the frame, and stopped
                await asyncio.Event().wait()

        exchange = Exchange()
        task = asyncio.create_task(
            post_slowly(asgi_app(stubborn, cancel_grace=0.01), exchange, pause)
        )
        await first_slice.wait()
        task.cancel()  # what uvicorn does past its graceful-shutdown timeout
        await asyncio.wait({task})
        stop.set()  # the test stops what it started
        for run in asyncio.all_tasks():
            if run.get_name() == "agui run r":
                await asyncio.wait({run})
        return exchange

    exchange = drive(main())

    # Half of a frame went out; a RUN_ERROR after it would be read as part of that frame.
    assert [len(body) for body in exchange.bodies] == [MAX_SEND_BYTES]
    assert exchange.sent[-1].get("more_body") is True
    assert "ignored being cancelled (the server is shutting down)" in caplog.text


def test_detach_lets_the_run_finish_without_a_listener() -> None:
    async def main() -> tuple[list[str], list[int]]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()
        resume = asyncio.Event()
        finished = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("before")
            parked.set()
            await resume.wait()
            ctx.say("after")
            log.append(f"finished, cancelled={ctx.cancelled}")
            finished.set()

        app = asgi_app(agent, disconnect="detach", on_disconnect=lambda _input: log.append("told"))
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        counts = [app.detached_runs]
        resume.set()
        await finished.wait()
        for _ in range(100):  # the detached task ends a few loop turns after the run
            if not app.detached_runs:
                break
            await asyncio.sleep(0)
        counts.append(app.detached_runs)
        return log, counts

    log, counts = drive(main())

    assert log == ["told", "finished, cancelled=False"]
    assert counts == [1, 0]


def test_detached_runs_are_cancelled_on_lifespan_shutdown() -> None:
    async def main() -> tuple[list[str], list[Message]]:
        log: list[str] = []
        parked = asyncio.Event()
        gone = asyncio.Event()
        app = asgi_app(_parked_agent(log, parked), disconnect="detach")
        request = asyncio.create_task(call(app, gone=gone))
        await parked.wait()
        gone.set()
        await request
        assert app.detached_runs == 1
        sent = await lifespan(app)
        log.append(f"detached runs: {app.detached_runs}")
        return log, sent

    log, sent = drive(main())

    assert log == ["finally ran, cancelled=True", "detached runs: 0"]
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_a_run_that_ends_before_the_disconnect_is_noticed_is_not_detached() -> None:
    async def main() -> list[str]:
        log: list[str] = []
        gone = asyncio.Event()

        async def agent(_ctx: Ctx) -> None:
            gone.set()  # the disconnect is read on the next turn of the loop: the run has ended

        app = asgi_app(agent, disconnect="detach", on_disconnect=lambda _: log.append("told"))

        def fail_after_start(message: Message) -> bool:
            return bool(message["type"] == "http.response.body")

        await call(app, send_error=fail_after_start, gone=gone)
        log.append(f"detached runs: {app.detached_runs}")
        return log

    assert drive(main()) == ["told", "detached runs: 0"]
