"""Identities across workers: two uvicorn processes sharing one real redis-server.

Each worker (`tenancy_worker.py`) maps bearer tokens to identities, so what Alice starts on one
worker is hers on the other, which never saw the run and reads its owner from Redis alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
import redis as redis_client

from redis_server import RedisServer, running_redis
from test_durable import Worker, worker_pair
from test_tenancy import ALICE, BOB, CAROL, body, frames_of, start_live

TIMEOUT = 30.0
SHARED = {"authorization": "Bearer shared"}


def ended_cancelled(text: str) -> bool:
    last = frames_of(text)[-1]
    meta = last.get("metadata")
    return (
        last["type"] == "RUN_FINISHED"
        and isinstance(meta, dict)
        and (meta.get("outcome") == "cancelled")
    )


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@pytest.fixture(scope="module")
def workers(redis: RedisServer) -> Iterator[tuple[Worker, Worker]]:
    yield from worker_pair(redis, "tenancy_worker.py")


def test_on_the_other_worker_another_identity_gets_404_everywhere_and_the_owner_all(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = workers
    done = httpx.post(a.url, json=body("x-alice", "x-r1"), headers=ALICE, timeout=TIMEOUT)
    start_live(a.url, body("x-alice-live", "x-live", 1000, 0.02), ALICE)

    bob = [
        httpx.get(f"{b.url}runs/x-r1/events", headers=BOB, timeout=TIMEOUT),
        httpx.get(f"{b.url}runs/x-r1/events", headers={**BOB, "last-event-id": "1"}),
        httpx.post(f"{b.url}runs/x-live/cancel", headers=BOB, timeout=TIMEOUT),
        httpx.get(f"{b.url}threads/x-alice", headers=BOB, timeout=TIMEOUT),
        httpx.post(b.url, json=body("x-alice", "x-bob"), headers=BOB, timeout=TIMEOUT),
        httpx.post(b.url, json=body("x-alice-live", "x-bob"), headers=BOB, timeout=TIMEOUT),
    ]
    unknown_run = httpx.get(f"{b.url}runs/x-none/events", headers=BOB, timeout=TIMEOUT)
    unknown_thread = httpx.get(f"{b.url}threads/x-none", headers=BOB, timeout=TIMEOUT)
    resumed = httpx.get(
        f"{b.url}runs/x-r1/events", headers={**ALICE, "last-event-id": "2"}, timeout=TIMEOUT
    )
    cancelled = httpx.post(f"{b.url}runs/x-live/cancel", headers=ALICE, timeout=TIMEOUT)
    ended = httpx.get(f"{b.url}runs/x-live/events", headers=ALICE, timeout=TIMEOUT)
    again = httpx.post(b.url, json=body("x-alice", "x-r2"), headers=ALICE, timeout=TIMEOUT)
    thread = httpx.get(f"{b.url}threads/x-alice", headers=ALICE, timeout=TIMEOUT)

    assert [answer.status_code for answer in bob] == [404] * 6
    run_asked = ["x-r1", "x-r1", "x-live"]
    for answer, asked in zip(bob[:3], run_asked, strict=True):
        assert answer.json() == json.loads(unknown_run.text.replace("x-none", asked))
    for answer, asked in zip(bob[3:], ["x-alice", "x-alice", "x-alice-live"], strict=True):
        assert answer.json() == json.loads(unknown_thread.text.replace("x-none", asked))
    assert not any("secret" in answer.text for answer in bob)
    assert frames_of(resumed.text) == frames_of(done.text)[2:]
    assert cancelled.status_code == 202
    assert ended_cancelled(ended.text)
    assert again.status_code == 200
    assert thread.json()["runIds"] == ["x-r1", "x-r2"]


def test_run_ids_do_not_collide_across_owners_on_two_workers(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = workers
    bobs = httpx.post(b.url, json=body("y-bob", "y-r-3"), headers=BOB, timeout=TIMEOUT)
    alices = httpx.post(a.url, json=body("y-alice", "y-r-3"), headers=ALICE, timeout=TIMEOUT)
    alice_on_b = httpx.get(f"{b.url}runs/y-r-3/events", headers=ALICE, timeout=TIMEOUT)
    bob_on_a = httpx.get(f"{a.url}runs/y-r-3/events", headers=BOB, timeout=TIMEOUT)

    assert (bobs.status_code, alices.status_code) == (200, 200)
    assert frames_of(alice_on_b.text) == frames_of(alices.text)
    assert frames_of(bob_on_a.text) == frames_of(bobs.text)
    assert frames_of(bob_on_a.text)[0]["threadId"] == "y-bob"


def test_true_is_one_shared_space_across_workers(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    posted = httpx.post(a.url, json=body("z-shared", "z-r"), headers=SHARED, timeout=TIMEOUT)
    read = httpx.get(f"{b.url}runs/z-r/events", headers=SHARED, timeout=TIMEOUT)
    thread = httpx.get(f"{b.url}threads/z-shared", headers=SHARED, timeout=TIMEOUT)
    alice = httpx.get(f"{b.url}runs/z-r/events", headers=ALICE, timeout=TIMEOUT)

    assert frames_of(read.text) == frames_of(posted.text)
    assert thread.json()["runIds"] == ["z-r"]
    assert alice.status_code == 404


def test_the_sharing_hook_on_another_worker_grants_read_and_run_and_denies_cancel(
    workers: tuple[Worker, Worker],
) -> None:
    a, b = workers
    httpx.post(a.url, json=body("team-1", "s-a1"), headers=ALICE, timeout=TIMEOUT)
    carol_runs = httpx.post(b.url, json=body("team-1", "s-c1"), headers=CAROL, timeout=TIMEOUT)
    start_live(a.url, body("team-1", "s-a2", 1000, 0.02), ALICE)
    run = f"{b.url}runs/s-a2/%s?thread=team-1"
    reads = httpx.get(f"{b.url}threads/team-1", headers=CAROL, timeout=TIMEOUT)
    with httpx.stream("GET", run % "events", headers=CAROL, timeout=TIMEOUT) as live:
        first = next(line for line in live.iter_lines() if line.startswith("data: "))
    cancel = httpx.post(run % "cancel", headers=CAROL, timeout=TIMEOUT)
    bob = httpx.get(run % "events", headers=BOB, timeout=TIMEOUT)
    closed = httpx.post(a.url, json=body("x-closed", "s-a3"), headers=ALICE, timeout=TIMEOUT)
    elsewhere = httpx.get(f"{b.url}threads/x-closed", headers=CAROL, timeout=TIMEOUT)
    httpx.post(run % "cancel", headers=ALICE, timeout=TIMEOUT)
    ended = httpx.get(run % "events", headers=ALICE, timeout=TIMEOUT)

    assert carol_runs.status_code == 200
    assert reads.json()["runIds"] == ["s-a1", "s-c1"]
    assert json.loads(first.removeprefix("data: "))["runId"] == "s-a2"
    assert (cancel.status_code, cancel.json()["code"]) == (404, "RUN_NOT_FOUND")
    assert bob.status_code == 404
    assert closed.status_code == 200
    assert elsewhere.status_code == 404
    assert ended_cancelled(ended.text)


def test_a_thread_written_before_owners_existed_is_the_shared_spaces_only(
    redis: RedisServer, workers: tuple[Worker, Worker]
) -> None:
    a, b = workers
    httpx.post(a.url, json=body("old-thread", "old-r1"), headers=SHARED, timeout=TIMEOUT)
    with redis_client.Redis(host="127.0.0.1", port=redis.port) as store:
        # What a log of before owners holds: the record and the run, and no `identity` key.
        assert store.delete("agui:identity:old-thread") == 1

    alice_reads = httpx.get(f"{b.url}threads/old-thread", headers=ALICE, timeout=TIMEOUT)
    alice_runs = httpx.post(
        b.url, json=body("old-thread", "old-r2"), headers=ALICE, timeout=TIMEOUT
    )
    shared_runs = httpx.post(
        b.url, json=body("old-thread", "old-r2"), headers=SHARED, timeout=TIMEOUT
    )
    thread = httpx.get(f"{b.url}threads/old-thread", headers=SHARED, timeout=TIMEOUT)

    assert (alice_reads.status_code, alice_runs.status_code) == (404, 404)
    assert shared_runs.status_code == 200
    assert thread.json()["runIds"] == ["old-r1", "old-r2"]
