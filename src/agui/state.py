"""The run's typed state, and publishing it as whichever of snapshot or delta is smaller.

The state type is a pydantic model, a dataclass or a TypedDict (or nothing: then the state is the
plain JSON the client sent, a `dict` by default). Its first value comes from `RunAgentInput.state`,
or from the type's defaults when the client sent none. Agent code mutates the live object; nothing
goes out until a publish.

What a publish sends is decided on the state's own serialization, by pydantic-core: nothing when
it is the same JSON as the client holds; the first time, a `STATE_SNAPSHOT` (the client's copy may
have drifted, and a patch against an unknown base does not apply); later, a `STATE_DELTA` against
the last published value when the patch's compact bytes are strictly smaller than the snapshot's,
else a snapshot. A `STATE_*` event that reaches the stream some other way (a raw emit, a
transformer) moves the baseline with it, so a delta is never computed against a state the client
no longer holds.

A publish takes one of three ways to that answer. The first two are shortcuts for plain JSON, kept
because each earns its own share on a large state (`bench/bench_state.py` switches each off in
turn); the third is the general way, and the proof the shortcuts lean on is exact JSON equality
(`agui.patch._equality`):

* Unchanged: a mirror. When serializing the state type runs no code but pydantic-core's and reads
  nothing but the value (no serializer functions, computed fields or extra members), the state
  serializes to the last publish's bytes whenever it is still exactly what it was then. A
  `Mirror`, an exact copy kept at the last publish, proves that with `==` and a few C-level type
  passes, without serializing: on a 10,000-key dict, a third of what serializing and comparing
  costs.
* Changed: a loose diff. The live JSON (a model's fields, or the state itself) is diffed against
  the last published value trusting `==`, the patch applied to that value, and the result kept
  only if it `writes` exactly the state's own bytes: then it is the new JSON, and the patch is
  right, types and all. That skips the strict diff's type passes over both documents.
* Otherwise: a strict diff. The new JSON is the mirror's copy of the live state when it writes
  the state's bytes (its scalars are the live state's own, so later comparisons find most of them
  to be the very same objects), else the bytes parsed, and `agui.patch.diff` compares it with the
  last published value. This is the way for a state that is not plain JSON (a dataclass, a
  `datetime`), for the first publish after an outside `STATE_*` event, and for a change only
  JSON's types tell apart, such as `1` to `true`.

The shortcuts (the mirror, its copy and the loose diff) are taken from 4 KiB of JSON on, when
the last publish's JSON was that long too (a state that grows past it takes the strict way
once). Below that, as on a typical state of a few fields and a short list, each of them costs
more than it saves, and the strict way from the parsed bytes is the quicker.
"""

from __future__ import annotations

import functools
from typing import Any, Generic, TypeAlias, TypeVar, cast, get_origin

import pydantic_core
from pydantic import BaseModel, JsonValue, RootModel, TypeAdapter, ValidationError

from agui import patch
from agui._protocol.model import WireModel
from agui._protocol.text import argument_problems
from agui.errors import PatchError, StateError, UsageError
from agui.events import Event, StateDeltaEvent, StateSnapshotEvent
from agui.patch._differ import Differ
from agui.patch._equality import Mirror, writes
from agui.types import (
    AddOperation,
    CopyOperation,
    JsonPatchOperation,
    MoveOperation,
    RemoveOperation,
    ReplaceOperation,
    TestOperation,
)

__all__ = ["StateManager", "carries_state", "state_adapter"]

S = TypeVar("S")
_Ops: TypeAlias = "list[dict[str, JsonValue]]"
_Next: TypeAlias = "tuple[Mirror | None, JsonValue, _Ops]"
"""What a publish moves the baseline to: the mirror to keep, the published JSON, the patch."""
_SHORTCUTS_FROM = 4_096
_READ_DEPTH = 200  # pydantic-core reads JSON to 200 levels, the wire too
"""The length of JSON from which the shortcuts save time: below it they cost more than they save."""

_OPERATIONS: dict[str, type[WireModel]] = {
    cls.model_fields["op"].default: cls
    for cls in (
        AddOperation,
        RemoveOperation,
        ReplaceOperation,
        MoveOperation,
        CopyOperation,
        TestOperation,
    )
}


