"""The fold as it was first written, scanning the messages for each event: the reference.

`agui.fold` indexes messages and tool calls by id so a run folds in linear time; this copy of
the scanning algorithm (the official client's, line for line) is what the property tests in
test_fold.py hold it to. Chunk events reach it expanded by the fold's own `ChunkLanes`, as the
client expands them before it applies anything; the expansion is tested on its own, against the
conformance streams.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Sequence
from typing import cast

from pydantic import JsonValue

from agui import patch
from agui._protocol.chunk_lanes import ChunkLanes
from agui.errors import PatchError
from agui.events import Event, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.fold import FoldedSubagent
from agui.messages import Message
from agui.types import RunFinishedOutcome

_Record = dict[str, JsonValue]


def reference_fold(
    events: Iterable[Event], *, messages: Sequence[Message] = ()
) -> tuple[list[_Record], JsonValue, tuple[FoldedSubagent, ...]]:
    """The wire messages, state and subagents the scanning algorithm folds `events` into."""
    reducer = _Reducer([cast("_Record", m.model_dump(mode="json")) for m in messages], None)
    for event in events:
        reducer.apply(event)
    return reducer.messages, reducer.state, tuple(reducer.subagents.values())


class _Reducer:
    def __init__(self, messages: list[_Record], state: JsonValue) -> None:
        self.messages = messages
        self.state: JsonValue = {} if state is None else state
        self.outcome: RunFinishedOutcome | None = None
        self.error: RunErrorEvent | None = None
        self.subagents: dict[str, FoldedSubagent] = {}
        self.lanes = ChunkLanes()  # chunks expand as the client expands them, before the scan

    def apply(self, event: Event) -> None:
        for each in self.lanes.expand(event)[0]:
            wire = cast("_Record", each.model_dump(mode="json"))
            handler = getattr(self, "_on_" + each.type.lower(), None)
            if handler is not None:
                handler(wire)
            if isinstance(each, RunStartedEvent):
                self.outcome, self.error = None, None
            elif isinstance(each, RunFinishedEvent):
                self.outcome = each.outcome
            elif isinstance(each, RunErrorEvent):
                self.error = each

    def _find(self, message_id: JsonValue) -> _Record | None:
        return next((m for m in self.messages if m["id"] == message_id), None)

    def _merge(self, target: _Record | None, wire: _Record) -> None:
        meta = wire.get("metadata")
        if target is not None and isinstance(meta, dict):
            merged = dict(cast("dict[str, JsonValue]", target.get("metadata") or {}))
            merged.update(meta)
            target["metadata"] = merged

    def _on_run_started(self, wire: _Record) -> None:
        given = wire.get("input")
        if isinstance(given, dict):
            for message in cast("list[_Record]", given.get("messages") or []):
                if self._find(message["id"]) is None:
                    self.messages.append(message)

    def _open_text(self, wire: _Record, role: JsonValue) -> None:
        target = self._find(wire["messageId"])
        if target is not None and target.get("role") == "activity":
            return  # the client drops a text event aimed at an activity message
        if target is None:
            target = {"id": wire["messageId"], "role": role, "content": ""}
            _copy_optional(wire, target, "name", "subagentRunId")
            self.messages.append(target)
        self._merge(target, wire)

    def _on_text_message_start(self, wire: _Record) -> None:
        self._open_text(wire, wire.get("role") or "assistant")

    def _on_reasoning_message_start(self, wire: _Record) -> None:
        self._open_text(wire, "reasoning")

    def _append_text(self, wire: _Record) -> None:
        target = self._find(wire["messageId"])
        if target is not None and target.get("role") != "activity":
            target["content"] = cast("str", target.get("content") or "") + cast(
                "str", wire["delta"]
            )
            self._merge(target, wire)

    _on_text_message_content = _append_text
    _on_reasoning_message_content = _append_text

    def _end_text(self, wire: _Record) -> None:
        self._merge(self._find(wire["messageId"]), wire)

    _on_text_message_end = _end_text
    _on_reasoning_message_end = _end_text

    def _call(self, call_id: JsonValue) -> _Record | None:
        for message in self.messages:
            for call in cast("list[_Record]", message.get("toolCalls") or []):
                if call["id"] == call_id:
                    return call
        return None

    def _on_tool_call_start(self, wire: _Record) -> None:
        existing = self._call(wire["toolCallId"])
        if existing is not None:
            cast("_Record", existing["function"])["name"] = wire["toolCallName"]
            self._merge(existing, wire)
            return
        held = len(self.messages)
        owner = self._owner(wire.get("parentMessageId"), wire["toolCallId"])
        if len(self.messages) > held:  # a new assistant message: the call's subagent owns it
            _copy_optional(wire, owner, "subagentRunId")
        function: _Record = {"name": wire["toolCallName"], "arguments": ""}
        call: _Record = {"id": wire["toolCallId"], "type": "function", "function": function}
        self._merge(call, wire)
        calls = cast("list[JsonValue]", owner.setdefault("toolCalls", []))
        calls.append(call)

    def _owner(self, parent: JsonValue, call_id: JsonValue) -> _Record:
        found = self._find(parent) if parent is not None else None
        if found is not None and found.get("role") == "assistant":
            return found
        owner: _Record = {
            "id": parent if parent is not None and found is None else call_id,
            "role": "assistant",
        }
        self.messages.append(owner)
        return owner

    def _on_tool_call_args(self, wire: _Record) -> None:
        call = self._call(wire["toolCallId"])
        if call is not None:
            function = cast("_Record", call["function"])
            function["arguments"] = cast("str", function["arguments"]) + cast("str", wire["delta"])
            self._merge(call, wire)

    def _on_tool_call_end(self, wire: _Record) -> None:
        self._merge(self._call(wire["toolCallId"]), wire)

    def _on_tool_call_result(self, wire: _Record) -> None:
        message: _Record = {
            "id": wire["messageId"],
            "role": "tool",
            "toolCallId": wire["toolCallId"],
            "content": wire["content"],
        }
        _copy_optional(wire, message, "subagentRunId")
        self._merge(message, wire)
        position = len(self.messages)
        for index, held in enumerate(self.messages):
            if any(
                c["id"] == wire["toolCallId"]
                for c in cast("list[_Record]", held.get("toolCalls") or [])
            ):
                position = index + 1
                while (
                    position < len(self.messages) and self.messages[position].get("role") == "tool"
                ):
                    position += 1
                break
        self.messages.insert(position, message)

    def _on_subagent_started(self, wire: _Record) -> None:
        run, parent = cast("str", wire["subagentRunId"]), wire.get("parentSubagentRunId")
        name = cast("str", wire["name"])
        self.subagents[run] = FoldedSubagent(run, name, cast("str | None", parent))

    def _on_subagent_finished(self, wire: _Record) -> None:
        held = self.subagents.get(cast("str", wire["subagentRunId"]))
        if held is not None:
            outcome = cast("dict[str, JsonValue]", wire.get("outcome") or {})
            status = "suspended" if outcome.get("type") == "suspended" else "finished"
            ended = dataclasses.replace(held, status=status, result=wire.get("result"))
            self.subagents[held.id] = ended

    def _on_subagent_error(self, wire: _Record) -> None:
        held = self.subagents.get(cast("str", wire["subagentRunId"]))
        if held is not None:
            ended = dataclasses.replace(held, status="failed", error=cast("str", wire["message"]))
            self.subagents[held.id] = ended

    def _on_state_snapshot(self, wire: _Record) -> None:
        self.state = wire["snapshot"]

    def _on_state_delta(self, wire: _Record) -> None:
        # As the client does: a patch that does not apply leaves the prior state.
        with contextlib.suppress(PatchError):
            self.state = patch.apply(self.state, cast("list[dict[str, JsonValue]]", wire["delta"]))

    def _on_messages_snapshot(self, wire: _Record) -> None:
        incoming = cast("list[_Record]", wire["messages"])
        by_id = {cast("str", m["id"]): m for m in incoming}
        roles = {cast("str", m.get("role")) for m in incoming}
        kept: list[_Record] = []
        for held in self.messages:
            held_id = cast("str", held["id"])
            if held_id in by_id:
                kept.append(by_id.pop(held_id))
            elif held.get("role") in ("activity", "reasoning") and held.get("role") not in roles:
                kept.append(held)
        self.messages = kept + [m for m in incoming if cast("str", m["id"]) in by_id]

    def _on_activity_snapshot(self, wire: _Record) -> None:
        target = self._find(wire["messageId"])
        if target is not None and wire.get("replace") is False:
            return
        if target is None or target.get("role") != "activity":
            fresh: _Record = {"id": wire["messageId"], "role": "activity"}
            if target is None:
                self.messages.append(fresh)
            else:  # the client puts a new activity message in the place of the old one
                self.messages = [fresh if m is target else m for m in self.messages]
            target = fresh
        target.update({"activityType": wire["activityType"], "content": wire["content"]})
        self._merge(target, wire)

    def _on_activity_delta(self, wire: _Record) -> None:
        target = self._find(wire["messageId"])
        if target is None or target.get("role") != "activity":
            return
        self._merge(target, wire)
        try:
            target["content"] = patch.apply(
                target["content"], cast("list[dict[str, JsonValue]]", wire["patch"])
            )
            target["activityType"] = wire["activityType"]
        except PatchError:
            pass  # as the client does: warn and keep the content

    def _on_reasoning_encrypted_value(self, wire: _Record) -> None:
        if wire["subtype"] == "tool-call":
            target = self._call(wire["entityId"])
        else:
            target = self._find(wire["entityId"])
            if target is not None and target.get("role") == "activity":
                target = None
        if target is not None:
            target["encryptedValue"] = wire["encryptedValue"]


def _copy_optional(source: _Record, target: _Record, *keys: str) -> None:
    for key in keys:
        if source.get(key) is not None:
            target[key] = source[key]
