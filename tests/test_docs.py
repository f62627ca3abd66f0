"""The documentation's tables agree with the code they describe."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

import agui.asgi
import agui.client
import agui.errors
import agui.events
import agui.verify
from agui.errors import AguiError
from agui.events import AttributableEvent, BaseEvent, EventType
from agui.verify import Rule

DOCS = Path(__file__).resolve().parents[1] / "docs"
_CELL = re.compile(r"`([^`]+)`")


def table(text: str, header: str) -> list[list[str]]:
    """The body rows of the Markdown table whose header row is `header`, as stripped cells."""
    lines = text.splitlines()
    start = lines.index(header)
    rows: list[list[str]] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def code(cell: str) -> str:
    match = _CELL.fullmatch(cell)
    assert match is not None, f"expected one `code` span, got {cell!r}"
    return match.group(1)


def test_the_design_pages_rule_table_is_the_rule_enum() -> None:
    rows = table((DOCS / "design.md").read_text(), "| rule | description |")
    assert [(code(name), description) for name, description in rows] == [
        (rule.value, rule.description) for rule in Rule
    ]


def test_the_verify_module_docstring_lists_the_same_rules_as_the_docs() -> None:
    docstring = inspect.getdoc(agui.verify) or ""
    rows = table(docstring, "| rule | description |")
    assert [(name, description) for name, description in rows] == [
        (rule.value, rule.description) for rule in Rule
    ]


def _wire_fields(model: type[BaseModel]) -> list[str]:
    envelope = set(AttributableEvent.model_fields) - {"subagent_run_id"}
    fields: list[str] = []
    for name, field in model.model_fields.items():
        if name in envelope or (name == "subagent_run_id" and not field.is_required()):
            continue
        wire = field.serialization_alias or field.alias or name
        fields.append(f"`{wire}`" + ("" if field.is_required() else "?"))
    return fields


EVENT_MODELS: dict[str, type[BaseModel]] = {
    model.model_fields["type"].default: model
    for model in vars(agui.events).values()
    if isinstance(model, type)
    and issubclass(model, BaseEvent)
    and isinstance(model.model_fields["type"].default, str)
}

EVENT_ROWS = table(
    (DOCS / "reference" / "events.md").read_text(),
    "| event | fields | attributable | what it does |",
)


def test_the_events_table_lists_exactly_the_31_event_types() -> None:
    listed = [code(row[0]) for row in EVENT_ROWS]
    assert len(listed) == len(set(listed)) == 31
    assert set(listed) == {member.value for member in EventType} == set(EVENT_MODELS)


@pytest.mark.parametrize("row", EVENT_ROWS, ids=[row[0].strip("`") for row in EVENT_ROWS])
def test_each_event_row_lists_the_models_wire_fields(row: list[str]) -> None:
    name, fields, attributable, meaning = row
    model = EVENT_MODELS[code(name)]
    assert [field.strip() for field in fields.split(",")] == _wire_fields(model)
    assert attributable == ("yes" if issubclass(model, AttributableEvent) else "no")
    assert meaning.endswith(".")


ERROR_ROWS = table((DOCS / "guides" / "errors.md").read_text(), "| class | code | raised when |")
_ERROR_MODULES = (agui.errors, agui.client, agui.asgi)


def _documented_error(cell: str) -> type[AguiError]:
    module, _, name = code(cell).rpartition(".")
    error = getattr(importlib.import_module(module or "agui.errors"), name)
    assert isinstance(error, type)
    assert issubclass(error, AguiError)
    return error


def test_the_error_table_gives_each_documented_error_its_code() -> None:
    for cell, error_code, _ in ERROR_ROWS:
        assert _documented_error(cell).code == code(error_code)


def test_the_error_table_lists_every_error_class_agui_defines() -> None:
    documented = {_documented_error(cell) for cell, _, _ in ERROR_ROWS}
    defined = {
        value
        for module in _ERROR_MODULES
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, AguiError)
        and value.__module__ == module.__name__
    }
    assert defined == documented
