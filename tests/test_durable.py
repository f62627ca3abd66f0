"""Durable runs over real HTTP: uvicorn on 127.0.0.1, the memory log, and workers on Redis.

The first part serves the endpoint in this process with a `MemoryRunLog` (and, for a Redis that
restarts, a `RedisRunLog`); the second runs two uvicorn worker processes (`durable_worker.py`)
sharing one redis-server of the module's own, and moves clients between them: leave A, resume
on B; cancel on B a run on A; the thread on B of runs on A; SIGKILL A, read on B.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, cast
from urllib.parse import quote

import httpx
import pytest
import uvicorn
from pydantic import JsonValue

import agui
from agui import RunAgentInput, RunContext
from agui.asgi._durable import batch_frames, record_run
from agui.asgi._encoding import SSE
from agui.asgi._following import Follower
from agui.asgi._routes import resume_after
from agui.cli import main
from agui.errors import RunLogError
from agui.events import CustomEvent, Event, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.proto import PROTO_MEDIA_TYPE
from agui.proto._codec import decode_proto
from agui.runs import LeaseAnswer, MemoryRunLog, Page, RedisRunLog, ThreadRecord
from agui.testing import assert_valid, serving
from agui.transform import Transformer
from agui.wire import parse_event
from durable_worker import counter
from redis_server import RedisServer, running_redis

TESTS = Path(__file__).parent
TIMEOUT = 30.0
Frame = tuple[int | None, dict[str, JsonValue]]


def body(thread: str, run: str, count: int = 20, delay: float = 0.01) -> dict[str, JsonValue]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-user", "role": "user", "content": "count"}],
        "forwardedProps": {"count": count, "delay": delay},
    }


def frames_of(text: str) -> list[Frame]:
    found: list[Frame] = []
    for block in text.split("\n\n"):
        frame_id: int | None = None
        data: dict[str, JsonValue] | None = None
        for line in block.split("\n"):
            if line.startswith("id: "):
                frame_id = int(line.removeprefix("id: "))
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
        if data is not None:
            found.append((frame_id, data))
    return found


def outcome(data: dict[str, JsonValue]) -> JsonValue:
    """A RUN_FINISHED frame's outcome type: its `outcome`, or where a client of an earlier
    protocol version is told it (`metadata`)."""
    assert data["type"] == "RUN_FINISHED"
    given = data.get("outcome")
    if isinstance(given, dict):
        return given["type"]
    meta = data.get("metadata")
    return meta.get("outcome", "success") if isinstance(meta, dict) else "success"


def events_of(frames: list[Frame]) -> list[Event]:
    return [parse_event(data) for _, data in frames]


def read_some(url: str, payload: dict[str, JsonValue], count: int) -> list[Frame]:
    """POST a run and leave after `count` frames."""
    seen: list[Frame] = []
    with httpx.stream("POST", url, json=payload, timeout=TIMEOUT) as response:
        assert response.status_code == 200
        text = ""
        for chunk in response.iter_text():
            text += chunk
            complete, _, text = text.rpartition("\n\n")
            seen += frames_of(complete)
            if len(seen) >= count:
                break
    return seen[:count]


def assert_whole_run(frames: list[Frame], ticks: int) -> None:
    ids = [frame_id for frame_id, _ in frames]
    assert ids == list(range(1, len(frames) + 1))
    events = events_of(frames)
    assert_valid(events)
    assert [e.value for e in events if isinstance(e, CustomEvent)] == list(range(ticks))
    terminal = [e for e in events if e.type in ("RUN_FINISHED", "RUN_ERROR")]
    assert terminal == [events[-1]]


# -- one process, the memory log -------------------------------------------------------------


@pytest.fixture
def memory_url() -> Iterator[str]:
    with serving(agui.asgi_app(counter, runs=MemoryRunLog(lease=1.0))) as url:
        yield url


def test_a_run_read_to_its_end_has_increasing_ids_and_is_valid(memory_url: str) -> None:
    response = httpx.post(memory_url, json=body("t-end", "r-end"), timeout=TIMEOUT)

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    frames = frames_of(response.text)
    assert_whole_run(frames, 20)
    assert frames[-1][1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize("how", ["last-event-id", "after"])
def test_a_client_that_leaves_resumes_the_whole_run_exactly_once(memory_url: str, how: str) -> None:
    run = f"r-leave-{how}"
    first = read_some(memory_url, body(f"t-{how}", run, count=30, delay=0.02), 10)
    time.sleep(1.0)  # the run ends meanwhile, with nobody connected

    last = first[-1][0]
    assert last is not None
    headers = {"last-event-id": str(last)} if how == "last-event-id" else {}
    params = {"after": str(last)} if how == "after" else {}
    rest = httpx.get(
        f"{memory_url}runs/{run}/events", headers=headers, params=params, timeout=TIMEOUT
    )

    assert rest.status_code == 200
    assert_whole_run(first + frames_of(rest.text), 30)
    # Not cancelled when its client left: it went on to its end with nobody connected.
    assert outcome(frames_of(rest.text)[-1][1]) == "success"


@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_last_event_id_counts_as_none_and_after_is_read_instead(blank: str) -> None:
    assert resume_after({"query_string": b"after=5"}, {"last-event-id": blank}) == 5
    assert resume_after({}, {"last-event-id": blank}) == 0


def test_a_reader_follows_a_live_run_to_its_end(memory_url: str) -> None:
    first = read_some(memory_url, body("t-live", "r-live", count=40, delay=0.02), 3)

    rest = httpx.get(f"{memory_url}runs/r-live/events?after=3", timeout=TIMEOUT)

    assert_whole_run(first + frames_of(rest.text), 40)


def test_a_cancel_ends_the_run_cancelled_and_a_second_cancel_is_409(memory_url: str) -> None:
    read_some(memory_url, body("t-cancel", "r-cancel", count=500, delay=0.02), 2)

    cancelled = httpx.post(f"{memory_url}runs/r-cancel/cancel", timeout=TIMEOUT)
    rest = httpx.get(f"{memory_url}runs/r-cancel/events", timeout=TIMEOUT)
    again = httpx.post(f"{memory_url}runs/r-cancel/cancel", timeout=TIMEOUT)

    assert cancelled.status_code == 202
    assert cancelled.json() == {"runId": "r-cancel", "status": "cancelling"}
    frames = frames_of(rest.text)
    assert outcome(frames[-1][1]) == "cancelled"
    assert len(frames) < 100
    assert again.status_code == 409
    assert again.json()["code"] == "RUN_ENDED"


def test_a_post_on_a_busy_thread_is_409_naming_the_live_run(memory_url: str) -> None:
    read_some(memory_url, body("t-busy", "r-busy", count=100, delay=0.02), 2)

    busy = httpx.post(memory_url, json=body("t-busy", "r-other"), timeout=TIMEOUT)
    same = httpx.post(memory_url, json=body("t-elsewhere", "r-busy"), timeout=TIMEOUT)

    assert busy.status_code == 409
    assert busy.headers["content-type"] == "application/json"
    assert busy.json()["code"] == "THREAD_BUSY"
    assert busy.json()["runId"] == "r-busy"
    assert "r-busy" in busy.json()["message"]
    assert same.status_code == 409
    assert same.json()["code"] == "RUN_EXISTS"
    httpx.post(f"{memory_url}runs/r-busy/cancel", timeout=TIMEOUT)


def test_the_thread_holds_the_conversation_and_state_of_its_runs(memory_url: str) -> None:
    httpx.post(memory_url, json=body("t-fold", "r-fold-1", count=2), timeout=TIMEOUT)
    second = body("t-fold", "r-fold-2", count=3)
    second["messages"] = [
        {"id": "r-fold-1-user", "role": "user", "content": "count"},
        {"id": "r-fold-1-msg-1", "role": "assistant", "content": "done after 2"},
        {"id": "r-fold-2-user", "role": "user", "content": "again"},
    ]
    httpx.post(memory_url, json=second, timeout=TIMEOUT)

    thread = httpx.get(f"{memory_url}threads/t-fold", timeout=TIMEOUT)

    assert thread.status_code == 200
    assert thread.json() == {
        "threadId": "t-fold",
        "messages": [
            {"id": "r-fold-1-user", "role": "user", "content": "count"},
            {"id": "r-fold-1-msg-1", "role": "assistant", "content": "done after 2"},
            {"id": "r-fold-2-user", "role": "user", "content": "again"},
            {"id": "r-fold-2-msg-1", "role": "assistant", "content": "done after 3"},
        ],
        "state": {"ticks": 3, "runId": "r-fold-2"},
        "runIds": ["r-fold-1", "r-fold-2"],
    }


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "runs/nope/events", 404, "RUN_NOT_FOUND"),
        ("POST", "runs/nope/cancel", 404, "RUN_NOT_FOUND"),
        ("GET", "threads/nope", 404, "THREAD_NOT_FOUND"),
        ("GET", "runs/nope/events?after=first", 400, "INVALID_EVENT_ID"),
        ("GET", "runs/nope/events?after=9223372036854775808", 400, "INVALID_EVENT_ID"),
        ("GET", "runs/nope/events?after=" + "9" * 4301, 400, "INVALID_EVENT_ID"),
        ("GET", "runs/nope/events?after=" + "0" * 4300 + "1", 400, "INVALID_EVENT_ID"),
        ("POST", "runs/nope/events", 405, "METHOD_NOT_ALLOWED"),
        ("GET", "runs/nope/cancel", 405, "METHOD_NOT_ALLOWED"),
    ],
)
def test_the_routes_refuse_what_they_cannot_answer(
    memory_url: str, method: str, path: str, status: int, code: str
) -> None:
    response = httpx.request(method, memory_url + path, timeout=TIMEOUT)

    assert response.status_code == status
    assert response.json()["code"] == code


@pytest.mark.parametrize(
    ("run_id", "thread_id", "code", "problem"),
    [
        ("a/b", "t-ids", "INVALID_RUN_ID", r"the run id 'a/b' holds '/'"),
        ("", "t-ids", "INVALID_RUN_ID", r"the run id '' is empty"),
        ("..", "t-ids", "INVALID_RUN_ID", r"the run id '\.\.' is a dot segment"),
        ("r" * 513, "t-ids", "INVALID_RUN_ID", r"the run id 'r{40}\.\.\.' is 513 characters long"),
        ("r-ids", "t/1", "INVALID_THREAD_ID", r"the thread id 't/1' holds '/'"),
    ],
)
def test_a_run_whose_ids_cannot_be_a_path_segment_is_refused_before_it_starts(
    memory_url: str, run_id: str, thread_id: str, code: str, problem: str
) -> None:
    response = httpx.post(memory_url, json=body(thread_id, run_id), timeout=TIMEOUT)
    later = httpx.post(memory_url, json=body(thread_id, "r-ids-later", 1), timeout=TIMEOUT)

    message = response.json()["message"]
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert re.match(problem + r".*; .* as one segment .* at most 512 characters", message)
    # A run refused for its own id holds nothing: its thread is free for the next.
    assert later.status_code == (400 if code == "INVALID_THREAD_ID" else 200)


@pytest.mark.parametrize("run_id", ["a?b#c%d e", "r" * 512, "ünï:cödé"])
def test_a_run_id_with_any_other_characters_is_read_back_at_its_percent_encoded_path(
    memory_url: str, run_id: str
) -> None:
    thread_id = run_id[::-1]
    posted = httpx.post(memory_url, json=body(thread_id, run_id, 2), timeout=TIMEOUT)
    path = quote(run_id, safe="")

    again = httpx.get(f"{memory_url}runs/{path}/events", timeout=TIMEOUT)
    cancel = httpx.post(f"{memory_url}runs/{path}/cancel", timeout=TIMEOUT)
    thread = httpx.get(f"{memory_url}threads/{quote(thread_id, safe='')}", timeout=TIMEOUT)

    assert posted.status_code == 200
    assert frames_of(again.text) == frames_of(posted.text)
    assert_whole_run(frames_of(again.text), 2)
    assert cancel.json()["code"] == "RUN_ENDED"
    assert thread.json()["runIds"] == [run_id]


def test_an_event_id_past_the_last_frame_is_refused_and_the_last_one_is_not(
    memory_url: str,
) -> None:
    posted = httpx.post(memory_url, json=body("t-past", "r-past", 2), timeout=TIMEOUT)
    last = frames_of(posted.text)[-1][0]
    assert last is not None
    read_some(memory_url, body("t-past-live", "r-past-live", 500, 0.02), 2)

    at_end = httpx.get(
        f"{memory_url}runs/r-past/events", headers={"last-event-id": str(last)}, timeout=TIMEOUT
    )
    past = httpx.get(f"{memory_url}runs/r-past/events?after={last + 1}", timeout=TIMEOUT)
    started = time.monotonic()
    past_live = httpx.get(
        f"{memory_url}runs/r-past-live/events", headers={"last-event-id": "400"}, timeout=TIMEOUT
    )
    waited = time.monotonic() - started
    httpx.post(f"{memory_url}runs/r-past-live/cancel", timeout=TIMEOUT)

    assert (at_end.status_code, frames_of(at_end.text)) == (200, [])
    assert past.status_code == 400
    assert past.json()["code"] == "INVALID_EVENT_ID"
    assert re.match(
        rf"the event id {last + 1} is past the last frame of run 'r-past' in its log, .*"
        "send the id of the last frame you read",
        past.json()["message"],
    )
    assert past_live.status_code == 400
    assert past_live.json()["code"] == "INVALID_EVENT_ID"
    assert waited < 2.0


def test_the_routes_are_guarded_by_authorize() -> None:
    app = agui.asgi_app(
        counter,
        runs=MemoryRunLog(),
        authorize=lambda headers: headers.get("authorization") == "Bearer ok",
        allowed_origins=["https://app.example"],
    )
    with serving(app) as url:
        ok = {"authorization": "Bearer ok"}
        httpx.post(url, json=body("t-auth", "r-auth", count=1), headers=ok, timeout=TIMEOUT)
        denied = httpx.get(f"{url}threads/t-auth", timeout=TIMEOUT)
        cancel = httpx.post(f"{url}runs/r-auth/cancel", timeout=TIMEOUT)
        allowed = httpx.get(
            f"{url}runs/r-auth/events",
            headers={**ok, "origin": "https://app.example"},
            timeout=TIMEOUT,
        )
        ended = httpx.post(
            f"{url}runs/r-auth/cancel",
            headers={**ok, "origin": "https://app.example"},
            timeout=TIMEOUT,
        )

    assert (denied.status_code, cancel.status_code) == (401, 401)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert ended.status_code == 409
    assert ended.headers["access-control-allow-origin"] == "https://app.example"


def test_a_transformer_factory_that_fails_leaves_the_thread_free_for_the_next_run() -> None:
    calls: list[int] = []

    def factory() -> list[Transformer]:
        calls.append(len(calls))
        if len(calls) == 1:
            message = "the first chain fails"
            raise RuntimeError(message)
        return []

    app = agui.asgi_app(counter, runs=MemoryRunLog(), transformers=factory)
    with serving(app) as url:
        failed = httpx.post(url, json=body("t-hook", "r-hook-1", count=1), timeout=TIMEOUT)
        ran = httpx.post(url, json=body("t-hook", "r-hook-2", count=1), timeout=TIMEOUT)
        unknown = httpx.get(f"{url}runs/r-hook-1/events", timeout=TIMEOUT)

    assert failed.status_code == 500
    assert failed.json()["code"] == "HOOK_FAILED"
    assert ran.status_code == 200
    assert_whole_run(frames_of(ran.text), 1)
    assert unknown.status_code == 404


def test_a_run_is_read_back_in_protobuf_when_accept_asks(memory_url: str) -> None:
    httpx.post(memory_url, json=body("t-proto", "r-proto", count=3), timeout=TIMEOUT)

    response = httpx.get(
        f"{memory_url}runs/r-proto/events?after=2",
        headers={"accept": PROTO_MEDIA_TYPE},
        timeout=TIMEOUT,
    )

    assert response.headers["content-type"] == PROTO_MEDIA_TYPE
    events = decode_proto(response.content)
    assert [type(e).__name__ for e in events][:2] == ["CustomEvent", "CustomEvent"]
    assert isinstance(events[-1], RunFinishedEvent)


async def _huge_number(ctx: RunContext[JsonValue]) -> None:
    ctx.say("before")
    ctx.emit(CustomEvent(name="huge", value=10**400))  # JSON holds it; a protobuf double cannot
    ctx.say("after")


def test_an_event_protobuf_cannot_carry_ends_that_readers_stream_and_the_run_goes_on() -> None:
    with serving(agui.asgi_app(_huge_number, runs=MemoryRunLog())) as url:
        given: dict[str, JsonValue] = {"threadId": "t-huge", "runId": "r-huge", "messages": []}
        proto = httpx.post(url, json=given, headers={"accept": PROTO_MEDIA_TYPE}, timeout=TIMEOUT)
        sse = httpx.get(f"{url}runs/r-huge/events?after=0", timeout=TIMEOUT)

    events = decode_proto(proto.content)
    assert [event.type for event in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]
    assert isinstance(events[-1], RunErrorEvent)
    assert events[-1].code == "SERIALIZATION_ERROR"
    read = events_of(frames_of(sse.text))
    assert [e.value for e in read if isinstance(e, CustomEvent)] == [10**400]
    assert read[-1].type == "RUN_FINISHED"


async def _burst(ctx: RunContext[JsonValue]) -> None:
    for tick in range(30):  # one batch, since nothing is awaited: more than the log keeps
        ctx.emit(CustomEvent(name="tick", value=tick))


def test_a_reader_that_fell_behind_the_logs_maxlen_gets_an_end_not_a_stream_with_a_hole() -> None:
    with serving(agui.asgi_app(_burst, runs=MemoryRunLog(maxlen=10))) as url:
        given: dict[str, JsonValue] = {"threadId": "t-burst", "runId": "r-burst", "messages": []}
        live = frames_of(httpx.post(url, json=given, timeout=TIMEOUT).text)
        late = frames_of(httpx.get(f"{url}runs/r-burst/events?after=1", timeout=TIMEOUT).text)
        kept = frames_of(httpx.get(f"{url}runs/r-burst/events?after=22", timeout=TIMEOUT).text)

    for frames in (live, late):
        *whole, (end_id, end) = frames
        assert [frame_id for frame_id, _ in whole] == list(range(1, len(whole) + 1))
        assert (end_id, end["type"], end["code"]) == (None, "RUN_ERROR", "EVENTS_TRIMMED")
        assert "the run log keeps a run's latest 10 events" in str(end["message"])
    assert [frame_id for frame_id, _ in kept] == list(range(23, 33))
    assert kept[-1][1]["type"] == "RUN_FINISHED"


def test_a_run_past_max_run_seconds_is_cancelled() -> None:
    with serving(agui.asgi_app(counter, runs=MemoryRunLog(max_run_seconds=0.3))) as url:
        started = time.monotonic()
        response = httpx.post(url, json=body("t-max", "r-max", 1000, 0.01), timeout=TIMEOUT)

    assert time.monotonic() - started < 5.0
    assert outcome(frames_of(response.text)[-1][1]) == "cancelled"


def test_a_quiet_run_gets_keepalive_pings() -> None:
    app = agui.asgi_app(counter, runs=MemoryRunLog(lease=1.0), keepalive=0.05)
    with serving(app) as url:
        response = httpx.post(url, json=body("t-ping", "r-ping", 3, 0.3), timeout=TIMEOUT)

    assert ": ping" in response.text
    assert_whole_run(frames_of(response.text), 3)


def test_the_server_shutting_down_ends_its_runs_cancelled_in_the_log() -> None:
    log = MemoryRunLog()
    with serving(agui.asgi_app(counter, runs=log)) as url:
        read_some(url, body("t-down", "r-down", count=1000, delay=0.02), 2)

    page = asyncio.run(log.read("r-down", 0, wait=0))
    assert page is not None
    assert page.ended
    assert outcome(json.loads(page.frames[-1][1])) == "cancelled"


def test_an_event_that_cannot_be_serialized_ends_the_run_in_the_log() -> None:
    unserializable: Any = object()
    bad = CustomEvent.model_construct(type="CUSTOM", name="bad", value=unserializable)
    good = RunStartedEvent(thread_id="t", run_id="r")

    async def scenario() -> tuple[list[str], list[str]]:
        log = MemoryRunLog()
        await log.begin("r", "t")
        ctx: RunContext[JsonValue] = RunContext(RunAgentInput(thread_id="t", run_id="r"))
        ctx.receiver.push(good)
        ctx.receiver.push(bad)
        ctx.receiver.close()
        stopped: list[str] = []
        await record_run(log, ctx.input, ctx, stopped.append)
        page = await log.read("r", 0, wait=0)
        assert page is not None
        assert page.ended
        return [json.loads(data)["type"] for _, data in page.frames], stopped

    assert batch_frames([good, bad]) == (
        [b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}'],
        True,
    )
    types, stopped = asyncio.run(scenario())
    assert types == ["RUN_STARTED", "RUN_ERROR"]
    assert stopped == ["an event could not be serialized"]


def test_the_official_typescript_client_reads_a_durable_run(memory_url: str) -> None:
    node = shutil.which("node")
    assert node is not None, "the TypeScript client test needs node (>= 20)"
    with tempfile.TemporaryDirectory() as scratch:
        result_file = Path(scratch) / "result.json"
        env = {**os.environ, "AGUI_URL": memory_url, "AGUI_RESULT_FILE": str(result_file)}
        completed = subprocess.run(  # noqa: S603 - a fixed command line
            [node, "--test", "client.test.mjs"],
            cwd=TESTS / "js",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        client = json.loads(result_file.read_text())

    assert client["events"][0] == "RUN_STARTED"
    assert client["events"].count("CUSTOM") == 20
    assert client["state"] == {"ticks": 20, "runId": "run-ts"}
    assert client["messages"][-1]["content"] == "done after 20"
    thread = httpx.get(f"{memory_url}threads/thread-ts", timeout=TIMEOUT).json()
    assert thread["messages"] == client["messages"]


# -- a Redis that restarts -------------------------------------------------------------------


def test_a_redis_restart_mid_run_ends_the_stream_and_the_worker_goes_on_serving() -> None:
    with running_redis() as redis:
        app = agui.asgi_app(counter, runs=RedisRunLog(redis.url, lease=1.0))
        with serving(app) as url:
            seen: list[Frame] = []
            with httpx.stream(
                "POST", url, json=body("t-restart", "r-restart", 1000, 0.01), timeout=TIMEOUT
            ) as response:
                text = ""
                for chunk in response.iter_text():
                    text += chunk
                    if not seen and "id: 3\n" in text:
                        redis.restart()
                        seen = [(None, {})]
                frames = frames_of(text)
            kept = httpx.get(f"{url}runs/r-restart/events", timeout=TIMEOUT)
            again = httpx.post(url, json=body("t-restart", "r-after", 3), timeout=TIMEOUT)

    last = frames[-1][1]
    # Read while Redis was still down, or from the Redis that came back without the run.
    assert last["type"] == "RUN_ERROR"
    assert last["code"] in {"RUN_LOG_UNAVAILABLE", "RUN_LOST"}
    # Nothing holds the run now: this worker answers as every other one would.
    assert (kept.status_code, kept.json()["code"]) == (404, "RUN_NOT_FOUND")
    assert again.status_code == 200
    assert_whole_run(frames_of(again.text), 3)


def test_a_redis_that_is_down_is_a_503_with_retry_after() -> None:
    with running_redis() as redis:
        app = agui.asgi_app(counter, runs=RedisRunLog(redis.url))
        with serving(app) as url:
            redis.stop()
            started = httpx.post(url, json=body("t-down", "r-down"), timeout=TIMEOUT)
            read = httpx.get(f"{url}runs/r-down/events", timeout=TIMEOUT)
            redis.start()

    assert (started.status_code, read.status_code) == (503, 503)
    assert started.json()["code"] == "RUN_LOG_UNAVAILABLE"
    assert started.headers["retry-after"] == "1"


# -- two workers sharing one Redis -----------------------------------------------------------


class Worker:
    """One uvicorn worker process serving `counter` on a Redis log (`script`: which way)."""

    def __init__(self, redis_url: str, lease: float, script: str = "durable_worker.py") -> None:
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
            [sys.executable, str(TESTS / script), redis_url, str(lease)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(TESTS.parent / "src")},
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("port "), f"the worker did not start: {line!r}"
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


LEASE = 1.5


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


def worker_pair(
    redis: RedisServer, script: str = "durable_worker.py"
) -> Iterator[tuple[Worker, Worker]]:
    """Two workers of `script` on one Redis, stopped when the generator is closed."""
    a = Worker(redis.url, LEASE, script)
    try:
        b = Worker(redis.url, LEASE, script)
    except BaseException:
        a.stop()
        raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


@pytest.fixture(scope="module")
def workers(redis: RedisServer) -> Iterator[tuple[Worker, Worker]]:
    yield from worker_pair(redis)


def test_a_run_on_worker_a_reads_to_its_end(workers: tuple[Worker, Worker]) -> None:
    a, _ = workers

    response = httpx.post(a.url, json=body("w-end", "w-end"), timeout=TIMEOUT)

    assert_whole_run(frames_of(response.text), 20)


@pytest.mark.parametrize("how", ["last-event-id", "after"])
def test_leaving_a_after_10_events_and_resuming_on_b_gives_the_whole_run(
    workers: tuple[Worker, Worker], how: str
) -> None:
    a, b = workers
    run = f"w-leave-{how}"
    first = read_some(a.url, body(run, run, count=40, delay=0.02), 10)
    time.sleep(0.3)  # nobody is connected while the run goes on

    last = str(first[-1][0])
    headers = {"last-event-id": last} if how == "last-event-id" else {}
    params = {"after": last} if how == "after" else {}
    rest = httpx.get(f"{b.url}runs/{run}/events", headers=headers, params=params, timeout=TIMEOUT)

    frames = frames_of(rest.text)
    assert frames[0][0] == int(last) + 1
    assert len(frames) > 1
    assert_whole_run(first + frames, 40)


def test_a_cancel_on_b_stops_a_run_on_a(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    read_some(a.url, body("w-cancel", "w-cancel", count=1000, delay=0.02), 2)

    busy = httpx.post(b.url, json=body("w-cancel", "w-other"), timeout=TIMEOUT)
    cancelled = httpx.post(f"{b.url}runs/w-cancel/cancel", timeout=TIMEOUT)
    rest = httpx.get(f"{b.url}runs/w-cancel/events", timeout=TIMEOUT)
    again = httpx.post(f"{a.url}runs/w-cancel/cancel", timeout=TIMEOUT)

    assert busy.status_code == 409
    assert busy.json()["code"] == "THREAD_BUSY"
    assert cancelled.status_code == 202
    frames = frames_of(rest.text)
    assert outcome(frames[-1][1]) == "cancelled"
    assert len(frames) < 200
    assert again.status_code == 409


def test_on_b_the_last_event_id_of_a_run_on_a_is_its_end_and_one_more_is_refused(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = workers
    posted = httpx.post(a.url, json=body("w-past", "w-past", 2), timeout=TIMEOUT)
    last = frames_of(posted.text)[-1][0]
    assert last is not None

    at_end = httpx.get(f"{b.url}runs/w-past/events?after={last}", timeout=TIMEOUT)
    past = httpx.get(f"{b.url}runs/w-past/events?after={last + 1}", timeout=TIMEOUT)
    start = httpx.get(f"{b.url}runs/w-past/events?after=1", timeout=TIMEOUT)

    assert (at_end.status_code, frames_of(at_end.text)) == (200, [])
    assert (past.status_code, past.json()["code"]) == (400, "INVALID_EVENT_ID")
    assert frames_of(start.text) == frames_of(posted.text)[1:]


def test_the_thread_on_b_holds_two_runs_on_a(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    httpx.post(a.url, json=body("w-fold", "w-fold-1", count=1), timeout=TIMEOUT)
    httpx.post(a.url, json=body("w-fold", "w-fold-2", count=2), timeout=TIMEOUT)

    thread = httpx.get(f"{b.url}threads/w-fold", timeout=TIMEOUT).json()
    unknown_run = httpx.get(f"{b.url}runs/w-nope/events", timeout=TIMEOUT)
    unknown_thread = httpx.get(f"{b.url}threads/w-nope", timeout=TIMEOUT)

    assert thread["runIds"] == ["w-fold-1", "w-fold-2"]
    assert [m["id"] for m in thread["messages"]] == [
        "w-fold-1-user",
        "w-fold-1-msg-1",
        "w-fold-2-user",
        "w-fold-2-msg-1",
    ]
    assert thread["state"] == {"ticks": 2, "runId": "w-fold-2"}
    assert (unknown_run.status_code, unknown_thread.status_code) == (404, 404)


def test_a_reader_on_b_of_a_run_on_a_killed_gets_run_lost_within_the_lease(
    redis: RedisServer, workers: tuple[Worker, Worker]
) -> None:
    _, b = workers
    doomed = Worker(redis.url, LEASE)
    try:
        read_some(doomed.url, body("w-kill", "w-kill", count=10_000, delay=0.02), 3)
        with httpx.stream("GET", f"{b.url}runs/w-kill/events?after=3", timeout=TIMEOUT) as reading:
            lines = reading.iter_lines()
            next(line for line in lines if line.startswith("data: "))
            doomed.process.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            text = "\n".join(lines)
        ended = time.monotonic() - killed
    finally:
        doomed.stop()

    last = frames_of(text)[-1][1]
    assert (last["type"], last["code"]) == ("RUN_ERROR", "RUN_LOST")
    assert ended < LEASE + 1.0  # the lease, and a reader's poll, on a busy machine
    again = httpx.post(b.url, json=body("w-kill", "w-kill-2", 2), timeout=TIMEOUT)
    assert again.status_code == 200


# -- the parts, where the wire cannot reach ----------------------------------------------------


DOWN = "the run log (test) cannot be reached"


class FlakyLog(MemoryRunLog):
    """A memory log whose appends or renewals fail as told."""

    def __init__(
        self, *, appends: bool = True, renewals: tuple[str, ...] = (), lease: float = 0.15
    ) -> None:
        super().__init__(lease=lease)
        self.appends = appends
        self.renewals = list(renewals)

    async def append(
        self, run_id: str, frames: Sequence[bytes], *, thread: ThreadRecord | None = None
    ) -> bool:
        if not self.appends:
            raise RunLogError(DOWN)
        return await super().append(run_id, frames, thread=thread)

    async def renew(self, run_id: str) -> LeaseAnswer:
        if self.renewals:
            answer = self.renewals.pop(0)
            if answer == "fail":
                raise RunLogError(DOWN)
            if answer != "gone":  # a log that answers renews the lease as it answers
                await super().renew(run_id)
            return cast("LeaseAnswer", answer)
        return await super().renew(run_id)


async def stubborn(ctx: RunContext[JsonValue]) -> None:
    """An agent that sleeps through being cancelled once."""
    ctx.emit(CustomEvent(name="tick", value=0))
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        await asyncio.sleep(0.3)


def test_a_run_whose_log_fails_is_stopped_even_if_it_ignores_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = FlakyLog(appends=False)
    app = agui.asgi_app(stubborn, runs=log, cancel_grace=0.05)
    with caplog.at_level("ERROR", logger="agui.asgi"), serving(app) as url:
        response = httpx.post(url, json=body("t-flaky", "r-flaky"), timeout=TIMEOUT)
        time.sleep(0.2)

    assert response.status_code == 200
    # Nothing of the run reached the log; once its lease ran out, its reader was told.
    [(_, ended)] = frames_of(response.text)
    assert ended["code"] == "RUN_LOST"
    messages = [record.getMessage() for record in caplog.records]
    assert any("could not be written to its log" in m for m in messages)
    assert any("ignored being cancelled" in m for m in messages)


@pytest.mark.parametrize(("renewals", "warned"), [(("fail", "cancel"), True), (("gone",), False)])
def test_a_renewal_that_finds_a_cancel_or_the_run_gone_stops_the_run(
    renewals: tuple[str, ...],
    warned: bool,  # noqa: FBT001 - a parameter of the test
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A lease long enough that the run, told to stop, ends before it runs out on a busy machine.
    log = FlakyLog(renewals=renewals, lease=0.6)
    with (
        caplog.at_level("WARNING", logger="agui.asgi"),
        serving(agui.asgi_app(counter, runs=log)) as url,
    ):
        response = httpx.post(url, json=body("t-renew", "r-renew", 200, 0.01), timeout=5)

    frames = frames_of(response.text)
    assert outcome(frames[-1][1]) == "cancelled"
    assert len(frames) < 150
    assert any("renewing the lease" in r.getMessage() for r in caplog.records) is warned


def test_a_run_that_ends_without_a_terminal_event_leaves_the_log_open() -> None:
    async def scenario() -> bool:
        log = MemoryRunLog()
        await log.begin("r", "t")
        ctx: RunContext[JsonValue] = RunContext(RunAgentInput(thread_id="t", run_id="r"))
        ctx.receiver.push(RunStartedEvent(thread_id="t", run_id="r"))
        ctx.receiver.close()
        await record_run(log, ctx.input, ctx, lambda _: None)
        page = await log.read("r", 0, wait=0)
        assert page is not None
        return page.ended

    assert not asyncio.run(scenario())


class Client:
    """An ASGI client that stays until told, and whose sends fail from the `fail_at`-th on."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.sent: list[MutableMapping[str, Any]] = []
        self.gone = asyncio.Event()

    async def receive(self) -> MutableMapping[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if len(self.sent) + 1 >= self.fail_at:
            raise OSError(errno.EPIPE, "the client went away")
        self.sent.append(message)


@pytest.mark.parametrize(("fail_at", "sent"), [(1, 0), (2, 1), (3, 2)])
def test_a_follower_stops_at_the_first_send_that_fails(fail_at: int, sent: int) -> None:
    async def scenario() -> list[MutableMapping[str, Any]]:
        log = MemoryRunLog(lease=0.3)
        await log.begin("r", "t")
        await log.append("r", [b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}'])
        first = await log.read("r", 0, wait=0)
        assert first is not None
        client = Client(fail_at)
        follower = Follower(log, keepalive=0.01)
        await asyncio.wait_for(
            follower.stream("r", 0, first, SSE, [], client.receive, client.send), 5.0
        )
        return client.sent

    assert len(asyncio.run(scenario())) == sent


class Unreadable(MemoryRunLog):
    async def read(self, run_id: str, after: int, wait: float) -> Page | None:  # noqa: ARG002
        raise RunLogError(DOWN)


def test_a_follower_whose_log_fails_ends_with_a_frame_of_its_own() -> None:
    async def scenario() -> list[MutableMapping[str, Any]]:
        client = Client(fail_at=100)
        first = Page([(1, b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}')], ended=False)
        follower = Follower(Unreadable(), keepalive=None)
        await asyncio.wait_for(
            follower.stream("r", 0, first, SSE, [], client.receive, client.send), 5.0
        )
        return client.sent

    bodies = [m.get("body", b"") for m in asyncio.run(scenario())]
    frames = frames_of(b"".join(bodies).decode())
    assert frames[0][0] == 1
    assert frames[-1] == (None, {**frames[-1][1], "code": "RUN_LOG_UNAVAILABLE"})
    assert bodies[-1] == b""


def test_a_follower_ends_with_run_lost_when_the_run_expires_while_it_reads() -> None:
    async def scenario() -> list[MutableMapping[str, Any]]:
        log = MemoryRunLog(lease=0.3, ttl=0.01, max_run_seconds=0.01)
        await log.begin("r", "t")
        client = Client(fail_at=100)
        follower = Follower(log, keepalive=None)
        first = Page([], ended=False)
        await asyncio.wait_for(
            follower.stream("r", 0, first, SSE, [], client.receive, client.send), 5.0
        )
        return client.sent

    sent = asyncio.run(scenario())
    assert [m["type"] for m in sent] == ["http.response.start", *["http.response.body"] * 2]
    frames = frames_of(sent[1]["body"].decode())
    assert frames == [(None, {**frames[0][1], "type": "RUN_ERROR", "code": "RUN_LOST"})]
    assert "no longer in the run log" in str(frames[0][1]["message"])
    assert sent[-1]["body"] == b""


# -- agui serve --runs -----------------------------------------------------------------------

AGUI = Path(sys.executable).parent / "agui"


def serve(*options: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(  # noqa: S603 - the installed command, fixed arguments
        [
            str(AGUI),
            "serve",
            "durable_worker.py:counter",
            "--port",
            "0",
            "--path",
            "/agent",
            *options,
        ],
        cwd=TESTS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("agui: serving on "):
        process.kill()
        _, errors = process.communicate(timeout=10)
        pytest.fail(f"agui serve did not start: {line!r} {errors!r}")
    return process, line.removeprefix("agui: serving on ").strip()


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGINT)
    try:
        process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=10)
    return process.returncode


@pytest.mark.parametrize("runs", ["memory", "redis"])
def test_agui_serve_with_runs_answers_the_durable_routes_below_its_path(
    runs: str, redis: RedisServer
) -> None:
    process, url = serve("--runs", redis.url if runs == "redis" else runs)
    try:
        started = httpx.post(url, json=body(f"cli-{runs}", f"cli-{runs}", 3), timeout=TIMEOUT)
        events = httpx.get(f"{url}/runs/cli-{runs}/events?after=4", timeout=TIMEOUT)
        thread = httpx.get(f"{url}/threads/cli-{runs}", timeout=TIMEOUT)
        elsewhere = httpx.get(f"{url}/other/runs", timeout=TIMEOUT)
    finally:
        status = stop(process)

    assert_whole_run(frames_of(started.text), 3)
    assert frames_of(events.text)[0][0] == 5
    assert thread.json()["runIds"] == [f"cli-{runs}"]
    assert elsewhere.status_code == 404
    assert status == 0


def test_agui_serve_refuses_a_run_log_it_does_not_know() -> None:
    completed = subprocess.run(  # noqa: S603 - the installed command, fixed arguments
        [str(AGUI), "serve", "durable_worker.py:counter", "--runs", "postgres://db"],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert completed.returncode == 2
    assert "--runs 'postgres://db' names no run log: give memory or a redis:// URL" in (
        completed.stderr
    )


class FakeUvicorn:
    """Stands in for `uvicorn.Server`: keeps the app it was given instead of serving it."""

    served: ClassVar[list[Any]] = []

    def __init__(self, config: uvicorn.Config) -> None:
        self.config = config

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        del sockets
        FakeUvicorn.served.append(self.config.app)


def test_serve_builds_the_memory_log_and_its_routes_answer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    FakeUvicorn.served = []
    monkeypatch.setattr(uvicorn, "Server", FakeUvicorn)
    monkeypatch.chdir(TESTS)

    assert main(["serve", "durable_worker.py:counter", "--port", "0", "--runs", "memory"]) == 0
    assert main(["serve", "durable_worker.py:counter", "--port", "0", "--runs", "redis://x"]) == 0
    assert main(["serve", "durable_worker.py:counter", "--port", "0", "--runs", "sqlite:"]) == 2
    assert "--runs 'sqlite:' names no run log" in capsys.readouterr().err

    async def use(app: Any) -> tuple[int, JsonValue]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            started = await http.post("/", json=body("cli-t", "cli-r", 2))
            thread = await http.get("/threads/cli-t")
        return started.status_code, thread.json()

    status, thread = asyncio.run(use(FakeUvicorn.served[0]))
    assert status == 200
    assert isinstance(thread, dict)
    assert thread["runIds"] == ["cli-r"]


class CountingLog(MemoryRunLog):
    """A memory log that notes how many frames each append carried."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    async def append(
        self, run_id: str, frames: Sequence[bytes], *, thread: ThreadRecord | None = None
    ) -> bool:
        self.sizes.append(len(frames))
        return await super().append(run_id, frames, thread=thread)


def test_a_burst_waits_briefly_for_more_events_and_a_first_slow_or_last_batch_does_not() -> None:
    async def scenario() -> list[int]:
        log = CountingLog()
        await log.begin("r", "t")
        ctx: RunContext[JsonValue] = RunContext(RunAgentInput(thread_id="t", run_id="r"))

        async def produce() -> None:
            ctx.receiver.push(RunStartedEvent(thread_id="t", run_id="r"))
            await asyncio.sleep(0.05)
            for index in range(8):  # a burst: the log's task takes it, then waits for more
                ctx.receiver.push(CustomEvent(name="burst", value=index))
            await asyncio.sleep(0)
            ctx.receiver.push(CustomEvent(name="late", value=None))  # joins the burst
            await asyncio.sleep(0.05)
            ctx.receiver.push(CustomEvent(name="slow", value=None))  # alone: goes at once
            await asyncio.sleep(0.05)
            for index in range(8):
                ctx.receiver.push(CustomEvent(name="burst", value=index))
            ctx.receiver.push(RunFinishedEvent(thread_id="t", run_id="r"))
            ctx.receiver.close()

        producer = asyncio.create_task(produce())
        stopped: list[str] = []
        await record_run(log, ctx.input, ctx, stopped.append)
        await producer
        assert stopped == []
        return log.sizes

    assert asyncio.run(scenario()) == [1, 9, 1, 9]
