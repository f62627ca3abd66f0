"""`ctx.activity()`: one activity message's content, a snapshot first and JSON Patches after."""

from __future__ import annotations

import asyncio
import json
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

from agui import RunAgentInput, RunContext
from agui.errors import PatchError, UsageError
from agui.events import ActivityDeltaEvent, ActivitySnapshotEvent, Event, RunErrorEvent
from agui.messages import ActivityMessage
from agui.testing import assert_valid, collect, fold

_Json = dict[str, JsonValue]


def _wire(events: list[Event]) -> list[_Json]:
    return [cast("_Json", json.loads(event.model_dump_json())) for event in events]


def _activity_content(events: list[Event], message_id: str) -> JsonValue:
    """The activity's content as a client holds it after the stream."""
    messages = fold(events).messages
    (message,) = [m for m in messages if isinstance(m, ActivityMessage) and m.id == message_id]
    return message.content


async def _progress(ctx: RunContext[JsonValue]) -> None:
    steps: list[JsonValue] = ["fetch", "parse", "store"]
    progress = ctx.activity("progress", {"steps": steps, "done": [], "status": "running"})
    for step in steps:
        cast("list[JsonValue]", progress.content["done"]).append(step)
        progress.publish()
        progress.publish()  # nothing changed: nothing sent
    progress.content["status"] = "finished"
    progress.publish()
    ctx.say("All three steps are done.")


def test_an_activity_sends_its_snapshot_then_one_patch_per_change_and_the_client_folds_it() -> None:
    events = asyncio.run(collect(_progress, RunAgentInput(thread_id="t", run_id="r")))

    assert_valid(events)
    wire = _wire(events)
    assert wire[1] == {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": "r-msg-1",
        "activityType": "progress",
        "content": {"steps": ["fetch", "parse", "store"], "done": [], "status": "running"},
    }
    assert [event["type"] for event in wire[2:6]] == ["ACTIVITY_DELTA"] * 4
    assert wire[2]["patch"] == [{"op": "add", "path": "/done/0", "value": "fetch"}]
    assert wire[5]["patch"] == [{"op": "replace", "path": "/status", "value": "finished"}]
    assert _activity_content(events, "r-msg-1") == {
        "steps": ["fetch", "parse", "store"],
        "done": ["fetch", "parse", "store"],
        "status": "finished",
    }


def test_patch_applies_the_operations_to_the_content_and_sends_them_as_given() -> None:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    plan = ctx.activity("plan", {"items": ["a"]}, message_id="plan-1")
    plan.content["items"] = ["a", "b"]  # unsent: patch() publishes it first

    plan.patch([{"op": "add", "path": "/items/-", "value": "c"}])

    assert plan.content == {"items": ["a", "b", "c"]}
    snapshot, change, ops = receiver.drain()
    assert isinstance(snapshot, ActivitySnapshotEvent)
    assert isinstance(change, ActivityDeltaEvent)
    assert isinstance(ops, ActivityDeltaEvent)
    assert ops.model_dump(by_alias=True, exclude_none=True)["patch"] == [
        {"op": "add", "path": "/items/-", "value": "c"}
    ]
    assert {snapshot.message_id, change.message_id, ops.message_id} == {"plan-1"}


def test_a_patch_that_does_not_apply_is_a_patch_error_and_nothing_is_sent() -> None:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    plan = ctx.activity("plan", {"items": []})
    receiver.drain()

    with pytest.raises(PatchError, match=r"activity 'r-msg-1' \(plan\) does not apply .*'/owner'"):
        plan.patch([{"op": "replace", "path": "/owner", "value": "ana"}])

    assert receiver.drain() == []
    assert plan.content == {"items": []}


def test_a_patch_error_in_a_run_ends_it_with_one_run_error_patch_error() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        ctx.activity("plan", {"items": []}).patch([{"op": "remove", "path": "/items/0"}])

    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))

    assert_valid(events)
    assert [event.type for event in events] == ["RUN_STARTED", "ACTIVITY_SNAPSHOT", "RUN_ERROR"]
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "PATCH_ERROR"


@pytest.mark.parametrize(
    ("content", "shown"),
    [
        ({"when": object()}, r"must be a JSON object .* at '/when'"),
        (cast("dict[str, JsonValue]", ["a"]), r"must be a JSON object"),
    ],
    ids=["object-inside", "list"],
)
def test_content_that_is_not_a_json_object_is_refused_before_anything_is_sent(
    content: dict[str, JsonValue], shown: str
) -> None:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with pytest.raises(UsageError, match=shown):
        ctx.activity("plan", content)

    assert receiver.drain() == []


def test_content_changed_into_something_that_is_not_json_is_refused_at_publish() -> None:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    plan = ctx.activity("plan")
    receiver.drain()
    plan.content["tags"] = cast("JsonValue", {"a", "b"})

    with pytest.raises(UsageError, match=r"activity 'r-msg-1' \(plan\) must be a JSON object"):
        plan.publish()
    with pytest.raises(UsageError, match=r"must be a JSON object"):
        plan.patch([{"op": "replace", "path": "", "value": [1]}])

    assert receiver.drain() == []


def test_an_activity_type_that_is_not_text_is_refused() -> None:
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    with pytest.raises(UsageError, match=r"takes the activity's type as non-empty text"):
        ctx.activity("")


def test_an_activity_opened_in_a_subagent_carries_its_id_on_every_event() -> None:
    async def agent(ctx: RunContext[JsonValue]) -> None:
        with ctx.subagent("researcher") as sub:
            search = sub.activity("search", {"query": "Paris", "hits": 0})
            search.content["hits"] = 3
            search.publish()
            inner = sub.context.activity("note", {"text": "done"})
            inner.patch([{"op": "replace", "path": "/text", "value": "filed"}])

    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))

    assert_valid(events)
    activity = [e for e in events if isinstance(e, (ActivitySnapshotEvent, ActivityDeltaEvent))]
    assert [(e.type, e.subagent_run_id) for e in activity] == [
        ("ACTIVITY_SNAPSHOT", "r-sub-1"),
        ("ACTIVITY_DELTA", "r-sub-1"),
        ("ACTIVITY_SNAPSHOT", "r-sub-1"),
        ("ACTIVITY_DELTA", "r-sub-1"),
    ]
    assert _activity_content(events, activity[0].message_id) == {"query": "Paris", "hits": 3}


json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=20,
)
json_objects = st.dictionaries(st.text(max_size=3), json_values, max_size=4)


@settings(max_examples=150, deadline=None)
@given(json_objects, json_objects)
def test_whatever_the_content_becomes_the_client_folds_it_to_the_same(
    first: dict[str, JsonValue], second: dict[str, JsonValue]
) -> None:
    ctx, receiver = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    activity = ctx.activity("any", first)
    activity.content = second
    activity.publish()

    events = receiver.drain()

    assert _activity_content(events, activity.id) == second
