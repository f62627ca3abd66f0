"""Between AG-UI's JSON and the protobuf schema's JSON form: the reshaping the binding needs.

`agui.proto` fills an `ag_ui.Event` message from the JSON the SSE binding sends, through
`google.protobuf.json_format`, whose JSON form follows the schema. The two agree on every field
name (the schema's `json_name`s are AG-UI's wire names) but not on every shape, and `to_proto`
and `from_proto` move each difference across, one event type at a time:

- the envelope (`type`, `timestamp`, `rawEvent`, `metadata`) lives in the event's `baseEvent`,
  and the event in the `Event` oneof arm named for its type;
- `RUN_FINISHED` and `SUBAGENT_FINISHED` flatten their outcome to `outcome` (its type, `""` for
  none) beside its lists (`interrupts`, `pendingToolCallIds`, `interruptIds`);
- JSON Patch operations name `op` as an enum (`ADD`), and carry `op`, `path`, `from`, `value`;
- content that is a list of parts travels as `contentParts`, each part and each media source a
  oneof arm named for its `type`; an activity message's content travels as `activityContent`.

Reading also undoes what the protobuf JSON form adds: 64-bit integers as strings, and empty lists
for the absent optional ones. (The JSON in `Value` fields is `agui.proto._values`'s.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from typing_extensions import assert_never

from agui.errors import DecodeError, UnknownMemberWarning
from agui.events import EventType
from agui.proto._schema import ARMS, arm_name

__all__ = ["from_proto", "to_proto"]

_Json = dict[str, Any]
_ENVELOPE = ("rawEvent", "metadata")
_KINDS = {arm_name(kind): kind for kind in ARMS}
_PART_ROLES = ("user", "tool")
_OPTIONAL_LISTS = ("tools", "context", "resume")


# -- writing -----------------------------------------------------------------------------------


def to_proto(wire: _Json) -> _Json:
    """An event's wire JSON as the JSON form of its `ag_ui.Event` message (reshaped in place)."""
    kind: str = wire.pop("type")
    base = {"type": kind}
    for key in ("timestamp", *_ENVELOPE):
        if key in wire:
            base[key] = wire.pop(key)
    reshape = _TO_PROTO.get(kind)
    if reshape is not None:
        reshape(wire)
    return {arm_name(kind): {"baseEvent": base, **wire}}


def _outcome_to(body: _Json) -> None:
    """`outcome: {type, ...payload}` becomes `outcome: type` beside the payload's lists."""
    outcome: _Json | None = body.pop("outcome", None)
    if outcome is not None:
        body["outcome"] = outcome.pop("type")
        body.update(outcome)


def _ops_to(ops: list[_Json]) -> list[_Json]:
    return [
        {"op": op["op"].upper(), **{key: op[key] for key in ("path", "from", "value") if key in op}}
        for op in ops
    ]


def _part_to(part: _Json) -> _Json:
    kind = part.pop("type")
    source: _Json | None = part.get("source")
    if source is not None:
        part["source"] = {source.pop("type"): source}
    return {kind: part}


def _message_to(message: _Json) -> _Json:
    if message["role"] == "activity":
        message["activityContent"] = message.pop("content")
    elif isinstance(message.get("content"), list):
        message["contentParts"] = [_part_to(part) for part in message.pop("content")]
    return message


def _tool_result_to(body: _Json) -> None:
    if isinstance(body["content"], list):
        body["contentParts"] = [_part_to(part) for part in body.pop("content")]


def _messages_to(body: _Json) -> None:
    body["messages"] = [_message_to(message) for message in body["messages"]]


def _run_started_to(body: _Json) -> None:
    if "input" in body:
        _messages_to(body["input"])


# -- reading -----------------------------------------------------------------------------------


def from_proto(frame: _Json, index: int) -> _Json:
    """The wire JSON of the event in the JSON form of an `ag_ui.Event` with one arm set."""
    [(arm, body)] = frame.items()
    kind = _KINDS[arm]
    base: _Json | None = body.pop("baseEvent", None)
    if base is None:
        # Its type would read as the enum's first value, TEXT_MESSAGE_START, whatever the arm;
        # the official reader refuses the frame too.
        problem = (
            f"frame {index} carries a {kind} event without its baseEvent; every event message "
            "opens with a BaseEvent (field 1) that declares its type, so the producer must "
            "write it"
        )
        raise DecodeError(problem)
    declared = base["type"]  # an enum without presence: always there
    if declared != kind:
        problem = (
            f"frame {index} carries a {kind} event whose baseEvent declares {declared}; the "
            "type in baseEvent must be the type of the arm that carries it"
        )
        raise DecodeError(problem)
    wire: _Json = {"type": kind}
    if "timestamp" in base:
        wire["timestamp"] = int(base["timestamp"])
    wire.update({key: base[key] for key in _ENVELOPE if key in base})
    reshape = _FROM_PROTO.get(kind)
    if reshape is not None:
        reshape(body)
    return {**wire, **body}


def _outcome_from(body: _Json, *payload: str) -> None:
    """`outcome: type` and its lists become `outcome: {type, ...}` (empty lists left out)."""
    kind = body.pop("outcome")
    lists = {key: body.pop(key) for key in payload}
    target = {"type": kind} if kind else body
    target.update({key: items for key, items in lists.items() if items})
    if kind:
        body["outcome"] = target


