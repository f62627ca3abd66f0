"""Typed run state: decoding, snapshot-or-delta publishing, re-basing on outside STATE events."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, TypeVar, cast

import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import (
    BaseModel,
    Field,
    JsonValue,
    PrivateAttr,
    RootModel,
    TypeAdapter,
    computed_field,
    field_serializer,
)
from typing_extensions import TypedDict

from agui import EventType, RunAgentInput, RunContext, parse_event
from agui import state as state_module
from agui.errors import StateError, UsageError
from agui.events import Event, StateDeltaEvent, StateSnapshotEvent
from agui.sink import EventReceiver
from agui.state import StateManager, _delta, state_adapter  # pyright: ignore[reportPrivateUsage]
from agui.testing import fold
from agui.transform import ToolResultToState
from agui.types import AddOperation, RemoveOperation, ReplaceOperation

E = TypeVar("E")
S = TypeVar("S")

SHORTCUTS_FROM: int = state_module._SHORTCUTS_FROM  # pyright: ignore[reportPrivateUsage]
"""The length of JSON from which a publish takes its shortcuts, as the package ships it."""


@pytest.fixture(autouse=True, scope="module")
def shortcuts_at_every_size() -> Iterator[None]:
    """The publish shortcuts, which only long states take, taken by the short ones here too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_module, "_SHORTCUTS_FROM", 0)
        yield


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
            r"the client's state does not fit Board: '/tasks/0': Input should be a valid string; "
            r"send a state of that shape, or give the fields defaults"
        ),
    ) as caught:
        typed(Board, {"tasks": [1]})
    assert caught.value.code == "STATE_ERROR"


def test_a_form_of_state_type_is_named_as_written_and_a_key_with_a_slash_as_a_pointer() -> None:
    with pytest.raises(
        StateError,
        match=r"^the client's state does not fit dict\[str, int\]: '/a~1b': Input should be",
    ):
        typed(dict[str, int], {"a/b": "x"})


def test_a_type_without_defaults_and_no_client_state_is_a_state_error() -> None:
    with pytest.raises(StateError, match=r"does not fit Settings: '/theme': Field required"):
        typed(Settings)


def test_no_client_state_and_no_defaults_does_not_blame_the_clients_state() -> None:
    with pytest.raises(
        StateError, match=r"^the client sent no state, and an empty one does not fit Settings"
    ):
        typed(Settings)


class Aliased(BaseModel):
    user_name: str = Field("anonymous", alias="userName")


def test_an_aliased_field_reads_from_its_alias_and_from_what_was_published() -> None:
    ctx, events = typed(Aliased, {"userName": "ann"})
    ctx.publish_state()
    (snapshot,) = events.drain()
    assert isinstance(snapshot, StateSnapshotEvent)

    again, _ = typed(Aliased, snapshot.snapshot)

    assert again.state == Aliased(userName="ann")


class Items(RootModel[list[int]]):
    root: list[int] = Field(default_factory=list[int])


class RequiredItems(RootModel[list[int]]):
    pass


def test_a_root_model_or_list_state_takes_its_default_when_the_client_sent_none() -> None:
    assert typed(Items)[0].state == Items([])
    assert typed(list[int])[0].state == []
    with pytest.raises(StateError, match=r"no state, and an empty one does not fit RequiredItems"):
        typed(RequiredItems)


def test_a_typeddict_with_a_wrong_value_names_its_type() -> None:
    with pytest.raises(StateError, match=r"does not fit Counter: '/count': Input should be"):
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


