"""The run's typed state, and publishing it as whichever of snapshot or delta is smaller.

The state type is a pydantic model, a dataclass or a TypedDict (or nothing: then the state is the
plain JSON the client sent, a `dict` by default). Its first value comes from `RunAgentInput.state`,
or from the type's defaults when the client sent none. Agent code mutates the live object; nothing
goes out until a publish.

Publishing serializes the state once, with pydantic-core, and compares the bytes with the last
publish: equal bytes send nothing, at the cost of one serialization. Otherwise the first publish
is a `STATE_SNAPSHOT` (the client's copy may have drifted, and a patch against an unknown base
does not apply); later ones diff the JSON against the last published value and send a
`STATE_DELTA` when the patch's compact bytes are strictly smaller than the snapshot's. A
`STATE_*` event that reaches the stream some other way (a raw emit, a transformer) moves the
baseline with it, so a delta is never computed against a state the client no longer holds.
"""

from __future__ import annotations

from typing import Generic, TypeVar, cast

import pydantic_core
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from agui import patch
from agui.errors import PatchError, StateError
from agui.events import StateDeltaEvent, StateSnapshotEvent
from agui.types import (
    AddOperation,
    CopyOperation,
    JsonPatchOperation,
    MoveOperation,
    RemoveOperation,
    ReplaceOperation,
    TestOperation,
)

__all__ = ["StateManager"]

S = TypeVar("S")

_OPERATIONS: dict[str, type[BaseModel]] = {
    "add": AddOperation,
    "remove": RemoveOperation,
    "replace": ReplaceOperation,
    "move": MoveOperation,
    "copy": CopyOperation,
    "test": TestOperation,
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
        adapter = TypeAdapter(state_type if state_type is not None else JsonValue)
        self._adapter = cast("TypeAdapter[S]", adapter)
        self._type_name = getattr(state_type, "__name__", "JSON")
        self.value: S = self._decode(state_type, initial)
        self._published: JsonValue | None = None
        self._published_bytes: bytes | None = None

    def _decode(self, state_type: type[S] | None, initial: JsonValue | None) -> S:
        if initial is None and state_type is None:
            return cast("S", {})
        source: JsonValue = {} if initial is None else initial
        try:
            return self._adapter.validate_python(source)
        except ValidationError as error:
            details = "; ".join(
                f"'{'/'.join(str(p) for p in item['loc'])}': {item['msg']}"
                for item in error.errors(include_url=False)
            )
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
        encoded = self.to_json()
        if encoded == self._published_bytes:
            return None
        # Keys repeat (a list of records has the same few); caching them makes parsing quicker.
        current = cast("JsonValue", pydantic_core.from_json(encoded, cache_strings="keys"))
        previous = self._published
        known = self._published_bytes is not None
        self._published, self._published_bytes = current, encoded
        if not known:
            return _snapshot(current)
        ops = patch.diff(previous, current)
        if not ops:
            # Same JSON, other bytes (key order, -0.0): nothing for the client to learn.
            return None
        patch_bytes = pydantic_core.to_json(ops)
        if len(patch_bytes) < len(encoded):
            return _delta(ops)
        return _snapshot(current)

    def observe(self, event: StateSnapshotEvent | StateDeltaEvent) -> None:
        """Move the baseline with a `STATE_*` event that went out some other way."""
        if isinstance(event, StateSnapshotEvent):
            self._rebase(event.snapshot)
            return
        if self._published_bytes is None:
            return
        ops = [op.model_dump(mode="json") for op in event.delta]
        try:
            self._rebase(patch.apply(self._published, ops))
        except PatchError:
            self._published, self._published_bytes = None, None

    def _rebase(self, value: JsonValue) -> None:
        self._published = value
        self._published_bytes = pydantic_core.to_json(value)

    def reset(self) -> None:
        """Forget the baseline: the next publish is a snapshot."""
        self._published, self._published_bytes = None, None


def _snapshot(value: JsonValue) -> StateSnapshotEvent:
    # Built without validation: the value came out of pydantic-core's own JSON parser.
    return StateSnapshotEvent.model_construct(snapshot=value)


def _delta(ops: list[dict[str, JsonValue]]) -> StateDeltaEvent:
    typed = [
        cast(
            "JsonPatchOperation",
            _OPERATIONS[cast("str", op["op"])].model_construct(None, **_fields(op)),
        )
        for op in ops
    ]
    return StateDeltaEvent.model_construct(delta=typed)


def _fields(op: dict[str, JsonValue]) -> dict[str, JsonValue]:
    fields = {key: value for key, value in op.items() if key != "from"}
    if "from" in op:
        fields["from_"] = op["from"]
    return fields