class StateManager(Generic[S]):
    """Holds the live state, the client's baseline, and decides what a publish sends.

    Examples:
        >>> manager = StateManager(None, {"tasks": []})
        >>> manager.value["tasks"].append("ship it")
        >>> type(manager.publish()).__name__
        'StateSnapshotEvent'
        >>> manager.publish() is None
        True
    """

    def __init__(self, state_type: type[S] | None, initial: JsonValue | None) -> None:
        adapter, self._by_value = _adapter_of(state_type)
        self._adapter = cast("TypeAdapter[S]", adapter)
        # A form such as dict[str, int] is named as written; its `__name__` is only "dict".
        generic = get_origin(state_type) is not None
        self._type_name = repr(state_type) if generic else getattr(state_type, "__name__", "JSON")
        self.value: S = self._decode(state_type, initial)
        self._published: JsonValue | None = None
        self._published_bytes: bytes | None = None
        # Whether _published is plain JSON made here, from the state's own bytes
        self._own = False
        # The live JSON as it was when serialized to _published_bytes, and the state's type then
        self._mirror: Mirror | None = None
        self._mirror_type: type | None = None

    def _decode(self, state_type: type[S] | None, initial: JsonValue | None) -> S:
        if initial is None and state_type is None:
            return cast("S", {})
        source = _empty_of(state_type) if initial is None else initial
        try:
            # By name too: what is published (by field name, unless the model serializes by
            # alias) must read back, and a client may send either form.
            return self._adapter.validate_python(source, by_alias=True, by_name=True)
        except ValidationError as error:
            details = "; ".join(f"'{at}': {why}" for at, why in argument_problems(error))
            if initial is None:
                message = (
                    f"the client sent no state, and an empty one does not fit "
                    f"{self._type_name}: {details}; give the fields defaults, or have the "
                    "client send a state"
                )
            else:
                message = (
                    f"the client's state does not fit {self._type_name}: {details}; "
                    "send a state of that shape, or give the fields defaults"
                )
            raise StateError(message) from None

    @property
    def published(self) -> JsonValue | None:
        """The JSON the client is known to hold, or `None` before the first publish."""
        return self._published

    def to_json(self) -> bytes:
        """The live state as compact JSON bytes."""
        try:
            return self._adapter.dump_json(self.value)
        except pydantic_core.PydanticSerializationError as error:
            message = f"the state of type {self._type_name} cannot be serialized: {error}"
            raise StateError(message) from None

    def publish(self) -> StateSnapshotEvent | StateDeltaEvent | None:
        """The event that brings the client up to date, or `None` when nothing changed."""
        live = self._live()
        if self._unchanged(live):
            return None
        encoded, quick = self._encode()
        if encoded == self._published_bytes:
            if quick:  # no mirror, or one the state no longer matches
                self._keep(Mirror.of(live))
            return None
        known = self._published_bytes is not None
        found = self._follow(live, encoded) if quick else None
        mirror, current, ops = found or self._rebuild(live, encoded, copy=quick)
        self._published, self._published_bytes, self._own = current, encoded, True
        self._keep(mirror)
        return _smaller(current, ops, encoded) if known else _snapshot(current)

    def _live(self) -> object:
        """The live JSON: a model's fields, or the state itself."""
        value = self.value
        return value.__dict__ if isinstance(value, BaseModel) else value

    def _unchanged(self, live: object) -> bool:
        mirror = self._mirror
        return mirror is not None and type(self.value) is self._mirror_type and mirror.matches(live)

    def _encode(self) -> tuple[bytes, bool]:
        """The state's bytes, and whether the shortcuts may take them.

        They may for a state serialized by value with no warning, when its JSON is long enough
        for them to save more than they cost. Only serializing with warnings as errors shows
        that there was no warning, and on a short state it costs about three times a plain
        serialization: so it is done only when the last publish's JSON was long enough too, or
        there is none yet.
        """
        previous = self._published_bytes
        if self._by_value and (previous is None or len(previous) >= _SHORTCUTS_FROM):
            try:
                encoded = self._adapter.dump_json(self.value, warnings="error")
            except pydantic_core.PydanticSerializationError:
                pass  # a warning, or an error: serialize again and let it show
            else:
                return encoded, len(encoded) >= _SHORTCUTS_FROM
        return self.to_json(), False

    def _follow(self, live: object, encoded: bytes) -> _Next | None:
        """The loose way: the patch trusting `==`, if the JSON it gives writes `encoded`."""
        if not self._own:  # the baseline is not plain JSON made here, from the state's bytes
            return None
        mirror = Mirror.of(live, copy=False)
        if mirror is None or len(mirror.depths) > _READ_DEPTH:
            return None
        differ = Differ(strict=False)
        differ.value("", self._published, mirror.root)
        current = patch.apply(self._published, differ.ops)
        if not writes(current, encoded):
            return None
        # The mirror read the live JSON in place; compare later states with the patched copy
        return mirror._replace(root=current), current, differ.ops

    def _rebuild(self, live: object, encoded: bytes, *, copy: bool) -> _Next:
        """The strict way: the JSON `encoded` holds, and `agui.patch.diff` from the baseline."""
        mirror = Mirror.of(live) if copy else None
        # Past the depth JSON is read to, parsing refuses the state, as it should
        if (
            mirror is not None
            and len(mirror.depths) <= _READ_DEPTH
            and writes(mirror.root, encoded)
        ):
            current = mirror.root
        else:
            current = _parse(encoded)
        ops = patch.diff(self._published, current) if self._published_bytes is not None else []
        return mirror, current, ops

    def _keep(self, mirror: Mirror | None) -> None:
        self._mirror = mirror
        self._mirror_type = type(self.value) if mirror is not None else None

    def observe(self, event: StateSnapshotEvent | StateDeltaEvent) -> None:
        """Move the baseline with a `STATE_*` event that went out some other way."""
        match event:
            case StateSnapshotEvent():
                self._rebase(event.snapshot)
            case StateDeltaEvent() if self._published_bytes is not None:
                ops = [op.model_dump(mode="json") for op in event.delta]
                try:
                    self._rebase(patch.apply(self._published, ops))
                except PatchError:
                    self.reset()
            case _:
                pass  # a delta over no published baseline moves nothing

    def _rebase(self, value: JsonValue) -> None:
        self._published = value
        self._published_bytes = pydantic_core.to_json(value)
        self._own = False
        self._keep(None)

    def reset(self) -> None:
        """Forget the baseline: the next publish is a snapshot."""
        self._published, self._published_bytes, self._own = None, None, False
        self._keep(None)


