"""Exact JSON equality, one family for the differ, the aligner and the state manager.

Python's `==` runs in C but is not JSON equality: `True == 1`, `1 == 1.0` and `[1] == [True]`.
Every function here asks `==` first and then settles what it leaves open, the exact types, in the
form its caller needs:

* `same(a, b)`, for two values already known to be `==`: a Python call per container. The differ
  asks it of each member that is not the very same object on both sides, the aligner of an item.
* `equal_exactly(a, b)`, the same question for long documents: a few C-level passes per depth
  instead of a call per container, and `False` when that quick check cannot tell. The aligner
  confirms a long run of `==` items with it.
* `Mirror.of(value)` copies a document (containers copied, scalars shared, being immutable) and
  remembers how each depth was read and the types found there; `Mirror.matches(live)` says
  whether a live document is still exactly that: `==` first, which in C finds almost any change
  at once, then the type passes over the live document alone. `agui.state` proves a state
  unchanged with it, without serializing the state.
* `writes(value, encoded)`: whether a plain JSON value serializes to exactly these bytes, which
  says it is the JSON they hold. `agui.state` proves with it that a patch it made trusting `==`
  gives the state's own JSON.

The passes: the containers at one depth are read out in one go (`chain` over arrays, an object's
`values()`, one `itemgetter` per key over a list of records), and the exact types of all their
children compared as one list; the containers among the children are the next depth. Python
work is per depth, and per container only at a depth that mixes arrays with objects, or objects
of differing keys. On a list of ten thousand records that costs less than serializing the list,
where `same` would cost more.

The passes let only exact `dict` (with `str` keys), `list`, `str`, `int`, `float`, `bool` and
`None` through: a subclass of a container or scalar, or any other type, makes the answer no, and
callers take their general path. Scalars are compared with `==` as well as by type, so `-0.0`
matches `0.0` (JSON writes them differently but reads the same number), and a NaN matches only
itself.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, compress, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias, cast

import pydantic_core

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["SCALARS", "Mirror", "equal_exactly", "same", "writes"]

_Node: TypeAlias = "dict[str, Any] | list[Any]"
_Getter: TypeAlias = "Callable[[Any], Any]"
SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""The JSON scalar types: two values of one of these types that are `==` are the same."""
_CONTAINERS: Final = frozenset({dict, list})
_JSON: Final = SCALARS | _CONTAINERS
_DICTS: Final[frozenset[type]] = frozenset({dict})
_LISTS: Final[frozenset[type]] = frozenset({list})
_MAX_DEPTH: Final = 1_000
# bool first: it is a subclass of int, and JSON's true is not the number 1
_KINDS: Final[tuple[type, ...]] = (bool, int, float, str, dict, list)


def same(a: JsonValue, b: JsonValue) -> bool:
    """Whether `a == b` also holds with JSON's types: no `true` where `1` is, or `1` where `1.0`.

    Examples:
        >>> same({"a": [1, 2.0]}, {"a": [1, 2.0]}), same({"a": [1]}, {"a": [True]})
        (True, False)
    """
    # Only called once a == b, which settles keys, lengths and values; what is left is that
    # no true stands where 1 is, or 1 where 1.0 is. The loops skip the call for plain scalars.
    kind = type(a)
    if kind is type(b) and kind in SCALARS:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        for key, value in a.items():
            other, kind = b[key], type(value)
            if value is not other and (kind is not type(other) or kind not in SCALARS):  # noqa: SIM102
                if not same(value, other):
                    return False
        return True
    if isinstance(a, list) and isinstance(b, list):
        for value, other in zip(a, b, strict=True):
            kind = type(value)
            if value is not other and (kind is not type(other) or kind not in SCALARS):  # noqa: SIM102
                if not same(value, other):
                    return False
        return True
    return _kind(a) is _kind(b)


def _kind(value: object) -> type:
    kind: type = type(value)
    return next((base for base in _KINDS if isinstance(value, base)), kind)


class _Shape(enum.Enum):
    """How the containers at one depth are read, and so the order of their children."""

    ARRAYS = enum.auto()  # all lists: item after item, list after list
    OBJECT = enum.auto()  # one dict: its values in its key order
    RECORDS = enum.auto()  # dicts with one key set: key after key, each over every dict
    MIXED = enum.auto()  # anything else: node after node, each dict in its own key order


class _Depth(NamedTuple):
    """One depth of a document: how it was read, and the exact types of its children."""

    shape: _Shape
    keys: list[Any]
    """`OBJECT`: the keys; `RECORDS`: a getter per key; `MIXED`: each node's key tuple, or None."""
    types: list[type]
    inner: list[bool] | None
    """Which children are containers, the next depth; `None` when all are, or none is."""
    kinds: frozenset[type]
    """The types of those containers: empty at the last depth."""

    def select(self, children: list[Any]) -> list[Any]:
        """The children that are containers."""
        if self.inner is not None:
            return list(compress(children, self.inner))
        return children if self.kinds else []


