"""Reading a foreign adapter's events: its objects to wire JSON, then agui's lenient reader.

An adapter yields `ag_ui.core` event objects of whatever protocol release it was built against,
or dicts in wire form. Each is dumped to wire JSON (camelCase, `None` omitted) and read by
`agui.parse_event`, which strips unknown members with a warning: the bridge depends on the wire,
never on the adapter's `ag_ui` version. On the way, the wire is tidied the way a 1.0 client's
compatibility boundary would: the retired `THINKING_*` events become `REASONING_*` ones (one
minted id per thinking span, shared by its message, as agui's own reasoning handle does), and
`rawEvent` payloads are dropped unless the bridge keeps them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from itertools import count
from typing import NamedTuple, cast

from pydantic import BaseModel, ValidationError

from agui.errors import MalformedEvent, UnknownEventType
from agui.events import (
    Event,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agui.wire import parse_event, parse_json

__all__ = ["ForeignReader"]

_log = logging.getLogger("agui.bridges")

_THINKING = {
    "THINKING_START": "REASONING_START",
    "THINKING_END": "REASONING_END",
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}
"""Each retired 0.x thinking event, and the 1.0 reasoning event it stands for."""


_FLAT: dict[object, Callable[[object], Event]] = {
    cls.model_fields["type"].default: cls.__pydantic_validator__.validate_python
    for cls in (
        TextMessageStartEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        ToolCallStartEvent,
        ToolCallArgsEvent,
        ToolCallEndEvent,
        ReasoningStartEvent,
        ReasoningMessageStartEvent,
        ReasoningMessageContentEvent,
        ReasoningMessageEndEvent,
        ReasoningEndEvent,
        StepStartedEvent,
        StepFinishedEvent,
    )
}
"""The flat events' validators, by type: the bulk of a stream, read on the quick path."""

_SAFE_INTEGER = 2**53 - 1
"""The largest timestamp agui's models take (JSON's exact integers)."""


class _Delta(NamedTuple):
    """How a delta of one class is taken from an object's values on trust (see `_trusted`)."""

    kind: object
    """The class's own `type` value, which the object must still hold."""
    id_field: str
    """The field naming the message or call the delta adds to."""
    bare: Callable[[str, str], Event]
    """agui's model built trusted from the id and the delta."""
    stamped: Callable[[str, str, int], Event]
    """The same, with a timestamp."""


_DELTAS = {
    cls.model_fields["type"].default: (cls, id_field)
    for cls, id_field in (
        (TextMessageContentEvent, "message_id"),
        (ToolCallArgsEvent, "tool_call_id"),
        (ReasoningMessageContentEvent, "message_id"),
    )
}
"""The delta events, nearly every event of a stream: their agui model and id field, by type."""


class ForeignReader:
    """Turns one run's foreign items into agui events; keeps the thinking span it translates."""

    def __init__(self, run_id: str, *, keep_raw: bool) -> None:
        self._keep_raw = keep_raw
        self._ids = map(f"{run_id}-thinking-{{}}".format, count(1))
        self._thinking: str | None = None

    def read(self, item: object) -> Event | None:
        """The agui event `item` stands for; `None` for one the bridge drops (a `RAW`).

        Raises:
            DecodeError: `item` is no event: not a mapping or a model, or one `parse_event`
                refuses (`UnknownEventType`, `MalformedEvent`).
        """
        quick = self._quick(item)
        if quick is not None:
            return quick
        wire = _wire(item)
        kind = wire.get("type")
        if isinstance(kind, str) and kind in _THINKING:
            wire = self._translate(kind, wire)
        elif kind == "RAW" and not self._keep_raw:
            return None
        if not self._keep_raw and "rawEvent" in wire:
            wire = {key: value for key, value in wire.items() if key != "rawEvent"}
        return parse_event(wire)

    def _quick(self, item: object) -> Event | None:
        """`item` read without its wire form, where that reads the same; else `None`.

        The streamed events of a run (the starts, contents, arguments and ends of its messages,
        calls and reasoning) are flat: strings and a timestamp, nothing nested. Validated by
        field name from an `ag_ui.core` object's own values (`None`: a field it omits; a delta
        is taken on trust where its values pass `_trusted`'s checks), or as the wire dict it is
        (with no `null`, which the reader refuses or drops), such an event is the one
        `parse_event` reads from the wire form. Anything else, or anything the
        model refuses, takes the wire path, whose reader words the refusal.
        """
        reading = _flat_model(type(item))
        if reading is not None:
            validate, delta = reading
            item = cast("BaseModel", item)
            values = item.__dict__
            if (
                item.__pydantic_extra__
                or values.get("raw_event") is not None
                or values.get("metadata") is not None
            ):
                return None
            trusted = None if delta is None else _trusted(delta, values)
            if trusted is not None:
                return trusted
            fields = values  # a `None` is a field it leaves out, as the model's default is
        elif type(item) is dict:
            fields = cast("dict[str, object]", item)
            kind = fields.get("type")
            found = _FLAT.get(kind) if type(kind) is str else None
            if (
                found is None
                or "rawEvent" in fields
                or "metadata" in fields
                or None in fields.values()
            ):
                return None
            validate = found
        else:
            return None
        try:
            return validate(fields)
        except ValidationError:
            return None

    def decode(self, data: str) -> Event | None:
        """A frame's data as `remote` has `agui.client` read it: as `read` reads its JSON.

        Read by `agui.parse_event`, as the client reads it, with `RAW` handled as `read` does;
        an event type AG-UI 1.0 does not define is read again by `read`, which translates a
        retired `THINKING_*` one (a far side on an older protocol) and refuses any other.
        """
        try:
            event = parse_event(data)
        except UnknownEventType:
            return self.read(parse_json(data))
        return self._tidy(event)

    def _tidy(self, event: Event) -> Event | None:
        if self._keep_raw:
            return event
        if event.type == "RAW":
            return None
        return event if event.raw_event is None else event.model_copy(update={"raw_event": None})

    def _translate(self, kind: str, wire: Mapping[str, object]) -> dict[str, object]:
        if "title" in wire:
            _log.info("dropped the title of a %s: REASONING_START has none", kind)
        translated = {key: value for key, value in wire.items() if key != "title"}
        translated["type"] = _THINKING[kind]
        if kind == "THINKING_START" or self._thinking is None:
            self._thinking = next(self._ids)
        translated["messageId"] = self._thinking
        if kind == "THINKING_END":
            self._thinking = None
        return translated


