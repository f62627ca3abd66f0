"""Many users on one server: runs and threads belong to the identity that started them.

Each test serves `counter` with uvicorn on 127.0.0.1 in this process, on a `MemoryRunLog` and
on a `RedisRunLog` of a redis-server of the module's own, behind an `authorize` that maps a
bearer token to an identity: Alice and Bob each hold one. What one identity started, another
gets 404 for, with the very body of an id nobody used; the two-worker case is in
`test_tenancy_redis.py`.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import httpx
import pytest
from pydantic import JsonValue

import agui
from agui.asgi import AguiApp, Authorize
from agui.asgi._identity import Access
from agui.client import AGUIClient
from agui.events import CustomEvent
from agui.runs import SHARED, MemoryRunLog, Owned, RedisRunLog, RunLog, ThreadRecord, run_key
from agui.runs._thread import thread_after
from agui.testing import serving
from agui.types import RunAgentInput
from durable_worker import counter
from redis_server import RedisServer, running_redis

TIMEOUT = 30.0
ALICE = {"authorization": "Bearer alice-token"}
BOB = {"authorization": "Bearer bob-token"}
CAROL = {"authorization": "Bearer carol-token"}
TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob", "Bearer carol-token": "carol"}


def by_token(headers: Mapping[str, str]) -> str | bool:
    return TOKENS.get(headers.get("authorization", ""), False)


def body(thread: str, run: str, count: int = 3, delay: float = 0.005) -> dict[str, JsonValue]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-user", "role": "user", "content": f"secret of {run}"}],
        "forwardedProps": {"count": count, "delay": delay},
    }


def frames_of(text: str) -> list[dict[str, JsonValue]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in text.split("\n")
        if line.startswith("data: ")
    ]


def outcome(data: dict[str, JsonValue]) -> JsonValue:
    """A RUN_FINISHED frame's outcome, where a client of this (pre-1.0) input is told it."""
    assert data["type"] == "RUN_FINISHED"
    meta = data.get("metadata")
    return meta.get("outcome", "success") if isinstance(meta, dict) else "success"


def start_live(url: str, payload: dict[str, JsonValue], headers: Mapping[str, str]) -> None:
    """POST a long run and leave once it started: it goes on in the log."""
    with httpx.stream("POST", url, json=payload, headers=headers, timeout=TIMEOUT) as response:
        assert response.status_code == 200
        next(response.iter_lines())


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


def new_log(kind: str, redis: RedisServer) -> RunLog:
    if kind == "memory":
        return MemoryRunLog(lease=1.0)
    redis.flush()
    return RedisRunLog(redis.url, lease=1.0)


@pytest.fixture(params=["memory", "redis"])
def log_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def app_on(
    kind: str, redis: RedisServer, authorize: Authorize = by_token, **options: Any
) -> AguiApp[JsonValue]:
    return agui.asgi_app(counter, runs=new_log(kind, redis), authorize=authorize, **options)


# -- the owner rule ----------------------------------------------------------------------------


