"""Which nulls the wire reads as absent, and where a null that is not one lies.

AG-UI 1.0's client refuses an optional field of an event sent as `null`, at any depth, with a
few exceptions kept for older producers, which it reads as absent: `rawEvent` on any event,
`result` on `RUN_FINISHED` and `SUBAGENT_FINISHED`, `outcome` on `RUN_FINISHED`,
`parentMessageId` on `TOOL_CALL_START` and `TOOL_CALL_CHUNK` (each dropped with a warning), and
inside a model: a media part's `metadata` in message history, and in `RUN_STARTED.input` its
`state`, `forwardedProps`, `tools[].parameters` and `resume[].payload`. `agui.wire` drops the
top-level ones before validation and looks for any other below the validated model.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import cast

import pydantic_core
from pydantic import BaseModel

from agui.errors import UnknownMemberWarning
from agui.messages import AudioPart, DocumentPart, ImagePart, VideoPart
from agui.types import ResumeEntry, RunAgentInput, Tool

__all__ = ["NESTED_LEGACY", "NO_LEGACY", "drop_legacy_nulls", "may_hold_null", "null_below"]

_LEGACY_NULLS = {
    "rawEvent": None,
    "result": frozenset({"RUN_FINISHED", "SUBAGENT_FINISHED"}),
    "outcome": frozenset({"RUN_FINISHED"}),
    "parentMessageId": frozenset({"TOOL_CALL_START", "TOOL_CALL_CHUNK"}),
}


def drop_legacy_nulls(
    kind: str, cls: type[BaseModel], obj: Mapping[str, object]
) -> Mapping[str, object]:
    """`obj` without the top-level nulls an event of `kind` may carry as absent, each warned.

    Examples:
        >>> import warnings
        >>> from agui.events import RunFinishedEvent
        >>> wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": None}
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     drop_legacy_nulls("RUN_FINISHED", RunFinishedEvent, wire)
        {'type': 'RUN_FINISHED', 'threadId': 't', 'runId': 'r'}
        >>> str(caught[0].message)
        "Removed legacy null at '/result' on RUN_FINISHED"
    """
    nulls = [key for key, value in obj.items() if value is None]
    if not nulls:
        return obj
    kept = dict(obj)
    for key in nulls:
        scope = _LEGACY_NULLS.get(_to_wire_name(cls, key), frozenset())
        if scope is None or kind in scope:
            del kept[key]
            _warn(f"Removed legacy null at '/{key}' on {kind}")
    return kept


def may_hold_null(data: Mapping[str, object] | str | bytes | bytearray) -> bool:
    """Whether the data may hold a null: JSON without the `null` literal holds none.

    Examples:
        >>> may_hold_null('{"a": 1}'), may_hold_null(b'{"a": null}')
        (False, True)
    """
    if isinstance(data, str):
        return "null" in data
    if not isinstance(data, (bytes, bytearray)):
        data = pydantic_core.to_json(data, serialize_unknown=True)
    return b"null" in data


NO_LEGACY: frozenset[tuple[type, str]] = frozenset()
"""No nested null is legacy (a tool result's content)."""
NESTED_LEGACY = frozenset(
    {(part, "metadata") for part in (ImagePart, AudioPart, VideoPart, DocumentPart)}
    | {(RunAgentInput, "state"), (RunAgentInput, "forwarded_props"), (Tool, "parameters")}
    | {(ResumeEntry, "payload")}
)
"""The nested optional fields whose `null` reads as absent: (model class, field name)."""


def null_below(node: BaseModel, legacy: frozenset[tuple[type, str]]) -> str | None:
    """Where the first optional field sent as `null` is, bar `legacy` (a required null is data).

    Examples:
        >>> from agui.events import TextMessageStartEvent
        >>> null_below(TextMessageStartEvent(message_id="m1", name=None), NO_LEGACY)
        '/name'
        >>> null_below(TextMessageStartEvent(message_id="m1"), NO_LEGACY) is None
        True
    """
    fields, values = type(node).__pydantic_fields__, node.__dict__
    for name in sorted(node.model_fields_set):  # sorted, to report the same one each time
        value = values.get(name, "")  # an extra member is not among the fields' values
        if value is None:
            if fields[name].default is None and (type(node), name) not in legacy:
                return f"/{fields[name].alias or name}"
        elif not isinstance(value, (str, int, float, dict)):
            models = cast("list[object]", value) if type(value) is list else [value]
            if models and isinstance(models[0], BaseModel):  # a model list holds models only
                for index, model in enumerate(cast("list[BaseModel]", models)):
                    if (below := null_below(model, legacy)) is not None:
                        at = f"/{index}" if models is value else ""
                        return f"/{fields[name].alias or name}{at}{below}"
    return None


def _to_wire_name(cls: type[BaseModel], key: str) -> str:
    field = cls.model_fields.get(key)
    return field.alias or key if field is not None else key


def _warn(message: str) -> None:
    # The caller of `agui.wire.parse_event` is warned: this, then the dropping, then parse_event.
    warnings.warn(UnknownMemberWarning(message), stacklevel=4)
