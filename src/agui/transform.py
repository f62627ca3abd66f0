"""Stream transformers: the one extension point on the way out, events in and events out.

A transformer sees each event the run emits (the driver's RUN_STARTED and terminal events
included) and returns the events to send instead: none to drop it, several to splice. They run
in order, before the verifier, so the verifier checks what actually leaves, and a STATE event a
transformer produces moves the state baseline like any other. A transformer that drops an
opening event must drop its continuation and closing events too; the built-ins do.

What a transformer returns is checked where it returns it, and a refusal names it: a list or
tuple (any other iterable of events is taken too, a generator say) of agui events. The run's end
is not a transformer's to drop, since a stream without one never ends for its client: one that
drops `RUN_FINISHED` is refused (so the run ends with `RUN_ERROR`), and a `RUN_ERROR` that a
transformer drops or fails on goes out as it came, the failure logged on the `agui` log. An
event the chain made that the verifier (or the text check) refuses is refused saying so, naming
the chain and what the agent emitted (`chain_refusal`): the agent's author would look for it in
the agent.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, cast

import pydantic_core
from pydantic import BaseModel, JsonValue, ValidationError

from agui._protocol.text import check_event
from agui.errors import InvalidArguments, ProtocolViolation, UsageError
from agui.events import (
    Event,
    ReasoningEncryptedValueEvent,
    RunErrorEvent,
    RunFinishedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.patch import escape_pointer_token
from agui.patch._schema import missing_member
from agui.state import state_adapter

__all__ = [
    "FilterToolCalls",
    "ToolArgsToState",
    "ToolResultToState",
    "Transformer",
    "apply_transformers",
    "chain_refusal",
    "checked_transformers",
]

_log = logging.getLogger("agui")


class Transformer(Protocol):
    """Anything with `transform(event) -> events`; it may keep state between events.

    Examples:
        >>> from agui.events import CustomEvent
        >>> class DropCustom:
        ...     def transform(self, event):
        ...         return [] if event.type == "CUSTOM" else [event]
        >>> DropCustom().transform(CustomEvent(name="x", value=1))
        []
    """

    def transform(self, event: Event) -> Sequence[Event]:
        """The events to send in place of `event` (empty to drop it)."""
        ...


def checked_transformers(transformers: object) -> tuple[Transformer, ...]:
    """The transformers a run was given, as a tuple; refused unless each has a `transform`.

    Checked when the run is built, so that a slip is told before the first event, not as an
    `AttributeError` at it.

    Examples:
        >>> checked_transformers([FilterToolCalls({"lookup"})])
        (<agui.transform.FilterToolCalls object at ...>,)
        >>> checked_transformers(FilterToolCalls({"lookup"}))
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: transformers= takes a list of transformers, got one ...
    """
    if hasattr(transformers, "transform") and not isinstance(transformers, type):
        message = (
            f"transformers= takes a list of transformers, got one {_name(transformers)}: "
            "pass [transformer]"
        )
        raise UsageError(message)
    kind = _name(transformers)
    if not isinstance(transformers, Iterable) or isinstance(transformers, (str, bytes, Mapping)):
        message = f"transformers= takes a list of transformers, got {kind}"
        raise UsageError(message)
    given = tuple(cast("Iterable[object]", transformers))
    for index, item in enumerate(given):
        if isinstance(item, type):
            message = (
                f"transformer {index} is the class {item.__qualname__}, not an instance of it; "
                f"pass {item.__qualname__}(...)"
            )
            raise UsageError(message)
        if not callable(getattr(item, "transform", None)):
            message = (
                f"transformer {index} ({_name(item)}) has no transform(event) method; a "
                "transformer returns the events to send in place of each event it is given"
            )
            raise UsageError(message)
    return cast("tuple[Transformer, ...]", given)


def apply_transformers(transformers: Iterable[Transformer], event: Event) -> list[Event]:
    """Run `event` through each transformer in order; each sees the previous one's output.

    Examples:
        >>> from agui.events import CustomEvent
        >>> class Double:
        ...     def transform(self, event):
        ...         return [event, event]
        >>> len(apply_transformers([Double(), Double()], CustomEvent(name="x", value=1)))
        4
    """
    match event:
        case RunErrorEvent():
            return _run_error(transformers, event)
        case RunFinishedEvent():
            finishing = True
        case _:
            finishing = False  # only the run's end is held to a rule here
    events: Sequence[Event] = (event,)
    for transformer in transformers:
        events = _step(transformer, events)
        if finishing and not any(out.type in _ENDS for out in events):
            message = (
                f"transformer {_name(transformer)} dropped RUN_FINISHED; a run's stream ends "
                "with one RUN_FINISHED or RUN_ERROR, which a transformer may rewrite but not "
                "drop; return it (or a RUN_ERROR in its place)"
            )
            raise UsageError(message)
        if not events:
            break
    return list(events)


_ENDS = frozenset(("RUN_FINISHED", "RUN_ERROR"))


def _step(transformer: Transformer, events: Sequence[Event]) -> Sequence[Event]:
    if len(events) == 1:  # the common case: one event in, the transformer's own list out
        return _outputs(transformer, events[0])
    return [out for item in events for out in _outputs(transformer, item)]


def chain_refusal(
    error: UsageError | ProtocolViolation, transformers: Iterable[Transformer], emitted: Event
) -> UsageError | ProtocolViolation:
    """`error`, refusing an event the chain returned for `emitted`, saying where it came from.

    The agent emitted something else, so a refusal that named only the event would send its
    author looking in the wrong place.

    Examples:
        >>> from agui.events import CustomEvent
        >>> from agui.verify import Rule
        >>> class Upper:
        ...     def transform(self, event):
        ...         return [event]
        >>> refused = ProtocolViolation("no run has started", rule=Rule.FIRST_EVENT_NOT_RUN_STARTED)
        >>> print(chain_refusal(refused, [Upper()], CustomEvent(name="x", value=1)))
        no run has started (this event is one the run's transformers (Upper) returned for
        CUSTOM; check what they return)
    """
    names = ", ".join(_name(transformer) for transformer in transformers)
    message = (
        f"{error} (this event is one the run's transformers ({names}) returned for "
        f"{emitted.type}; check what they return)"
    )
    if isinstance(error, ProtocolViolation):
        return ProtocolViolation(message, rule=error.rule, event=error.event)
    return UsageError(message)


def _run_error(transformers: Iterable[Transformer], event: RunErrorEvent) -> list[Event]:
    """The chain's output for the run's last resort end, or that end as it came if it fails."""
    events: Sequence[Event] = (event,)
    for transformer in transformers:
        try:
            events = _step(transformer, events)
        except Exception:  # noqa: BLE001 - a failing transformer must not cost the stream its end
            _log.exception(
                "transformer %s failed on RUN_ERROR, sent as it came", _name(transformer)
            )
            return [event]
        if not any(out.type in _ENDS for out in events):
            _log.error("transformer %s dropped RUN_ERROR, sent as it came", _name(transformer))
            return [event]
    return list(events)


def _outputs(transformer: Transformer, event: Event) -> Sequence[Event]:
    """What `transformer` returns for `event`, refused unless it is agui events."""
    out = cast("object", transformer.transform(event))
    if type(out) is not list and type(out) is not tuple:
        what = "None" if out is None else f"a {type(out).__name__}"
        if out is None or isinstance(out, (str, bytes, Mapping, BaseModel)):
            message = (
                f"transformer {_name(transformer)} returned {what} for {event.type}; a "
                "transformer returns a list of the events to send in its place (an empty one "
                "drops it); return [event] to pass it on"
            )
            raise UsageError(message)
        out = list(cast("Iterable[object]", out))  # a generator, say: taken whole
    events = cast("list[object] | tuple[object, ...]", out)
    for item in events:
        try:
            check_event(item)
        except UsageError as error:
            message = f"transformer {_name(transformer)}, given {event.type}: {error}"
            raise UsageError(message) from None
    return cast("Sequence[Event]", events)


def _name(transformer: object) -> str:
    return type(transformer).__qualname__


class FilterToolCalls:
    """Drop whole tool calls by name: START, ARGS, END, RESULT, chunks and encrypted values.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(
        ...     RunAgentInput(thread_id="t", run_id="r"), transformers=[FilterToolCalls({"secret"})]
        ... )
        >>> with ctx.tool_call("secret") as call:
        ...     call.args("{}")
        >>> ctx.say("done")
        'r-msg-2'
        >>> [event.type for event in events.drain()]
        ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']
    """

    def __init__(self, names: Iterable[str]) -> None:
        self._names = frozenset(names)
        self._dropped: set[str] = set()

    def transform(self, event: Event) -> Sequence[Event]:  # noqa: D102 - see Transformer
        match event:
            case ToolCallStartEvent():
                return self._verdict(event.tool_call_id, event.tool_call_name, event)
            case ToolCallChunkEvent(tool_call_id=str() as call, tool_call_name=str() as name):
                return self._verdict(call, name, event)
            case (
                ToolCallArgsEvent()
                | ToolCallEndEvent()
                | ToolCallResultEvent()
                | ToolCallChunkEvent()
            ):
                return () if event.tool_call_id in self._dropped else (event,)
            case ReasoningEncryptedValueEvent(subtype="tool-call"):
                return () if event.entity_id in self._dropped else (event,)
            case _:
                return (event,)

    def _verdict(self, call_id: str, name: str, event: Event) -> Sequence[Event]:
        if name in self._names:
            self._dropped.add(call_id)
            return ()
        self._dropped.discard(call_id)
        return (event,)


class ToolResultToState:
    """Turn a tool's JSON result into state: a snapshot, or a delta when it is a JSON Patch.

    The result still goes out first, unless `replacing=True`. A result that is not JSON (or not
    a valid patch, in delta mode) passes through untouched: a malformed result never kills a run.

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> ctx, events = RunContext.new(
        ...     RunAgentInput(thread_id="t", run_id="r"), transformers=[ToolResultToState("board")]
        ... )
        >>> with ctx.tool_call("board") as call:
        ...     call.result_json({"tasks": ["ship it"]})
        'r-msg-1'
        >>> [event.type for event in events.drain()][-2:]
        ['TOOL_CALL_RESULT', 'STATE_SNAPSHOT']
    """

    def __init__(self, tool: str, *, delta: bool = False, replacing: bool = False) -> None:
        self._tool = tool
        self._delta = delta
        self._replacing = replacing
        self._calls: set[str] = set()

    def transform(self, event: Event) -> Sequence[Event]:  # noqa: D102 - see Transformer
        match event:
            case ToolCallStartEvent(tool_call_name=name) if name == self._tool:
                self._calls.add(event.tool_call_id)
            case ToolCallChunkEvent(tool_call_id=str() as call, tool_call_name=name) if (
                name == self._tool
            ):
                self._calls.add(call)
            case ToolCallResultEvent(content=str() as content) if event.tool_call_id in self._calls:
                self._calls.discard(event.tool_call_id)
                return self._answered(event, content)
            case _:
                pass
        return (event,)

    def _answered(self, event: ToolCallResultEvent, content: str) -> Sequence[Event]:
        # Kept out of the `match`: Python 3.11's early releases trace an `if` nested in a
        # `case` with a different arc, so branch coverage would differ between patch releases.
        state = self._state_event(content)
        if state is None:
            return (event,)
        return (state,) if self._replacing else (event, state)

    def _state_event(self, content: str) -> Event | None:
        try:
            value: JsonValue = pydantic_core.from_json(content, allow_inf_nan=False)
        except ValueError:
            return None
        if not self._delta:
            return StateSnapshotEvent(snapshot=value)
        try:
            return StateDeltaEvent.model_validate({"delta": value})
        except ValidationError:
            return None


class ToolArgsToState:
    """Publish one argument of a tool into state while the call's arguments stream.

    Each `TOOL_CALL_ARGS` of a call to `tool` is followed by a `STATE_DELTA` setting `state_key`
    (a key of the state, or a JSON Pointer into it; `argument` by default) to the argument as
    read so far from the partial JSON, so the client sees a document grow during the call. The
    patch is an `add`, which sets the key whether it is there or not, so the key's parent must
    exist in the client's state: pass the state type as `state=` to have the path checked here.
    Arguments that are still not JSON when the call ends fail the run (`INVALID_ARGUMENTS`).

    Examples:
        >>> from agui import RunAgentInput, RunContext
        >>> predict = ToolArgsToState("write_document", "document")
        >>> ctx, events = RunContext.new(
        ...     RunAgentInput(thread_id="t", run_id="r"), transformers=[predict]
        ... )
        >>> with ctx.tool_call("write_document") as call:
        ...     call.args('{"document": "Once upon')
        ...     call.args(' a time"}')
        ...     call.end()
        >>> [e.delta[0].value for e in events.drain() if e.type == "STATE_DELTA"]
        ['Once upon', 'Once upon a time']
    """

    def __init__(
        self, tool: str, argument: str, state_key: str | None = None, *, state: object = None
    ) -> None:
        key = argument if state_key is None else state_key
        self._pointer = key if key.startswith("/") else "/" + escape_pointer_token(key)
        schema = state_adapter(state).json_schema(by_alias=True) if state is not None else {}
        problem = missing_member(schema, self._pointer) if state is not None else None
        if problem is not None:
            message = (
                f"ToolArgsToState({tool!r}, {argument!r}): state key {self._pointer!r} is not "
                f"in the state type: {problem}; name a key the state type declares"
            )
            raise UsageError(message)
        self._tool, self._argument = tool, argument
        self._calls: dict[str, tuple[list[str], list[JsonValue]]] = {}

    def transform(self, event: Event) -> Sequence[Event]:  # noqa: D102 - see Transformer
        match event:
            case ToolCallStartEvent(tool_call_name=name) if name == self._tool:
                self._calls[event.tool_call_id] = ([], [])
            case ToolCallArgsEvent() if event.tool_call_id in self._calls:
                return self._grown(event)
            case ToolCallEndEvent() if event.tool_call_id in self._calls:
                return self._ended(event)
            case _:
                pass
        return (event,)

    def _grown(self, event: ToolCallArgsEvent) -> Sequence[Event]:
        parts, sent = self._calls[event.tool_call_id]
        parts.append(event.delta)
        try:
            value = pydantic_core.from_json("".join(parts), allow_partial="trailing-strings")
        except ValueError:
            return (event,)  # not JSON yet, or never: told when the call ends
        if not isinstance(value, dict) or self._argument not in value:
            return (event,)
        found = cast("dict[str, JsonValue]", value)[self._argument]
        if sent and sent[-1] == found:
            return (event,)
        sent[:] = [found]
        return (event, StateDeltaEvent.model_validate({"delta": [self._add(found)]}))

    def _add(self, value: JsonValue) -> dict[str, JsonValue]:
        return {"op": "add", "path": self._pointer, "value": value}

    def _ended(self, event: ToolCallEndEvent) -> Sequence[Event]:
        parts, _ = self._calls.pop(event.tool_call_id)
        text = "".join(parts)
        try:
            pydantic_core.from_json(text or "{}")
        except ValueError as error:
            message = (
                f"the arguments of tool call {event.tool_call_id!r} ({self._tool}) ended without "
                f"becoming JSON ({error}), so ToolArgsToState could not read {self._argument!r} "
                f"from them: {text[:80]!r}; the model must send the arguments as one JSON object"
            )
            raise InvalidArguments(
                message, tool_call_id=event.tool_call_id, tool_name=self._tool
            ) from None
        return (event,)