@pytest.mark.parametrize("shortcuts_from", [0, 1 << 30])
@pytest.mark.parametrize("published_before", [False, True])
def test_a_state_nested_past_what_agui_reads_back_is_a_state_error(
    monkeypatch: pytest.MonkeyPatch, shortcuts_from: int, *, published_before: bool
) -> None:
    monkeypatch.setattr(state_module, "_SHORTCUTS_FROM", shortcuts_from)
    ctx, events = untyped()
    if published_before:
        ctx.publish_state()
    inner: list[JsonValue] = [1]
    for _ in range(198):
        inner = [inner]
    as_dict(ctx.state)["deep"] = [inner]  # 201 levels, with the object around it
    with pytest.raises(StateError, match=r"nests deeper than 200 levels.*keep the state shallower"):
        ctx.publish_state()
    as_dict(ctx.state)["deep"] = inner
    ctx.publish_state()
    assert [event.type for event in events.drain()][-1] in {"STATE_SNAPSHOT", "STATE_DELTA"}


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


def test_a_transformer_that_copies_published_appends_does_not_apply_them_twice() -> None:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r", state={"items": [], "pad": "x" * 200}),
        transformers=[Restamp()],
    )
    ctx.publish_state()
    for n in range(4):
        cast("list[int]", as_dict(ctx.state)["items"]).append(n)
        ctx.publish_state()
    drained = events.drain()
    assert types_of(drained) == [EventType.STATE_SNAPSHOT] + [EventType.STATE_DELTA] * 4
    assert client_view(drained) == ctx.state == {"items": [0, 1, 2, 3], "pad": "x" * 200}


class Rewritten:
    """A transformer that sends a patch of its own in place of the first published delta."""

    def __init__(self) -> None:
        self.done = False

    def transform(self, event: Event) -> Sequence[Event]:
        if isinstance(event, StateDeltaEvent) and not self.done:
            self.done = True
            patch = [{"op": "add", "path": "/items/-", "value": "theirs"}]
            return (StateDeltaEvent.model_validate({"delta": patch}),)
        return (event,)


def test_a_patch_a_transformer_sends_in_place_of_a_publish_makes_the_next_publish_resync() -> None:
    ctx, events = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r", state={"items": [], "pad": "x" * 200}),
        transformers=[Rewritten()],
    )
    ctx.publish_state()
    cast("list[object]", as_dict(ctx.state)["items"]).append(0)
    ctx.publish_state()  # a delta, replaced on its way out
    cast("list[object]", as_dict(ctx.state)["items"]).append(1)
    ctx.publish_state()
    drained = events.drain()
    snapshot, delta = EventType.STATE_SNAPSHOT, EventType.STATE_DELTA
    assert types_of(drained) == [snapshot, delta, snapshot]
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


# -- publishing large states cheaply, without trading exactness --------------------------------


class Members(BaseModel):
    members: dict[str, int | str] = {}


class Task(TypedDict):
    id: int
    title: str
    done: bool


class Tasks(BaseModel):
    tasks: list[Task] = []


class Clock(BaseModel):
    """A state whose JSON also depends on something outside its fields."""

    ticks: int = 0
    _offset: int = PrivateAttr(0)

    @computed_field
    def shown(self) -> int:
        return self.ticks + self._offset

    def shift(self, by: int) -> None:
        self._offset = by


class Loud(BaseModel):
    n: int = 0

    @field_serializer("n")
    def _twice(self, n: int) -> int:
        return n * 2


class Open(BaseModel, extra="allow"):
    n: int = 0


class Sometimes(BaseModel):
    n: int = Field(default=0, exclude_if=lambda n: n == 0)


class When(BaseModel):
    at: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    pad: str = "x" * 100


class Serializations:
    """Counts the state serializations made while it is in place."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.warnings: list[object] = []
        """What each serialization was told to do with a serializer warning."""
        dump_json = TypeAdapter[Any].dump_json

        def counted(adapter: TypeAdapter[Any], value: object, **options: Any) -> bytes:
            self.count += 1
            self.warnings.append(options.get("warnings", True))
            return dump_json(adapter, value, **options)

        monkeypatch.setattr(TypeAdapter, "dump_json", counted)


def client_follows(
    manager: StateManager[Any], events: list[StateSnapshotEvent | StateDeltaEvent]
) -> bool:
    """Whether the published events rebuild exactly the state's own JSON, types and all."""
    return strictly_equal(client_view(cast("list[Event]", events)), json.loads(manager.to_json()))


