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
from typing import cast

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
        field name from an `ag_ui.core` object's own values (`None`: a field it omits), or
        as the wire dict it is (with no `null`, which the reader refuses or drops), such an
        event is the one `parse_event` reads from the wire form. Anything else, or anything the
        model refuses, takes the wire path, whose reader words the refusal.
        """
        validate = _flat_model(type(item))
        if validate is not None:
            item = cast("BaseModel", item)
            values = item.__dict__
            if (
                item.__pydantic_extra__
                or values.get("raw_event") is not None
                or values.get("metadata") is not None
            ):
                return None
            fields = values  # a `None` is a field it leaves out, as the model's default is
        elif type(item) is dict:
            fields = cast("dict[str, object]", item)
            kind = fields.get("type")
            validate = _FLAT.get(kind) if type(kind) is str else None
            if (
                validate is None
                or "rawEvent" in fields
                or "metadata" in fields
                or None in fields.values()
            ):
                return None
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


_MODELS: dict[type, Callable[[object], Event] | None] = {}
"""Each class `_flat_model` was asked about, and its answer."""


def _flat_model(cls: type) -> Callable[[object], Event] | None:
    """The validator of the flat agui event a model class stands for; `None` for any other.

    Found by the object's class, once per class, rather than by its `type` value on every
    event: an `ag_ui.core` event's `type` is an enum member, whose `.value` is a descriptor
    call. Measured in the bridge's benchmark (`bench/bench_bridges.py`, alternating runs of the
    two versions), reading an event this way took the bridge from 1.60x a hand-written agent's
    CPU per event to 1.49x. A class's `type` is a `Literal` with its one value as default; an
    object whose `type` was changed after validation fails agui's validation of its values.
    """
    try:
        return _MODELS[cls]
    except KeyError:
        pass
    found = None
    if issubclass(cls, BaseModel) and (field := cls.model_fields.get("type")) is not None:
        kind = getattr(field.default, "value", field.default)
        found = _FLAT.get(kind) if isinstance(kind, str) else None
    _MODELS[cls] = found
    return found


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