def test_another_identity_gets_404_on_every_route_with_the_body_of_an_unknown_id(
    log_kind: str, redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    with serving(app_on(log_kind, redis)) as url:
        done = httpx.post(url, json=body("t-alice", "r-alice"), headers=ALICE, timeout=TIMEOUT)
        start_live(url, body("t-alice-live", "r-alice-live", 500, 0.02), ALICE)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="agui"):
            bob = {
                "events": httpx.get(f"{url}runs/r-alice/events", headers=BOB, timeout=TIMEOUT),
                "resume": httpx.get(
                    f"{url}runs/r-alice/events",
                    headers={**BOB, "last-event-id": "2"},
                    timeout=TIMEOUT,
                ),
                "live": httpx.get(f"{url}runs/r-alice-live/events", headers=BOB, timeout=TIMEOUT),
                "cancel": httpx.post(
                    f"{url}runs/r-alice-live/cancel", headers=BOB, timeout=TIMEOUT
                ),
                "thread": httpx.get(f"{url}threads/t-alice", headers=BOB, timeout=TIMEOUT),
                "post": httpx.post(
                    url, json=body("t-alice", "r-bob"), headers=BOB, timeout=TIMEOUT
                ),
                "post-live": httpx.post(
                    url, json=body("t-alice-live", "r-bob-2"), headers=BOB, timeout=TIMEOUT
                ),
            }
        logged = caplog.text
        unknown_run = httpx.get(f"{url}runs/r-nobody/events", headers=BOB, timeout=TIMEOUT)
        unknown_thread = httpx.get(f"{url}threads/t-nobody", headers=BOB, timeout=TIMEOUT)
        still = httpx.post(f"{url}runs/r-alice-live/cancel", headers=ALICE, timeout=TIMEOUT)
        thread = httpx.get(f"{url}threads/t-alice", headers=ALICE, timeout=TIMEOUT)
        again = httpx.get(f"{url}runs/r-alice/events", headers=ALICE, timeout=TIMEOUT)

    assert done.status_code == 200
    assert {name: answer.status_code for name, answer in bob.items()} == dict.fromkeys(bob, 404)
    for name, asked in (("events", "r-alice"), ("resume", "r-alice"), ("live", "r-alice-live")):
        assert bob[name].json() == json.loads(unknown_run.text.replace("r-nobody", asked))
    assert bob["cancel"].json() == json.loads(unknown_run.text.replace("r-nobody", "r-alice-live"))
    for name, asked in (("thread", "t-alice"), ("post", "t-alice"), ("post-live", "t-alice-live")):
        assert bob[name].json() == json.loads(unknown_thread.text.replace("t-nobody", asked))
    assert not any("secret" in answer.text or "runIds" in answer.text for answer in bob.values())
    assert "secret" not in logged
    assert still.status_code == 202  # Bob's cancel changed nothing
    assert thread.json()["runIds"] == ["r-alice"]  # and his POST added no turn
    assert next(m["content"] for m in thread.json()["messages"]) == "secret of r-alice"
    assert frames_of(again.text) == frames_of(done.text)


def test_the_owner_reads_resumes_cancels_and_runs_again_on_her_thread(
    log_kind: str, redis: RedisServer
) -> None:
    with serving(app_on(log_kind, redis)) as url:
        first = httpx.post(url, json=body("t-own", "r-own-1"), headers=ALICE, timeout=TIMEOUT)
        resumed = httpx.get(
            f"{url}runs/r-own-1/events", headers={**ALICE, "last-event-id": "2"}, timeout=TIMEOUT
        )
        second = httpx.post(url, json=body("t-own", "r-own-2"), headers=ALICE, timeout=TIMEOUT)
        start_live(url, body("t-own", "r-own-3", 500, 0.02), ALICE)
        cancelled = httpx.post(f"{url}runs/r-own-3/cancel", headers=ALICE, timeout=TIMEOUT)
        ended = httpx.get(f"{url}runs/r-own-3/events", headers=ALICE, timeout=TIMEOUT)
        thread = httpx.get(f"{url}threads/t-own", headers=ALICE, timeout=TIMEOUT)

    assert frames_of(resumed.text) == frames_of(first.text)[2:]
    assert second.status_code == 200
    assert cancelled.status_code == 202
    assert outcome(frames_of(ended.text)[-1]) == "cancelled"
    assert thread.json()["runIds"] == ["r-own-1", "r-own-2", "r-own-3"]
    user_turns = [m["content"] for m in thread.json()["messages"] if m["role"] == "user"]
    assert user_turns == ["secret of r-own-1", "secret of r-own-2", "secret of r-own-3"]


def test_run_ids_are_per_owner_so_bob_taking_alices_next_id_stops_nothing_of_hers(
    log_kind: str, redis: RedisServer
) -> None:
    with serving(app_on(log_kind, redis)) as url:
        bobs = httpx.post(url, json=body("t-bob", "r-alice-3"), headers=BOB, timeout=TIMEOUT)
        alices = httpx.post(url, json=body("t-alice", "r-alice-3"), headers=ALICE, timeout=TIMEOUT)
        alice_reads = httpx.get(f"{url}runs/r-alice-3/events", headers=ALICE, timeout=TIMEOUT)
        bob_reads = httpx.get(f"{url}runs/r-alice-3/events", headers=BOB, timeout=TIMEOUT)
        again = httpx.post(url, json=body("t-other", "r-alice-3"), headers=ALICE, timeout=TIMEOUT)

    assert (bobs.status_code, alices.status_code) == (200, 200)
    assert frames_of(alice_reads.text) == frames_of(alices.text)
    assert frames_of(alice_reads.text)[0]["threadId"] == "t-alice"
    assert frames_of(bob_reads.text)[0]["threadId"] == "t-bob"
    # Within one owner's space, a run id is still one run.
    assert (again.status_code, again.json()["code"]) == (409, "RUN_EXISTS")
    assert "'r-alice-3'" in again.json()["message"]


