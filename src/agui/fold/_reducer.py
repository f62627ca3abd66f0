"""The fold's reducer: what a client holds while it applies a stream, event by event.

`Reducer` holds the thread of messages (`agui._protocol.message_thread`), the state, the last
run's outcome and the subagents a UI tracks, and applies each event with the official client's
rule for its type. Which rule applies to which type is one exhaustive `match` over `EventType`
(`_step_of`), compiled once per process into a table, so a new event type is a type error here
until the fold says how a client applies it (or that it holds nothing of it). Chunks are
expanded first, by the protocol's one chunk expansion (`agui._protocol.chunk_lanes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, cast

from pydantic import JsonValue
from typing_extensions import assert_never

from agui import patch
from agui._protocol.chunk_lanes import ChunkLanes
from agui._protocol.message_thread import Node, Thread
from agui.errors import PatchError
from agui.events import Event, EventType, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.types import RunFinishedOutcome
from agui.wire import json_kind

__all__ = ["FoldedSubagent", "Reducer"]

_Record = dict[str, JsonValue]


@dataclasses.dataclass(frozen=True)
class FoldedSubagent:
    """One subagent invocation as a 1.0 UI tracks it: who, under whom, and how it ended.

    `status` is `running`, `finished`, `suspended` or `failed`; `error` is the message of its
    `SUBAGENT_ERROR`. Its messages are the fold's messages whose `subagent_run_id` is `id`.

    Examples:
        >>> FoldedSubagent(id="r-sub-1", name="researcher").status
        'running'
    """

    id: str
    name: str
    parent: str | None = None
    status: str = "running"
    result: JsonValue = None
    error: str | None = None


class Reducer:
    """What a client holds while it applies a stream: its thread, state, outcome and warnings."""

    def __init__(self, messages: list[_Record], state: JsonValue) -> None:
        self.thread = Thread(messages)
        self.state: JsonValue = {} if state is None else state
        self.outcome: RunFinishedOutcome | None = None
        self.error: RunErrorEvent | None = None
        self.subagents: dict[str, FoldedSubagent] = {}
        self.warnings: list[str] = []
        self._lanes = ChunkLanes()
        self._at = ""  # the event being applied, as warnings name it
        self._growing: dict[int, tuple[_Record, str, list[str]]] = {}  # see `_grow`

    @property
    def messages(self) -> list[_Record]:
        self._settle()
        return self.thread.records()

    def apply(self, index: int, event: Event) -> None:
        """Apply event `index` of the stream: its chunk expansion, each event by its step."""
        self._at = f"event {index} ({event.type})"
        expanded, dropped = self._lanes.expand(event)
        if dropped is not None:
            self._warn(f"{dropped}; the client refuses it, and the fold leaves it out")
        for each in expanded:
            step = _STEPS[each.type]
            if step is not None:  # an event the fold ignores is not even dumped
                step(self, each)

    def run_started(self, event: RunStartedEvent) -> None:
        self.outcome, self.error = None, None
        self.on_run_started(_wire(event))

    def run_finished(self, event: RunFinishedEvent) -> None:
        self.outcome = event.outcome

    def run_error(self, event: RunErrorEvent) -> None:
        self.error = event

    def _warn(self, problem: str) -> None:
        self.warnings.append(f"{self._at}: {problem}")

    def _grow(self, target: _Record, key: str, delta: JsonValue) -> None:
        # `+` copies the whole text per delta; pieces joined once at the end keep it linear. No
        # handler reads a text it grows, and a record a snapshot replaces keeps its own pieces.
        entry = (target, key, [cast("str", target.get(key) or "")])
        self._growing.setdefault(id(target), entry)[2].append(cast("str", delta))

    def _settle(self) -> None:
        for target, key, pieces in self._growing.values():
            target[key] = "".join(pieces)
        self._growing.clear()

    def _merge(self, target: _Record | None, wire: _Record) -> None:
        meta = wire.get("metadata")
        if target is not None and isinstance(meta, dict):
            merged = dict(cast("dict[str, JsonValue]", target.get("metadata") or {}))
            merged.update(meta)
            target["metadata"] = merged

    def on_run_started(self, wire: _Record) -> None:
        given = wire.get("input")
        if isinstance(given, dict):
            for message in cast("list[_Record]", given.get("messages") or []):
                if self.thread.find(message["id"]) is None:
                    self.thread.append(message)

    def _open_text(self, wire: _Record, role: JsonValue) -> None:
        target = self.thread.find(wire["messageId"])
        if target is not None and target.get("role") == "activity":
            return  # the client drops a text event aimed at an activity message
        if target is None:
            target = {"id": wire["messageId"], "role": role, "content": ""}
            _copy_optional(wire, target, "name", "subagentRunId")
            self.thread.append(target)
        self._merge(target, wire)

    def on_text_message_start(self, wire: _Record) -> None:
        self._open_text(wire, wire.get("role") or "assistant")

    def on_reasoning_message_start(self, wire: _Record) -> None:
        self._open_text(wire, "reasoning")

    def append_text(self, wire: _Record) -> None:
        target = self.thread.find(wire["messageId"])
        if target is None:
            self._warn(f"no message has the id '{wire['messageId']}', so the delta is left out")
            return
        if target.get("role") == "activity":
            return
        held = target.get("content")
        if isinstance(held, list):
            self._warn(
                f"message '{wire['messageId']}' holds content parts, not text, so the delta "
                "is left out; send a new message's id for new text"
            )
            return
        self._grow(target, "content", wire["delta"])
        self._merge(target, wire)

    def end_text(self, wire: _Record) -> None:
        self._merge(self.thread.find(wire["messageId"]), wire)

    def _call(self, call_id: JsonValue) -> _Record | None:
        held = self.thread.call(call_id)
        return None if held is None else held[0]

    def on_tool_call_start(self, wire: _Record) -> None:
        existing = self._call(wire["toolCallId"])
        if existing is not None:
            cast("_Record", existing["function"])["name"] = wire["toolCallName"]
            self._merge(existing, wire)
            return
        owner = self._owner(wire)
        function: _Record = {"name": wire["toolCallName"], "arguments": ""}
        call: _Record = {"id": wire["toolCallId"], "type": "function", "function": function}
        self._merge(call, wire)
        self.thread.add_call(owner, call)

    def _owner(self, wire: _Record) -> Node:
        parent = wire.get("parentMessageId")
        found = self.thread.node(parent) if parent is not None else None
        if found is not None and found.record.get("role") == "assistant":
            return found
        owner: _Record = {
            "id": parent if parent is not None and found is None else wire["toolCallId"],
            "role": "assistant",
        }
        _copy_optional(wire, owner, "subagentRunId")  # a new message: the call's subagent owns it
        return self.thread.append(owner)

    def on_tool_call_args(self, wire: _Record) -> None:
        call = self._call(wire["toolCallId"])
        if call is None:
            self._warn(f"no tool call has the id '{wire['toolCallId']}', so the delta is left out")
        else:
            self._grow(cast("_Record", call["function"]), "arguments", wire["delta"])
            self._merge(call, wire)

    def on_tool_call_end(self, wire: _Record) -> None:
        self._merge(self._call(wire["toolCallId"]), wire)

    def on_tool_call_result(self, wire: _Record) -> None:
        message: _Record = {"id": wire["messageId"], "role": "tool", "content": wire["content"]}
        message["toolCallId"] = wire["toolCallId"]
        _copy_optional(wire, message, "subagentRunId")
        self._merge(message, wire)
        held = self.thread.call(wire["toolCallId"])
        self.thread.insert_result(None if held is None else held[1], message)

    def on_subagent_started(self, wire: _Record) -> None:
        run, parent = cast("str", wire["subagentRunId"]), wire.get("parentSubagentRunId")
        name = cast("str", wire["name"])
        self.subagents[run] = FoldedSubagent(run, name, cast("str | None", parent))

    def on_subagent_finished(self, wire: _Record) -> None:
        held = self.subagents.get(cast("str", wire["subagentRunId"]))
        if held is not None:
            outcome = cast("dict[str, JsonValue]", wire.get("outcome") or {})
            status = "suspended" if outcome.get("type") == "suspended" else "finished"
            ended = dataclasses.replace(held, status=status, result=wire.get("result"))
            self.subagents[held.id] = ended

    def on_subagent_error(self, wire: _Record) -> None:
        held = self.subagents.get(cast("str", wire["subagentRunId"]))
        if held is not None:
            ended = dataclasses.replace(held, status="failed", error=cast("str", wire["message"]))
            self.subagents[held.id] = ended

    def on_state_snapshot(self, wire: _Record) -> None:
        self.state = wire["snapshot"]

    def on_state_delta(self, wire: _Record) -> None:
        # As the client does: a patch that does not apply leaves the prior state, and warns.
        try:
            self.state = patch.apply(self.state, cast("list[dict[str, JsonValue]]", wire["delta"]))
        except PatchError as error:
            self._warn(f"the state patch does not apply, so the state is kept: {error}")

    def on_messages_snapshot(self, wire: _Record) -> None:
        incoming = cast("list[_Record]", wire["messages"])
        by_id = {cast("str", m["id"]): m for m in incoming}
        roles = {cast("str", m.get("role")) for m in incoming}
        kept: list[_Record] = []
        for held in self.thread.records():
            held_id = cast("str", held["id"])
            if held_id in by_id:
                kept.append(by_id.pop(held_id))
            elif held.get("role") in ("activity", "reasoning") and held.get("role") not in roles:
                kept.append(held)
        self.thread = Thread(kept + [m for m in incoming if cast("str", m["id"]) in by_id])

    def on_activity_snapshot(self, wire: _Record) -> None:
        target = self.thread.find(wire["messageId"])
        if target is not None and wire.get("replace") is False:
            return
        fresh: _Record = {"id": wire["messageId"], "role": "activity"}
        if target is None:
            self.thread.append(fresh)
        elif target.get("role") != "activity":  # as the client does: a new message in its place
            self.thread = Thread([fresh if m is target else m for m in self.thread.records()])
        else:
            fresh = target
        fresh.update({"activityType": wire["activityType"], "content": wire["content"]})
        self._merge(fresh, wire)

    def on_activity_delta(self, wire: _Record) -> None:
        target = self.thread.find(wire["messageId"])
        if target is None or target.get("role") != "activity":  # the client warns of the second
            if target is not None:
                self._warn(f"message '{wire['messageId']}' is not an activity; delta left out")
            return
        self._merge(target, wire)
        try:  # as the client does: a patch that fails warns and keeps the content
            content = patch.apply(target["content"], cast("list[_Record]", wire["patch"]))
        except PatchError as error:
            content, problem = None, str(error)
        else:  # the client's schema and `Message` hold an activity's content as an object
            kind = "" if isinstance(content, dict) else json_kind(content)
            problem = kind and f"it leaves {kind}, and an activity's content is an object"
        if problem:
            self._warn(
                f"the patch of activity message '{wire['messageId']}' does not apply, so its "
                f"content is kept: {problem}"
            )
        else:
            target["content"], target["activityType"] = content, wire["activityType"]

    def on_reasoning_encrypted_value(self, wire: _Record) -> None:
        if wire["subtype"] == "tool-call":
            target = self._call(wire["entityId"])
        else:
            target = self.thread.find(wire["entityId"])
            if target is not None and target.get("role") == "activity":
                target = None
        if target is not None:
            target["encryptedValue"] = wire["encryptedValue"]


_Step = Callable[[Reducer, Any], None]
"""How the fold applies an event of one type: a plain function of the reducer and the event."""


def _on_wire(apply: Callable[[Reducer, _Record], None]) -> _Step:
    return lambda reducer, event: apply(reducer, _wire(event))


def _wire(event: Event) -> _Record:
    return cast("_Record", event.model_dump(mode="json"))


def _step_of(kind: EventType) -> _Step | None:  # noqa: C901, PLR0911, PLR0912 - a case a type
    """How the fold applies an event of `kind`; `None` where the client holds nothing of it."""
    match kind:
        case EventType.RUN_STARTED:
            return Reducer.run_started
        case EventType.RUN_FINISHED:
            return Reducer.run_finished
        case EventType.RUN_ERROR:
            return Reducer.run_error
        case EventType.TEXT_MESSAGE_START:
            return _on_wire(Reducer.on_text_message_start)
        case EventType.REASONING_MESSAGE_START:
            return _on_wire(Reducer.on_reasoning_message_start)
        case EventType.TEXT_MESSAGE_CONTENT | EventType.REASONING_MESSAGE_CONTENT:
            return _on_wire(Reducer.append_text)
        case EventType.TEXT_MESSAGE_END | EventType.REASONING_MESSAGE_END:
            return _on_wire(Reducer.end_text)
        case EventType.TOOL_CALL_START:
            return _on_wire(Reducer.on_tool_call_start)
        case EventType.TOOL_CALL_ARGS:
            return _on_wire(Reducer.on_tool_call_args)
        case EventType.TOOL_CALL_END:
            return _on_wire(Reducer.on_tool_call_end)
        case EventType.TOOL_CALL_RESULT:
            return _on_wire(Reducer.on_tool_call_result)
        case EventType.SUBAGENT_STARTED:
            return _on_wire(Reducer.on_subagent_started)
        case EventType.SUBAGENT_FINISHED:
            return _on_wire(Reducer.on_subagent_finished)
        case EventType.SUBAGENT_ERROR:
            return _on_wire(Reducer.on_subagent_error)
        case EventType.STATE_SNAPSHOT:
            return _on_wire(Reducer.on_state_snapshot)
        case EventType.STATE_DELTA:
            return _on_wire(Reducer.on_state_delta)
        case EventType.MESSAGES_SNAPSHOT:
            return _on_wire(Reducer.on_messages_snapshot)
        case EventType.ACTIVITY_SNAPSHOT:
            return _on_wire(Reducer.on_activity_snapshot)
        case EventType.ACTIVITY_DELTA:
            return _on_wire(Reducer.on_activity_delta)
        case EventType.REASONING_ENCRYPTED_VALUE:
            return _on_wire(Reducer.on_reasoning_encrypted_value)
        case (
            EventType.RAW
            | EventType.CUSTOM
            | EventType.STEP_STARTED
            | EventType.STEP_FINISHED
            | EventType.REASONING_START
            | EventType.REASONING_END
        ):
            return None  # the client's messages and state hold nothing of these
        case (
            EventType.TEXT_MESSAGE_CHUNK
            | EventType.TOOL_CALL_CHUNK
            | EventType.REASONING_MESSAGE_CHUNK
        ):
            return None  # expanded before they are applied (`ChunkLanes`), never applied
        case _:
            assert_never(kind)


_STEPS = {kind.value: _step_of(kind) for kind in EventType}
"""Each event type's step, built once per process."""


def _copy_optional(source: _Record, target: _Record, *keys: str) -> None:
    target.update({key: source[key] for key in keys if source.get(key) is not None})
