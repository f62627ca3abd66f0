"""Backpressure: a client that stops reading holds the server's queue near its high-water mark.

The server tests run uvicorn on 127.0.0.1 (`agui.testing.serving`) and a raw-socket client that
sends its request and then reads nothing, with a small receive buffer so the kernel holds little
of the stream. They assert on the figure the receiver exposes (`queued_bytes`), never on timing:
each wait is a bounded poll for a state that, once reached, cannot change while the client
does not read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import httpx
import pytest
from pydantic import JsonValue

import agui
from agui import RunAgentInput, RunContext
from agui._emit.receiver import run_receiver
from agui.agents import ToolLoopAgent
from agui.agents.models import ScriptedModel, Turn
from agui.agents.models.base import ChatDelta, ChatMessage
from agui.asgi import Receive, Scope, Send, asgi_app
from agui.asgi._writer import MAX_SEND_BYTES
from agui.errors import UsageError
from agui.events import CustomEvent, ToolCallResultEvent
from agui.messages import UserMessage
from agui.sink import HIGH_WATER, EventReceiver
from agui.testing import serving
from agui.types import Tool
from asgi_calls import post_in_process
from uvicorn_server import silent_client

Ctx = RunContext[JsonValue]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

WAIT_SECONDS = 20.0
CHUNK = 64 * 1024
CHUNKS = 400  # 26 MB: far more than loopback's socket buffers hold
QUESTION = UserMessage(id="u1", content="Write a lot.")
INPUT = RunAgentInput(thread_id="t", run_id="r", protocol_version="1.0")


def read_events(sock: socket.socket) -> list[dict[str, Any]]:
    """Read the stream to its end (the chunked body's last chunk); its events, decoded."""
    answer = bytearray()
    while not answer.endswith(b"\r\n0\r\n\r\n"):
        data = sock.recv(1 << 20)
        assert data, "the server closed the connection before the stream ended"
        answer += data
    _, _, body = bytes(answer).partition(b"\r\n\r\n")
    text = _unchunk(body).decode()
    return [json.loads(frame[len("data: ") :]) for frame in text.split("\n\n") if frame]


def _unchunk(body: bytes) -> bytes:
    out = bytearray()
    while True:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return bytes(out)
        out += rest[:size]
        body = rest[size + 2 :]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


class CountingModel(ScriptedModel):
    """A scripted model that counts the chunks the tool loop has asked it for."""

    pulled = 0

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] = (),
    ) -> AsyncIterator[ChatDelta]:
        async for delta in super().stream(messages, tools=tools, stop=stop):
            self.pulled += 1
            yield delta


# -- against a real uvicorn -------------------------------------------------------------------


def test_a_client_that_stops_reading_holds_the_tool_loops_queue_near_the_mark() -> None:
    model = CountingModel([Turn.text(("x" * (CHUNK - 1) + " ") * CHUNKS)])
    loop = ToolLoopAgent(model)
    contexts: list[Ctx] = []

    async def agent(ctx: Ctx) -> None:
        contexts.append(ctx)
        await loop.run(ctx)

    run_input = INPUT.model_copy(update={"messages": [QUESTION]})
    with serving(asgi_app(agent)) as url, silent_client(url, run_input) as sock:
        wait_for(lambda: bool(contexts), "the run to start")
        receiver = contexts[0].receiver
        # Once past the mark, the loop waits in `ctx.writable()`: nothing moves until a read.
        wait_for(lambda: receiver.queued_bytes >= HIGH_WATER, "the queue to reach its mark")
        held, pulled = receiver.queued_bytes, model.pulled

        events = read_events(sock)

    assert held <= HIGH_WATER + CHUNK + MAX_SEND_BYTES
    assert pulled < CHUNKS
    deltas = [event["delta"] for event in events if event["type"] == "TEXT_MESSAGE_CONTENT"]
    assert (len(deltas), len("".join(deltas))) == (CHUNKS, CHUNK * CHUNKS)
    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["outcome"] == {"type": "success"}
    assert receiver.queued_bytes == 0