def test_a_busy_thread_names_its_run_without_the_owners_identity(
    log_kind: str, redis: RedisServer
) -> None:
    with serving(app_on(log_kind, redis)) as url:
        start_live(url, body("t-busy", "r-busy", 500, 0.02), ALICE)
        busy = httpx.post(url, json=body("t-busy", "r-next"), headers=ALICE, timeout=TIMEOUT)
        httpx.post(f"{url}runs/r-busy/cancel", headers=ALICE, timeout=TIMEOUT)

    assert (busy.status_code, busy.json()["code"], busy.json()["runId"]) == (
        409,
        "THREAD_BUSY",
        "r-busy",
    )
    assert "alice" not in busy.text


def test_true_keeps_one_shared_space_and_no_identity_reaches_it(
    log_kind: str, redis: RedisServer
) -> None:
    def shared_or_alice(headers: Mapping[str, str]) -> str | bool:
        return "alice" if headers.get("authorization") == ALICE["authorization"] else True

    with serving(app_on(log_kind, redis, shared_or_alice)) as url:
        anyone = {"authorization": "Bearer anyone"}
        posted = httpx.post(url, json=body("t-shared", "r-shared"), headers=anyone, timeout=TIMEOUT)
        other = httpx.get(f"{url}runs/r-shared/events", timeout=TIMEOUT)
        thread = httpx.get(f"{url}threads/t-shared", timeout=TIMEOUT)
        more = httpx.post(url, json=body("t-shared", "r-shared-2"), timeout=TIMEOUT)
        alice = httpx.get(f"{url}threads/t-shared", headers=ALICE, timeout=TIMEOUT)
        alice_run = httpx.post(
            url, json=body("t-shared", "r-alice"), headers=ALICE, timeout=TIMEOUT
        )

    assert posted.status_code == 200
    assert frames_of(other.text) == frames_of(posted.text)
    assert thread.json()["runIds"] == ["r-shared"]
    assert more.status_code == 200
    assert (alice.status_code, alice_run.status_code) == (404, 404)


def test_the_client_resumes_a_cut_stream_with_the_same_credentials(
    log_kind: str, redis: RedisServer
) -> None:
    app = _Cutting(app_on(log_kind, redis), after=2)
    run = RunAgentInput.model_validate(body("t-client", "r-client", 30, 0.01))
    with serving(app) as url:
        events = asyncio.run(AGUIClient(url, headers=ALICE, reconnect_delay=0.01).run(run))

    assert [e.value for e in events if isinstance(e, CustomEvent)] == list(range(30))
    assert [method for method, _ in app.requests] == ["POST", "GET"]
    assert all(auth == ALICE["authorization"] for _, auth in app.requests)


class _Cutting:
    """Cuts the POST's response after its first `after` body messages: the client resumes."""

    def __init__(self, app: Any, after: int) -> None:
        self.app = app
        self.after = after
        self.requests: list[tuple[str, str | None]] = []

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {bytes(k).decode(): bytes(v).decode() for k, v in scope["headers"]}
        self.requests.append((scope["method"], headers.get("authorization")))
        bodies = 0

        async def cutting(message: MutableMapping[str, Any]) -> None:
            nonlocal bodies
            if scope["method"] == "POST" and message["type"] == "http.response.body":
                bodies += 1
                if bodies > self.after:
                    raise OSError(errno.ECONNRESET, "cut by the test")
            await send(message)

        await self.app(scope, receive, cutting)


# -- the sharing hook --------------------------------------------------------------------------


