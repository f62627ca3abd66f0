"""The endpoint's keep-alive ticker: one timer for every open stream, running only while one is.

A fake stream records the ticker's calls; each test runs on a fresh event loop and waits on
what it counts, bounded, never on a wall-clock window.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

import pytest
from pydantic import JsonValue

import agui
from agui import RunAgentInput, RunContext
from agui.asgi._admission import Message
from agui.asgi._pings import Pings
from agui.sse import comment_frame
from asgi_calls import Exchange, call, drive

PING = comment_frame("ping")

KEEPALIVE = 0.02
BOUND = 200  # ticks, at most, that a wait lasts


class Stream:
    """A stream that is always quiet: it counts the ticker's looks and the pings they send."""

    def __init__(self) -> None:
        self.looks: list[tuple[float, float]] = []

    def ping_if_quiet(self, now: float, keepalive: float) -> None:
        self.looks.append((now, keepalive))


async def _looked_at(stream: Stream, times: int) -> None:
    for _ in range(BOUND):
        if len(stream.looks) >= times:
            return
        await asyncio.sleep(KEEPALIVE / 4)
    pytest.fail(f"the ticker looked at the stream {len(stream.looks)} times, not {times}")


def test_the_ticker_looks_at_each_open_stream_every_quarter_of_keepalive() -> None:
    async def main() -> tuple[Stream, Stream]:
        pings, one, two = Pings(KEEPALIVE), Stream(), Stream()
        pings.add(one)
        pings.add(two)
        await _looked_at(one, 3)
        pings.discard(one)
        pings.discard(two)
        return one, two

    one, two = asyncio.run(main())
    assert [keepalive for _, keepalive in one.looks] == [KEEPALIVE] * len(one.looks)
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(one.looks)]
    assert all(gap >= KEEPALIVE / 4 * 0.9 for gap in gaps), gaps
    assert len(two.looks) >= 3


def test_a_discarded_stream_is_looked_at_no_more() -> None:
    async def main() -> tuple[Stream, Stream]:
        pings, gone, open_ = Pings(KEEPALIVE), Stream(), Stream()
        pings.add(gone)
        pings.add(open_)
        await _looked_at(gone, 1)
        pings.discard(gone)
        seen = len(open_.looks)
        await _looked_at(open_, seen + 3)
        pings.discard(open_)
        return gone, open_

    gone, _ = asyncio.run(main())
    assert len(gone.looks) == 1


def test_the_timer_stops_with_the_last_stream_and_starts_with_the_next() -> None:
    pings, first, later = Pings(KEEPALIVE), Stream(), Stream()
    armed: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        call_later = loop.call_later

        def counted(
            delay: float, callback: Callable[..., object], *args: object
        ) -> asyncio.TimerHandle:
            if getattr(callback, "__self__", None) is pings:
                armed.append("tick")
            return call_later(delay, callback, *args)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loop, "call_later", counted)
            pings.add(first)
            await _looked_at(first, 1)
            pings.discard(first)
            armed.append("discarded")
            await asyncio.sleep(KEEPALIVE)  # four ticks' time: a running ticker would arm again
            armed.append("added")
            pings.add(later)
            await _looked_at(later, 2)
            pings.discard(later)

    asyncio.run(main())
    assert armed[armed.index("discarded") + 1] == "added", armed
    assert armed.count("tick") >= 3, armed
    assert len(first.looks) == 1


def test_a_ticker_run_under_a_new_loop_starts_afresh_there() -> None:
    pings, abandoned, fresh = Pings(KEEPALIVE), Stream(), Stream()

    async def abandon() -> None:
        pings.add(abandoned)  # its loop ends with the stream still added

    asyncio.run(abandon())

    async def serve() -> None:
        pings.add(fresh)
        await _looked_at(fresh, 2)
        pings.discard(fresh)

    asyncio.run(serve())
    assert abandoned.looks == []


def test_many_quiet_streams_of_one_endpoint_share_its_ticker_and_each_gets_pings() -> None:
    async def main() -> list[Exchange]:
        wakes = [asyncio.Event() for _ in range(5)]

        async def agent(ctx: RunContext[JsonValue]) -> None:
            ctx.say("thinking")
            await wakes[int(ctx.input.run_id)].wait()

        def woken(index: int) -> Callable[[Message, Exchange], None]:
            def on_send(_message: Message, exchange: Exchange) -> None:
                if exchange.bodies.count(PING) == 2:
                    wakes[index].set()

            return on_send

        app = agui.asgi_app(agent, keepalive=KEEPALIVE)
        return await asyncio.gather(
            *(call(app, body=_body(index), on_send=woken(index)) for index in range(5))
        )

    for exchange in drive(main()):
        assert exchange.bodies.count(PING) == 2
        assert exchange.bodies[-2:] != [PING, PING]  # the run's end came after them
        assert [e.type for e in exchange.events()][-1] == "RUN_FINISHED"


def _body(index: int) -> bytes:
    return (
        RunAgentInput(thread_id="t", run_id=str(index), protocol_version="1.0")
        .model_dump_json(by_alias=True)
        .encode()
    )
