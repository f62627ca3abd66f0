"""JSON Patch (RFC 6902): a type-strict `diff`, and an atomic `apply` that never mutates.

`STATE_DELTA` events carry JSON Patch operations, so every state publish diffs the last
snapshot against the new state. We write our own rather than depend on `jsonpatch` because:

* JSON equality is type-strict and Python's `==` is not: `True == 1`, `1 == 1.0` and
  `[1] == [True]`. A differ built on `==` sends no patch for such a change and the client
  keeps a stale value; telling them apart by serializing each compared value is slow.
* Speed: the diff runs on the hot path of every publish, on documents that mostly did not
  change. Here an unchanged value costs one C-level `==` plus a check of its types, made in a few
  C-level passes over a long array (`agui.patch._equality`), not a Python step per item.
* The core needs no dependency beyond pydantic.

`diff` walks objects member by member, so each change is one `add`, `remove` or `replace`
where it happened. Arrays drop their common prefix and suffix, then align the rest with
Myers' greedy diff: O((N + M) * D) for D items inserted or removed, near-linear when D is
small, so an append, a removal at the front or an edit in the middle of a long list is one
operation. Runs of equal items are measured by comparing slices in C, doubling then halving,
rather than item by item. Past a work budget linear in the lengths, a patience diff takes over:
items found once in each list anchor the alignment, O(N log N). An alignment that costs more
operations than pairing items by position is dropped for that. Items paired up are diffed
recursively, or replaced whole when that is shorter.

`apply` copies on write: each container on the path of an operation is shallow-copied once
per call, then changed in place. The cost follows the paths touched, not the document size;
the input is never changed, so a failed patch leaves nothing behind. The result shares
untouched subtrees with `doc` (and added values with `ops`): treat documents as immutable.

Behind the two functions: `_differ` walks the documents, `_alignment` aligns arrays, and
`_equality` is exact JSON equality, the one family of checks the differ, the aligner and
`agui.state` all use.

Examples:
    >>> ops = diff({"tasks": ["a"]}, {"tasks": ["a", "b"]})
    >>> ops
    [{'op': 'add', 'path': '/tasks/1', 'value': 'b'}]
    >>> apply({"tasks": ["a"]}, ops)
    {'tasks': ['a', 'b']}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple, TypeAlias, cast

from agui.errors import PatchError
from agui.patch._differ import Differ, copy_json, dumps, escape
from agui.patch._equality import same

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["apply", "diff", "escape_pointer_token", "json_equal", "pointer_tokens"]

_Obj: TypeAlias = "dict[str, JsonValue]"
_Arr: TypeAlias = "list[JsonValue]"
_Op: TypeAlias = "Mapping[str, JsonValue]"

_INDEX: Final = re.compile(r"0|[1-9][0-9]*")
_BAD_TILDE: Final = re.compile(r"~(?![01])")
_SHOW_LIMIT: Final = 60
_NEEDS: Final = {
    "op": "every operation names one: add, remove, replace, move, copy or test",
    "path": "every operation needs one, a JSON Pointer such as '/tasks/0'",
    "from": "move and copy need one, the JSON Pointer of the value to take",
    "value": "add, replace and test need one; write null for a null value",
}


def escape_pointer_token(token: str) -> str:
    """Escape an object key as one JSON Pointer token: `~` becomes `~0`, then `/` becomes `~1`.

    Examples:
        >>> escape_pointer_token("a/b~c")
        'a~1b~0c'
    """
    return escape(token)


def pointer_tokens(pointer: str) -> list[str]:
    """The object keys and array indexes a JSON Pointer names, unescaped (`''` names none).

    RFC 6901 order: `~1` first, so `~01` is the key `~1`, not `/`. The pointer is not checked:
    `apply` refuses a malformed one.

    Examples:
        >>> pointer_tokens("/tasks/0/a~1b~01")
        ['tasks', '0', 'a/b~1']
        >>> pointer_tokens("")
        []
    """
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]]


def json_equal(a: JsonValue, b: JsonValue) -> bool:
    """Whether `a` and `b` are the same JSON value: unlike `==`, `true` is not `1` or `1.0`.

    Examples:
        >>> json_equal([1, {"a": None}], [1, {"a": None}]), json_equal([1], [True])
        (True, False)
    """
    return a is b or (a == b and same(a, b))


def diff(old: JsonValue, new: JsonValue) -> list[dict[str, JsonValue]]:
    """The RFC 6902 operations that turn `old` into `new`, comparing JSON types strictly.

    New members are added, missing ones removed, and changed scalars or types replaced where
    they are. Values in the operations are copies: a later change to `new` cannot leak into
    a patch that waits to be sent.

    Args:
        old: The document as the receiver has it.
        new: The document it should become.

    Returns:
        The operations, as dicts with keys in the order `op`, `path`, `value`; empty when
        the documents are the same JSON value.

    Raises:
        PatchError: The documents nest deeper than the walk can follow (Python's recursion
            limit, several hundred levels; JSON that agui reads stops at 200).

    Examples:
        >>> for op in diff({"a": 1, "b": [1, 2], "c": 0}, {"a": True, "b": [2], "d/e": None}):
        ...     print(op)
        {'op': 'replace', 'path': '/a', 'value': True}
        {'op': 'remove', 'path': '/b/0'}
        {'op': 'remove', 'path': '/c'}
        {'op': 'add', 'path': '/d~1e', 'value': None}
    """
    differ = Differ(strict=True)
    try:
        differ.value("", old, new)
    except RecursionError:
        msg = (
            "the documents nest too deep to diff: the walk reached Python's recursion limit; "
            "keep documents shallower (JSON that agui reads stops at 200 levels)"
        )
        raise PatchError(msg) from None
    return differ.ops


def apply(doc: JsonValue, ops: Sequence[Mapping[str, JsonValue]]) -> JsonValue:
    """Apply RFC 6902 operations to `doc` and return the result, all or nothing.

    Neither `doc` nor `ops` is changed. `test` compares as RFC 6902 (4.6) has it: numbers by
    their value (`1` is `1.0`, as in every JavaScript client), every other value by its JSON
    type too (`true` is not `1`, though Python's `==` says so).

    Args:
        doc: The document to patch.
        ops: The operations, each with `op`, `path` and, as its op needs, `value` or `from`.

    Returns:
        The patched document.

    Raises:
        PatchError: An operation is malformed or does not apply; `index` is its position.
            `ops` that is not a list of operations (one operation alone, `None`, a string)
            is refused whole, with `index` `None`.

    Examples:
        >>> doc = {"tasks": [{"title": "a"}, {"title": "b"}]}
        >>> apply(doc, [{"op": "remove", "path": "/tasks/0"},
        ...             {"op": "add", "path": "/tasks/-", "value": {"title": "c"}}])
        {'tasks': [{'title': 'b'}, {'title': 'c'}]}
        >>> try:
        ...     apply(doc, [{"op": "test", "path": "/tasks/0/title", "value": "a"},
        ...                 {"op": "remove", "path": "/tasks/2"}])
        ... except PatchError as error:
        ...     print(error.index, error)
        1 operation 1 (remove): path '/tasks/2' does not exist: the array has 2 items, ...
    """
    _check_list(cast("object", ops))
    patcher = _Patcher(doc)
    for index, op in enumerate(ops):
        try:
            patcher.run(op)
        except _OpError as error:
            name = op.get("op") if isinstance(cast("object", op), Mapping) else None
            label = f" ({name})" if isinstance(name, str) else ""
            msg = f"operation {index}{label}: {error}"
            raise PatchError(msg, index=index) from None
    return patcher.root


def _check_list(ops: object) -> None:
    if isinstance(ops, Sequence) and not isinstance(ops, str | bytes | bytearray):
        return
    if isinstance(ops, Mapping):
        msg = (
            "the patch is one object, not a list of operations; "
            "wrap the operation in a list: [operation]"
        )
    else:
        msg = (
            f"the patch is {'None' if ops is None else 'a ' + type(ops).__name__}, not a list "
            "of operations; pass a list "
            "such as [{'op': 'add', 'path': '/a', 'value': 1}], or [] for no change"
        )
    raise PatchError(msg)


class _OpError(Exception):
    """Why one operation does not apply; `apply` adds which operation it was."""


class _Pointer(NamedTuple):
    member: str
    text: str
    tokens: tuple[str, ...]

    def error(self, depth: int, node: JsonValue, reason: str = "") -> _OpError:
        """That `tokens[depth]` names nothing in `node`, the value at that depth."""
        at = "".join(f"/{escape_pointer_token(token)}" for token in self.tokens[:depth])
        if isinstance(node, dict):
            reason = f"the object at '{at}' has no member {self.tokens[depth]!r}"
        elif not isinstance(node, list):
            reason = f"the value at '{at}' is {_show(node)}, not an object or array"
        return _OpError(f"{self.member} '{self.text}' does not exist: {reason}")


def _require(op: _Op, member: str) -> JsonValue:
    if member not in op:
        msg = f"it has no '{member}' member: {_NEEDS[member]}"
        raise _OpError(msg)
    return op[member]


def _pointer(op: _Op, member: str) -> _Pointer:
    text = _require(op, member)
    if not isinstance(text, str):
        msg = f"'{member}' is {_show(text)}, not a string: {_NEEDS[member]}"
        raise _OpError(msg)
    if text and (text[0] != "/" or _BAD_TILDE.search(text)):
        msg = (
            f"{member} {text!r} is not a JSON Pointer: it must be '' or start with '/', "
            "and a '~' in a key is written '~0' (and a '/' '~1')"
        )
        raise _OpError(msg)
    return _Pointer(member, text, tuple(pointer_tokens(text)))


def _show(value: JsonValue) -> str:
    text = dumps(value)
    return text if len(text) <= _SHOW_LIMIT else f"{text[: _SHOW_LIMIT - 3]}..."


def _child(node: JsonValue, ptr: _Pointer, depth: int) -> JsonValue:
    if isinstance(node, list):
        return node[_index(node, ptr, depth)]
    if not isinstance(node, dict) or ptr.tokens[depth] not in node:
        raise ptr.error(depth, node)
    return node[ptr.tokens[depth]]


def _index(node: _Arr, ptr: _Pointer, depth: int, *, append: bool = False) -> int:
    token, size = ptr.tokens[depth], len(node)
    if append and token == "-":  # noqa: S105 - RFC 6901's name for the end of an array
        return size
    hint = f", so indices run from 0 to {size - 1}" if size else ""
    if append:
        hint = f", so 'add' takes an index from 0 to {size}, or '-' to append"
    if token == "-":  # noqa: S105
        reason = f"'-' is the slot after the last item, which only 'add' can use{hint}"
    elif _INDEX.fullmatch(token) is None:
        reason = f"{token!r} is not an array index{hint}"
        if token.isascii() and token.isdigit():
            reason = f"array indices have no leading zeros, so write '{int(token)}'"
    elif int(token) >= (size + 1 if append else size):
        reason = f"the array has {size} items{hint}"
    else:
        return int(token)
    raise ptr.error(depth, node, reason)


class _Patcher:
    """A document under patching, copied on write."""

    def __init__(self, doc: JsonValue) -> None:
        self.root = doc
        # The containers this call copied, the only ones it may change in place. Holding them,
        # not just their ids, keeps a freed copy's id from being reused by another object.
        self.owned: dict[int, _Obj | _Arr] = {}

    def run(self, op: _Op) -> None:
        if not isinstance(cast("object", op), Mapping):
            msg = f"it is {_show(cast('JsonValue', op))}, not an object with 'op' and 'path'"
            raise _OpError(msg)
        match _require(op, "op"):
            case "add":
                self.put(_pointer(op, "path"), _require(op, "value"), insert=True)
            case "remove":
                self.pop(_pointer(op, "path"))
            case "replace":
                self.put(_pointer(op, "path"), _require(op, "value"), insert=False)
            case "move":
                self.move(_pointer(op, "from"), _pointer(op, "path"))
            case "copy":
                self.copy(_pointer(op, "from"), _pointer(op, "path"))
            case "test":
                self.test(_pointer(op, "path"), _require(op, "value"))
            case name:
                msg = f"unknown op {_show(name)}: {_NEEDS['op']}"
                raise _OpError(msg)

    def own(self, node: JsonValue, ptr: _Pointer, depth: int) -> _Obj | _Arr:
        owned = self.owned.get(id(node))
        if owned is None:
            if type(node) is dict:
                # dict.copy stays a block copy after deletions, where dict() re-inserts each key
                owned = node.copy()
            elif isinstance(node, dict):
                owned = dict(node)
            elif isinstance(node, list):
                owned = list(node)
            else:
                raise ptr.error(depth, node)
            self.owned[id(owned)] = owned
        return owned

    def parent(self, ptr: _Pointer) -> _Obj | _Arr:
        """The container of the target of `ptr`, owned, as is every container above it."""
        node = self.root = self.own(self.root, ptr, 0)
        for depth, token in enumerate(ptr.tokens[:-1]):
            child = self.own(_child(node, ptr, depth), ptr, depth + 1)
            if isinstance(node, dict):
                node[token] = child
            else:
                node[int(token)] = child
            node = child
        return node

    def get(self, ptr: _Pointer) -> JsonValue:
        node = self.root
        for depth in range(len(ptr.tokens)):
            node = _child(node, ptr, depth)
        return node

    def put(self, ptr: _Pointer, value: JsonValue, *, insert: bool) -> None:
        if not ptr.tokens:
            self.root = value
            return
        node, depth = self.parent(ptr), len(ptr.tokens) - 1
        if isinstance(node, dict):
            if not insert:
                _child(node, ptr, depth)
            node[ptr.tokens[depth]] = value
        elif insert:
            node.insert(_index(node, ptr, depth, append=True), value)
        else:
            node[_index(node, ptr, depth)] = value

    def pop(self, ptr: _Pointer) -> JsonValue:
        if not ptr.tokens:
            msg = f"{ptr.member} '' is the whole document, which cannot be removed; replace it"
            raise _OpError(msg)
        node, token = self.parent(ptr), ptr.tokens[-1]
        value = _child(node, ptr, len(ptr.tokens) - 1)
        if isinstance(node, dict):
            del node[token]
        else:
            del node[int(token)]
        return value

    def move(self, source: _Pointer, target: _Pointer) -> None:
        if source.tokens == target.tokens:
            self.get(source)
        elif target.tokens[: len(source.tokens)] == source.tokens:
            msg = (
                f"from '{source.text}' contains path '{target.text}', and a value cannot be "
                "moved into itself; move it elsewhere, or copy it"
            )
            raise _OpError(msg)
        else:
            self.put(target, self.pop(source), insert=True)

    def copy(self, source: _Pointer, target: _Pointer) -> None:
        value = self.get(source)
        # An owned container may still change in place in this patch, and the copy must not
        # change with it. Others never change in place, and nothing inside them is owned.
        self.put(target, copy_json(value) if id(value) in self.owned else value, insert=True)

    def test(self, ptr: _Pointer, expected: JsonValue) -> None:
        actual = self.get(ptr)
        if not _test_equal(actual, expected):
            msg = (
                f"test failed: path '{ptr.text}' holds {_show(actual)}, not {_show(expected)} "
                "(numbers compare by value, other values by their JSON type too: 1 is not true)"
            )
            raise _OpError(msg)


def _test_equal(a: JsonValue, b: JsonValue) -> bool:
    """RFC 6902's equality for `test`: numbers by value, anything else by type and value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_test_equal(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_test_equal, a, b))
    return type(a) is type(b) and a == b