_Reading = tuple[Callable[[object], Event], "_Delta | None"]
"""How a class's objects are read: agui's validator, and the trusted way where there is one."""

_MODELS: dict[type, _Reading | None] = {}
"""Each class `_flat_model` was asked about, and its answer."""


def _flat_model(cls: type) -> _Reading | None:
    """How the flat agui event a model class stands for is read; `None` for any other class.

    Found by the object's class, once per class, rather than by its `type` value on every
    event: an `ag_ui.core` event's `type` is an enum member, whose `.value` is a descriptor
    call. A class's `type` is a `Literal` with its one value as default; an object whose `type`
    was changed after validation fails agui's validation of its values. A delta class whose
    fields are exactly agui's model's is also read on trust (`_trusted`).
    """
    try:
        return _MODELS[cls]
    except KeyError:
        pass
    found: _Reading | None = None
    if issubclass(cls, BaseModel) and (field := cls.model_fields.get("type")) is not None:
        kind = getattr(field.default, "value", field.default)
        validate = _FLAT.get(kind) if isinstance(kind, str) else None
        if validate is not None:
            found = (validate, _delta(cls, field.default, _DELTAS.get(kind)))
    _MODELS[cls] = found
    return found


def _delta(
    cls: type[BaseModel], kind: object, agui: tuple[type[Event], str] | None
) -> _Delta | None:
    if agui is None or cls.model_fields.keys() != agui[0].model_fields.keys():
        return None
    model, id_field = agui
    bare = model.trusted_builder(id_field, "delta")
    stamped = model.trusted_builder(id_field, "delta", "timestamp")
    return _Delta(kind, id_field, bare, stamped)


def _trusted(delta: _Delta, values: Mapping[str, object]) -> Event | None:
    """A delta event taken from an object's values without validating them again; or `None`.

    An `ag_ui.core` object was validated when the adapter built it, and agui's model would
    validate the same values against the same types again, for nothing new: on the deltas
    that are nearly all of a stream, that second validation was the larger part of the
    bridge's reading. So a delta whose values are what validation keeps as they are (an exact
    `str` id and delta, an `int` timestamp in range or none, no subagent, its class's own
    `type`) is built trusted; these checks also catch an object built without validation
    (`model_construct`) or changed after it. Anything else is validated. The caller has
    checked that `raw_event` and `metadata` (JSON) are absent and there are no extra members.
    Measured per delta: 0.72 us against 1.23 us of validation; with the class-keyed reading
    (`_flat_model`), it took the bridge from 1.52-1.65x a hand-written agent's CPU per event to
    1.31-1.33x (`bench/bench_bridges.py`; its section of `bench/README.md`).
    """
    ident, text, stamp = values[delta.id_field], values["delta"], values["timestamp"]
    if (
        type(ident) is not str
        or type(text) is not str
        or values["subagent_run_id"] is not None
        or values["type"] is not delta.kind
    ):
        return None
    if stamp is None:
        return delta.bare(ident, text)
    if type(stamp) is int and -_SAFE_INTEGER <= stamp <= _SAFE_INTEGER:
        return delta.stamped(ident, text, stamp)
    return None


def _wire(item: object) -> Mapping[str, object]:
    """`item` in wire form: a mapping as it is, a model dumped as the protocol writes it."""
    if isinstance(item, Mapping):
        return cast("Mapping[str, object]", item)
    if isinstance(item, BaseModel):
        return item.model_dump(mode="json", by_alias=True, exclude_none=True)
    message = (
        f"an upstream event must be an AG-UI event object or a dict in wire form, not a "
        f"{type(item).__name__}"
    )
    raise MalformedEvent(message, path="")
