"""Showing an AG-UI stream as a person reads it, for `agui watch` and `agui demo`.

Each event becomes a line in brackets (`[Run Started]`, `[Tool Call: get_weather] {...}`,
`[Tool Result: get_weather] ...`, `[Run Finished]`), except streamed text: a text message's
deltas are written as they arrive, flushed at once, and its line ends with the message, so an
answer appears word by word. Reasoning streams the same way after `[Reasoning]`. A tool call is
shown when it ends, with its whole argument text, so calls that stream their arguments
interleaved still come out one line each. Long values are cut to one line of a few hundred
characters; `--raw` is there for the exact bytes.

The state is followed through snapshots and deltas (starting from the state the request sent),
and each run's last state is shown when the run ends, as `[Final State] {...}`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import JsonValue
from typing_extensions import assert_never

from agui import events as ev
from agui import patch
from agui.errors import PatchError
from agui.events import Event, RunErrorEvent, RunFinishedEvent
from agui.types import InterruptOutcome, SuccessOutcome

if TYPE_CHECKING:
    from agui.cli._capture import Finding

_LIMIT = 300
_CALL_EVENTS = frozenset({"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK"})
_OneLine = (
    ev.RunStartedEvent
    | ev.MessagesSnapshotEvent
    | ev.StepStartedEvent
    | ev.StepFinishedEvent
    | ev.CustomEvent
    | ev.RawEvent
    | ev.ActivitySnapshotEvent
    | ev.ActivityDeltaEvent
    | ev.SubagentFinishedEvent
    | ev.SubagentErrorEvent
    | ev.ReasoningEncryptedValueEvent
)
"""The events shown whole, each on a line of its own."""


def compact(value: object) -> str:
    """JSON in one line, as the wire writes it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _short(text: str, limit: int = _LIMIT) -> str:
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Renderer:
    """Writes events to `out` as lines a person reads; streamed text is flushed as it comes."""

    def __init__(self, out: TextIO, *, state: JsonValue = None) -> None:
        self._out = out
        self._state: JsonValue = state
        self._state_seen = False
        self._line_key: str | None = None  # the streamed message whose line is open
        self._pending_prefix: dict[str, str] = {}
        self._calls: dict[str, tuple[str, list[str]]] = {}  # id -> (name, argument pieces)
        self._names: dict[str, str] = {}
        self._subagent_names: dict[str, str] = {}  # subagent run id -> its name
        self._shown: set[str] = set()  # open calls already shown, by an event inside them
        self._chunk_call: str | None = None
        self._chunk_text: str | None = None

    # -- lines -----------------------------------------------------------------------------

    def line(self, text: str) -> None:
        """Write one whole line, ending any streamed line first."""
        self.close()
        self._out.write(text + "\n")
        self._out.flush()

    def close(self) -> None:
        """End the streamed line that is open, if any."""
        if self._line_key is not None:
            self._out.write("\n")
            self._out.flush()
            self._line_key = None

    def _open(self, key: str, prefix: str) -> None:
        self.close()
        self._pending_prefix[key] = prefix  # written with the first delta: no empty lines

    def _write(self, key: str, text: str) -> None:
        if not text:
            return
        if self._line_key != key:
            self.close()
            self._out.write(self._pending_prefix.get(key, ""))
            self._line_key = key
        self._out.write(text)
        self._out.flush()

    def _end(self, key: str) -> None:
        if self._line_key == key:
            self.close()

    # -- findings --------------------------------------------------------------------------

    def finding(self, finding: Finding) -> None:
        """Show a violation or a note where it happened."""
        if finding.kind == "violation":
            self.line(f"[Violation: {finding.rule}] {finding.where}: {finding.message}")
        else:
            self.line(f"[Note] {finding.where}: {finding.message}")

    # -- events ----------------------------------------------------------------------------

    def event(self, event: Event) -> None:
        """Show one event."""
        if event.type != "TOOL_CALL_CHUNK":
            self._show_chunk_call()
        if event.type not in _CALL_EVENTS:
            self._show_open_calls()  # state published inside a call shows after the call
        if event.type not in {"TEXT_MESSAGE_CHUNK", "REASONING_MESSAGE_CHUNK"}:
            self._chunk_text = None
        self._show(event)

    def _show(self, event: Event) -> None:  # noqa: C901, PLR0912 - a case an event type
        match event:
            case ev.RunFinishedEvent():
                self._run_finished(event)
            case ev.RunErrorEvent():
                self._run_error(event)
            case ev.TextMessageStartEvent():
                self._text_start(event)
            case ev.TextMessageContentEvent() | ev.ReasoningMessageContentEvent():
                self._write(event.message_id, event.delta)
            case ev.TextMessageEndEvent() | ev.ReasoningMessageEndEvent():
                self._end(event.message_id)
            case ev.TextMessageChunkEvent():
                self._text_chunk(event)
            case ev.ReasoningStartEvent() | ev.ReasoningEndEvent():
                pass  # a reasoning span shows through the messages inside it
            case ev.ReasoningMessageStartEvent():
                self._open(event.message_id, "[Reasoning] ")
            case ev.ReasoningMessageChunkEvent():
                self._reasoning_chunk(event)
            case ev.ToolCallStartEvent():
                self._call_start(event)
            case ev.ToolCallArgsEvent():
                self._call_args(event)
            case ev.ToolCallEndEvent():
                self._call_end(event)
            case ev.ToolCallChunkEvent():
                self._call_chunk(event)
            case ev.ToolCallResultEvent():
                self._call_result(event)
            case ev.StateSnapshotEvent():
                self._snapshot(event)
            case ev.StateDeltaEvent():
                self._delta(event)
            case ev.SubagentStartedEvent():
                self._subagent_names[event.subagent_run_id] = event.name
                self.line(f"[Subagent Started: {event.name}]")
            case _:
                self.line(self._line_of(event))

    def _line_of(self, event: _OneLine) -> str:  # noqa: C901, PLR0911 - a case an event type
        """The line of an event shown whole, on one line of its own."""
        match event:
            case ev.RunStartedEvent():
                return "[Run Started]"
            case ev.MessagesSnapshotEvent():
                return f"[Messages Snapshot] {len(event.messages)} message(s)"
            case ev.StepStartedEvent():
                return f"[Step Started: {event.step_name}]"
            case ev.StepFinishedEvent():
                return f"[Step Finished: {event.step_name}]"
            case ev.CustomEvent():
                return f"[Custom: {event.name}] {_short(compact(event.value))}"
            case ev.RawEvent():
                return f"[Raw] {_short(compact(event.event))}"
            case ev.ActivitySnapshotEvent():
                return f"[Activity: {event.activity_type}] {_short(compact(event.content))}"
            case ev.ActivityDeltaEvent():
                patch_text = _short(compact(_dump(event.patch)))
                return f"[Activity Delta: {event.activity_type}] {patch_text}"
            case ev.SubagentFinishedEvent():
                return f"[Subagent Finished: {self._subagent(event.subagent_run_id)}]"
            case ev.SubagentErrorEvent():
                name = self._subagent(event.subagent_run_id)
                return f"[Subagent Error: {name}] {_short(event.message)}"
            case ev.ReasoningEncryptedValueEvent():
                return "[Reasoning Encrypted Value]"
            case _:
                assert_never(event)

    def _subagent(self, subagent_run_id: str) -> str:
        """A subagent by the name it started with (its id when its start was not seen)."""
        return self._subagent_names.get(subagent_run_id, subagent_run_id)

    # -- the run ---------------------------------------------------------------------------

    def _run_finished(self, event: RunFinishedEvent) -> None:
        outcome = event.outcome
        if isinstance(outcome, InterruptOutcome):
            self.line("[Run Finished: interrupt]")
            for interrupt in outcome.interrupts:
                about = f" (tool call {interrupt.tool_call_id})" if interrupt.tool_call_id else ""
                self.line(f"[Interrupt: {interrupt.id}] {interrupt.message or ''}{about}".strip())
        elif isinstance(outcome, SuccessOutcome) and outcome.pending_tool_call_ids:
            pending = ", ".join(outcome.pending_tool_call_ids)
            self.line(f"[Run Finished] waiting for the app to answer tool calls: {pending}")
        elif outcome is not None and outcome.type == "cancelled":
            self.line("[Run Finished: cancelled]")
        else:
            self.line("[Run Finished]")
        self._final_state()

    def _run_error(self, event: RunErrorEvent) -> None:
        code = f": {event.code}" if event.code else ""
        self.line(f"[Run Error{code}] {_short(event.message)}")
        self._final_state()

    def _final_state(self) -> None:
        if self._state_seen:
            self.line(f"[Final State] {compact(self._state)}")
            self._state_seen = False

    # -- text ------------------------------------------------------------------------------

    def _text_start(self, event: ev.TextMessageStartEvent) -> None:
        role = event.role or "assistant"
        self._open(event.message_id, "" if role == "assistant" else f"[{role.title()}] ")

    def _text_chunk(self, event: ev.TextMessageChunkEvent) -> None:
        key = event.message_id or self._chunk_text or "text-chunk"
        if key != self._chunk_text:
            role = event.role or "assistant"
            self._open(key, "" if role == "assistant" else f"[{role.title()}] ")
            self._chunk_text = key
        self._write(key, event.delta or "")

    def _reasoning_chunk(self, event: ev.ReasoningMessageChunkEvent) -> None:
        key = event.message_id or self._chunk_text or "reasoning-chunk"
        if key != self._chunk_text:
            self._open(key, "[Reasoning] ")
            self._chunk_text = key
        self._write(key, event.delta or "")

    # -- tool calls ------------------------------------------------------------------------

    def _call_start(self, event: ev.ToolCallStartEvent) -> None:
        self._calls[event.tool_call_id] = (event.tool_call_name, [])
        self._names[event.tool_call_id] = event.tool_call_name

    def _call_args(self, event: ev.ToolCallArgsEvent) -> None:
        if event.tool_call_id in self._calls:
            self._calls[event.tool_call_id][1].append(event.delta)

    def _call_end(self, event: ev.ToolCallEndEvent) -> None:
        name, pieces = self._calls.pop(event.tool_call_id, ("?", []))
        if event.tool_call_id not in self._shown or pieces:
            more = " (more arguments)" if event.tool_call_id in self._shown else ""
            self.line(f"[Tool Call: {name}]{more} {_short(''.join(pieces))}".rstrip())
        self._shown.discard(event.tool_call_id)

    def _show_open_calls(self) -> None:
        """Show the calls still open, with their arguments so far, before another line."""
        for call_id, (name, pieces) in self._calls.items():
            if call_id != self._chunk_call and (call_id not in self._shown or pieces):
                more = " (more arguments)" if call_id in self._shown else ""
                self.line(f"[Tool Call: {name}]{more} {_short(''.join(pieces))}".rstrip())
                self._shown.add(call_id)
                pieces.clear()

    def _call_chunk(self, event: ev.ToolCallChunkEvent) -> None:
        call_id = event.tool_call_id or self._chunk_call
        if call_id is None:
            return
        if call_id != self._chunk_call:
            self._show_chunk_call()
            self._chunk_call = call_id
            self._calls[call_id] = (event.tool_call_name or "?", [])
            self._names[call_id] = event.tool_call_name or "?"
        self._calls[call_id][1].append(event.delta or "")

    def _show_chunk_call(self) -> None:
        if self._chunk_call is not None:
            name, pieces = self._calls.pop(self._chunk_call, ("?", []))
            self.line(f"[Tool Call: {name}] {_short(''.join(pieces))}".rstrip())
            self._chunk_call = None

    def _call_result(self, event: ev.ToolCallResultEvent) -> None:
        name = self._names.get(event.tool_call_id, event.tool_call_id)
        content = event.content
        text = content if isinstance(content, str) else compact(_dump(content))
        self.line(f"[Tool Result: {name}] {_short(text)}".rstrip())

    # -- state -----------------------------------------------------------------------------

    def _snapshot(self, event: ev.StateSnapshotEvent) -> None:
        self._state, self._state_seen = event.snapshot, True
        self.line(f"[State Snapshot] {_short(compact(event.snapshot))}")

    def _delta(self, event: ev.StateDeltaEvent) -> None:
        ops = _dump(event.delta)
        self.line(f"[State Delta] {_short(compact(ops))}")
        self._state_seen = True
        try:
            self._state = patch.apply(self._state if self._state is not None else {}, ops)
        except PatchError as error:
            self.line(f"[Note] the state delta does not apply to the state shown: {error}")


def _dump(values: list[Any]) -> list[dict[str, JsonValue]]:
    # The wire form: camelCase, absent optionals left out, nulls inside data kept.
    return [value.model_dump(mode="json") for value in values]
