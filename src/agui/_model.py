"""The base of every wire model: camelCase on the wire, and absent rather than null.

AG-UI 1.0 forbids `null` for an optional field that has no value (a 1.0 client rejects
`"metadata": null`), while a required field may carry `null` as data (`CUSTOM.value`,
`STATE_SNAPSHOT.snapshot`). A global `exclude_none` gets the second half wrong, and the official
SDK's per-model wrap serializer costs a Python call per model per encode. Instead each optional
field is declared `Opt[T] = None`, which tells pydantic-core to leave the field out when it holds
`None`. Plain `model_dump_json()` is then the wire form, recursively through nested models, and
every `None` that lives inside data (state, patch values, custom payloads) is kept.

Event `type` discriminators are plain string literals rather than enum members: pydantic-core
serializes an enum literal through a slow path, and `EventType` members compare equal to the
strings anyway.
"""

from __future__ import annotations

from typing import Annotated, Optional, TypeVar

from pydantic import BaseModel, Field
from pydantic.alias_generators import to_camel

__all__ = ["Opt", "WireModel"]

T = TypeVar("T")


def _absent(value: object) -> bool:
    return value is None


Opt = Annotated[Optional[T], Field(exclude_if=_absent)]  # noqa: UP045 - a generic alias needs Optional
"""An optional wire field: `None` means absent, and it is left out of the JSON."""


class WireModel(
    BaseModel,
    frozen=True,
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
    extra="forbid",
    allow_inf_nan=False,
):
    """A frozen pydantic model with camelCase aliases and forbidden unknown fields.

    The configuration is given as class keywords, so type checkers see `frozen` too; every
    subclass repeats `frozen=True` for the same reason.
    """