def strictly_equal(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        a_, b_ = cast("dict[str, object]", a), cast("dict[str, object]", b)
        return a_.keys() == b_.keys() and all(strictly_equal(a_[key], b_[key]) for key in a_)
    if isinstance(a, list) and isinstance(b, list):
        a_list, b_list = cast("list[object]", a), cast("list[object]", b)
        return len(a_list) == len(b_list) and all(map(strictly_equal, a_list, b_list))
    return a == b


def publish(manager: StateManager[Any], sent: list[StateSnapshotEvent | StateDeltaEvent]) -> str:
    event = manager.publish()
    if event is None:
        return "nothing"
    sent.append(event)
    return event.type


def test_an_unchanged_plain_state_is_known_unchanged_without_serializing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager = StateManager(
        Tasks, {"tasks": [{"id": i, "title": f"t{i}", "done": False} for i in range(50)]}
    )
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    serialized = Serializations(monkeypatch)
    assert publish(manager, sent) == "nothing"
    assert serialized.count == 0
    manager.value.tasks[7]["done"] = True
    assert publish(manager, sent) == EventType.STATE_DELTA
    assert publish(manager, sent) == "nothing"
    assert serialized.count == 1
    assert client_follows(manager, sent)


def some_tasks(count: int) -> JsonValue:
    tasks: list[JsonValue] = [{"id": 1, "title": "t", "done": False}]
    return {"tasks": tasks * count}


def test_a_short_state_is_serialized_each_time_and_a_long_one_only_when_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state_module, "_SHORTCUTS_FROM", SHORTCUTS_FROM)
    short, long = StateManager(Tasks, some_tasks(10)), StateManager(Tasks, some_tasks(200))
    assert len(short.to_json()) < SHORTCUTS_FROM <= len(long.to_json())
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    for manager in (short, long):
        publish(manager, sent)
    serialized = Serializations(monkeypatch)
    assert publish(short, sent) == "nothing"
    assert serialized.count == 1
    assert publish(long, sent) == "nothing"
    assert serialized.count == 1


def test_a_state_is_serialized_with_warnings_as_errors_only_while_it_may_take_the_shortcuts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(state_module, "_SHORTCUTS_FROM", SHORTCUTS_FROM)
    manager = StateManager(Tasks, some_tasks(2))
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    serialized = Serializations(monkeypatch)
    publish(manager, sent)  # its size is not known yet
    publish(manager, sent)  # short: the shortcuts will not be taken
    manager.value.tasks.extend([Task(id=n, title="t", done=False) for n in range(200)])
    publish(manager, sent)  # long now, but the last publish was short
    publish(manager, sent)  # the last publish was long: the shortcuts may be taken
    assert serialized.warnings == ["error", True, True, "error"]
    assert client_follows(manager, sent)


def test_a_short_state_publishes_the_same_events_without_the_shortcuts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def events(shortcuts_from: int) -> list[StateSnapshotEvent | StateDeltaEvent]:
        monkeypatch.setattr(state_module, "_SHORTCUTS_FROM", shortcuts_from)
        manager = StateManager(Tasks, some_tasks(5))
        sent: list[StateSnapshotEvent | StateDeltaEvent] = []
        publish(manager, sent)
        manager.value.tasks[2]["done"] = True
        publish(manager, sent)
        manager.value.tasks[2]["title"] = "u"
        publish(manager, sent)
        publish(manager, sent)
        assert client_follows(manager, sent)
        return sent

    assert types_of(events(SHORTCUTS_FROM)) == ["STATE_SNAPSHOT", "STATE_DELTA", "STATE_DELTA"]
    assert events(SHORTCUTS_FROM) == events(0)


