"""The canonical encode workload: one run of about 15,000 events, as plain event specs.

One run: RUN_STARTED; 200 text messages (START, 50 CONTENT deltas of about 8 characters, some
non-ASCII, END); 200 tool calls (START, 20 ARGS fragments, END, RESULT); 50 STATE_DELTA events
of 1 to 3 operations, some with `"value": None`; RUN_FINISHED. Messages, tool calls and state
deltas interleave the way a tool-using agent's stream does.

A spec is `(event type, fields)`: the snake_case keyword arguments of the event model, which
the agui and the official `ag_ui.core` models both accept, so each SDK builds the same events
the way an application would. `wire_dicts` gives the same events as ready-made wire JSON dicts,
for the `json.dumps` floor. Everything is deterministic: no randomness, fixed timestamps.
"""

from __future__ import annotations

import json
from typing import Any, get_args

import ag_ui.core as official
from ag_ui.core import BaseEvent
from pydantic import JsonValue
from pydantic.alias_generators import to_camel

from agui.events import Event

__all__ = [
    "EventSpec",
    "agui_class",
    "build_agui",
    "build_official",
    "official_class",
    "wire_dicts",
    "workload",
]

EventSpec = tuple[str, dict[str, Any]]
"""`(event type, snake_case keyword arguments of its model)`."""

MESSAGES = 200
DELTAS_PER_MESSAGE = 50
TOOL_CALLS = 200
ARGS_PER_CALL = 20
STATE_DELTAS = 50

WORDS = (
    "Hello, w",
    "orld! Th",
    "e weathe",
    "r in Séo",
    "ul is 21",
    "°C and s",
    "unny. 天気",
    "は晴れです。 ",
    "Naïve ca",
    "fé — ok ",
    "emoji 😀 ",
    'say "hi"',
    "\\path\\x ",
    "tab\there",
    "line\nend",
    "plain te",
)
CITIES = ("Seoul", "Zürich", "São Paulo", "東京", "Reykjavík", "Paris", "Kraków", "Cairo")
_T0 = 1_700_000_000_000


def fragments(text: str, count: int) -> list[str]:
    size = -(-len(text) // count)
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    return pieces + [""] * (count - len(pieces))


def arguments(index: int) -> str:
    city = CITIES[index % len(CITIES)]
    payload = {"city": city, "units": "metric", "days": index % 7 + 1, "detail": None}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _state_ops(index: int) -> list[dict[str, JsonValue]]:
    ops: list[list[dict[str, JsonValue]]] = [
        [{"op": "replace", "path": "/status", "value": f"step {index}"}],
        [
            {"op": "add", "path": "/tasks/-", "value": {"id": index, "done": False}},
            {"op": "replace", "path": "/owner", "value": None},
        ],
        [
            {"op": "add", "path": f"/notes/n{index}", "value": None},
            {"op": "remove", "path": "/draft"},
            {"op": "replace", "path": "/counter", "value": index},
        ],
    ]
    return ops[index % 3]


def _message(index: int, clock: list[int]) -> list[EventSpec]:
    message_id = f"run-1-msg-{index}"
    specs: list[EventSpec] = [("TEXT_MESSAGE_START", {"message_id": message_id})]
    for delta in range(DELTAS_PER_MESSAGE):
        text = WORDS[(index + delta) % len(WORDS)]
        specs.append(("TEXT_MESSAGE_CONTENT", {"message_id": message_id, "delta": text}))
    specs.append(("TEXT_MESSAGE_END", {"message_id": message_id}))
    return [_stamp(spec, clock) for spec in specs]


def _tool_call(index: int, clock: list[int]) -> list[EventSpec]:
    call_id = f"run-1-call-{index}"
    specs: list[EventSpec] = [
        (
            "TOOL_CALL_START",
            {
                "tool_call_id": call_id,
                "tool_call_name": "get_weather",
                "parent_message_id": f"run-1-msg-{index}",
            },
        )
    ]
    specs += [
        ("TOOL_CALL_ARGS", {"tool_call_id": call_id, "delta": fragment})
        for fragment in fragments(arguments(index), ARGS_PER_CALL)
    ]
    specs.append(("TOOL_CALL_END", {"tool_call_id": call_id}))
    result = {"city": CITIES[index % len(CITIES)], "tempC": 21, "note": None}
    specs.append(
        (
            "TOOL_CALL_RESULT",
            {
                "message_id": f"run-1-result-{index}",
                "tool_call_id": call_id,
                "content": json.dumps(result, ensure_ascii=False, separators=(",", ":")),
            },
        )
    )
    return [_stamp(spec, clock) for spec in specs]


def _stamp(spec: EventSpec, clock: list[int]) -> EventSpec:
    clock[0] += 1
    return spec[0], {**spec[1], "timestamp": clock[0]}


def workload() -> list[EventSpec]:
    """The whole run, in stream order."""
    clock = [_T0]
    specs: list[EventSpec] = [
        _stamp(
            (
                "RUN_STARTED",
                {"thread_id": "thread-1", "run_id": "run-1", "protocol_version": "1.0"},
            ),
            clock,
        )
    ]
    every = MESSAGES // STATE_DELTAS
    for index in range(MESSAGES):
        specs += _message(index, clock)
        if index < TOOL_CALLS:
            specs += _tool_call(index, clock)
        if index % every == every - 1:
            specs.append(_stamp(("STATE_DELTA", {"delta": _state_ops(index)}), clock))
    specs.append(_stamp(("RUN_FINISHED", {"thread_id": "thread-1", "run_id": "run-1"}), clock))
    return specs


def _class_name(kind: str) -> str:
    return "".join(word.capitalize() for word in kind.split("_")) + "Event"


_AGUI: dict[str, type[Event]] = {
    str(cls.model_fields["type"].default): cls for cls in get_args(get_args(Event)[0])
}
_OFFICIAL: dict[str, type[BaseEvent]] = {
    kind: getattr(official, _class_name(kind)) for kind in _AGUI
}


def agui_class(kind: str) -> type[Event]:
    """The agui model of an event type."""
    return _AGUI[kind]


def official_class(kind: str) -> type[BaseEvent]:
    """The official `ag_ui.core` model of an event type."""
    return _OFFICIAL[kind]


def build_agui(specs: list[EventSpec]) -> list[Event]:
    """The events as agui models, built with keyword arguments."""
    return [_AGUI[kind](**fields) for kind, fields in specs]


def build_official(specs: list[EventSpec]) -> list[BaseEvent]:
    """The events as official `ag_ui.core` models, built with keyword arguments."""
    return [_OFFICIAL[kind](**fields) for kind, fields in specs]


def wire_dicts(specs: list[EventSpec]) -> list[dict[str, Any]]:
    """The events as wire JSON dicts in wire key order (`type`, `timestamp`, then the rest)."""
    dicts: list[dict[str, Any]] = []
    for kind, fields in specs:
        wire = {"type": kind, "timestamp": fields["timestamp"]}
        wire.update((to_camel(key), value) for key, value in fields.items() if key != "timestamp")
        dicts.append(wire)
    return dicts
