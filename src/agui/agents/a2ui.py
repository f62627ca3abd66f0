"""A2UI v0.9 surfaces as a tool's result: the `a2ui_operations` envelope, built and checked.

A2UI describes a user interface as data: a *surface* made with `createSurface` (its id and the
component catalog it draws from), filled with `updateComponents` (a flat list of components,
each with an `id` and a `component` type, children named by id, one of them `root`) and bound
to a data model changed with `updateDataModel` (a JSON Pointer `path` and a `value`);
`deleteSurface` removes it. Each message carries `"version": "v0.9"` and exactly one of those
four members. A tool hands them to the app as `{"a2ui_operations": [...]}`, the envelope
CopilotKit's A2UI middleware looks for in a tool result and turns into an `a2ui-surface`
activity message.

`A2UIOperations` is that envelope as a value a tool returns (the tool loop sends it as its
JSON). Built with `render(...)` or `operations(...)` from the message builders, or read with
`A2UIOperations.read(...)` from JSON made elsewhere (a model's own), it is checked against v0.9
first: each message's shape, one `createSurface` per surface, nothing after a surface's
`deleteSurface`, and for a surface made in the envelope with its components a `root` component
and children that name components it has. What does not fit is an `InvalidA2UI` error saying
which message and why, raised where the envelope is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field, JsonValue, ValidationError, model_validator

from agui.errors import InvalidA2UI

__all__ = [
    "A2UI_VERSION",
    "BASIC_CATALOG_ID",
    "A2UIOperations",
    "create_surface",
    "delete_surface",
    "operations",
    "render",
    "update_components",
    "update_data_model",
]

JsonObject = dict[str, JsonValue]

A2UI_VERSION = "v0.9"
"""The A2UI version these helpers write and check."""

BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/basic_catalog.json"
"""The id of A2UI v0.9's basic component catalog (Text, Column, Row, Card, Button, ...)."""

_KINDS = ("createSurface", "updateComponents", "updateDataModel", "deleteSurface")


class A2UIOperations(BaseModel, frozen=True):
    """An `a2ui_operations` envelope: A2UI v0.9 messages a tool returns, checked.

    Examples:
        >>> envelope = render("hello", [{"id": "root", "component": "Text", "text": "Hi"}])
        >>> print(envelope.model_dump_json())
        {"a2ui_operations":[{"version":"v0.9","createSurface":{"surfaceId":"hello","catalogId":"https://a2ui.org/specification/v0_9/basic_catalog.json"}},{"version":"v0.9","updateComponents":{"surfaceId":"hello","components":[{"id":"root","component":"Text","text":"Hi"}]}}]}
    """

    a2ui_operations: list[JsonObject]
    """The messages, in the order the app applies them."""

    @classmethod
    def read(cls, value: JsonValue) -> A2UIOperations:
        """An envelope from JSON made elsewhere (`{"a2ui_operations": [...]}`), checked.

        Raises:
            InvalidA2UI: the value is no envelope, or a message in it does not fit v0.9.
        """
        ops = value.get("a2ui_operations") if isinstance(value, dict) else None
        if not isinstance(ops, list):
            message = (
                'an A2UI envelope is a JSON object {"a2ui_operations": [...]} holding the '
                f"messages, not {str(value)[:80]!r}"
            )
            raise InvalidA2UI(message)
        for index, op in enumerate(ops):
            if not isinstance(op, dict):
                message = f"A2UI message {index} is not a JSON object: {str(op)[:80]!r}"
                raise InvalidA2UI(message)
        return operations(*(op for op in ops if isinstance(op, dict)))


def create_surface(
    surface_id: str,
    *,
    catalog_id: str = BASIC_CATALOG_ID,
    theme: Mapping[str, JsonValue] | None = None,
    send_data_model: bool | None = None,
) -> JsonObject:
    """A `createSurface` message: a new surface drawing from the catalog `catalog_id`.

    Examples:
        >>> create_surface("s1", catalog_id="my-catalog")
        {'version': 'v0.9', 'createSurface': {'surfaceId': 's1', 'catalogId': 'my-catalog'}}
    """
    body: JsonObject = {"surfaceId": surface_id, "catalogId": catalog_id}
    if theme is not None:
        body["theme"] = dict(theme)
    if send_data_model is not None:
        body["sendDataModel"] = send_data_model
    return {"version": A2UI_VERSION, "createSurface": body}