def test_thread_access_grants_and_denies_per_action(log_kind: str, redis: RedisServer) -> None:
    asked: list[tuple[str, str, str]] = []

    async def team(identity: str, thread_id: str, action: str) -> bool:
        asked.append((identity, thread_id, action))
        return identity == "carol" and action in ("read", "run")

    with serving(app_on(log_kind, redis, thread_access=team)) as url:
        httpx.post(url, json=body("t-team", "r-a1"), headers=ALICE, timeout=TIMEOUT)
        carol_run = httpx.post(url, json=body("t-team", "r-c1"), headers=CAROL, timeout=TIMEOUT)
        start_live(url, body("t-team", "r-a2", 500, 0.02), ALICE)
        shared = f"{url}runs/r-a2/%s?thread=t-team"
        carol_reads = httpx.get(f"{url}threads/t-team", headers=CAROL, timeout=TIMEOUT)
        with httpx.stream("GET", shared % "events", headers=CAROL, timeout=TIMEOUT) as live:
            first_live = next(line for line in live.iter_lines() if line.startswith("data: "))
        carol_cancel = httpx.post(shared % "cancel", headers=CAROL, timeout=TIMEOUT)
        own_name = httpx.get(f"{url}runs/r-a2/events", headers=CAROL, timeout=TIMEOUT)
        elsewhere = httpx.get(
            f"{url}runs/r-a1/events?thread=t-elsewhere", headers=CAROL, timeout=TIMEOUT
        )
        bob_reads = httpx.get(f"{url}threads/t-team", headers=BOB, timeout=TIMEOUT)
        bob_events = httpx.get(shared % "events", headers=BOB, timeout=TIMEOUT)
        alice_cancel = httpx.post(shared % "cancel", headers=ALICE, timeout=TIMEOUT)
        alice_reads = httpx.get(shared % "events", headers=ALICE, timeout=TIMEOUT)
        thread = httpx.get(f"{url}threads/t-team", headers=ALICE, timeout=TIMEOUT)

    assert carol_run.status_code == 200
    assert frames_of(carol_run.text)[0]["threadId"] == "t-team"
    assert carol_reads.status_code == 200
    assert json.loads(first_live.removeprefix("data: "))["runId"] == "r-a2"
    assert carol_cancel.status_code == 404
    assert carol_cancel.json()["code"] == "RUN_NOT_FOUND"
    assert (own_name.status_code, elsewhere.status_code) == (404, 404)
    assert (bob_reads.status_code, bob_events.status_code) == (404, 404)
    assert alice_cancel.status_code == 202
    assert outcome(frames_of(alice_reads.text)[-1]) == "cancelled"
    # Carol's run is on Alice's thread, in its one conversation: her turn after Alice's.
    assert thread.json()["runIds"] == ["r-a1", "r-c1", "r-a2"]
    assert ("carol", "t-team", "cancel") in asked
    assert not any(identity == "alice" for identity, _, _ in asked)  # the owner is never asked


def test_a_shared_thread_run_sees_the_owners_history_and_an_unshared_one_none(
    log_kind: str, redis: RedisServer
) -> None:
    seen: list[list[str]] = []

    async def history(ctx: agui.RunContext[JsonValue]) -> None:
        seen.append([str(m.content) for m in ctx.input.messages])
        ctx.say("ok")

    app = agui.asgi_app(
        history,
        runs=new_log(log_kind, redis),
        authorize=by_token,
        thread_access=lambda identity, _thread, _action: identity == "carol",
    )
    with serving(app) as url:
        httpx.post(url, json=body("t-h", "r-1"), headers=ALICE, timeout=TIMEOUT)
        carol = body("t-h", "r-2")
        carol["messages"] = [{"id": "c-1", "role": "user", "content": "carol asks"}]
        httpx.post(url, json=carol, headers=CAROL, timeout=TIMEOUT)
        bob = httpx.post(url, json=body("t-h", "r-3"), headers=BOB, timeout=TIMEOUT)
        thread = httpx.get(f"{url}threads/t-h", headers=ALICE, timeout=TIMEOUT).json()

    assert bob.status_code == 404
    assert len(seen) == 2  # Bob's run never started
    assert [m["content"] for m in thread["messages"]] == [
        "secret of r-1",
        "ok",
        "carol asks",
        "ok",
    ]


def _raises(_identity: str, _thread: str, _action: str) -> bool:
    return bool(1 / 0)


def _answers_a_str(_identity: str, _thread: str, _action: str) -> Any:
    return "yes"


