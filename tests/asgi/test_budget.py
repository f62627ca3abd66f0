"""The server's buffer budget: many clients that stop reading cost the budget, not each a limit.

The server tests run uvicorn on 127.0.0.1 with small socket send buffers, and raw-socket clients
that send their request and then read nothing, with small receive buffers. They assert on the
server's own accounting (`AguiApp.buffered_bytes`) and its log, never on timing: each wait is a
bounded poll for a state that, once reached, cannot change while the clients do not read.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import socket
import time
from collections.abc import Callable, Generator
from contextlib import ExitStack, contextmanager

import pytest

import agui
from agui import RunAgentInput, RunContext
from agui.asgi._budget import BUFFER_BUDGET, Budget
from agui.cli._serve import add_serve
from agui.sink import EventReceiver
from uvicorn_server import served, silent_client

WAIT_SECONDS = 30.0
CLIENTS = 20
CHUNK = 64 * 1024
CHUNKS = 96  # 6 MiB a run: more than the kernel's buffers of one connection take
BUDGET = 4 << 20
SEND_BUFFER = 16 * 1024


@contextmanager
def stalled_client(port: int, run_id: str) -> Generator[socket.socket, None, None]:
    """A connection that has sent a run's request and never reads."""
    run_input = RunAgentInput(thread_id="t", run_id=run_id, protocol_version="1.0")
    with silent_client(f"http://127.0.0.1:{port}/", run_input, receive_buffer=4096) as sock:
        yield sock


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_twenty_stalled_clients_of_heedless_agents_hold_about_the_budget_in_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agui.asgi")
    written: dict[str, int] = {}
    settled: set[str] = set()

    async def heedless(ctx: RunContext[object]) -> None:
        try:
            with ctx.message() as message:
                for _ in range(CHUNKS):
                    message.delta("z" * CHUNK)
                    written[ctx.run_id] = written.get(ctx.run_id, 0) + CHUNK
                    await asyncio.sleep(0)  # awaits, but never ctx.writable()
        finally:
            settled.add(ctx.run_id)

    app = agui.asgi_app(heedless, buffer_budget=BUDGET)
    with served(app, send_buffer=SEND_BUFFER) as port, ExitStack() as clients:
        for number in range(CLIENTS):
            clients.enter_context(stalled_client(port, f"r{number}"))
        wait_for(lambda: len(settled) == CLIENTS, "every run to end or be cancelled")
        held = app.buffered_bytes

    # Each stream's own hard limit (64 MiB) stops none of them: the budget does. What is held
    # is the budget, plus what the sends that passed it carried (a stream is weighed once its
    # send waits, so its first batch counts whole) and the cancelled runs' ends.
    assert BUDGET // 2 < held <= 2 * BUDGET
    assert sum(written.values()) > BUDGET
    shed = [r.getMessage() for r in caplog.records if "buffer_budget" in r.getMessage()]
    assert shed
    assert all(r.levelno == logging.WARNING for r in caplog.records if r.name == "agui.asgi")
    named = [
        re.match(r"run (r\d+): its client has not read about (\d+) bytes", line) for line in shed
    ]
    assert all(match is not None and int(match[2]) > 0 for match in named)
    cancelled = {match[1] for match in named if match is not None}
    assert len(cancelled) == len(shed)  # each run is cancelled once
    assert all(written[run] < CHUNKS * CHUNK for run in cancelled)


