"""The run logs, one suite for both: the memory log and the Redis log on a real redis-server.

Every behaviour of the `RunLog` contract runs against `MemoryRunLog` and against `RedisRunLog`
on a redis-server of the suite's own (a free loopback port, no persistence), each test with a
fresh key prefix, so the two logs are held to exactly the same answers.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
import shutil
import socket
import subprocess
import sys
import uuid
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, cast

import pytest
import redis.asyncio

from agui.errors import BlobTooLarge, RunLogError, UsageError
from agui.runs import MemoryRunLog, Page, RedisRunLog, RunLog, Settings, ThreadRecord
from agui.runs._log import LONGEST
from agui.runs._tail import Tail
from redis_server import RedisServer, free_port, running_redis

START = b'{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}'
FINISH = b'{"type":"RUN_FINISHED","threadId":"t1","runId":"r1","outcome":{"type":"success"}}'
RECORD = ThreadRecord("t1", messages=[{"id": "u1", "role": "user"}], state={"n": 1}, run_ids=["r1"])
Scenario = Callable[[RunLog], Awaitable[None]]
Factory = Callable[..., RunLog]


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@pytest.fixture(params=["memory", "redis"])
def make_log(request: pytest.FixtureRequest) -> Factory:
    if request.param == "memory":
        return MemoryRunLog
    server: RedisServer = request.getfixturevalue("redis_server")
    prefix = f"test-{uuid.uuid4().hex[:8]}:"

    def redis_log(**settings: Any) -> RunLog:
        return RedisRunLog(server.url, prefix=prefix, **settings)

    return redis_log


def run(make_log: Factory, scenario: Scenario, **settings: float) -> None:
    async def main() -> None:
        log = make_log(**settings)
        try:
            await scenario(log)
        finally:
            await log.aclose()

    asyncio.run(main())


def frame(number: int) -> bytes:
    return json.dumps({"type": "CUSTOM", "name": "n", "value": number}).encode()


def test_frames_are_numbered_from_one_and_read_from_any_id_onwards(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        assert await log.begin("r1", "t1") is None
        assert await log.append("r1", [START, frame(2), frame(3)])
        assert await log.append("r1", [frame(4)])

        whole = await log.read("r1", 0, wait=0)
        rest = await log.read("r1", 2, wait=0)

        assert whole is not None
        assert rest is not None
        assert [number for number, _ in whole.frames] == [1, 2, 3, 4]
        assert whole.frames[0][1] == START
        assert rest.frames == whole.frames[2:]
        assert not whole.ended

    run(make_log, scenario)


def test_the_last_batch_ends_the_run_writes_the_thread_and_frees_it(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        assert await log.begin("r2", "t1") == "r1"
        assert await log.begin("r1", "t9") == "r1"
        assert await log.thread("t1") is None

        assert await log.append("r1", [START, FINISH], thread=RECORD)

        page = await log.read("r1", 0, wait=1.0)
        assert page is not None
        assert page.ended
        assert [number for number, _ in page.frames] == [1, 2]
        assert await log.thread("t1") == RECORD
        assert not await log.append("r1", [frame(3)])
        assert await log.begin("r2", "t1") is None

    run(make_log, scenario)


def test_a_waiting_reader_wakes_with_the_next_batch(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await log.append("r1", [START])
        reading = asyncio.create_task(log.read("r1", 1, wait=5.0))
        await asyncio.sleep(0.1)
        assert not reading.done()

        await log.append("r1", [frame(2), frame(3)])
        page = await asyncio.wait_for(reading, 2.0)

        assert page is not None
        assert [number for number, _ in page.frames] == [2, 3]
        empty = await log.read("r1", 3, wait=0.05)
        assert empty is not None
        assert empty.frames == []

    run(make_log, scenario)


def test_an_unknown_run_reads_none_and_cannot_be_cancelled(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        assert await log.read("nope", 0, wait=0) is None
        assert await log.cancel("nope") == "unknown"
        assert await log.renew("nope") == "gone"
        assert not await log.append("nope", [START])

    run(make_log, scenario)


def test_a_run_whose_owner_stops_renewing_ends_run_lost(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await log.append("r1", [START])
        assert await log.renew("r1") == "live"

        loop = asyncio.get_running_loop()
        started = loop.time()
        page = await log.read("r1", 1, wait=0)
        while page is not None and not page.ended and loop.time() - started < 5.0:
            page = await log.read("r1", 1, wait=log.settings.poll)

        assert page is not None
        assert page.ended
        assert loop.time() - started < log.settings.lease + 1.0
        ((number, lost),) = page.frames
        assert number == 2
        assert json.loads(lost)["code"] == "RUN_LOST"
        assert await log.renew("r1") == "gone"
        assert not await log.append("r1", [frame(3)])
        assert await log.cancel("r1") == "ended"
        assert await log.begin("r2", "t1") is None

    run(make_log, scenario, lease=0.5)


def test_a_lost_run_leaves_the_thread_to_the_run_that_took_it_over(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await asyncio.sleep(0.4)
        assert await log.begin("r2", "t1") is None

        page = await log.read("r1", 0, wait=0)

        assert page is not None
        assert page.ended
        assert await log.begin("r3", "t1") == "r2"

    run(make_log, scenario, lease=0.3)


@pytest.mark.parametrize("first", ["append", "renew"])
def test_an_owner_whose_lease_lapsed_finds_its_run_lost_when_it_next_writes(
    make_log: Factory, first: str
) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await log.append("r1", [START])
        await asyncio.sleep(0.4)  # the owner paused past its lease, and nobody read the run
        assert await log.begin("r2", "t1") is None  # another worker took the thread meanwhile

        if first == "append":
            assert not await log.append("r1", [frame(2)])
        else:
            assert await log.renew("r1") == "gone"

        assert await log.renew("r1") == "gone"
        assert not await log.append("r1", [frame(3)])
        page = await log.read("r1", 1, wait=0)
        assert page is not None
        assert page.ended
        ((number, lost),) = page.frames
        assert (number, json.loads(lost)["code"]) == (2, "RUN_LOST")
        assert await log.begin("r3", "t1") == "r2"

    run(make_log, scenario, lease=0.3)


def test_an_abandoned_run_ends_run_lost_at_once_and_an_ended_or_foreign_one_is_left(
    make_log: Factory,
) -> None:
    async def scenario(log: RunLog) -> None:
        other = make_log()
        try:
            await log.begin("r1", "t1")
            await log.append("r1", [START])
            await other.abandon("r1")  # not its run
            assert await log.renew("r1") == "live"

            await log.abandon("r1")

            page = await log.read("r1", 1, wait=0)
            assert page is not None
            assert page.ended
            ((number, lost),) = page.frames
            assert (number, json.loads(lost)["code"]) == (2, "RUN_LOST")
            assert await log.begin("r2", "t1") is None
            await log.append("r2", [START, FINISH], thread=RECORD)
            await log.abandon("r2")
            ended = await log.read("r2", 0, wait=0)
            assert ended is not None
            assert [data for _, data in ended.frames] == [START, FINISH]
        finally:
            await other.aclose()

    run(make_log, scenario)  # the default lease, 15 s: only the abandon ends the run


def test_a_renewed_lease_keeps_the_run_live(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await log.append("r1", [START])
        # Renewed every 0.15 s for 1.2 s in all, past a lease of 1 s: a late wake-up on a busy
        # machine still renews well within the lease.
        for _ in range(8):
            await asyncio.sleep(0.15)
            assert await log.renew("r1") == "live"

        page = await log.read("r1", 1, wait=0.05)

        assert page is not None
        assert (page.frames, page.ended) == ([], False)
        assert await log.begin("r2", "t1") == "r1"

    run(make_log, scenario, lease=1.0)


def test_a_lost_run_is_settled_by_a_cancel_too(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await asyncio.sleep(0.4)

        assert await log.cancel("r1") == "ended"
        page = await log.read("r1", 0, wait=0)
        assert page is not None
        assert page.ended
        assert json.loads(page.frames[-1][1])["code"] == "RUN_LOST"

    run(make_log, scenario, lease=0.3)


def test_a_cancel_reaches_the_watcher_and_the_next_renewal(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        told = asyncio.Event()
        unwatch = log.watch("r1", told.set)
        await asyncio.sleep(0.2)  # the Redis log subscribes to its channel
        await log.begin("r2", "t2")

        assert await log.cancel("r2") == "accepted"  # nobody watches it: the renewal will tell
        assert await log.cancel("r1") == "accepted"
        await asyncio.wait_for(told.wait(), 2.0)
        assert await log.renew("r1") == "cancel"
        unwatch()
        unwatch()
        assert await log.append("r1", [START, FINISH], thread=RECORD)
        assert await log.cancel("r1") == "ended"

    run(make_log, scenario)


def test_a_log_keeps_the_latest_maxlen_events_of_a_run(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        for batch in range(3):
            await log.append("r1", [frame(4 * batch + n) for n in range(1, 5)])

        page = await log.read("r1", 0, wait=0)

        assert page is not None
        numbers = [number for number, _ in page.frames]
        assert numbers[-5:] == [8, 9, 10, 11, 12]
        assert 5 <= len(numbers) < 5 + 4  # trimmed by whole batches in Redis
        assert numbers == sorted(numbers)

    run(make_log, scenario, maxlen=5)


def test_finished_runs_and_threads_expire_after_the_ttl(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")
        await log.append("r1", [START, FINISH], thread=RECORD)
        assert await log.thread("t1") == RECORD

        await asyncio.sleep(0.6)

        assert await log.read("r1", 0, wait=0) is None
        assert await log.thread("t1") is None
        assert await log.cancel("r1") == "unknown"

    run(make_log, scenario, ttl=0.3)


def test_a_threads_value_is_its_owners_replaced_by_the_next_and_taken_once(
    make_log: Factory,
) -> None:
    async def scenario(log: RunLog) -> None:
        await log.keep_blob("t1", b"first", owner="alice")
        await log.keep_blob("t1", b"second", owner="alice")
        await log.keep_blob("t1", b"shared")
        await log.keep_blob("t2", b"other thread", owner="alice")

        assert await log.take_blob("t1", owner="bob") is None
        assert await log.take_blob("t1", owner="alice") == b"second"
        assert await log.take_blob("t1", owner="alice") is None  # one taker gets it
        assert await log.take_blob("t1") == b"shared"
        assert await log.take_blob("t2", owner="alice") == b"other thread"

    run(make_log, scenario)


def test_a_threads_value_is_another_workers_to_take(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        other = make_log()
        try:
            await log.keep_blob("t1", b"paused")
            taken = await other.take_blob("t1")
        finally:
            await other.aclose()
        assert taken == (b"paused" if isinstance(log, RedisRunLog) else None)

    run(make_log, scenario)


def test_a_threads_value_expires_after_the_ttl(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.keep_blob("t1", b"paused")
        await log.keep_blob("t2", b"paused")
        assert await log.take_blob("t2") == b"paused"

        await asyncio.sleep(0.6)

        assert await log.take_blob("t1") is None

    run(make_log, scenario, ttl=0.3)


def test_a_value_over_max_blob_bytes_is_refused_and_keeps_nothing(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.keep_blob("t1", b"x" * 8)
        with pytest.raises(
            BlobTooLarge, match=r"thread 't1' is 9 bytes, over the run log's max_blob_bytes \(8\)"
        ):
            await log.keep_blob("t1", b"x" * 9)
        assert await log.take_blob("t1") == b"x" * 8

    run(make_log, scenario, max_blob_bytes=8)


def test_a_workers_local_copy_keeps_and_takes_thread_values_in_the_log(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        tail = Tail(log)
        await tail.keep_blob("t1", b"paused", owner="alice")
        assert await log.take_blob("t1", owner="alice") == b"paused"
        await log.keep_blob("t1", b"again", owner="alice")
        assert await tail.take_blob("t1", owner="alice") == b"again"

    run(make_log, scenario)


def test_the_memory_log_drops_what_expired_even_if_nobody_reads_it() -> None:
    async def scenario() -> tuple[int, int]:
        log = MemoryRunLog(ttl=0.1)
        await log.begin("r1", "t1")
        await log.append("r1", [START, FINISH], thread=RECORD)
        await log.keep_blob("t1", b"paused")
        await asyncio.sleep(1.1)  # sweeps run once a second at most
        await log.begin("r2", "t2")
        return log.held_runs, len(log._blobs)  # pyright: ignore[reportPrivateUsage]

    assert asyncio.run(scenario()) == (1, 0)


def test_a_log_that_does_not_own_a_run_cannot_write_it(
    make_log: Factory,
) -> None:
    async def scenario(log: RunLog) -> None:
        other = make_log()
        try:
            await log.begin("r1", "t1")
            assert not await other.append("r1", [START])
            assert await other.renew("r1") == "gone"
        finally:
            await other.aclose()

    run(make_log, scenario)


def test_bad_settings_are_refused_naming_each() -> None:
    with pytest.raises(UsageError, match=r"ttl must be .* not 0.*maxlen must be a positive"):
        MemoryRunLog(ttl=0, maxlen=0)


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({"maxlen": 2.5}, r"maxlen must be a positive whole number of events, not 2\.5 "),
        ({"maxlen": True}, r"maxlen must be a positive whole number of events, not True "),
        ({"lease": 1e-9}, r"lease must be a number of seconds from 0\.001 .*, not 1e-09 "),
        ({"lease": float("inf")}, r"lease must be .* to 315360000 \(ten years\), not inf "),
        ({"lease": float("nan")}, r"lease must be a number of seconds .*, not nan "),
        ({"ttl": 1e18}, r"ttl must be a number of seconds .*, not 1e\+18 "),
        ({"ttl": "5"}, r"ttl must be a number of seconds .*, not '5' "),
        ({"max_run_seconds": True}, r"max_run_seconds must be a number of seconds .*, not True "),
        ({"max_blob_bytes": 0}, r"max_blob_bytes must be a positive whole number of bytes, not 0 "),
    ],
)
def test_a_setting_out_of_range_or_of_the_wrong_type_is_refused_when_the_log_is_built(
    settings: dict[str, Any], refused: str
) -> None:
    with pytest.raises(UsageError, match=refused + r"\(fix the run log's settings\)"):
        Settings(**settings)


def test_the_bounds_of_the_settings_are_taken_by_both_logs_and_their_local_copy() -> None:
    async def main() -> None:
        redis_log = RedisRunLog("redis://127.0.0.1:1/0", lease=0.001, max_run_seconds=LONGEST)
        tail = Tail(redis_log)
        try:
            assert tail.settings.max_run_seconds == LONGEST
            assert MemoryRunLog(ttl=LONGEST, max_run_seconds=1).settings.ttl == LONGEST
        finally:
            await tail.aclose()

    asyncio.run(main())


def test_a_worker_reads_a_run_id_used_again_as_the_new_run_once_the_log_lost_the_old(
    redis_server: RedisServer,
) -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}:"

    async def main() -> list[bytes]:
        tail = Tail(RedisRunLog(redis_server.url, prefix=prefix))
        store = redis.asyncio.Redis(host="127.0.0.1", port=redis_server.port)
        try:
            await tail.begin("r1", "t1")
            await tail.append("r1", [START, FINISH], thread=RECORD)
            await store.delete(f"{prefix}run:r1", f"{prefix}log:r1")  # evicted, or a restart
            assert await tail.begin("r1", "t2") is None
            assert await tail.append("r1", [frame(7)])
            page = await tail.read("r1", 0, wait=0)
            assert page is not None
            return [data for _, data in page.frames]
        finally:
            await store.aclose()
            await tail.aclose()

    assert asyncio.run(main()) == [frame(7)]


def test_a_run_its_owner_gives_up_is_read_from_the_log_ended_run_lost_by_every_reader(
    redis_server: RedisServer,
) -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}:"

    async def main() -> tuple[list[int], list[int]]:
        tail = Tail(RedisRunLog(redis_server.url, prefix=prefix))
        elsewhere = RedisRunLog(redis_server.url, prefix=prefix)
        try:
            await tail.begin("r1", "t1")
            await tail.append("r1", [START])
            await tail.release("r1")
            here, there = await tail.read("r1", 0, 0), await elsewhere.read("r1", 0, 0)
            assert here is not None
            assert there is not None
            assert here.ended
            return [n for n, _ in here.frames], [n for n, _ in there.frames]
        finally:
            await elsewhere.aclose()
            await tail.aclose()

    assert asyncio.run(main()) == ([1, 2], [1, 2])


def test_a_run_that_cannot_be_given_up_is_left_to_its_lease_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main(server: RedisServer) -> None:
        tail = Tail(RedisRunLog(server.url))
        try:
            await tail.begin("r1", "t1")
            await tail.append("r1", [START])
            server.stop()
            await tail.release("r1")
        finally:
            await tail.aclose()

    with running_redis() as server, caplog.at_level("WARNING", logger="agui.asgi"):
        asyncio.run(main(server))

    assert "run r1 could not be given up; it ends when its lease lapses" in caplog.text


def test_a_workers_copy_of_a_finished_run_expires_with_the_log_s_own(
    redis_server: RedisServer,
) -> None:
    async def main() -> tuple[bool, bool]:
        tail = Tail(RedisRunLog(redis_server.url, prefix=f"test-{uuid.uuid4().hex[:8]}:", ttl=0.3))
        try:
            await tail.begin("r1", "t1")
            await tail.append("r1", [START, FINISH], thread=RECORD)
            kept = await tail.read("r1", 0, wait=0) is not None
            await asyncio.sleep(0.5)
            return kept, await tail.read("r1", 0, wait=0) is None
        finally:
            await tail.aclose()

    assert asyncio.run(main()) == (True, True)


def test_a_discarded_run_wakes_its_waiting_reader_and_is_gone_to_the_next_read() -> None:
    async def main() -> tuple[Page | None, Page | None]:
        log = MemoryRunLog()
        await log.begin("r1", "t1")
        reading = asyncio.create_task(log.read("r1", 0, wait=30.0))
        await asyncio.sleep(0.05)
        log.discard("r1")
        woken = await asyncio.wait_for(reading, 5.0)
        return woken, await log.read("r1", 0, wait=0)

    woken, after = asyncio.run(main())
    assert woken is not None
    assert woken.frames == []
    assert after is None


class _Watcher:
    def __call__(self) -> None:
        pytest.fail("a swept run was cancelled")


def test_the_memory_log_keeps_nothing_of_a_run_it_sweeps() -> None:
    async def main() -> tuple[MemoryRunLog, weakref.ref[_Watcher], str]:
        log = MemoryRunLog(lease=0.01, ttl=0.01, max_run_seconds=0.01)
        await log.begin("r1", "t1")  # never ended, never read: only the sweep sees it go
        watcher = _Watcher()
        log.watch("r1", watcher)
        await asyncio.sleep(1.1)  # sweeps run once a second at most
        await log.begin("r2", "t2")
        return log, weakref.ref(watcher), await log.cancel("r1")

    log, watcher, cancelled = asyncio.run(main())  # the log lives on, as a server's does
    gc.collect()
    assert (watcher(), cancelled, log.held_runs) == (None, "unknown", 1)


def test_ids_that_spell_another_id_s_key_keep_to_their_own_run_and_thread(
    make_log: Factory,
) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("x", "t1")
        await log.append("x", [START])
        # Under the old layout, `run:x:log` was both this run and the log of 'x'.
        assert await log.begin("x:log", "t2") is None
        assert await log.begin("log:x", "t3") is None
        page = await log.read("x:log", 0, wait=0)
        assert page is not None
        assert (page.frames, page.ended) == ([], False)
        # And `thread:t:busy` both the record of thread 't:busy' and the reservation of 't'.
        await log.begin("r-busy", "t:busy")
        record = ThreadRecord("t:busy", messages=[], state={}, run_ids=["r-busy"])
        assert await log.append("r-busy", [START, FINISH], thread=record)
        assert await log.begin("r-t", "t") is None
        assert await log.begin("r-t2", "t") == "r-t"
        assert await log.thread("t") is None
        assert await log.thread("t:busy") == record

    run(make_log, scenario)


def test_an_empty_append_is_refused_by_both_logs_and_changes_nothing(make_log: Factory) -> None:
    async def scenario(log: RunLog) -> None:
        await log.begin("r1", "t1")

        with pytest.raises(UsageError, match=r"an append was given no frames; .*make no call"):
            await log.append("r1", [])
        with pytest.raises(UsageError, match=r"an append was given no frames"):
            await log.append("r1", [], thread=RECORD)

        page = await log.read("r1", 0, wait=0)
        assert page is not None
        assert (page.frames, page.ended) == ([], False)
        assert await log.append("r1", [START])
        assert await log.thread("t1") is None

    run(make_log, scenario)


def test_a_redis_that_refuses_a_command_is_reported_as_refusing_not_unreachable(
    redis_server: RedisServer,
) -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=2.0) as conn:
        conn.sendall(f"SET {prefix}run:r1 not-a-hash\r\n".encode())
        assert conn.recv(16).startswith(b"+OK")

    async def main() -> None:
        log = RedisRunLog(redis_server.url, prefix=prefix)
        try:
            with pytest.raises(
                RunLogError,
                match=r"refused a command: WRONGTYPE .*nothing but this log writes keys under",
            ):
                await log.read("r1", 0, wait=0)
        finally:
            await log.aclose()

    asyncio.run(main())


def test_an_unreachable_redis_raises_run_log_error() -> None:
    async def main() -> None:
        log = RedisRunLog(f"redis://127.0.0.1:{free_port()}/0")
        try:
            with pytest.raises(RunLogError, match=r"cannot be reached: .*check the server"):
                await log.begin("r1", "t1")
        finally:
            await log.aclose()

    asyncio.run(main())


def test_the_cancel_listener_retries_while_redis_is_down_warning_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        log = RedisRunLog(f"redis://127.0.0.1:{free_port()}/0")
        try:
            log.watch("r1", lambda: None)
            await asyncio.sleep(0.7)  # one failed subscription, one wait, a second try
        finally:
            await log.aclose()

    with caplog.at_level("DEBUG", logger="agui.runs"):
        asyncio.run(main())

    retries = [r for r in caplog.records if "listening for cancels failed" in r.getMessage()]
    assert len(retries) >= 2
    assert [r.levelname for r in retries[:2]] == ["WARNING", "DEBUG"]
    assert retries[0].exc_info is not None


def test_the_cancel_listener_says_when_it_listens_again_and_hears_cancels(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = RedisServer()
    heard = asyncio.Event()

    async def main() -> None:
        log = RedisRunLog(server.url)
        try:
            await asyncio.sleep(0)
            log.watch("r1", heard.set)
            await asyncio.sleep(0.2)  # the first try failed: nothing listens on the port yet
            server.start()
            started = asyncio.get_running_loop().time()
            while not heard.is_set() and asyncio.get_running_loop().time() - started < 5.0:
                await log.begin("r1", "t1")
                await log.cancel("r1")
                await asyncio.sleep(0.1)
        finally:
            await log.aclose()

    try:
        with caplog.at_level("WARNING", logger="agui.runs"):
            asyncio.run(main())
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)

    assert heard.is_set()
    assert re.search(r"listening for cancels again, after [1-9]\d* failed tries", caplog.text)


def test_the_redis_log_needs_the_redis_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)

    with pytest.raises(UsageError, match=r'pip install "agui-server\[redis\]"'):
        RedisRunLog("redis://127.0.0.1:1/0")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://localhost:6379", "must specify one of the following schemes"),
        ("", ""),
        (6379, "int"),
    ],
)
def test_a_redis_url_that_is_not_one_is_refused_naming_what_to_write(
    url: object, said: str
) -> None:
    with pytest.raises(
        UsageError,
        match=rf"RedisRunLog takes a Redis URL such as 'redis://localhost:6379/0' .*, not "
        rf"{re.escape(repr(url))}: .*{said}",
    ):
        RedisRunLog(cast("str", url))


def test_importing_the_run_logs_does_not_import_redis() -> None:
    code = "import sys, agui.runs; print(any(m.split('.')[0] == 'redis' for m in sys.modules))"

    loaded = subprocess.run(  # noqa: S603 - this interpreter, on a fixed program
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert loaded == "False"