def _adapter_of(state_type: Any) -> tuple[TypeAdapter[object], bool]:  # noqa: ANN401 - any type form
    """The state type's adapter, and whether it serializes by value; built once per type.

    Building a `TypeAdapter` costs about half a millisecond, which every run of a server's
    endpoint would otherwise pay before its first event.
    """
    try:
        return _cached_adapter(state_type)
    except TypeError:  # a type that cannot be a dict key (say, `Literal` of a list)
        return _adapter(state_type)


def _adapter(state_type: Any) -> tuple[TypeAdapter[object], bool]:  # noqa: ANN401
    if isinstance(state_type, str):  # a forward reference pydantic would only fail at first use
        raise UsageError(_not_a_state_type(state_type, TypeError(state_type)))
    try:
        adapter: TypeAdapter[object] = TypeAdapter(
            state_type if state_type is not None else JsonValue
        )
    except Exception as error:  # noqa: BLE001 - pydantic raises several kinds for a non-type
        raise UsageError(_not_a_state_type(state_type, error)) from None
    return adapter, _serializes_by_value(adapter.core_schema)


def _not_a_state_type(state_type: object, error: Exception) -> str:
    if isinstance(state_type, type) or get_origin(state_type) is not None:
        said = str(error).strip().split("\n", 1)[0]  # pydantic's first line: the rest is links
        what = f"{state_type!r:.60}, which pydantic cannot read ({type(error).__name__}: {said})"
    else:
        what = f"a {type(state_type).__name__} ({state_type!r:.40}); pass the class itself"
    return (
        "the state type must be one the client's state can be read into (a pydantic model, a "
        f"dataclass, a TypedDict, or a form such as dict[str, int]), not {what}"
    )