def _describe(nodes: Sequence[_Node], kinds: frozenset[type]) -> tuple[_Shape, list[Any]] | None:
    """The shape of one depth and its keys; `None` if an object has a key that is not a `str`."""
    if kinds == _LISTS:
        return _Shape.ARRAYS, []
    if kinds == _DICTS and len(nodes) == 1:
        keys = list(nodes[0])
        return (_Shape.OBJECT, keys) if _all_str(keys) else None
    if kinds == _DICTS:
        first = tuple(nodes[0])
        # One size and (reading by key raises otherwise) every key of the first: one key set
        if set(map(len, nodes)) == {len(first)}:
            getters = [itemgetter(key) for key in first]
            return (_Shape.RECORDS, getters) if _all_str(first) else None
    return _mixed(nodes)


def _mixed(nodes: Sequence[_Node]) -> tuple[_Shape, list[Any]] | None:
    specs = [tuple(node) if type(node) is dict else None for node in nodes]
    return (_Shape.MIXED, specs) if _all_str(chain.from_iterable(filter(None, specs))) else None


def _all_str(keys: Iterable[object]) -> bool:
    try:
        "".join(cast("Iterable[str]", keys))  # a str subclass writes the same JSON key
    except TypeError:
        return False
    return True


def _read(nodes: Sequence[_Node], shape: _Shape, keys: list[Any]) -> Iterable[Any] | None:
    """The children of `nodes` in the order of `shape`, or `None` if the keys do not fit it.

    Records are read as they are iterated, and one that lacks a key raises `KeyError` then.
    """
    if shape is _Shape.ARRAYS:
        return nodes[0] if len(nodes) == 1 else chain.from_iterable(nodes)
    if shape is _Shape.OBJECT:
        only = cast("dict[str, Any]", nodes[0])
        return only.values() if list(only) == keys else None
    if shape is _Shape.RECORDS:
        return chain.from_iterable(map(map, cast("list[_Getter]", keys), repeat(nodes)))
    children: list[Any] = []
    for node, spec in zip(nodes, keys, strict=True):
        if spec is None:
            children.extend(node)
        elif tuple(node) == spec:
            children.extend(cast("dict[str, Any]", node).values())
        else:
            return None
    return children


def _depth(nodes: Sequence[_Node], kinds: frozenset[type]) -> tuple[_Depth, list[Any]] | None:
    """One depth read out, with its children; `None` if it holds anything but plain JSON."""
    described = _describe(nodes, kinds)
    if described is None:
        return None
    shape, keys = described
    try:
        if shape is _Shape.OBJECT:  # the keys were just read from the node: nothing to check
            children = list(cast("dict[str, Any]", nodes[0]).values())
        else:
            children = list(_read(nodes, shape, keys) or ())
    except KeyError:  # records of one size but not one key set: read each by its own keys
        described = _mixed(nodes)
        if described is None:
            return None
        shape, keys = described
        children = list(_read(nodes, shape, keys) or ())
    types = list(map(type, children))
    if SCALARS.issuperset(types):  # the usual last depth, told in one pass
        return _Depth(shape, keys, types, None, frozenset()), children
    found = set(types)
    if not found <= _JSON:
        return None
    inner_kinds = frozenset(found & _CONTAINERS)
    inner = None
    if inner_kinds and not found <= _CONTAINERS:
        inner = list(map(_CONTAINERS.__contains__, types))
    return _Depth(shape, keys, types, inner, inner_kinds), children


def _match(nodes: Sequence[_Node], depth: _Depth) -> list[Any] | None:
    """The inner children of `nodes` if they have `depth`'s types when read like it, else `None`.

    Only for nodes known to be `==` to the ones `depth` was read from: same keys, same lengths.
    """
    if not depth.kinds:  # the last depth: only the types are wanted
        return [] if _types_match(nodes, depth) else None
    children = _read(nodes, depth.shape, depth.keys)
    if children is None:
        return None
    children = children if isinstance(children, list) else list(children)
    return depth.select(children) if list(map(type, children)) == depth.types else None


def _types_match(nodes: Sequence[_Node], depth: _Depth) -> bool:
    if depth.shape is _Shape.RECORDS:  # a key at a time, so a change stops it early
        size, types = len(nodes), depth.types
        columns = enumerate(map(map, cast("list[_Getter]", depth.keys), repeat(nodes)))
        return all(
            list(map(type, column)) == types[at * size : (at + 1) * size] for at, column in columns
        )
    children = _read(nodes, depth.shape, depth.keys)
    return children is not None and list(map(type, children)) == depth.types


