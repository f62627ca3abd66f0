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

from agui.errors import MalformedEvent
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
from agui.wire import parse_event

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
        if isinstance(item, BaseModel):
            values = item.__dict__
            validate = _FLAT.get(getattr(values.get("type"), "value", None))
            if (
                validate is None
                or item.__pydantic_extra__
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

    def tidy(self, event: Event) -> Event | None:
        """An agui event read elsewhere (by `agui.client`), with `RAW` handled as `read` does."""
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