def test_writable_blocks_while_the_client_reads_nothing_and_returns_once_it_reads() -> None:
    mark = 256 * 1024
    progress = {"written": 0, "waiting": False}
    contexts: list[Ctx] = []

    async def agent(ctx: Ctx) -> None:
        contexts.append(ctx)
        with ctx.message() as message:
            for _ in range(CHUNKS):
                message.delta("y" * CHUNK)
                progress["waiting"] = True
                await ctx.writable()
                progress["waiting"] = False
                progress["written"] += 1

    with (
        serving(asgi_app(agent, max_buffered_bytes=mark)) as url,
        silent_client(url, INPUT) as sock,
    ):
        wait_for(lambda: bool(contexts), "the run to start")
        receiver = contexts[0].receiver
        # Waiting in writable() past the mark: only a read can let the agent go on.
        wait_for(
            lambda: bool(progress["waiting"]) and receiver.queued_bytes >= mark,
            "the agent to wait in writable()",
        )
        written = progress["written"]
        events = read_events(sock)

    assert written < CHUNKS
    assert progress == {"written": CHUNKS, "waiting": False}
    assert events[-1]["type"] == "RUN_FINISHED"


def test_past_the_hard_limit_the_run_is_cancelled_logged_and_its_stream_still_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="agui.asgi")
    progress = {"written": 0, "unwound": False}

    async def heedless(ctx: Ctx) -> None:
        try:
            with ctx.message() as message:
                for _ in range(CHUNKS):
                    message.delta("z" * CHUNK)
                    progress["written"] += 1
                    await asyncio.sleep(0)  # awaits, but never ctx.writable()
        finally:
            progress["unwound"] = True

    app = asgi_app(heedless, max_buffered_bytes=CHUNK, buffer_hard_limit=8 << 20)
    with serving(app) as url, silent_client(url, INPUT) as sock:
        wait_for(lambda: bool(progress["unwound"]), "the run to be cancelled")
        events = read_events(sock)

    assert progress["written"] < CHUNKS
    assert [event["type"] for event in events[-2:]] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert events[-1]["outcome"] == {"type": "cancelled"}
    logged = [r.getMessage() for r in caplog.records if r.name == "agui.asgi"]
    assert any("past the limit of 8388608 (buffer_hard_limit)" in line for line in logged)


def test_a_burst_queued_without_awaiting_past_the_hard_limit_cancels_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="agui.asgi")
    progress = {"unwound": False}

    async def bursty(ctx: Ctx) -> None:
        try:
            with ctx.message() as message:
                for _ in range(200):  # 13 MB queued at once, past the hard limit of 8 MiB
                    message.delta("b" * CHUNK)
            for _ in range(400):  # then it would go on for 20 s
                await asyncio.sleep(0.05)
        finally:
            progress["unwound"] = True

    app = asgi_app(bursty, max_buffered_bytes=CHUNK, buffer_hard_limit=8 << 20)
    with serving(app) as url, silent_client(url, INPUT) as sock:
        wait_for(lambda: bool(progress["unwound"]), "the run to be cancelled")
        events = read_events(sock)

    assert events[-1]["type"] == "RUN_FINISHED"
    assert events[-1]["outcome"] == {"type": "cancelled"}
    logged = [r.getMessage() for r in caplog.records if r.name == "agui.asgi"]
    assert any("past the limit of 8388608 (buffer_hard_limit)" in line for line in logged)


# -- in process ------------------------------------------------------------------------------


def test_a_batch_larger_than_one_send_goes_out_in_slices() -> None:
    big = "w" * (3 * MAX_SEND_BYTES)

    async def agent(ctx: Ctx) -> None:
        ctx.say(big)

    bodies = asyncio.run(post_in_process(asgi_app(agent), b'{"threadId":"t","runId":"r"}'))

    assert max(map(len, bodies)) == MAX_SEND_BYTES
    assert big in b"".join(bodies).decode()


def test_queued_bytes_weigh_what_is_queued_while_a_send_waits_on_the_client() -> None:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    overflows: list[int] = []
    receiver.bind(1000, 5000, overflows.append)
    receiver.sending(100)
    with ctx.message() as message:
        message.delta("a" * 300)
    custom: JsonValue = {"k": ["v" * 400, 1, None], "n": {"deep": [{"x": "u" * 500}]}}
    ctx.emit(CustomEvent(name="big", value=custom))
    with ctx.tool_call("look") as call:
        call.result("r" * 200)
    weighed = receiver.queued_bytes

    receiver.sent(0)
    run_receiver(receiver).items()

    text = 100 + 300 + 400 + 500 + 200  # what was held, and the strings queued
    assert text < weighed < 2 * text  # plus about a frame's overhead for each item
    assert overflows == []
    assert receiver.queued_bytes == 0


