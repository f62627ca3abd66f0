"""Streaming a run as SSE: headers, sends shared by queued events, keepalive pings, failures."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from typing import cast

import pytest
from pydantic import JsonValue

import agui
from agui import RunContext
from agui.asgi import asgi_app
from agui.asgi._admission import Message
from agui.asgi._writer import MAX_SEND_BYTES
from agui.events import (
    CustomEvent,
    Event,
    EventType,
    TextMessageContentEvent,
    TextMessageStartEvent,
)
from asgi_calls import (
    PING,
    Ctx,
    Exchange,
    call,
    data_frames,
    drive,
    frame_count,
    hello,
    post_slowly,
)

QUIET = 0.01  # seconds between two events: longer than a burst's 2 ms


# -- streaming ---------------------------------------------------------------------------------


def test_a_run_streams_sse_with_no_buffering_headers() -> None:
    exchange = drive(call(asgi_app(hello)))

    assert exchange.status == 200
    assert exchange.headers == {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-store, no-transform",
        "x-accel-buffering": "no",
        "vary": "Accept",
    }
    assert [e.type for e in exchange.events()] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
    ]
    assert all(message.get("more_body") for message in exchange.sent[1:-1])


def test_frames_arrive_while_the_agent_is_still_running() -> None:
    async def main() -> tuple[Exchange, list[str]]:
        release = asyncio.Event()
        log: list[str] = []

        async def agent(ctx: Ctx) -> None:
            ctx.say("first")
            await release.wait()
            log.append("released")
            ctx.say("second")

        def on_send(message: Message, exchange: Exchange) -> None:
            if b"TEXT_MESSAGE_END" in message.get("body", b"") and not release.is_set():
                log.append(f"saw {frame_count(exchange.body)} frames")
                release.set()

        return await call(asgi_app(agent), on_send=on_send), log

    exchange, log = drive(main())

    assert log == ["saw 4 frames", "released"]
    assert len(exchange.events()) == 8


def test_events_emitted_without_awaiting_go_out_in_one_send() -> None:
    async def main() -> Exchange:
        proceed = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("one")
            ctx.say("two")
            await proceed.wait()
            ctx.say("three")
            ctx.say("four")

        def on_send(message: Message, _exchange: Exchange) -> None:
            if message["type"] == "http.response.body":
                proceed.set()

        return await call(asgi_app(agent), on_send=on_send)

    exchange = drive(main())

    assert [frame_count(body) for body in exchange.bodies] == [7, 7, 0]
    exchange.events()


def test_an_agent_that_awaits_between_events_still_shares_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A burst is told by the clock (2 ms between sends); a loaded machine can stretch one turn
    # of the loop past that, so the test widens the window and counts turns, not time.
    monkeypatch.setattr("agui.asgi._writer._GATHER_SECONDS", 60.0)

    async def agent(ctx: Ctx) -> None:
        for index in range(64):
            ctx.emit(CustomEvent(name="tick", value=index))
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent)))

    counts = [frame_count(body) for body in exchange.bodies]
    assert sum(counts) == 66
    assert len(counts) <= 8
    exchange.events()


def test_events_queued_during_a_slow_send_go_out_together_in_the_next() -> None:
    async def agent(ctx: Ctx) -> None:
        for index in range(30):
            ctx.emit(CustomEvent(name="tick", value=index))
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent), slow=10))

    counts = [frame_count(body) for body in exchange.bodies]
    assert sum(counts) == 32
    assert len(counts) < 10
    assert max(counts) >= 5
    exchange.events()


def test_request_messages_after_the_body_do_not_end_the_stream() -> None:
    extra: list[Message] = [{"type": "http.request", "body": b"", "more_body": False}]
    exchange = drive(call(asgi_app(hello), extra=extra))

    assert len(exchange.events()) == 5


def test_a_run_task_that_fails_outside_the_agent_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken_drive(_agent: object, ctx: Ctx, *, debug: bool) -> None:
        del debug
        ctx.receiver.close()
        message = "the driver broke"
        raise RuntimeError(message)

    monkeypatch.setattr("agui.asgi._streaming.drive", broken_drive)
    exchange = drive(call(asgi_app(hello)))

    assert exchange.status == 200
    assert exchange.body == b""
    assert "run task 'agui run r' failed" in caplog.text
    assert "the driver broke" in caplog.text


def test_a_stream_ended_before_its_run_waits_for_the_run_which_logs_how_it_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("hi")
        ctx.receiver.close()  # the stream ends here; the run goes on
        await asyncio.sleep(QUIET)
        ctx.say("too late")

    exchange = drive(call(asgi_app(agent)))

    types = [json.loads(frame)["type"] for frame in data_frames(exchange.body)]
    assert types == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    # Logged by the run once it ended, after the stream: the request waited for it.
    assert "run r failed after its terminal event" in caplog.text
    assert "this run's stream has ended" in caplog.text


def test_between_its_deltas_a_stream_holds_one_task_the_runs_and_watches_its_client_itself() -> (
    None
):
    async def main() -> list[list[str]]:
        before = asyncio.all_tasks()
        seen: list[list[str]] = []

        async def agent(ctx: Ctx) -> None:
            with ctx.message() as message:
                for _ in range(3):
                    await asyncio.sleep(QUIET)
                    seen.append(sorted(task.get_name() for task in asyncio.all_tasks() - before))
                    message.delta("token")

        exchange = await call(asgi_app(agent))
        assert [e.type for e in exchange.events()][-1] == EventType.RUN_FINISHED
        return seen

    assert drive(main()) == [["agui run r"]] * 3


def test_a_server_cancelling_the_connection_as_its_stream_ends_is_not_swallowed() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        request = asyncio.current_task()
        assert request is not None

        def cancel_at_the_end(message: Message, _exchange: Exchange) -> None:
            if b"RUN_FINISHED" in message.get("body", b""):
                # In the turn the pump ends, before its end wakes the request's task.
                loop.call_soon(request.cancel)

        if sys.version_info < (3, 11):
            # Python 3.10 cannot count the two: the stream's end, which contains the
            # cancellation it asked for, contains the server's with it, and the request ends
            # as its stream did, at once (the trade `agui.asgi._admission` makes too).
            await call(asgi_app(hello), on_send=cancel_at_the_end)
            return
        with pytest.raises(asyncio.CancelledError):
            await call(asgi_app(hello), on_send=cancel_at_the_end)

    drive(main())


def test_a_large_batch_is_split_into_bounded_sends() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.message() as message:
            for index in range(2500):
                message.delta(f"{index} ")

    exchange = drive(call(asgi_app(agent)))

    assert [frame_count(body) for body in exchange.bodies] == [1024, 1024, 456, 0]
    assert len(exchange.events()) == 2504


def test_the_first_batch_goes_out_at_once_and_a_large_later_one_without_gathering() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("first")
        await asyncio.sleep(0)
        with ctx.message() as message:
            for index in range(300):
                message.delta(f"{index} ")
        await asyncio.sleep(0)
        ctx.say("last")

    exchange = drive(call(asgi_app(agent)))

    # RUN_STARTED and the first message; then 302 events already queued, sent as they are; the
    # last message and RUN_FINISHED.
    assert [frame_count(body) for body in exchange.bodies] == [4, 302, 4, 0]


def compute(seconds: float) -> None:
    """Hold the loop for `seconds` at least, as an agent computing between two awaits does."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def test_gathering_stops_two_milliseconds_in_when_each_turn_runs_long() -> None:
    async def agent(ctx: Ctx) -> None:
        for index in range(12):
            ctx.emit(CustomEvent(name="tick", value=index))
            compute(0.001)
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent)))

    counts = [frame_count(body) for body in exchange.bodies]
    assert sum(counts) == 14
    # Each turn takes a millisecond or more, so a gathered batch holds what came before the
    # 2 ms were up and the one turn after: three events at most, never the 16 turns' worth.
    assert max(counts[1:]) <= 3
    assert len(counts) >= 5


