"""The fold: what a UI holds after a stream, its messages and its state.

A client applies each event of a stream to what it held before: text and reasoning deltas grow
messages, tool calls attach to their assistant message, results insert tool messages after the
call they answer, snapshots replace and deltas patch the state. `fold` does exactly that, with
the official client's rules (its `defaultApplyEvents`), so a test, `agui.client` and the CLI can
talk about the conversation a user sees rather than about event lists.

It is a pure function of its input: no I/O, no verifier (a stream the verifier refuses still
folds the way the client would fold it). It works on the wire form of each event (camelCase
JSON), because that is what the client reduces; the result is validated back into `Message`
models once, at the end. Where the client tolerates a bad event (a JSON Patch that does not
apply, a text event aimed at an activity message), so does the fold.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NoReturn, cast, get_args

from pydantic import BaseModel, JsonValue, TypeAdapter

from agui import patch
from agui._protocol.chunk_lanes import ChunkLanes
from agui._protocol.json_value import json_problem
from agui._protocol.message_thread import Node, Thread
from agui.errors import PatchError, UsageError
from agui.events import BaseEvent, Event, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.messages import Message
from agui.types import RunFinishedOutcome
from agui.wire import json_kind

__all__ = ["FoldedRun", "FoldedSubagent", "event_models", "fold"]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_MESSAGE_TYPES = cast("tuple[type[BaseModel], ...]", get_args(get_args(Message)[0]))
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


@dataclasses.dataclass(frozen=True)
class FoldedRun:
    """What a UI holds after a stream: messages, state, and how the last run ended.

    `outcome` and `error` are the last run's: a `RUN_STARTED` clears what an earlier run
    ended with. A subagent's messages carry its `subagent_run_id`, as a 1.0 client keeps them;
    `subagents` lists the invocations the stream announced, in the order they started.
    `warnings` says what the fold could not apply, where the client warns or fails the run
    (a patch that does not apply, a delta for a message or call it does not hold, a chunk
    with no stream to continue), one line each.

    Examples:
        >>> FoldedRun(messages=[], state={}, outcome=None, error=None).state
        {}
    """

    messages: list[Message]
    state: JsonValue
    outcome: RunFinishedOutcome | None
    error: RunErrorEvent | None
    subagents: tuple[FoldedSubagent, ...] = ()
    warnings: tuple[str, ...] = ()


def fold(
    events: Iterable[Event],
    *,
    messages: Sequence[Message] = (),
    state: JsonValue = None,
) -> FoldedRun:
    """Apply a stream as the official client does; `messages`/`state` are what it held before.

    Examples:
        >>> from agui.events import (
        ...     RunFinishedEvent, RunStartedEvent, StateSnapshotEvent, TextMessageChunkEvent,
        ... )
        >>> from agui.types import SuccessOutcome
        >>> folded = fold([
        ...     RunStartedEvent(thread_id="t", run_id="r"),
        ...     TextMessageChunkEvent(message_id="m1", delta="Hello!"),
        ...     StateSnapshotEvent(snapshot={"done": True}),
        ...     RunFinishedEvent(thread_id="t", run_id="r", outcome=SuccessOutcome()),
        ... ])
        >>> [(m.role, m.content) for m in folded.messages], folded.state, folded.outcome.type
        ([('assistant', 'Hello!')], {'done': True}, 'success')
    """
    reducer = _Reducer(_held(messages), _json_state(state))
    for index, event in enumerate(event_models(events, "fold()")):
        reducer.apply(index, event)
    return FoldedRun(
        messages=_MESSAGES.validate_python(reducer.messages),
        state=reducer.state,
        outcome=reducer.outcome,
        error=reducer.error,
        subagents=tuple(reducer.subagents.values()),
        warnings=tuple(reducer.warnings),
    )


def event_models(events: Iterable[Event], taker: str) -> Iterator[Event]:
    """The events, each checked to be an agui event model (a dict is the likeliest slip).

    `taker` names the function for the message; `agui.testing.assert_valid` checks the same.

    Examples:
        >>> from agui.events import RunStartedEvent
        >>> list(event_models([RunStartedEvent(thread_id="t", run_id="r")], "fold()"))[0].type
        'RUN_STARTED'
        >>> list(event_models([{"type": "RUN_STARTED"}], "fold()"))
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: fold() takes agui event models, but event 0 is a dict: ...
    """
    given, shown = cast("object", events), type(events).__name__
    if isinstance(given, BaseModel | Mapping | str | bytes | bytearray):  # one event, or its JSON
        fix = "[event]" if isinstance(given, BaseModel) else "[agui.parse_event(...), ...]"
        message = f"{taker} takes a list of events, got one {shown}: pass {fix}"
        raise UsageError(message)
    if not isinstance(given, Iterable):
        got = "None" if given is None else f"a {shown}"
        message = f"{taker} takes a list of events, got {got}"
        raise UsageError(message)
    for index, event in enumerate(events):
        if not isinstance(cast("object", event), BaseEvent):
            message = (
                f"{taker} takes agui event models, but event {index} is a "
                f"{type(event).__name__}: read a wire dict with agui.parse_event(...)"
            )
            raise UsageError(message)
        yield event


def _held(messages: Sequence[Message]) -> list[_Record]:
    records: list[_Record] = []
    for index, message in enumerate(messages):
        if not isinstance(cast("object", message), _MESSAGE_TYPES):
            shown = type(message).__name__
            problem = (
                f"fold(messages=...) takes agui message models, but message {index} is a "
                f"{shown}: build it from agui.messages (UserMessage(...), ...), or read a run "
                "input's with agui.parse_input(...).messages"
            )
            raise UsageError(problem)
        records.append(cast("_Record", message.model_dump(mode="json")))
    return records


def _json_state(state: JsonValue) -> JsonValue:
    """The state, checked to be JSON all the way down: patches only apply to JSON."""
    problem = json_problem(state)
    if problem is not None:
        _refuse_state(problem)
    return state


def _refuse_state(problem: str) -> NoReturn:
    message = (
        f"fold(state=...) takes a JSON value, what a client holds, but {problem}; pass the "
        "state as JSON reads it: dicts with text keys, lists, str, int, float, bool and None"
    )
    raise UsageError(message)


class _Reducer:
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
        self._at = f"event {index} ({event.type})"
        expanded, dropped = self._lanes.expand(event)
        if dropped is not None:
            self._warn(f"{dropped}; the client refuses it, and the fold leaves it out")
        for each in expanded:
            handler = getattr(self, _handler_name(each.type), None)
            if handler is not None:  # an event the fold ignores is not even dumped
                handler(cast("_Record", each.model_dump(mode="json")))
            if isinstance(each, RunStartedEvent):
                self.outcome, self.error = None, None
            elif isinstance(each, RunFinishedEvent):
                self.outcome = each.outcome
            elif isinstance(each, RunErrorEvent):
                self.error = each

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

    def _on_run_started(self, wire: _Record) -> None:
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

    def _on_text_message_start(self, wire: _Record) -> None:
        self._open_text(wire, wire.get("role") or "assistant")

    def _on_reasoning_message_start(self, wire: _Record) -> None:
        self._open_text(wire, "reasoning")

    def _append_text(self, wire: _Record) -> None:
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

    _on_text_message_content = _append_text
    _on_reasoning_message_content = _append_text

    def _end_text(self, wire: _Record) -> None:
        self._merge(self.thread.find(wire["messageId"]), wire)

    _on_text_message_end = _end_text
    _on_reasoning_message_end = _end_text

    def _call(self, call_id: JsonValue) -> _Record | None:
        held = self.thread.call(call_id)
        return None if held is None else held[0]

    def _on_tool_call_start(self, wire: _Record) -> None:
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

    def _on_tool_call_args(self, wire: _Record) -> None:
        call = self._call(wire["toolCallId"])
        if call is None:
            self._warn(f"no tool call has the id '{wire['toolCallId']}', so the delta is left out")
        else:
            self._grow(cast("_Record", call["function"]), "arguments", wire["delta"])
            self._merge(call, wire)

    def _on_tool_call_end(self, wire: _Record) -> None:
        self._merge(self._call(wire["toolCallId"]), wire)

    def _on_tool_call_result(self, wire: _Record) -> None:
        message: _Record = {"id": wire["messageId"], "role": "tool", "content": wire["content"]}
        message["toolCallId"] = wire["toolCallId"]
        _copy_optional(wire, message, "subagentRunId")
        self._merge(message, wire)
        held = self.thread.call(wire["toolCallId"])
        self.thread.insert_result(None if held is None else held[1], message)

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
        # As the client does: a patch that does not apply leaves the prior state, and warns.
        try:
            self.state = patch.apply(self.state, cast("list[dict[str, JsonValue]]", wire["delta"]))
        except PatchError as error:
            self._warn(f"the state patch does not apply, so the state is kept: {error}")

    def _on_messages_snapshot(self, wire: _Record) -> None:
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

    def _on_activity_snapshot(self, wire: _Record) -> None:
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

    def _on_activity_delta(self, wire: _Record) -> None:
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

    def _on_reasoning_encrypted_value(self, wire: _Record) -> None:
        if wire["subtype"] == "tool-call":
            target = self._call(wire["entityId"])
        else:
            target = self.thread.find(wire["entityId"])
            if target is not None and target.get("role") == "activity":
                target = None
        if target is not None:
            target["encryptedValue"] = wire["encryptedValue"]


@functools.cache
def _handler_name(event_type: str) -> str:
    return "_on_" + event_type.lower()


def _copy_optional(source: _Record, target: _Record, *keys: str) -> None:
    target.update({key: source[key] for key in keys if source.get(key) is not None})