@pytest.mark.parametrize(
    ("key", "value"),
    [("done", 0), ("id", True), ("id", 3.0)],
    ids=["false-to-0", "3-to-true", "3-to-3.0"],
)
def test_a_change_only_json_types_tell_apart_is_published(key: str, value: JsonValue) -> None:
    manager: StateManager[JsonValue] = StateManager(
        None, {"tasks": [{"id": i, "done": False} for i in range(50)]}
    )
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    items = cast("list[dict[str, JsonValue]]", as_dict(manager.value)["tasks"])
    items[3][key] = value
    assert publish(manager, sent) == EventType.STATE_DELTA
    delta = cast("StateDeltaEvent", sent[-1])
    assert [op.model_dump(mode="json")["value"] for op in delta.delta] == [value]
    assert client_follows(manager, sent)
    assert publish(manager, sent) == "nothing"


def test_zero_of_the_other_sign_is_the_same_json_and_sends_nothing() -> None:
    values: list[JsonValue] = [0.0] * 30
    manager: StateManager[JsonValue] = StateManager(None, {"values": values})
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    cast("list[float]", as_dict(manager.value)["values"])[5] = -0.0
    assert publish(manager, sent) == "nothing"
    assert publish(manager, sent) == "nothing"


def test_a_large_object_and_a_large_list_publish_one_operation_per_change() -> None:
    members = StateManager(
        Members, {"members": {f"k{i}": i if i % 2 else f"v{i}" for i in range(200)}}
    )
    tasks = StateManager(
        Tasks, {"tasks": [{"id": i, "title": f"t{i}", "done": False} for i in range(200)]}
    )
    sent_members: list[StateSnapshotEvent | StateDeltaEvent] = []
    sent_tasks: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(members, sent_members)
    publish(tasks, sent_tasks)
    for turn in range(3):
        members.value.members["k100"] = f"changed {turn}"
        members.value.members[f"new{turn}"] = turn
        del members.value.members[f"k{turn}"]
        del tasks.value.tasks[0]
        tasks.value.tasks[100]["title"] = f"edited {turn}"
        tasks.value.tasks.append({"id": 1_000 + turn, "title": "new", "done": True})
        assert publish(members, sent_members) == publish(tasks, sent_tasks) == EventType.STATE_DELTA
        assert len(cast("StateDeltaEvent", sent_members[-1]).delta) == 3
        assert len(cast("StateDeltaEvent", sent_tasks[-1]).delta) == 3
        assert publish(members, sent_members) == publish(tasks, sent_tasks) == "nothing"
    assert client_follows(members, sent_members)
    assert client_follows(tasks, sent_tasks)


def test_a_state_whose_json_depends_on_more_than_its_fields_is_serialized_each_time() -> None:
    manager = StateManager(Clock, None)
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    manager.value.shift(5)
    assert publish(manager, sent) != "nothing"
    assert client_view(cast("list[Event]", sent)) == {"ticks": 0, "shown": 5}
    assert publish(manager, sent) == "nothing"


@pytest.mark.parametrize(
    ("kind", "by_value"),
    [
        (Tasks, True),
        (Members, True),
        (Counter, True),
        (None, True),
        (Clock, False),
        (Loud, False),
        (Open, False),
        (Sometimes, False),
    ],
    ids=[
        "model",
        "union",
        "typeddict",
        "json",
        "computed",
        "field-serializer",
        "extra",
        "exclude-if",
    ],
)
def test_only_states_serialized_from_their_value_alone_skip_serializing(
    monkeypatch: pytest.MonkeyPatch, kind: type[Any] | None, *, by_value: bool
) -> None:
    manager: StateManager[Any] = StateManager(kind, {"count": 1} if kind is Counter else None)
    manager.publish()
    serialized = Serializations(monkeypatch)
    assert manager.publish() is None
    assert serialized.count == (0 if by_value else 1)


def test_a_serializer_warning_shows_on_every_publish_as_before() -> None:
    manager = StateManager(Counter, {"count": 1})
    manager.publish()
    manager.value["count"] = cast("int", "one")
    with pytest.warns(UserWarning, match="serializer warnings"):
        assert isinstance(manager.publish(), StateSnapshotEvent | StateDeltaEvent)
    with pytest.warns(UserWarning, match="serializer warnings"):
        assert manager.publish() is None


