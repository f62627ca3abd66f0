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
apply, a text event aimed at an activity message), so does the fold. The reducer that applies
each event type, and how, is beside it (`agui.fold._reducer`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NoReturn, cast, get_args

from pydantic import BaseModel, JsonValue, TypeAdapter

from agui._protocol.json_value import json_problem
from agui.errors import UsageError
from agui.events import BaseEvent, Event, RunErrorEvent
from agui.fold._reducer import FoldedSubagent, Reducer
from agui.messages import Message
from agui.types import RunFinishedOutcome

__all__ = ["FoldedRun", "FoldedSubagent", "event_models", "fold"]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_MESSAGE_TYPES = cast("tuple[type[BaseModel], ...]", get_args(get_args(Message)[0]))
_Record = dict[str, JsonValue]


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
    reducer = Reducer(_held(messages), _json_state(state))
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
