"""The base of every wire model: camelCase on the wire, absent rather than null, and trusted.

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

Trusted construction. agui emits thousands of events whose every value it made or checked
itself: ids it generated (or validated once, in a block's opening event), text it checked is an
exact `str`, state it parsed. Validating them again costs more than everything else on their way
to the wire, so a model can also be built trusted, as h11 builds the events it parsed itself
(`_parsed=True`): `WireModel.trusted` and `WireModel.trusted_builder` make the very object
validation would (the same `__dict__`, every field in field order with its default, an equal
fields-set, the extra members validation gives and no private values), so equality, `repr`,
hashing, copying, pickling and serialization cannot tell the two apart. The caller vouches for
the values: an exact `str` where the field is text, a member of a `Literal`, JSON where the field
is JSON. Anything it cannot vouch for goes through the model's constructor.

A trusted builder gives every model it builds one shared fields-set, read-only: a fresh `set`
per model is, after the model itself, the costliest part of a build kept alive (a test's
`drain()` keeps thousands), and sharing it is safe only because no one can change it. pydantic
never changes a model's own fields-set (models are frozen); `model_copy` and `copy.copy` give the
copy a plain `set` of its own, which `model_copy(update=...)` then extends. Every builder of one
class and the same names shares the same set, so the set also says how its model was made: from
those fields alone, every other one at its default (`agui.sse` frames such a delta directly).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Optional, TypeVar

from pydantic import BaseModel, Field
from pydantic.alias_generators import to_camel
from typing_extensions import Never, Self

from agui.errors import UsageError

__all__ = ["Opt", "SharedFields", "WireModel"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def _absent(value: object) -> bool:
    return value is None


Opt = Annotated[Optional[T], Field(exclude_if=_absent)]  # noqa: UP045 - a generic alias needs Optional
"""An optional wire field: `None` means absent, and it is left out of the JSON."""

_new = object.__new__
# The slot descriptors pydantic-core fills when it validates a model; trusted construction
# fills them the same way.
_SLOTS = BaseModel.__dict__
_set_dict = _SLOTS["__dict__"].__set__
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__
_TEMPLATES: dict[type[BaseModel], tuple[dict[str, object], bool]] = {}
_SHARED: dict[tuple[type[BaseModel], frozenset[str]], SharedFields] = {}


def _template(cls: type[BaseModel]) -> tuple[dict[str, object], bool]:
    """Every field of `cls` at its default (`None` if it has none), and whether it keeps extras.

    A model that keeps extra members gets an empty dict of them from validation.
    """
    found = _TEMPLATES.get(cls)
    if found is None:
        fields: dict[str, object] = {
            name: None if field.is_required() else field.get_default(call_default_factory=True)
            for name, field in cls.model_fields.items()
        }
        found = _TEMPLATES[cls] = (fields, cls.model_config.get("extra") == "allow")
    return found


class SharedFields(set[str]):
    """The read-only fields-set that a trusted builder's models share; copies are plain sets.

    Examples:
        >>> from agui.events import TextMessageContentEvent
        >>> content = TextMessageContentEvent.trusted_builder("message_id", "delta")
        >>> fields = content("m1", "Hi").model_fields_set
        >>> sorted(fields), fields is content("m2", "Yo").model_fields_set
        (['delta', 'message_id'], True)
        >>> fields.add("timestamp")
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: the fields-set of TextMessageContentEvent models built by agui ...
    """

    __slots__ = ("_model",)

    def __init__(self, names: Sequence[str], model: str) -> None:
        super().__init__(names)
        self._model = model

    def _refuse(self, *_: object) -> Never:
        message = (
            f"the fields-set of {self._model} models built by agui is shared and read-only; "
            "copy it first: set(event.model_fields_set)"
        )
        raise UsageError(message)

    add = discard = remove = pop = clear = update = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, _memo: object) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[type[set[str]], tuple[list[str]]]:
        return set, (list(self),)


def _fill(event: BaseModel, fields: dict[str, object], given: set[str], extra: bool) -> None:  # noqa: FBT001 - internal
    _set_dict(event, fields)
    _set_fields_set(event, given)
    _set_extra(event, {} if extra else None)
    _set_private(event, None)


def _shared(cls: type[BaseModel], names: Sequence[str]) -> SharedFields:
    """The one fields-set of every model built trusted from `names`, by any builder of them."""
    key = (cls, frozenset(names))
    found = _SHARED.get(key)
    if found is None:
        found = _SHARED[key] = SharedFields(names, cls.__name__)
    return found


def _builder(cls: type[M], names: Sequence[str]) -> Callable[..., M]:
    """A positional trusted constructor of `cls` for `names`: the template, then the values.

    The values are laid over a copy of the template by `dict.update` from `zip`, one call that
    loops in C, so the builder is plain Python: no source is generated.
    """
    if not names or len(set(names)) != len(names) or not set(names) <= cls.model_fields.keys():
        message = (
            f"trusted_builder() of {cls.__name__} takes distinct field names, got {list(names)}; "
            f"its fields are {list(cls.model_fields)}"
        )
        raise UsageError(message)
    template, extra = _template(cls)
    given = _shared(cls, names)
    copy = template.copy

    def made(fields: dict[str, object]) -> M:
        event = _new(cls)
        _set_dict(event, fields)
        _set_fields_set(event, given)
        _set_extra(event, {} if extra else None)
        _set_private(event, None)
        return event

    build = _filler(names, copy, made)
    build.__qualname__ = f"{cls.__name__}.trusted_builder({', '.join(names)})"
    return build


def _filler(
    names: Sequence[str], copy: Callable[[], dict[str, object]], made: Callable[..., M]
) -> Callable[..., M]:
    """A constructor laying positional values over a copy of the template, then making the model.

    One, two and three names (every builder agui's hot paths use) get a closure that assigns
    each value by name, about twice as quick as a loop; more names take `dict.update` over `zip`.
    """
    if len(names) == 1:
        (first,) = names

        def one(value: object) -> M:
            fields = copy()
            fields[first] = value
            return made(fields)

        return one
    if len(names) == 2:  # noqa: PLR2004 - the arities spelled out
        first, second = names

        def two(value: object, other: object) -> M:
            fields = copy()
            fields[first], fields[second] = value, other
            return made(fields)

        return two
    if len(names) == 3:  # noqa: PLR2004 - the arities spelled out
        first, second, third = names

        def three(value: object, other: object, last: object) -> M:
            fields = copy()
            fields[first], fields[second], fields[third] = value, other, last
            return made(fields)

        return three
    keys = tuple(names)

    def many(*values: object) -> M:
        fields = copy()
        fields.update(zip(keys, values, strict=True))
        return made(fields)

    return many


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

    @classmethod
    def trusted(cls, **values: object) -> Self:
        """An instance holding `values` as they are, without validation: values agui vouches for.

        The object is the one `cls(**values)` makes for valid values (field names, not
        aliases); see the module docstring for what the caller must vouch for.

        Examples:
            >>> from agui.events import StepStartedEvent
            >>> StepStartedEvent.trusted(step_name="plan") == StepStartedEvent(step_name="plan")
            True
        """
        template, extra = _template(cls)
        fields = template.copy()
        fields.update(values)
        event = _new(cls)
        _fill(event, fields, set(values), extra)
        return event

    @classmethod
    def trusted_builder(cls, *names: str) -> Callable[..., Self]:
        """A constructor taking the values of `names` positionally, trusted as `trusted` is.

        Quicker than `trusted` for a hot path that builds one kind of model over and over; the
        models every builder of these names builds share one read-only fields-set
        (`SharedFields`).

        Examples:
            >>> from agui.events import TextMessageContentEvent
            >>> content = TextMessageContentEvent.trusted_builder("message_id", "delta")
            >>> content("m1", "Hi") == TextMessageContentEvent(message_id="m1", delta="Hi")
            True
            >>> again = TextMessageContentEvent.trusted_builder("delta", "message_id")
            >>> again("Yo", "m2").model_fields_set is content("m1", "Hi").model_fields_set
            True
        """
        return _builder(cls, names)