@pytest.mark.parametrize(
    ("hook", "raised"),
    [(_raises, "ZeroDivisionError"), (_answers_a_str, "returned str, not True or False")],
    ids=["raises", "answers-a-str"],
)
def test_a_thread_access_hook_that_fails_is_a_500_that_leaks_nothing(
    hook: Any, raised: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = agui.asgi_app(counter, runs=MemoryRunLog(), authorize=by_token, thread_access=hook)
    with serving(app) as url:
        httpx.post(url, json=body("t-f", "r-f"), headers=ALICE, timeout=TIMEOUT)
        with caplog.at_level(logging.ERROR, logger="agui.asgi"):
            answers = [
                httpx.get(f"{url}threads/t-f", headers=BOB, timeout=TIMEOUT),
                httpx.post(url, json=body("t-f", "r-b"), headers=BOB, timeout=TIMEOUT),
                httpx.get(f"{url}runs/r-f/events?thread=t-f", headers=BOB, timeout=TIMEOUT),
            ]
        own = httpx.get(f"{url}threads/t-f", headers=ALICE, timeout=TIMEOUT)

    for answer in answers:
        assert answer.status_code == 500
        assert answer.json()["code"] == "HOOK_FAILED"
        assert "thread_access" in answer.json()["message"]
        assert raised in answer.json()["message"]
        assert "secret" not in answer.text
    assert "thread_access" in caplog.text
    assert own.status_code == 200  # the owner's routes never ask it


# -- identities authorize may name -------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "status", "code"),
    [
        ("a" * 257, 500, "HOOK_FAILED"),
        ("alice\nadmin", 500, "HOOK_FAILED"),
        ("\x00", 500, "HOOK_FAILED"),
        ("", 403, "FORBIDDEN"),
        (None, 403, "FORBIDDEN"),
        (0, 403, "FORBIDDEN"),
        (["alice"], 403, "FORBIDDEN"),
        (False, 403, "FORBIDDEN"),
    ],
    ids=["too-long", "newline", "nul", "empty", "none", "zero", "list", "false"],
)
def test_an_identity_that_cannot_be_one_is_a_500_and_a_falsy_or_odd_verdict_a_refusal(
    verdict: object, status: int, code: str
) -> None:
    async def authorize(_headers: Mapping[str, str]) -> Any:
        await asyncio.sleep(0)
        return verdict

    app = agui.asgi_app(counter, runs=MemoryRunLog(), authorize=authorize)
    with serving(app) as url:
        posted = httpx.post(url, json=body("t-v", "r-v"), headers=BOB, timeout=TIMEOUT)
        read = httpx.get(f"{url}threads/t-v", headers=BOB, timeout=TIMEOUT)

    for answer in (posted, read):
        assert (answer.status_code, answer.json()["code"]) == (status, code)
    if status == 500:
        message = posted.json()["message"]
        assert "printable text of 1 to 256 characters" in message
        assert "alice" not in message


def test_the_longest_identity_and_any_printable_one_are_owners() -> None:
    longest = "ü" * 256
    names = {"Bearer l": longest, "Bearer s": "tenant/7: José"}

    def authorize(headers: Mapping[str, str]) -> str | bool:
        return names.get(headers.get("authorization", ""), False)

    app = agui.asgi_app(counter, runs=MemoryRunLog(), authorize=authorize)
    with serving(app) as url:
        for token in names:
            auth = {"authorization": token}
            posted = httpx.post(url, json=body("t", "r"), headers=auth, timeout=TIMEOUT)
            read = httpx.get(f"{url}runs/r/events", headers=auth, timeout=TIMEOUT)
            assert frames_of(read.text) == frames_of(posted.text)


# -- the parts ---------------------------------------------------------------------------------


def test_a_threads_record_of_another_owner_is_never_folded_into_a_run() -> None:
    async def scenario() -> ThreadRecord:
        log = MemoryRunLog()
        await log.begin(run_key("alice", "r1"), "t", owner="alice")
        theirs = ThreadRecord("t", [{"id": "m", "role": "user", "content": "x"}], {}, ["r1"])
        await log.append(run_key("alice", "r1"), [b"{}"], thread=theirs)
        run = RunAgentInput(thread_id="t", run_id="r2")
        return await thread_after(log, run, [], owner="bob")

    record = asyncio.run(scenario())

    assert (record.messages, record.run_ids, record.owner) == ([], ["r2"], "bob")


def test_a_log_refuses_a_run_on_another_owners_thread_before_anything_else() -> None:
    async def scenario() -> list[object]:
        log = MemoryRunLog()
        answers: list[object] = [await log.begin("alice/r1", "t", owner="alice")]
        answers.append(await log.begin("bob/r1", "t", owner="bob"))
        answers.append(await log.begin("alice/r1", "t", owner="alice"))
        answers.append(await log.begin("r1", "t"))
        answers += [await log.owner("t"), await log.owner("t2"), await log.run_thread("alice/r1")]
        return answers

    begun, bobs, again, shared, owner, nobody, thread = asyncio.run(scenario())

    assert begun is None
    assert repr(bobs) == "Owned(owner='alice')"
    assert again == "alice/r1"
    assert repr(shared) == "Owned(owner='alice')"
    assert (owner, nobody, thread) == ("alice", None, "t")
    assert SHARED == ""