def test_without_a_budget_the_same_clients_hold_many_times_more() -> None:
    """The control: the figure the budget bounds does grow past it when nothing bounds it."""
    settled: set[str] = set()

    async def heedless(ctx: RunContext[object]) -> None:
        try:
            with ctx.message() as message:
                for _ in range(CHUNKS // 2):
                    message.delta("z" * CHUNK)
                    await asyncio.sleep(0)
        finally:
            settled.add(ctx.run_id)

    app = agui.asgi_app(heedless, buffer_budget=None)
    with served(app, send_buffer=SEND_BUFFER) as port, ExitStack() as clients:
        for number in range(CLIENTS):
            clients.enter_context(stalled_client(port, f"r{number}"))
        wait_for(lambda: len(settled) == CLIENTS, "every run to end")
        held = app.buffered_bytes

    assert held > 8 * BUDGET


def test_once_the_stalled_clients_leave_the_server_holds_nothing() -> None:
    async def heedless(ctx: RunContext[object]) -> None:
        with ctx.message() as message:
            for _ in range(CHUNKS):
                message.delta("z" * CHUNK)
                await asyncio.sleep(0)

    app = agui.asgi_app(heedless, buffer_budget=BUDGET)
    with served(app, send_buffer=SEND_BUFFER) as port:
        with ExitStack() as clients:
            for number in range(4):
                clients.enter_context(stalled_client(port, f"r{number}"))
            wait_for(lambda: app.buffered_bytes > BUDGET // 2, "the streams to hold bytes")
        wait_for(lambda: app.buffered_bytes == 0, "the streams to let go of their bytes")


def test_a_burst_past_the_budget_and_the_hard_limit_at_once_is_cancelled_and_told_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agui.asgi")
    settled: set[str] = set()

    async def bursty(ctx: RunContext[object]) -> None:
        try:
            with ctx.message() as message:
                for _ in range(200):  # 13 MB queued at once: past both limits in one send
                    message.delta("b" * CHUNK)
            for _ in range(400):  # then it would go on for 20 s
                await asyncio.sleep(0.05)
        finally:
            settled.add(ctx.run_id)

    app = agui.asgi_app(bursty, buffer_budget=BUDGET, buffer_hard_limit=2 * BUDGET)
    with served(app, send_buffer=SEND_BUFFER) as port, stalled_client(port, "r0"):
        wait_for(lambda: bool(settled), "the run to be cancelled")

    logged = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "agui.asgi"]
    assert len(logged) == 1
    assert logged[0][0] == "WARNING"
    assert "past its buffer_budget of 4194304" in logged[0][1]


# -- in process ------------------------------------------------------------------------------


def test_the_budget_cancels_the_largest_holder_not_yet_cancelled_each_time_it_is_passed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agui.asgi")
    budget = Budget(100)
    shed: list[str] = []
    receivers = [EventReceiver() for _ in range(3)]

    def shedder(run_id: str) -> Callable[[int], None]:
        return lambda _: shed.append(run_id)

    for number, receiver in enumerate(receivers):
        ledger = budget.enter(receiver, f"r{number}", shedder(f"r{number}"))
        receiver.bind(10, 1000, lambda _: None, ledger=ledger)

    receivers[0].sending(60)
    receivers[1].sending(30)
    receivers[2].sending(20)  # 110: r0 holds the most
    receivers[2].sending(25)  # 115: r0 is cancelled already; r1 is next
    receivers[0].sent(0)  # r0's client read it all: 55
    receivers[2].sending(40)  # 70: within the budget again

    assert shed == ["r0", "r1"]
    assert budget.total == 70
    assert "run r0: its client has not read about 60 bytes" in caplog.text
    assert "hold about 110, past its buffer_budget of 100" in caplog.text


def test_a_stream_that_ends_gives_its_bytes_back_and_leaves_the_budget() -> None:
    budget = Budget(None)
    receiver = EventReceiver()
    receiver.bind(10, 1000, lambda _: None, ledger=budget.enter(receiver, "r", lambda _: None))

    receiver.sending(500)
    peak = budget.total
    receiver.unbind()
    budget.leave(receiver)
    budget.leave(receiver)  # twice is harmless

    assert (peak, budget.total) == (500, 0)


def test_the_default_budget_is_256_mib() -> None:
    assert BUFFER_BUDGET == 256 << 20


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"buffer_budget": 0}, r"buffer_budget must be a positive whole number of bytes, or None"),
        ({"buffer_budget": 1.5}, r"buffer_budget must be a positive whole number"),
        ({"buffer_budget": True}, r"buffer_budget must be a positive whole number"),
        (
            {"buffer_budget": 1024, "max_buffered_bytes": 4096},
            r"buffer_budget must be at least max_buffered_bytes \(4096\), not 1024",
        ),
    ],
    ids=["zero", "fraction", "bool", "below-the-mark"],
)
def test_asgi_app_refuses_a_budget_that_cannot_work(
    options: dict[str, object], problem: str
) -> None:
    async def agent(ctx: RunContext[object]) -> None:
        ctx.say("hi")

    with pytest.raises(agui.UsageError, match=problem):
        agui.asgi_app(agent, **options)  # type: ignore[arg-type]


def test_agui_serve_takes_a_budget_in_mib_256_by_default() -> None:
    parser = argparse.ArgumentParser(prog="agui")
    add_serve(parser.add_subparsers())

    assert parser.parse_args(["serve", "x.py:agent"]).buffer_budget == 256
    assert parser.parse_args(["serve", "x.py:agent", "--buffer-budget", "64"]).buffer_budget == 64


@pytest.mark.parametrize("given", ["0", "-1", "1.5", "lots"])
def test_agui_serve_refuses_a_budget_that_is_not_a_positive_number_of_mib(
    given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="agui")
    add_serve(parser.add_subparsers())

    with pytest.raises(SystemExit, match="2"):
        parser.parse_args(["serve", "x.py:agent", "--buffer-budget", given])
    assert (
        f"'{given}' is not a size: give a positive whole number of MiB" in capsys.readouterr().err
    )


def test_past_the_budget_a_stream_holding_nothing_is_not_cancelled() -> None:
    budget = Budget(100)
    shed: list[int] = []
    full, empty = EventReceiver(), EventReceiver()
    full.bind(10, 1000, lambda _: None, ledger=budget.enter(full, "full", shed.append))
    empty.bind(10, 1000, lambda _: None, ledger=budget.enter(empty, "empty", shed.append))

    full.sending(150)  # over: "full" is cancelled, and keeps its bytes
    empty.sending(0)
    full.sending(160)  # over again, by the cancelled stream alone: "empty" holds nothing

    assert shed == [150]
    assert budget.total == 160