def state_adapter(state_type: object) -> TypeAdapter[object]:
    """The adapter of a state type, built once per type; what cannot be one is a `UsageError`.

    Examples:
        >>> state_adapter(dict[str, int]).validate_python({"n": 1})
        {'n': 1}
        >>> state_adapter({"tasks": []})
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: the state type must be one the client's state can be read into ...
    """
    return _adapter_of(state_type)[0]


_cached_adapter = functools.lru_cache(maxsize=256)(_adapter)


def _serializes_by_value(schema: object) -> bool:
    """Whether serializing by this core schema runs no code of ours and reads only the value."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            node = cast("dict[str, object]", node)
            if (
                "serialization" in node
                or "serialization_exclude_if" in node
                or node.get("computed_fields")
                or "allow" in (node.get("extra_behavior"), node.get("extra_fields_behavior"))
            ):
                return False
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(cast("list[object]", node))
    return True


def _empty_of(state_type: object) -> JsonValue:
    """What a state of `state_type` reads from when the client sent none: its defaults.

    A root model or a list type has no fields to default, so it reads from its own default
    (a root model's) or from an empty list; anything else from an empty object.
    """
    if isinstance(state_type, type) and issubclass(state_type, RootModel):
        field = cast("type[RootModel[object]]", state_type).model_fields["root"]
        if field.is_required():
            return {}  # nothing to default to: refused, as a model without defaults is
        return cast("JsonValue", field.get_default(call_default_factory=True))
    origin = cast("object", get_origin(state_type) or state_type)
    return [] if isinstance(origin, type) and issubclass(origin, list | tuple) else {}


def _parse(encoded: bytes) -> JsonValue:
    # Keys repeat (a list of records has the same few); caching them makes parsing quicker.
    try:
        return cast("JsonValue", pydantic_core.from_json(encoded, cache_strings="keys"))
    except ValueError:  # the one way JSON written by pydantic fails to parse: its depth
        message = (
            f"the state's JSON nests deeper than {_READ_DEPTH} levels, which agui does not "
            "read back (nor would it take it in the client's next request); keep the state "
            "shallower"
        )
        raise StateError(message) from None


def _smaller(
    current: JsonValue, ops: _Ops, encoded: bytes
) -> StateSnapshotEvent | StateDeltaEvent | None:
    """The delta if its bytes are strictly fewer than the snapshot's, else the snapshot."""
    if not ops:
        # Same JSON, other bytes (key order, -0.0): nothing for the client to learn.
        return None
    if len(pydantic_core.to_json(ops)) < len(encoded):
        return _delta(ops)
    return _snapshot(current)


def carries_state(event: Event, published: Event) -> bool:
    """Whether `event` is `published`, or a copy of it that carries the same state payload.

    A copy (`model_copy`) is shallow: the snapshot or the patch is the very same object.

    Examples:
        >>> from agui.events import StateSnapshotEvent
        >>> published = StateSnapshotEvent(snapshot={"n": 1})
        >>> carries_state(published.model_copy(), published)
        True
        >>> carries_state(StateSnapshotEvent(snapshot={"n": 1}), published)
        False
    """
    match event, published:
        case StateSnapshotEvent(), StateSnapshotEvent():
            return event.snapshot is published.snapshot
        case StateDeltaEvent(), StateDeltaEvent():
            return event.delta is published.delta
        case _:
            return False  # only a state event of the same kind carries its state


def _snapshot(value: JsonValue) -> StateSnapshotEvent:
    # Built without validation: the value is plain JSON, parsed or checked against its bytes.
    return _SNAPSHOT(value)


def _delta(ops: list[dict[str, JsonValue]]) -> StateDeltaEvent:
    return _DELTA([_operation(op) for op in ops])


def _operation(op: dict[str, JsonValue]) -> JsonPatchOperation:
    """The typed operation of one the differ made (its members are the operation's fields)."""
    cls = _OPERATIONS[cast("str", op["op"])]
    fields = {"from_" if key == "from" else key: value for key, value in op.items()}
    # Operations allow extra members (RFC 6902 tells readers to ignore them): none here.
    return cast("JsonPatchOperation", cls.trusted(**fields))


_SNAPSHOT = StateSnapshotEvent.trusted_builder("snapshot")
_DELTA = StateDeltaEvent.trusted_builder("delta")