def test_the_hard_limit_is_told_once_and_an_unbound_receiver_never_waits() -> None:
    receiver = EventReceiver()
    overflows: list[int] = []
    receiver.bind(10, 100, overflows.append)
    receiver.sending(0)
    for _ in range(5):
        receiver.push(ToolCallResultEvent(message_id="m", tool_call_id="c", content="q" * 60))

    async def wait_then_unbind() -> bool:
        waiting = asyncio.ensure_future(receiver.writable())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        blocked = not waiting.done()
        receiver.unbind()
        await waiting
        return blocked

    blocked = asyncio.run(wait_then_unbind())

    assert blocked
    assert len(overflows) == 1
    assert overflows[0] > 100
    assert receiver.queued_bytes == 0
    asyncio.run(receiver.writable())  # unbound: at once


def test_writable_wakes_once_a_send_brings_the_queue_below_the_mark() -> None:
    receiver = EventReceiver()
    receiver.bind(1000, 10_000, lambda _: None)
    receiver.sending(5000)

    async def main() -> list[str]:
        steps: list[str] = []

        async def agent() -> None:
            await receiver.writable()
            steps.append("writable")

        tasks = [asyncio.ensure_future(agent()) for _ in range(2)]
        await asyncio.sleep(0)
        receiver.sent(2000)  # still past the mark
        await asyncio.sleep(0)
        steps.append("sent 2000")
        receiver.sent(500)
        await asyncio.gather(*tasks)
        return steps

    assert asyncio.run(main()) == ["sent 2000", "writable", "writable"]


def test_writable_gives_the_loop_a_turn_even_when_nothing_reads_the_queue() -> None:
    receiver = EventReceiver()

    async def main() -> list[str]:
        steps: list[str] = []

        async def another() -> None:
            steps.append("another task ran")

        other = asyncio.ensure_future(another())
        for bound in (False, True):
            if bound:  # bound with nothing queued, then unbound, as when the client leaves
                receiver.bind(1000, 10_000, lambda _: None)
                receiver.unbind()
            await receiver.writable()
            steps.append("writable")
        await other
        return steps

    assert asyncio.run(main()) == ["another task ran", "writable", "writable"]


def test_a_client_leaving_an_agent_that_awaits_only_writable_cancels_it_and_others_are_served() -> (
    None
):
    progress = {"unwound": False}

    async def agent(ctx: Ctx) -> None:
        if ctx.run_id != "writes":
            ctx.say("hi")
            return
        try:
            with ctx.message() as message:
                while True:  # bounded by the cancellation the test waits for
                    message.delta("w" * 1000)
                    await ctx.writable()
        finally:
            progress["unwound"] = True

    writes = RunAgentInput(thread_id="t", run_id="writes", protocol_version="1.0")
    with serving(asgi_app(agent)) as url:
        with silent_client(url, writes) as sock:
            sock.recv(1 << 16)  # the stream has begun
        wait_for(lambda: progress["unwound"], "the run to be cancelled once its client left")
        answer = httpx.post(url, json=INPUT.model_dump(by_alias=True), timeout=WAIT_SECONDS)

    assert answer.status_code == 200
    assert '"type":"RUN_FINISHED"' in answer.text


@pytest.mark.parametrize(
    ("high_water", "hard_limit", "problem"),
    [
        (0, 1024, "max_buffered_bytes must be a positive whole number of bytes, not 0"),
        (2048, 1024, r"buffer_hard_limit must be at least max_buffered_bytes \(2048\), not 1024"),
    ],
)
def test_asgi_app_refuses_buffer_limits_that_cannot_work(
    high_water: int, hard_limit: int, problem: str
) -> None:
    async def agent(ctx: Ctx) -> None:  # pragma: no cover - never runs
        ctx.say("never")

    with pytest.raises(UsageError, match=problem):
        agui.asgi_app(agent, max_buffered_bytes=high_water, buffer_hard_limit=hard_limit)