def _usage_from(body: _Json) -> None:
    usage: list[_Json] = body.pop("usage")
    if usage:
        body["usage"] = [
            {key: int(count) if key.endswith("Tokens") else count for key, count in entry.items()}
            for entry in usage
        ]


def _part_from(part: _Json) -> _Json | None:
    """A content part as its JSON, or `None` when its kind or its source's is unknown."""
    for kind, body in part.items():
        source: _Json | None = body.get("source")
        if source is not None:
            if not source:
                return None
            [(source_kind, fields)] = source.items()
            body["source"] = {"type": source_kind, **fields}
        return {"type": kind, **body}
    return None


def _parts_from(parts: list[_Json]) -> list[_Json]:
    known: list[_Json] = []
    for part in parts:
        wire = _part_from(part)
        if wire is None:
            text = "a content part of a kind this version does not know was dropped"
            warnings.warn(text, UnknownMemberWarning, stacklevel=2)
        else:
            known.append(wire)
    return known


def _content_from(owner: str, body: _Json, *, uses_parts: bool) -> None:
    parts: list[_Json] = body.pop("contentParts")
    if uses_parts and "content" not in body:
        body["content"] = _parts_from(parts)
    elif parts:
        problem = f"{owner} carries content parts beside or instead of the content it allows"
        raise DecodeError(problem)


def _message_from(message: _Json) -> _Json:
    role = message["role"]
    if not message["toolCalls"]:
        del message["toolCalls"]
    activity = message.pop("activityContent", None)
    if activity is not None:
        if role != "activity" or "content" in message:
            problem = f"a {role!r} message carries activity content beside or instead of its own"
            raise DecodeError(problem)
        message["content"] = activity
    _content_from(f"a {role!r} message", message, uses_parts=role in _PART_ROLES)
    return message


def _messages_from(body: _Json) -> None:
    body["messages"] = [_message_from(message) for message in body["messages"]]


def _run_started_from(body: _Json) -> None:
    run_input: _Json | None = body.get("input")
    if run_input is not None:
        _messages_from(run_input)
        for key in _OPTIONAL_LISTS:
            if not run_input[key]:
                del run_input[key]


def _ops_from(ops: list[_Json]) -> list[_Json]:
    return [{**op, "op": str(op["op"]).lower()} for op in ops]


def _run_finished_from(body: _Json) -> None:
    _usage_from(body)
    _outcome_from(body, "interrupts", "pendingToolCallIds")


_Reshape = Callable[[_Json], None]


def _reshaping(kind: EventType) -> tuple[_Reshape | None, _Reshape | None]:  # noqa: PLR0911 - a case a type
    """How an event of `kind` is reshaped into the schema's JSON form, and back; `None`: as is.

    One case a type (grouped where nothing differs), so a new event type is a type error here
    until the binding says how it travels.
    """
    match kind:
        case EventType.RUN_STARTED:
            return _run_started_to, _run_started_from
        case EventType.RUN_FINISHED:
            return _outcome_to, _run_finished_from
        case EventType.RUN_ERROR:
            return None, _usage_from
        case EventType.SUBAGENT_FINISHED:
            return _outcome_to, lambda body: _outcome_from(body, "interruptIds")
        case EventType.MESSAGES_SNAPSHOT:
            return _messages_to, _messages_from
        case EventType.TOOL_CALL_RESULT:
            return _tool_result_to, lambda body: _content_from(
                "a TOOL_CALL_RESULT", body, uses_parts=True
            )
        case EventType.STATE_DELTA:
            return (
                lambda body: body.update(delta=_ops_to(body["delta"])),
                lambda body: body.update(delta=_ops_from(body["delta"])),
            )
        case EventType.ACTIVITY_DELTA:
            return (
                lambda body: body.update(patch=_ops_to(body["patch"])),
                lambda body: body.update(patch=_ops_from(body["patch"])),
            )
        case (
            EventType.TEXT_MESSAGE_START
            | EventType.TEXT_MESSAGE_CONTENT
            | EventType.TEXT_MESSAGE_END
            | EventType.TEXT_MESSAGE_CHUNK
            | EventType.TOOL_CALL_START
            | EventType.TOOL_CALL_ARGS
            | EventType.TOOL_CALL_END
            | EventType.TOOL_CALL_CHUNK
            | EventType.STATE_SNAPSHOT
            | EventType.ACTIVITY_SNAPSHOT
            | EventType.RAW
            | EventType.CUSTOM
            | EventType.STEP_STARTED
            | EventType.STEP_FINISHED
            | EventType.REASONING_START
            | EventType.REASONING_MESSAGE_START
            | EventType.REASONING_MESSAGE_CONTENT
            | EventType.REASONING_MESSAGE_END
            | EventType.REASONING_MESSAGE_CHUNK
            | EventType.REASONING_END
            | EventType.REASONING_ENCRYPTED_VALUE
            | EventType.SUBAGENT_STARTED
            | EventType.SUBAGENT_ERROR
        ):
            return None, None  # every field the same shape on both sides
        case _:
            assert_never(kind)


_RESHAPING = {kind.value: _reshaping(kind) for kind in EventType}
_TO_PROTO = {kind: to for kind, (to, _) in _RESHAPING.items() if to is not None}
_FROM_PROTO = {kind: back for kind, (_, back) in _RESHAPING.items() if back is not None}