def test_a_state_holding_values_outside_json_is_published_through_its_bytes() -> None:
    manager = StateManager(When, None)
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    assert publish(manager, sent) == "nothing"
    manager.value.at = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
    assert publish(manager, sent) == EventType.STATE_DELTA
    assert client_follows(manager, sent)


def test_a_plain_state_that_takes_a_value_outside_json_is_published_through_its_bytes() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"pad": "x" * 100, "pair": [1, 2]})
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    as_dict(manager.value)["pair"] = cast("JsonValue", (1, 3))
    assert publish(manager, sent) == EventType.STATE_DELTA
    assert client_follows(manager, sent)
    assert publish(manager, sent) == "nothing"


def test_an_outside_snapshot_makes_the_unchanged_state_publish_again() -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1, "pad": "x" * 50})
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    outside = StateSnapshotEvent(snapshot={"n": 0, "pad": "x" * 50})
    manager.observe(outside)
    sent.append(outside)
    assert publish(manager, sent) == EventType.STATE_DELTA
    assert client_follows(manager, sent)


def test_an_outside_snapshot_of_the_same_json_keeps_unchanged_states_cheap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager: StateManager[JsonValue] = StateManager(None, {"n": 1, "pad": "x" * 50})
    manager.publish()
    manager.observe(StateSnapshotEvent(snapshot={"n": 1, "pad": "x" * 50}))
    serialized = Serializations(monkeypatch)
    assert manager.publish() is None
    assert manager.publish() is None
    assert serialized.count == 1


def test_a_value_whose_equality_raises_is_still_a_state_error() -> None:
    class Raising:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError

        __hash__ = None  # type: ignore[assignment]

    manager: StateManager[JsonValue] = StateManager(None, {"a": 1})
    manager.publish()
    as_dict(manager.value)["a"] = cast("JsonValue", Raising())
    with pytest.raises(StateError, match="cannot be serialized"):
        manager.publish()


json_documents: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from([0.0, -0.0, 1.0, 2.5])
    | st.text(alphabet="ab", max_size=2),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.sampled_from("abcd"), children, max_size=4)
    ),
    max_leaves=25,
)


@pytest.mark.parametrize("shortcuts_from", [0, SHORTCUTS_FROM], ids=["shortcuts", "strict"])
@settings(max_examples=200, deadline=None)
@given(st.lists(json_documents, min_size=1, max_size=6))
def test_the_client_follows_every_publish_of_any_json_state(
    shortcuts_from: int, documents: list[JsonValue]
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_module, "_SHORTCUTS_FROM", shortcuts_from)
        client_follows_every_publish(documents)


def client_follows_every_publish(documents: list[JsonValue]) -> None:
    manager: StateManager[Any] = StateManager(None, {"pad": "x" * 40})
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    for document in documents:
        state = cast("dict[str, JsonValue]", manager.value)
        state["doc"] = copy.deepcopy(document)
        publish(manager, sent)
        assert client_follows(manager, sent)
        assert publish(manager, sent) == "nothing"


confusable: st.SearchStrategy[JsonValue] = st.sampled_from(
    [0, 1, True, False, 0.0, -0.0, 1.0, "1", None, [], {}, [1], {"a": 1}]
)


def containers_in(doc: JsonValue) -> list[dict[str, JsonValue] | list[JsonValue]]:
    """Every dict and list inside `doc`, itself included."""
    found: list[dict[str, JsonValue] | list[JsonValue]] = []
    if isinstance(doc, dict):
        found.append(doc)
        for value in doc.values():
            found += containers_in(value)
    elif isinstance(doc, list):
        found.append(doc)
        for value in doc:
            found += containers_in(value)
    return found