def update_components(surface_id: str, components: Sequence[Mapping[str, JsonValue]]) -> JsonObject:
    """An `updateComponents` message: components added to the surface, or replacing theirs.

    Examples:
        >>> update_components("s1", [{"id": "root", "component": "Text", "text": "Hi"}])
        {'version': 'v0.9', 'updateComponents': {'surfaceId': 's1', 'components': [{'id': ...}]}}
    """
    listed: list[JsonValue] = [dict(component) for component in components]
    return {
        "version": A2UI_VERSION,
        "updateComponents": {"surfaceId": surface_id, "components": listed},
    }


def update_data_model(surface_id: str, value: JsonValue, *, path: str = "/") -> JsonObject:
    """An `updateDataModel` message: `value` set at `path` (a JSON Pointer) of the data model.

    Examples:
        >>> update_data_model("s1", "Lyon", path="/city")
        {'version': 'v0.9', 'updateDataModel': {'surfaceId': 's1', 'path': '/city', 'value': ...}}
    """
    body: JsonObject = {"surfaceId": surface_id, "path": path, "value": value}
    return {"version": A2UI_VERSION, "updateDataModel": body}


def delete_surface(surface_id: str) -> JsonObject:
    """A `deleteSurface` message.

    Examples:
        >>> delete_surface("s1")
        {'version': 'v0.9', 'deleteSurface': {'surfaceId': 's1'}}
    """
    return {"version": A2UI_VERSION, "deleteSurface": {"surfaceId": surface_id}}


def render(
    surface_id: str,
    components: Sequence[Mapping[str, JsonValue]],
    *,
    data: JsonValue = None,
    catalog_id: str = BASIC_CATALOG_ID,
    create: bool = True,
) -> A2UIOperations:
    """A surface drawn whole: `createSurface` (unless `create=False`), its components, its data.

    Examples:
        >>> cards = [{"id": "root", "component": "Text", "text": {"path": "/city"}}]
        >>> envelope = render("weather", cards, data={"city": "Lyon"})
        >>> [next(k for k in op if k != "version") for op in envelope.a2ui_operations]
        ['createSurface', 'updateComponents', 'updateDataModel']
    """
    ops = [create_surface(surface_id, catalog_id=catalog_id)] if create else []
    ops.append(update_components(surface_id, components))
    if data is not None:
        ops.append(update_data_model(surface_id, data))
    return operations(*ops)


def operations(*messages: Mapping[str, JsonValue]) -> A2UIOperations:
    """The envelope of `messages`, checked against A2UI v0.9.

    Raises:
        InvalidA2UI: a message does not fit v0.9, or the messages do not fit together.

    Examples:
        >>> operations(update_components("s1", [{"id": "root", "component": "Row"}]))
        A2UIOperations(a2ui_operations=[{'version': 'v0.9', 'updateComponents': ...}])
        >>> row = update_components("s1", [{"id": "a", "component": "Row"}])
        >>> operations(create_surface("s1"), row)
        Traceback (most recent call last):
        ...
        agui.errors.InvalidA2UI: surface 's1' is created in this envelope, and no component ...
    """
    read = [_message(index, message) for index, message in enumerate(messages)]
    _check_surfaces(read)
    return A2UIOperations(a2ui_operations=[dict(message) for message in messages])


# -- the shapes of v0.9, checked -----------------------------------------------------------------


class _Shape(BaseModel, frozen=True, extra="forbid", populate_by_name=True):
    pass


class _Template(_Shape, frozen=True):
    component_id: str = Field(alias="componentId", min_length=1)
    path: str


class _Component(_Shape, frozen=True, extra="allow"):
    id: str = Field(min_length=1)
    component: str = Field(min_length=1)
    child: str | None = None
    children: list[str] | _Template | None = None


