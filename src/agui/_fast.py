"""Building the events agui generates itself, without running pydantic's validator.

The handles emit thousands of events whose every field agui has made or checked itself: ids it
generated (or validated once, in the block's opening event) and text it checked is an exact
`str`. Validating them again costs more than everything else on their way to the wire. These
builders make the very object validation would: an instance of the event model with the same
`__dict__` (every field, in field order, defaults included), the same fields-set, and no
extra or private values, so equality, `repr`, hashing, copying, pickling, serialization and
`model_fields_set` cannot tell the difference (the tests compare them with validated events).

A caller must pass exact `str` values for the string fields (and a valid role); anything else
goes through the model's constructor instead. Each builder copies a template `__dict__`, which
is quicker than writing a dict of every field out.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from agui.events import (
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

__all__ = [
    "build",
    "reasoning_content",
    "template",
    "text_content",
    "text_end",
    "text_start",
    "tool_args",
    "tool_end",
    "tool_result",
    "tool_start",
]

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_slots = BaseModel.__dict__
# The slot descriptors pydantic-core fills when it validates; set here the same way.
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


def template(cls: type[BaseModel]) -> dict[str, Any]:
    """Every field of `cls` in field order, at its default (`None` where it has none).

    Examples:
        >>> template(TextMessageEndEvent)
        {'type': 'TEXT_MESSAGE_END', 'timestamp': None, 'raw_event': None, 'metadata': None,
         'subagent_run_id': None, 'message_id': None}
    """
    return {
        name: None if field.is_required() else field.get_default(call_default_factory=True)
        for name, field in cls.model_fields.items()
    }


def build(
    cls: type[M], values: dict[str, Any], fields_set: set[str], extra: dict[str, Any] | None = None
) -> M:
    """An instance of `cls` holding `values` (every field, in field order), unvalidated.

    `extra` is the model's extra members: `None` for a model that forbids them (every event),
    a dict (`{}` for none) for one that allows them, as validation would make it.

    Examples:
        >>> fields = template(TextMessageEndEvent)
        >>> fields["message_id"] = "m1"
        >>> event = build(TextMessageEndEvent, fields, {"message_id"})
        >>> event == TextMessageEndEvent(message_id="m1")
        True
    """
    event = _new(cls)
    _set_dict(event, values)
    _set_fields_set(event, fields_set)
    _set_extra(event, extra)
    _set_private(event, None)
    return event


_TEXT_CONTENT = template(TextMessageContentEvent)
_TOOL_ARGS = template(ToolCallArgsEvent)
_REASONING_CONTENT = template(ReasoningMessageContentEvent)
_TEXT_START = template(TextMessageStartEvent)
_TEXT_END = template(TextMessageEndEvent)
_TOOL_START = template(ToolCallStartEvent)
_TOOL_END = template(ToolCallEndEvent)
_TOOL_RESULT = template(ToolCallResultEvent)
_MESSAGE_DELTA_SET = {"message_id", "delta"}
_TOOL_DELTA_SET = {"tool_call_id", "delta"}


def text_content(message_id: str, delta: str) -> TextMessageContentEvent:
    """`TextMessageContentEvent(message_id=message_id, delta=delta)`, both exact `str`."""
    event = _new(TextMessageContentEvent)
    fields = _TEXT_CONTENT.copy()
    fields["message_id"] = message_id
    fields["delta"] = delta
    _set_dict(event, fields)
    _set_fields_set(event, _MESSAGE_DELTA_SET.copy())
    _set_extra(event, None)
    _set_private(event, None)
    return event


def tool_args(tool_call_id: str, delta: str) -> ToolCallArgsEvent:
    """`ToolCallArgsEvent(tool_call_id=tool_call_id, delta=delta)`, both exact `str`."""
    event = _new(ToolCallArgsEvent)
    fields = _TOOL_ARGS.copy()
    fields["tool_call_id"] = tool_call_id
    fields["delta"] = delta
    _set_dict(event, fields)
    _set_fields_set(event, _TOOL_DELTA_SET.copy())
    _set_extra(event, None)
    _set_private(event, None)
    return event


def reasoning_content(message_id: str, delta: str) -> ReasoningMessageContentEvent:
    """`ReasoningMessageContentEvent(message_id=message_id, delta=delta)`, both exact `str`."""
    fields = _REASONING_CONTENT.copy()
    fields["message_id"] = message_id
    fields["delta"] = delta
    return build(ReasoningMessageContentEvent, fields, {"message_id", "delta"})


def text_start(message_id: str, role: str, name: str | None) -> TextMessageStartEvent:
    """`TextMessageStartEvent(message_id=..., role=role, name=name)`: exact `str`s, a valid role."""
    fields = _TEXT_START.copy()
    fields["message_id"] = message_id
    fields["role"] = role
    fields["name"] = name
    return build(TextMessageStartEvent, fields, {"message_id", "role", "name"})


def text_end(message_id: str) -> TextMessageEndEvent:
    """`TextMessageEndEvent(message_id=message_id)`, an exact `str`."""
    fields = _TEXT_END.copy()
    fields["message_id"] = message_id
    return build(TextMessageEndEvent, fields, {"message_id"})


def tool_start(tool_call_id: str, name: str, parent_message_id: str | None) -> ToolCallStartEvent:
    """`ToolCallStartEvent(tool_call_id=..., tool_call_name=name, parent_message_id=...)`."""
    fields = _TOOL_START.copy()
    fields["tool_call_id"] = tool_call_id
    fields["tool_call_name"] = name
    fields["parent_message_id"] = parent_message_id
    return build(
        ToolCallStartEvent, fields, {"tool_call_id", "tool_call_name", "parent_message_id"}
    )


def tool_end(tool_call_id: str) -> ToolCallEndEvent:
    """`ToolCallEndEvent(tool_call_id=tool_call_id)`, an exact `str`."""
    fields = _TOOL_END.copy()
    fields["tool_call_id"] = tool_call_id
    return build(ToolCallEndEvent, fields, {"tool_call_id"})


def tool_result(message_id: str, tool_call_id: str, content: str) -> ToolCallResultEvent:
    """`ToolCallResultEvent(..., content=content, role="tool")`, all three exact `str`."""
    fields = _TOOL_RESULT.copy()
    fields["message_id"] = message_id
    fields["tool_call_id"] = tool_call_id
    fields["content"] = content
    fields["role"] = "tool"
    return build(ToolCallResultEvent, fields, {"message_id", "tool_call_id", "content", "role"})