def test_a_shared_threads_run_is_only_reached_through_its_own_thread(
    log_kind: str, redis: RedisServer
) -> None:
    def open_one(_identity: str, thread_id: str, _action: str) -> bool:
        return thread_id == "t-open"

    app = app_on(log_kind, redis, thread_access=open_one)
    with serving(app) as url:
        httpx.post(url, json=body("t-open", "r-open"), headers=ALICE, timeout=TIMEOUT)
        httpx.post(url, json=body("t-closed", "r-closed"), headers=ALICE, timeout=TIMEOUT)
        through_open = httpx.get(
            f"{url}runs/r-closed/events?thread=t-open", headers=CAROL, timeout=TIMEOUT
        )
        unknown_thread = httpx.get(
            f"{url}runs/r-open/events?thread=t-nobody", headers=CAROL, timeout=TIMEOUT
        )
        right = httpx.get(f"{url}runs/r-open/events?thread=t-open", headers=CAROL, timeout=TIMEOUT)

    assert (through_open.status_code, unknown_thread.status_code) == (404, 404)
    assert through_open.json()["code"] == "RUN_NOT_FOUND"
    assert frames_of(right.text)[0]["runId"] == "r-open"


class _Moving(MemoryRunLog):
    """A log whose threads change hands between two looks: always another's."""

    async def begin(self, run_id: str, thread_id: str, *, owner: str = SHARED) -> Owned:  # noqa: ARG002
        return Owned(f"not-{owner}")


def test_a_thread_that_changes_hands_while_a_run_begins_is_404() -> None:
    app = agui.asgi_app(
        counter,
        runs=_Moving(),
        authorize=by_token,
        thread_access=lambda _identity, _thread, _action: True,
    )
    with serving(app) as url:
        posted = httpx.post(url, json=body("t-m", "r-m"), headers=CAROL, timeout=TIMEOUT)

    assert (posted.status_code, posted.json()["code"]) == (404, "THREAD_NOT_FOUND")


def test_the_requests_own_cancellation_goes_through_an_async_thread_access() -> None:
    async def scenario() -> None:
        started = asyncio.Event()

        async def slow(_identity: str, _thread: str, _action: str) -> bool:
            started.set()
            await asyncio.sleep(30)
            return True

        asking = asyncio.create_task(Access(slow).allows("bob", "t", "alice", "read"))
        await started.wait()
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking

    asyncio.run(scenario())


def test_a_thread_whose_first_run_was_lost_stays_its_owners(
    log_kind: str, redis: RedisServer
) -> None:
    async def scenario() -> tuple[object, object, object]:
        redis.flush()
        short: RunLog = (
            MemoryRunLog(lease=0.05) if log_kind == "memory" else RedisRunLog(redis.url, lease=0.05)
        )
        try:
            await short.begin(run_key("alice", "r1"), "t-lost", owner="alice")
            await asyncio.sleep(0.1)
            page = await short.read(run_key("alice", "r1"), 0, wait=0)
            bobs = await short.begin(run_key("bob", "r2"), "t-lost", owner="bob")
            hers = await short.begin(run_key("alice", "r2"), "t-lost", owner="alice")
        finally:
            await short.aclose()
        return None if page is None else page.ended, bobs, hers

    ended, bobs, hers = asyncio.run(scenario())

    assert ended is True  # the lease lapsed: RUN_LOST, and the thread is free again
    assert bobs == Owned("alice")
    assert hers is None


def test_thread_access_must_be_a_function() -> None:
    with pytest.raises(
        agui.UsageError, match=r"thread_access must be a function \(sync or async\)"
    ):
        agui.asgi_app(counter, runs=MemoryRunLog(), thread_access=True)  # type: ignore[arg-type]


def test_an_endpoint_without_a_run_log_admits_an_identity_as_it_admits_true() -> None:
    with serving(agui.asgi_app(counter, authorize=by_token)) as url:
        admitted = httpx.post(url, json=body("t", "r"), headers=ALICE, timeout=TIMEOUT)
        refused = httpx.post(url, json=body("t", "r"), timeout=TIMEOUT)

    assert frames_of(admitted.text)[-1]["type"] == "RUN_FINISHED"
    assert (refused.status_code, refused.json()["code"]) == (401, "UNAUTHORIZED")