def test_a_delta_after_a_quiet_spell_goes_out_at_once_and_a_burst_is_gathered() -> None:
    async def agent(ctx: Ctx) -> None:
        with ctx.message() as message:
            for index in range(3):
                await asyncio.sleep(0.01)
                message.delta(f"{index} ")
                await asyncio.sleep(0)
                message.delta(f"{index}+")
        await asyncio.sleep(0.01)
        for index in range(3):
            ctx.emit(CustomEvent(name="tick", value=index))
            await asyncio.sleep(0)

    exchange = drive(call(asgi_app(agent)))

    counts = [frame_count(body) for body in exchange.bodies]
    # RUN_STARTED and the start; then each delta as it comes: one after a quiet spell without a
    # turn spent gathering (the one the agent emits a turn later goes on its own), the last
    # with the end; then a burst: its first event at once, and one turn gathers the rest of it
    # with RUN_FINISHED. Gathering every batch would send [2, 2, 2, 3, 4, 0].
    assert counts == [2, 1, 1, 1, 1, 1, 2, 1, 3, 0]


def test_an_idle_stream_gets_keepalive_comment_frames() -> None:
    async def main() -> Exchange:
        wake = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("thinking")
            await wake.wait()
            ctx.say("done")

        def on_send(_message: Message, exchange: Exchange) -> None:
            if exchange.bodies.count(PING) == 3:
                wake.set()

        return await call(asgi_app(agent, keepalive=0.01), on_send=on_send)

    exchange = drive(main())

    pings = [index for index, body in enumerate(exchange.bodies) if body == PING]
    assert pings == [1, 2, 3]
    assert [e.type for e in exchange.events()].count("TEXT_MESSAGE_START") == 2


def test_a_keepalive_ping_never_lands_inside_a_frame_split_across_sends() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("x" * (3 * MAX_SEND_BYTES))

    async def pause(exchange: Exchange) -> None:
        if len(exchange.bodies) < 3:  # a slow client: each slice takes many keep-alive periods
            await asyncio.sleep(0.05)

    exchange = Exchange()
    drive(post_slowly(asgi_app(agent, keepalive=0.001), exchange, pause))

    # The slices of the frame went out back to back; pings came only between whole frames.
    events = exchange.events()
    assert [len(body) for body in exchange.bodies[:3]] == [MAX_SEND_BYTES] * 3
    text = "".join(e.delta for e in events if isinstance(e, TextMessageContentEvent))
    assert text == "x" * (3 * MAX_SEND_BYTES)