class _Create(_Shape, frozen=True):
    surface_id: str = Field(alias="surfaceId", min_length=1)
    catalog_id: str = Field(alias="catalogId", min_length=1)
    theme: JsonObject | None = None
    send_data_model: bool | None = Field(None, alias="sendDataModel")


class _Components(_Shape, frozen=True):
    surface_id: str = Field(alias="surfaceId", min_length=1)
    components: list[_Component] = Field(min_length=1)


class _Data(_Shape, frozen=True):
    surface_id: str = Field(alias="surfaceId", min_length=1)
    path: str = Field("/", pattern=r"^/")
    value: JsonValue = None


class _Delete(_Shape, frozen=True):
    surface_id: str = Field(alias="surfaceId", min_length=1)


class _Message(_Shape, frozen=True):
    version: Literal["v0.9"]
    create: _Create | None = Field(None, alias="createSurface")
    components: _Components | None = Field(None, alias="updateComponents")
    data: _Data | None = Field(None, alias="updateDataModel")
    delete: _Delete | None = Field(None, alias="deleteSurface")

    @model_validator(mode="after")
    def _one(self) -> _Message:
        given = [self.create, self.components, self.data, self.delete]
        if sum(part is not None for part in given) != 1:
            message = f"a message holds exactly one of {', '.join(_KINDS)}"
            raise ValueError(message)
        return self

    @property
    def kind(self) -> str:
        parts = [self.create, self.components, self.data, self.delete]
        return next(k for k, p in zip(_KINDS, parts, strict=True) if p is not None)

    @property
    def surface_id(self) -> str:
        part = self.create or self.components or self.data or self.delete
        assert part is not None  # noqa: S101 - _one ensured it
        return part.surface_id


def _message(index: int, message: Mapping[str, JsonValue]) -> _Message:
    try:
        return _Message.model_validate(dict(message))
    except ValidationError as error:
        problem = error.errors()[0]
        where = "/".join(str(part) for part in problem["loc"])
        message_text = (
            f"A2UI message {index} does not fit v{A2UI_VERSION[1:]}: {problem['msg']}"
            + (f" at {where!r}" if where else "")
            + '; a message is {"version": "v0.9", <createSurface | updateComponents | '
            "updateDataModel | deleteSurface>: {...}}"
        )
        raise InvalidA2UI(message_text) from None


def _check_surfaces(messages: Sequence[_Message]) -> None:
    created: set[str] = set()
    deleted: set[str] = set()
    components: dict[str, list[_Component]] = {}
    for index, message in enumerate(messages):
        surface = message.surface_id
        if surface in deleted:
            text = (
                f"A2UI message {index} ({message.kind}) follows surface {surface!r}'s deleteSurface"
            )
            raise InvalidA2UI(text + "; send it before the delete, or drop it")
        if message.create is not None:
            if surface in created:
                text = f"A2UI message {index} creates surface {surface!r} a second time"
                raise InvalidA2UI(text + "; v0.9 allows one createSurface per surface")
            created.add(surface)
        if message.components is not None:
            components.setdefault(surface, []).extend(message.components.components)
        if message.delete is not None:
            deleted.add(surface)
    for surface in sorted((created - deleted) & components.keys()):
        _check_tree(surface, components[surface])


def _check_tree(surface: str, components: Sequence[_Component]) -> None:
    ids = {component.id for component in components}
    if "root" not in ids:
        message = (
            f"surface {surface!r} is created in this envelope, and no component of it has the id "
            "'root': the app draws the surface from its root; name the top component 'root'"
        )
        raise InvalidA2UI(message)
    for component in components:
        children = component.children
        named = [component.child] if component.child is not None else []
        named += children if isinstance(children, list) else []
        named += [children.component_id] if isinstance(children, _Template) else []
        missing = [child for child in named if child not in ids]
        if missing:
            message = (
                f"component {component.id!r} of surface {surface!r} names children it does not "
                f"have: {', '.join(map(repr, missing))}; send those components too (known: "
                f"{', '.join(sorted(ids))})"
            )
            raise InvalidA2UI(message)
