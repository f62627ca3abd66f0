"""Typed run state: decoding, snapshot-or-delta publishing, re-basing on outside STATE events."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import pydantic_core
import pytest
from pydantic import BaseModel, JsonValue
from typing_extensions import TypedDict

from agui import EventType, RunAgentInput, RunContext, StateError, parse_event
from agui.events import Event, StateDeltaEvent, StateSnapshotEvent
from agui.sink import EventReceiver
from agui.state import StateManager, _delta  # pyright: ignore[reportPrivateUsage]
from agui.testing import fold
from agui.transform import ToolResultToState
from agui.types import AddOperation, RemoveOperation, ReplaceOperation

E = TypeVar("E")
S = TypeVar("S")


class Board(BaseModel):
    title: str = "Board"
    tasks: list[str] = []


@dataclasses.dataclass
class Settings:
    theme: str
    size: int = 12


class Counter(TypedDict):
    count: int


class Unserializable:
    """A value no JSON serializer knows."""


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def only(events: Sequence[Event], kind: type[E]) -> list[E]:
    return [event for event in events if isinstance(event, kind)]


def untyped(state: JsonValue = None) -> tuple[RunContext[JsonValue], EventReceiver]:
    return RunContext.new(RunAgentInput(thread_id="t", run_id="r", state=state))


def typed(kind: type[S], state: JsonValue = None) -> tuple[RunContext[S], EventReceiver]:
    return RunContext.new(RunAgentInput(thread_id="t", run_id="r", state=state), state=kind)


def as_dict(value: JsonValue) -> dict[str, JsonValue]:
    assert isinstance(value, dict)
    return value


def client_view(events: Sequence[Event]) -> JsonValue:
    """The state a client holds after these events, starting from nothing."""
    return fold(events).state


def live(value: object) -> JsonValue:
    return cast("JsonValue", pydantic_core.to_jsonable_python(value))


# -- the first value --------------------------------------------------------------------------


def test_an_untyped_state_is_an_empty_dict_when_the_client_sent_none() -> None:
    ctx, _ = untyped()
    assert ctx.state == {}


def test_an_untyped_state_is_whatever_json_the_client_sent() -> None:
    ctx, _ = untyped([1, "two", None])
    assert ctx.state == [1, "two", None]


def test_a_model_state_takes_its_defaults_when_the_client_sent_none() -> None:
    ctx, _ = typed(Board)
    assert ctx.state == Board()


def test_a_model_state_is_decoded_from_the_client_state() -> None:
    ctx, _ = typed(Board, {"title": "Sprint", "tasks": ["a"]})
    assert ctx.state == Board(title="Sprint", tasks=["a"])


def test_a_dataclass_state_is_decoded_from_the_client_state() -> None:
    ctx, _ = typed(Settings, {"theme": "dark"})
    assert ctx.state == Settings(theme="dark", size=12)


def test_a_typeddict_state_is_decoded_from_the_client_state() -> None:
    ctx, _ = typed(Counter, {"count": 3})
    assert ctx.state == {"count": 3}


def test_a_client_state_that_does_not_fit_the_type_is_a_state_error_naming_the_field() -> None:
    with pytest.raises(
        StateError,
        match=(
            r"the client's state does not fit Board: 'tasks/0': Input should be a valid string; "
            r"send a state of that shape, or give the fields defaults"
        ),
    ) as caught:
        typed(Board, {"tasks": [1]})
    assert caught.value.code == "STATE_ERROR"


def test_a_type_without_defaults_and_no_client_state_is_a_state_error() -> None:
    with pytest.raises(StateError, match=r"does not fit Settings: 'theme': Field required"):
        typed(Settings)


def test_a_typeddict_with_a_wrong_value_names_its_type() -> None:
    with pytest.raises(StateError, match=r"does not fit Counter: 'count': Input should be"):
        typed(Counter, {"count": "many"})


# -- snapshot or delta ------------------------------------------------------------------------


def test_the_first_publish_is_a_snapshot_and_an_unchanged_state_sends_nothing() -> None:
    ctx, events = typed(Board)
    ctx.publish_state()
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [EventType.STATE_SNAPSHOT]
    assert only(drained, StateSnapshotEvent)[0].snapshot == {"title": "Board", "tasks": []}


def test_a_large_document_with_one_changed_field_publishes_a_delta() -> None:
    doc: JsonValue = {
        "title": "inventory",
        "items": [{"id": i, "name": f"item number {i}"} for i in range(50)],
    }
    ctx, events = untyped(doc)
    ctx.publish_state()
    as_dict(ctx.state)["title"] = "stock"
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [EventType.STATE_SNAPSHOT, EventType.STATE_DELTA]
    delta = only(drained, StateDeltaEvent)[0]
    assert delta.delta == [ReplaceOperation(path="/title", value="stock")]
    assert client_view(drained) == ctx.state


def test_a_change_bigger_than_the_state_publishes_a_snapshot() -> None:
    ctx, events = untyped({"a": 1})
    ctx.publish_state()
    ctx.state = {"b": 2}
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [EventType.STATE_SNAPSHOT, EventType.STATE_SNAPSHOT]
    assert only(drained, StateSnapshotEvent)[1].snapshot == {"b": 2}


def test_a_delta_is_chosen_only_when_strictly_smaller_than_the_snapshot() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"k": "v" * 40})
    manager.publish()
    manager.value = {"k": "w" * 40}
    event = manager.publish()
    patch_bytes = len(b'[{"op":"replace","path":"/k","value":"' + b"w" * 40 + b'"}]')
    snapshot_bytes = len(manager.to_json())
    assert patch_bytes >= snapshot_bytes
    assert isinstance(event, StateSnapshotEvent)


def test_published_deltas_and_snapshots_parse_back_to_equal_events() -> None:
    ctx, events = typed(Board, {"tasks": [f"task {i}" for i in range(20)]})
    ctx.publish_state()
    ctx.state.tasks.append("one more")
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [EventType.STATE_SNAPSHOT, EventType.STATE_DELTA]
    for event in drained:
        wire = event.model_dump_json()
        assert parse_event(json.loads(wire)).model_dump_json() == wire
    assert only(drained, StateDeltaEvent)[0].delta == [
        AddOperation(path="/tasks/20", value="one more")
    ]


def test_a_state_that_cannot_be_serialized_is_a_state_error() -> None:
    ctx, events = untyped()
    as_dict(ctx.state)["when"] = cast("JsonValue", Unserializable())
    with pytest.raises(StateError, match=r"the state of type JSON cannot be serialized: Unable"):
        ctx.publish_state()
    assert events.drain() == []


def _add_task(state: Board) -> None:
    state.tasks.append("x")


def _grow(state: Settings) -> None:
    state.size = 14


def _count(state: Counter) -> None:
    state["count"] = 1


@pytest.mark.parametrize(
    ("kind", "first", "edit", "expected"),
    [
        (Board, None, _add_task, {"title": "Board", "tasks": ["x"]}),
        (Settings, {"theme": "dark"}, _grow, {"theme": "dark", "size": 14}),
        (Counter, {"count": 0}, _count, {"count": 1}),
    ],
    ids=["pydantic", "dataclass", "typeddict"],
)
def test_every_state_kind_publishes_its_json_and_the_client_follows(
    kind: type[Any], first: JsonValue, edit: Callable[[Any], None], expected: JsonValue
) -> None:
    ctx, events = typed(kind, first)
    ctx.publish_state()
    edit(ctx.state)
    ctx.publish_state()
    drained = events.drain()
    assert len(drained) == 2
    assert client_view(drained) == expected == live(ctx.state)


def test_publishing_a_state_whose_keys_were_only_reordered_sends_nothing() -> None:
    ctx, events = untyped({"a": 1, "b": 2})
    ctx.publish_state()
    state = as_dict(ctx.state)
    state["a"] = state.pop("a")
    ctx.publish_state()
    assert types_of(events.drain()) == [EventType.STATE_SNAPSHOT]


# -- the baseline -----------------------------------------------------------------------------


def test_the_manager_remembers_what_the_client_holds() -> None:
    manager: StateManager[JsonValue] = StateManager(None, None)
    assert manager.published is None
    manager.publish()
    assert manager.published == {}


def test_reset_makes_the_next_publish_a_snapshot() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1, "pad": "x" * 50})
    manager.publish()
    manager.reset()
    assert manager.published is None
    as_dict(manager.value)["n"] = 2
    assert isinstance(manager.publish(), StateSnapshotEvent)


def test_an_outside_snapshot_moves_the_baseline() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1, "pad": "x" * 50})
    manager.observe(StateSnapshotEvent(snapshot={"n": 0, "pad": "x" * 50}))
    assert manager.published == {"n": 0, "pad": "x" * 50}
    event = manager.publish()
    assert isinstance(event, StateDeltaEvent)
    assert event.delta == [ReplaceOperation(path="/n", value=1)]


def test_an_outside_delta_before_any_publish_is_ignored() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1})
    manager.observe(StateDeltaEvent(delta=[AddOperation(path="/m", value=2)]))
    assert manager.published is None
    assert isinstance(manager.publish(), StateSnapshotEvent)


def test_an_outside_delta_is_applied_to_the_baseline() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1, "pad": "x" * 50})
    manager.publish()
    manager.observe(StateDeltaEvent(delta=[RemoveOperation(path="/n")]))
    assert manager.published == {"pad": "x" * 50}
    event = manager.publish()
    assert isinstance(event, StateDeltaEvent)
    assert event.delta == [AddOperation(path="/n", value=1)]


def test_an_outside_delta_that_does_not_apply_forgets_the_baseline() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1, "pad": "x" * 50})
    manager.publish()
    manager.observe(StateDeltaEvent(delta=[RemoveOperation(path="/missing")]))
    assert manager.published is None
    assert isinstance(manager.publish(), StateSnapshotEvent)


def test_a_raw_emitted_snapshot_rebases_so_the_next_delta_applies_on_the_client() -> None:
    ctx, events = untyped({"tasks": [f"t{i}" for i in range(30)], "owner": "ann"})
    ctx.publish_state()
    ctx.emit(StateSnapshotEvent(snapshot={"tasks": [f"t{i}" for i in range(30)], "owner": "bob"}))
    as_dict(ctx.state)["tasks"] = [f"t{i}" for i in range(31)]
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [
        EventType.STATE_SNAPSHOT,
        EventType.STATE_SNAPSHOT,
        EventType.STATE_DELTA,
    ]
    assert client_view(drained) == ctx.state


def test_a_raw_emitted_delta_rebases_so_the_next_delta_applies_on_the_client() -> None:
    ctx, events = untyped({"tasks": [f"t{i}" for i in range(30)], "owner": "ann"})
    ctx.publish_state()
    ctx.emit(StateDeltaEvent(delta=[RemoveOperation(path="/owner")]))
    as_dict(ctx.state)["owner"] = "cat"
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained)[-1] == EventType.STATE_DELTA
    assert client_view(drained) == ctx.state


def test_a_raw_emit_of_the_same_snapshot_leaves_nothing_to_publish() -> None:
    ctx, events = untyped({"n": 1})
    ctx.emit(StateSnapshotEvent(snapshot={"n": 1}))
    ctx.publish_state()
    assert types_of(events.drain()) == [EventType.STATE_SNAPSHOT]


def test_a_transformer_snapshot_rebases_so_the_next_delta_applies_on_the_client() -> None:
    board: JsonValue = [f"task {i}" for i in range(20)]
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r", state={"board": board, "owner": "ann"}),
        transformers=[ToolResultToState("load_board")],
    )
    ctx.publish_state()
    with ctx.tool_call("load_board") as call:
        call.result_json({"board": board, "owner": "tool"})
    as_dict(ctx.state)["extra"] = 1
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained)[-2:] == [EventType.STATE_SNAPSHOT, EventType.STATE_DELTA]
    assert client_view(drained) == ctx.state


class Restamp:
    """A transformer that re-creates every STATE event (a new object with equal content)."""

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, (StateSnapshotEvent, StateDeltaEvent)):
            return (event.model_copy(update={"metadata": {"via": "restamp"}}),)
        return (event,)


def test_a_transformer_that_rewrites_published_state_keeps_the_baseline_right() -> None:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r", state={"n": 0, "pad": "x" * 50}),
        transformers=[Restamp()],
    )
    for n in range(1, 4):
        ctx.publish_state()
        as_dict(ctx.state)["n"] = n
    ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [EventType.STATE_SNAPSHOT] + [EventType.STATE_DELTA] * 3
    assert client_view(drained) == ctx.state


class DropFirstState:
    """A transformer that drops the first STATE event it sees."""

    def __init__(self) -> None:
        self.dropped = False

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, (StateSnapshotEvent, StateDeltaEvent)) and not self.dropped:
            self.dropped = True
            return ()
        return (event,)


def test_a_transformer_that_drops_a_published_state_leaves_no_stale_delta() -> None:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r", state={"n": 0, "pad": "x" * 50}),
        transformers=[DropFirstState()],
    )
    ctx.publish_state()
    as_dict(ctx.state)["n"] = 1
    ctx.publish_state()
    drained = events.drain()
    assert client_view(drained) == ctx.state


# -- delta construction -----------------------------------------------------------------------


def test_a_delta_built_from_move_and_copy_operations_writes_from_on_the_wire() -> None:
    event = _delta(
        [
            {"op": "move", "from": "/a", "path": "/b"},
            {"op": "copy", "from": "/b", "path": "/c"},
            {"op": "test", "path": "/c", "value": None},
        ]
    )
    wire = event.model_dump_json()
    assert json.loads(wire)["delta"] == [
        {"op": "move", "from": "/a", "path": "/b"},
        {"op": "copy", "from": "/b", "path": "/c"},
        {"op": "test", "path": "/c", "value": None},
    ]
    assert parse_event(json.loads(wire)) == StateDeltaEvent.model_validate(json.loads(wire))