def test_no_keepalive_ping_follows_the_terminal_event() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("x" * (3 * MAX_SEND_BYTES))  # its last batch takes many keep-alive periods

    async def pause(exchange: Exchange) -> None:
        if len(exchange.bodies) < 3:
            await asyncio.sleep(0.05)

    exchange = Exchange()
    drive(post_slowly(asgi_app(agent, keepalive=0.001), exchange, pause))

    bodies = [body for body in exchange.bodies if body]
    last = max(i for i, body in enumerate(bodies) if b'"type":"RUN_FINISHED"' in body)
    assert PING not in bodies[last:]
    assert exchange.events()[-1].type == "RUN_FINISHED"


def test_a_stream_quiet_for_less_than_keepalive_or_with_none_gets_no_pings() -> None:
    async def agent(ctx: Ctx) -> None:
        await asyncio.sleep(0.05)
        ctx.say("late")

    busy = drive(call(asgi_app(agent)))
    off = drive(call(asgi_app(agent, keepalive=None)))

    assert PING not in busy.bodies
    assert PING not in off.bodies
    assert frame_count(busy.body) == frame_count(off.body) == 5


def test_transformers_come_from_a_factory_fresh_for_each_request() -> None:
    class Numbering:
        def __init__(self) -> None:
            self.seen = 0

        def transform(self, event: Event) -> list[Event]:
            self.seen += 1
            if event.type != EventType.RUN_STARTED:
                return [event]
            return [event, CustomEvent(name="number", value=self.seen)]

    app = asgi_app(hello, transformers=lambda: [Numbering()])
    runs = [drive(call(app)).events() for _ in range(2)]

    assert [[e.value for e in events if isinstance(e, CustomEvent)] for events in runs] == [
        [1],
        [1],
    ]


def test_the_state_type_and_debug_flag_reach_the_run() -> None:
    @dataclasses.dataclass
    class Counter:
        count: int = 0

    async def agent(ctx: RunContext[Counter]) -> None:
        ctx.state.count += 1
        ctx.publish_state()
        message = f"count is {ctx.state.count}"
        raise RuntimeError(message)

    body = json.dumps({"threadId": "t", "runId": "r", "state": {"count": 41}}).encode()
    quiet = drive(call(asgi_app(agent, state=Counter), body=body)).events()
    loud = drive(call(asgi_app(agent, state=Counter, debug=True), body=body)).events()

    assert [e.model_dump(mode="json") for e in quiet if e.type == EventType.STATE_SNAPSHOT] == [
        {"type": "STATE_SNAPSHOT", "snapshot": {"count": 42}}
    ]
    assert quiet[-1].type == loud[-1].type == EventType.RUN_ERROR
    assert "count is 42" not in quiet[-1].model_dump_json()
    assert "RuntimeError: count is 42" in loud[-1].model_dump_json()


def test_an_event_that_cannot_be_serialized_ends_the_stream_with_run_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    finished: list[bool] = []

    async def agent(ctx: Ctx) -> None:
        try:
            # Checked when emitted, the payload is changed before the writer serializes it.
            payload: dict[str, JsonValue] = {"fine": True}
            ctx.emit(CustomEvent.model_construct(name="bad", value=payload))  # not copied
            payload["fine"] = cast("JsonValue", object())
            await asyncio.sleep(10)
        finally:
            finished.append(ctx.cancelled)

    exchange = drive(call(asgi_app(agent)))

    assert exchange.sent[-1] == {"type": "http.response.body", "body": b""}
    events = [agui.parse_event(frame) for frame in data_frames(exchange.body)]
    assert [e.type for e in events] == [EventType.RUN_STARTED, EventType.RUN_ERROR]
    assert events[-1].model_dump(mode="json")["code"] == "SERIALIZATION_ERROR"
    assert finished == [True]
    assert "a CUSTOM event could not be serialized" in caplog.text


def test_a_streamed_delta_that_cannot_be_written_ends_the_stream_after_the_frames_before_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        await asyncio.sleep(0)
        # Through the escape hatch: text is checked at emit, a JSON value (but CUSTOM's) is not.
        ctx.emit(TextMessageStartEvent(message_id="m1"))
        ctx.emit(TextMessageContentEvent(message_id="m1", delta="fine"))
        unwritable = TextMessageContentEvent(message_id="m1", delta="x", metadata={"n": "\ud800"})
        ctx.emit(unwritable)  # no UTF-8 for it
        await asyncio.sleep(10)

    exchange = drive(call(asgi_app(agent)))

    events = [agui.parse_event(frame) for frame in data_frames(exchange.body)]
    assert [e.type for e in events] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.RUN_ERROR,
    ]
    assert events[-1].model_dump(mode="json")["code"] == "SERIALIZATION_ERROR"
    assert "a TEXT_MESSAGE_CONTENT event could not be serialized" in caplog.text