@pytest.mark.parametrize("shortcuts_from", [0, SHORTCUTS_FROM], ids=["shortcuts", "strict"])
@settings(max_examples=200, deadline=None)
@given(json_documents, st.data())
def test_the_client_follows_changes_made_in_place_anywhere_in_the_state(
    shortcuts_from: int, start: JsonValue, data: st.DataObject
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_module, "_SHORTCUTS_FROM", shortcuts_from)
        client_follows_changes_in_place(start, data)


def client_follows_changes_in_place(start: JsonValue, data: st.DataObject) -> None:
    doc = copy.deepcopy(start)
    manager: StateManager[JsonValue] = StateManager(None, {"pad": "x" * 40, "doc": doc})
    sent: list[StateSnapshotEvent | StateDeltaEvent] = []
    publish(manager, sent)
    for _ in range(data.draw(st.integers(1, 6))):
        target = data.draw(st.sampled_from(containers_in(manager.value)))
        value = copy.deepcopy(data.draw(confusable))
        if isinstance(target, dict):
            target[data.draw(st.sampled_from([*target, "new"]))] = value
        elif target and data.draw(st.sampled_from(["replace", "insert"])) == "replace":
            target[data.draw(st.integers(0, len(target) - 1))] = value
        else:
            target.insert(data.draw(st.integers(0, len(target))), value)
        publish(manager, sent)
        assert client_follows(manager, sent)
        assert publish(manager, sent) == "nothing"


def test_runs_of_one_state_type_share_its_adapter() -> None:
    class Board(BaseModel):
        tasks: list[str] = []

    first = StateManager(Board, None)
    second = StateManager(Board, {"tasks": ["a"]})
    assert first._adapter is second._adapter  # pyright: ignore[reportPrivateUsage]


def test_a_state_type_that_cannot_be_a_dict_key_still_works() -> None:
    # Its metadata, a list, cannot be hashed.
    tagged = cast("type[dict[str, int]]", Annotated[dict[str, int], ["a note"]])
    manager = StateManager(tagged, {"n": 1})
    manager.value["n"] = 2
    assert manager.publish() == StateSnapshotEvent(snapshot={"n": 2})


def test_a_published_delta_holds_operations_as_validation_makes_them() -> None:
    notes: list[JsonValue] = ["a snapshot longer than the patch"] * 4
    ctx, events = untyped({"n": 0, "notes": notes})
    ctx.publish_state()
    as_dict(ctx.state)["n"] = 1
    ctx.publish_state()
    delta = only(events.drain(), StateDeltaEvent)[0]
    validated = ReplaceOperation(path="/n", value=1)
    assert delta.delta == [validated]
    assert [vars(op) for op in delta.delta] == [vars(validated)]
    assert [op.__pydantic_extra__ for op in delta.delta] == [validated.__pydantic_extra__] == [{}]


class Unreadable:
    """A plain class: pydantic has no schema for it."""


def test_a_state_type_pydantic_cannot_read_is_refused_saying_why() -> None:
    request = RunAgentInput(thread_id="t", run_id="r")
    for unreadable in (Unreadable, list[Unreadable]):
        with pytest.raises(
            UsageError,
            match=r"the state type must be one the client's state can be read into \(a pydantic "
            r"model, a dataclass, a TypedDict, or a form such as dict\[str, int\]\), not .*"
            r"Unreadable.*, which pydantic cannot read \(PydanticSchemaGenerationError: ",
        ):
            RunContext.new(request, state=unreadable)


def test_a_state_given_as_a_value_is_refused_asking_for_its_class() -> None:
    with pytest.raises(UsageError, match=r"not a dict \(\{'n': 1\}\); pass the class itself$"):
        state_adapter({"n": 1})
    assert state_adapter(dict[str, int]).validate_python({"n": 1}) == {"n": 1}


def test_a_state_type_given_by_its_name_is_refused_when_the_run_context_is_made() -> None:
    with pytest.raises(UsageError, match=r"not a str \('Board'\); pass the class itself$"):
        RunContext.new(
            RunAgentInput(thread_id="t", run_id="r"), state=cast("type[object]", "Board")
        )