class Mirror(NamedTuple):
    """An exact copy of a JSON document, and what it takes to match a live one against it.

    Examples:
        >>> live = {"tasks": [{"id": 1, "done": False}]}
        >>> mirror = Mirror.of(live)
        >>> mirror.root == live, mirror.root is live, mirror.matches(live)
        (True, False, True)
        >>> live["tasks"][0]["done"] = 0  # == False, but another JSON value
        >>> mirror.matches(live)
        False
    """

    root: JsonValue
    """The copy: new containers, the same scalars."""
    depths: tuple[_Depth, ...]

    @classmethod
    def of(cls, value: object, *, copy: bool = True) -> Mirror | None:
        """An exact copy of `value`, or `None` if it holds anything but plain JSON types.

        With `copy=False` nothing is copied and `root` is `value` itself: the caller swaps in a
        document that is `==` to `value` and never changes (`_replace(root=...)`) before any
        `matches`, which compares with `root`.
        """
        kind = type(value)
        if kind in SCALARS:
            return cls(cast("JsonValue", value), ())
        if kind not in _CONTAINERS:
            return None
        root = cast("_Node", value)
        root = root.copy() if copy else root
        depths: list[_Depth] = []
        nodes: list[_Node] = [root]
        kinds: frozenset[type] = frozenset({kind})
        while nodes:
            found = _depth(nodes, kinds) if len(depths) < _MAX_DEPTH else None
            if found is None:
                return None
            depth, children = found
            depths.append(depth)
            parents, nodes, kinds = nodes, depth.select(children), depth.kinds
            if copy and nodes:
                nodes = _copy_into(parents, depth, nodes)
        return cls(cast("JsonValue", root), tuple(depths))

    def matches(self, value: object) -> bool:
        """Whether `value` is exactly this document: same types, keys and scalars."""
        if type(value) is not type(self.root):
            return False
        try:
            if value != self.root:
                return False
        except Exception:  # noqa: BLE001 - a foreign __eq__ may raise anything; it proves nothing
            return False
        # == held: every object has the mirror's keys, every array its length; types remain
        nodes: list[_Node] | None = [cast("_Node", value)]
        for depth in self.depths:
            nodes = _match(nodes, depth) if nodes is not None else None
        return nodes is not None


def _copy_into(parents: list[_Node], depth: _Depth, inner: list[_Node]) -> list[_Node]:
    """Copies of the `inner` children, put where the copied `parents` still hold the originals."""
    # The method of the one type there, when there is one: a C call each, not a Python one
    copier: Callable[[_Node], _Node] = _COPIERS.get(depth.kinds, _copy)
    copies = list(map(copier, inner))
    if depth.inner is None and depth.shape is _Shape.ARRAYS and len(parents) == 1:
        cast("list[Any]", parents[0])[:] = copies
        return copies
    owners, slots = _slots(parents, depth)
    if depth.inner is not None:
        owners, slots = compress(owners, depth.inner), compress(slots, depth.inner)
    for owner, slot, copied in zip(owners, slots, copies, strict=True):
        owner[slot] = copied
    return copies


def _slots(parents: list[_Node], depth: _Depth) -> tuple[Iterable[Any], Iterable[Any]]:
    """The parent and the key or index of each child, in the order of the children."""
    if depth.shape is _Shape.RECORDS:
        keys = list(parents[0])
        owners = chain.from_iterable(repeat(parents, len(keys)))
        return owners, chain.from_iterable(map(repeat, keys, repeat(len(parents))))
    owners = chain.from_iterable(map(repeat, parents, map(len, parents)))
    slots = (range(len(node)) if type(node) is list else node for node in parents)
    return owners, chain.from_iterable(slots)


def _copy(node: _Node) -> _Node:
    return node.copy()


_COPIERS: Final[dict[frozenset[type], Callable[[_Node], _Node]]] = {
    _DICTS: cast("Callable[[_Node], _Node]", dict[str, Any].copy),
    _LISTS: cast("Callable[[_Node], _Node]", list[Any].copy),
}


def equal_exactly(a: object, b: object) -> bool:
    """Whether `a` and `b`, already known to be `==`, are also the same JSON, type for type.

    `False` says only that this quick check cannot tell: a subclass, a type outside JSON, or
    objects whose keys are in another order.

    Examples:
        >>> equal_exactly([{"n": 1}, 2.0], [{"n": 1}, 2.0])
        True
        >>> equal_exactly([{"n": 1}], [{"n": True}])
        False
    """
    kind = type(a)
    if kind is not type(b) or kind not in _CONTAINERS:
        return kind is type(b) and kind in SCALARS
    nodes_a: list[_Node] = [cast("_Node", a)]
    nodes_b: list[_Node] = [cast("_Node", b)]
    kinds: frozenset[type] = frozenset({kind})
    for _ in range(_MAX_DEPTH + 1):  # the last round finds no containers left
        found = _depth(nodes_a, kinds) if kinds else None
        if found is None:
            return not kinds
        depth, children = found
        matched = _match(nodes_b, depth)
        if matched is None:
            return False
        nodes_a, nodes_b, kinds = depth.select(children), matched, depth.kinds
    return False


def writes(value: JsonValue, encoded: bytes) -> bool:
    """Whether `value`, plain JSON, serializes to exactly `encoded`: then it is what they hold.

    Equal bytes mean equal JSON, types and key order included: `1`, `1.0` and `true` are written
    differently, and no two distinct strings or numbers are written alike.

    Examples:
        >>> writes({"a": [1, 2.0, True]}, b'{"a":[1,2.0,true]}'), writes({"a": 1}, b'{"a":1.0}')
        (True, False)
    """
    try:
        return pydantic_core.to_json(value) == encoded
    except pydantic_core.PydanticSerializationError:
        return False
