"""agui.patch: a type-strict RFC 6902 diff, and an atomic apply that never mutates its input."""

from __future__ import annotations

import copy
import json
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, cast

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui import patch
from agui.errors import PatchError
from agui.patch import apply, diff, escape_pointer_token, json_equal, pointer_tokens
from agui.patch._differ import Differ
from agui.patch._equality import Mirror, equal_exactly, writes

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from pydantic import JsonValue

Ops = list[dict[str, "JsonValue"]]


def strictly_equal(a: JsonValue, b: JsonValue) -> bool:
    """The test's own oracle: same Python types all the way down, so True is not 1."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(strictly_equal, a, b))
    return a == b


def jsonpatch_apply(doc: JsonValue, ops: Ops) -> JsonValue:
    """`jsonpatch.apply_patch`, typed: the library ships no type information."""
    untyped = jsonpatch.apply_patch
    return cast("Callable[[JsonValue, Ops], JsonValue]", untyped)(doc, ops)


def tasks(count: int) -> list[JsonValue]:
    return [{"id": i, "title": f"task {i}", "done": False} for i in range(count)]


def loose_diff(old: JsonValue, new: JsonValue) -> Ops:
    """The diff that trusts `==`, as `agui.state` runs it before checking the result."""
    differ = Differ(strict=False)
    differ.value("", old, new)
    return differ.ops


def nested(depth: int) -> JsonValue:
    doc: JsonValue = []
    for _ in range(depth):
        doc = [doc]
    return doc


def containers(doc: object) -> set[int]:
    """The ids of every dict and list in `doc`, itself included."""
    if isinstance(doc, dict):
        members = cast("dict[str, object]", doc)
        return {id(members)}.union(*map(containers, members.values()))
    if isinstance(doc, list):
        items = cast("list[object]", doc)
        return {id(items)}.union(*map(containers, items))
    return set()


def fails(message: str) -> re.Pattern[str]:
    """A `match` for the whole of a PatchError message."""
    return re.compile(f"^{re.escape(message)}$")


# -- diff: objects and scalars ------------------------------------------------------------------


@pytest.mark.parametrize(
    "doc",
    [None, True, 0, 1.5, "", [], {}, [1, [True, None]], {"a": {"b": [1.0, "x"]}}],
    ids=["null", "bool", "int", "float", "str", "empty-list", "empty-dict", "list", "dict"],
)
def test_a_document_diffed_with_an_equal_copy_gives_no_operations(doc: JsonValue) -> None:
    assert diff(doc, doc) == []
    assert diff(doc, copy.deepcopy(doc)) == []


def test_new_member_is_added_not_replaced() -> None:
    assert diff({"a": 1}, {"a": 1, "b": 2}) == [{"op": "add", "path": "/b", "value": 2}]


def test_missing_member_is_removed() -> None:
    assert diff({"a": 1, "b": 2}, {"b": 2}) == [{"op": "remove", "path": "/a"}]


def test_changed_scalar_is_replaced_where_it_is() -> None:
    old: JsonValue = {"a": {"b": {"c": "x", "d": 1}}}
    new: JsonValue = {"a": {"b": {"c": "y", "d": 1}}}
    assert diff(old, new) == [{"op": "replace", "path": "/a/b/c", "value": "y"}]


def test_member_whose_type_changes_is_replaced_whole() -> None:
    ops = diff({"a": {"b": 1}, "c": [1]}, {"a": [1], "c": {"b": 1}})
    assert ops == [
        {"op": "replace", "path": "/a", "value": [1]},
        {"op": "replace", "path": "/c", "value": {"b": 1}},
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [({"a": 1}, [1]), ([1], "x"), (1, 2), (None, {}), (True, 1)],
    ids=["object-to-array", "array-to-string", "number", "null-to-object", "true-to-1"],
)
def test_root_that_changes_type_or_scalar_value_is_replaced_at_the_empty_path(
    old: JsonValue, new: JsonValue
) -> None:
    assert diff(old, new) == [{"op": "replace", "path": "", "value": new}]


@pytest.mark.parametrize(
    ("old", "new", "ops"),
    [
        ([1], [True], [{"op": "replace", "path": "/0", "value": True}]),
        ([True], [1], [{"op": "replace", "path": "/0", "value": 1}]),
        ({"a": 1}, {"a": 1.0}, [{"op": "replace", "path": "/a", "value": 1.0}]),
        ({"a": 0}, {"a": False}, [{"op": "replace", "path": "/a", "value": False}]),
        ([[0.0]], [[False]], [{"op": "replace", "path": "/0/0", "value": False}]),
        (
            {"a": [{"b": 1}]},
            {"a": [{"b": True}]},
            [{"op": "replace", "path": "/a/0/b", "value": True}],
        ),
    ],
    ids=[
        "1-to-true",
        "true-to-1",
        "1-to-1.0",
        "0-to-false",
        "nested-0.0-to-false",
        "deep-1-to-true",
    ],
)
def test_values_python_calls_equal_differ_when_their_json_types_do(
    old: JsonValue, new: JsonValue, ops: Ops
) -> None:
    assert diff(old, new) == ops
    assert strictly_equal(apply(old, ops), new)


def test_null_members_are_values_that_are_added_and_removed() -> None:
    assert diff({}, {"a": None}) == [{"op": "add", "path": "/a", "value": None}]
    assert diff({"a": None}, {}) == [{"op": "remove", "path": "/a"}]
    assert diff({"a": None}, {"a": 0}) == [{"op": "replace", "path": "/a", "value": 0}]


def test_keys_with_slash_and_tilde_are_escaped_in_paths() -> None:
    ops = diff({"a/b": 1, "m~n": {"~1": 1}}, {"a/b": 2, "m~n": {"~1": 2}, "/": 3})
    assert ops == [
        {"op": "replace", "path": "/a~1b", "value": 2},
        {"op": "replace", "path": "/m~0n/~01", "value": 2},
        {"op": "add", "path": "/~1", "value": 3},
    ]


def test_operations_list_their_keys_in_the_order_op_path_value() -> None:
    ops = diff({"a": 1, "b": 2, "l": [1, 2]}, {"a": 3, "c": 4, "l": [1]})
    assert [list(op) for op in ops] == [
        ["op", "path", "value"],
        ["op", "path"],
        ["op", "path"],
        ["op", "path", "value"],
    ]


def test_values_in_operations_are_copies_of_the_new_document() -> None:
    new: dict[str, JsonValue] = {"a": {"b": [1]}}
    ops = diff({}, new)
    cast("list[JsonValue]", cast("dict[str, JsonValue]", new["a"])["b"]).append(2)
    assert ops == [{"op": "add", "path": "/a", "value": {"b": [1]}}]


def test_members_are_compared_whatever_their_order() -> None:
    assert diff({"a": 1, "b": [1]}, {"b": [1], "a": 1}) == []


def test_dict_and_str_subclasses_compare_as_the_json_they_are() -> None:
    class Name(str):
        __slots__ = ()

    old = cast("JsonValue", OrderedDict(a=[1], b="x"))
    assert diff(old, {"b": Name("x"), "a": [1]}) == []
    assert json_equal(cast("JsonValue", OrderedDict(a=1)), {"a": 1})
    assert not json_equal(cast("JsonValue", OrderedDict(a=1)), {"a": True})


def test_equal_scalars_that_are_distinct_objects_are_equal() -> None:
    big, same = int("12345678901234567890"), int("12345678901234567890")
    assert big is not same
    assert json_equal(big, same)
    assert diff([big, "x"], [same, "x"]) == []


def test_values_outside_json_compare_by_type_and_equality() -> None:
    assert json_equal(cast("JsonValue", (1, 2)), cast("JsonValue", (1, 2)))
    assert not json_equal(cast("JsonValue", (1, 2)), [1, 2])


# -- diff: arrays -------------------------------------------------------------------------------


def test_append_to_a_long_list_is_one_add() -> None:
    old, new = tasks(10_000), tasks(10_001)
    assert diff(old, new) == [{"op": "add", "path": "/10000", "value": new[-1]}]


def test_removal_at_the_front_of_a_long_list_is_one_remove() -> None:
    old = tasks(10_000)
    assert diff(old, old[1:]) == [{"op": "remove", "path": "/0"}]


def test_edit_in_the_middle_of_a_long_list_is_one_replace_inside_the_item() -> None:
    old = tasks(10_000)
    new = copy.deepcopy(old)
    new[5_000] = {"id": 5_000, "title": "task 5000", "done": True}
    assert diff(old, new) == [{"op": "replace", "path": "/5000/done", "value": True}]


def test_removal_edit_and_append_together_are_three_operations() -> None:
    old = tasks(10_000)
    new = copy.deepcopy(old[1:]) + tasks(10_001)[-1:]
    cast("dict[str, JsonValue]", new[4_999])["title"] = "edited"
    ops = diff(old, new)
    assert ops == [
        {"op": "remove", "path": "/0"},
        {"op": "replace", "path": "/4999/title", "value": "edited"},
        {"op": "add", "path": "/9999", "value": new[-1]},
    ]
    assert strictly_equal(apply(old, ops), new)


def test_insertion_in_the_middle_is_one_add() -> None:
    old: list[JsonValue] = list(range(100))
    new = [*old[:40], "new", *old[40:]]
    assert diff(old, new) == [{"op": "add", "path": "/40", "value": "new"}]


def test_removals_come_from_the_highest_index_down() -> None:
    old: list[JsonValue] = list(range(10))
    assert diff(old, [0, 1, 5, 6, 7, 8, 9]) == [
        {"op": "remove", "path": "/4"},
        {"op": "remove", "path": "/3"},
        {"op": "remove", "path": "/2"},
    ]


def test_a_swap_is_a_remove_and_an_add() -> None:
    old: list[JsonValue] = ["a", "b", "c", "d"]
    new: list[JsonValue] = ["a", "c", "b", "d"]
    ops = diff(old, new)
    assert len(ops) == 2
    assert strictly_equal(apply(old, ops), new)


def test_many_scattered_removals_from_a_long_list_are_one_remove_each() -> None:
    old = tasks(3_000)
    new = [item for index, item in enumerate(old) if index % 7]
    ops = diff(old, new)
    assert len(ops) == 429
    assert all(op["op"] == "remove" for op in ops)
    assert strictly_equal(apply(old, ops), new)


def test_many_scattered_edits_and_an_insertion_stay_one_operation_each() -> None:
    old = tasks(3_000)
    new: list[JsonValue] = [{"id": -1}, *copy.deepcopy(old)]
    for index in range(5, 3_001, 10):
        cast("dict[str, JsonValue]", new[index])["done"] = True
    ops = diff(old, new)
    assert len(ops) == 301
    assert ops[0] == {"op": "add", "path": "/0", "value": {"id": -1}}
    assert strictly_equal(apply(old, ops), new)


def test_lists_of_repeated_items_with_no_cheap_alignment_are_paired_by_position() -> None:
    zeros: list[JsonValue] = [0] * 1_500
    ones: list[JsonValue] = [1] * 1_500
    old, new = zeros + ones, ones + zeros
    ops = diff(old, new)
    assert len(ops) == 3_000
    assert strictly_equal(apply(old, ops), new)


def test_an_alignment_costlier_than_pairing_by_position_is_not_used() -> None:
    old: list[JsonValue] = [1, 1, 1, 2]
    new: list[JsonValue] = [2, 0, 0, 0]
    assert diff(old, new) == [
        {"op": "replace", "path": "/0", "value": 2},
        {"op": "replace", "path": "/1", "value": 0},
        {"op": "replace", "path": "/2", "value": 0},
        {"op": "replace", "path": "/3", "value": 0},
    ]


def test_paired_items_that_share_nothing_are_replaced_whole() -> None:
    old: list[JsonValue] = [{"id": 1, "title": "a", "done": False}]
    new: list[JsonValue] = [{"id": 2, "title": "b", "done": True}]
    assert diff(old, new) == [{"op": "replace", "path": "/0", "value": new[0]}]
    assert diff([{"id": 1, "title": "a"}], [{"id": 1, "title": "b"}]) == [
        {"op": "replace", "path": "/0/title", "value": "b"}
    ]


def test_anchors_are_confirmed_strictly_not_trusted_to_their_repr() -> None:
    class Disguised(int):
        def __repr__(self) -> str:
            return "'x'"

    old: list[JsonValue] = [*range(2_000), "x", *range(2_000, 4_000)]
    new: list[JsonValue] = [*range(1, 4_000, 2), Disguised(7), *range(0, 4_000, 2)]
    ops = diff(old, new)
    assert strictly_equal(apply(old, ops), new)


def test_items_that_cannot_be_aligned_cheaply_are_paired_by_position() -> None:
    old: list[JsonValue] = list(range(3_000))
    new: list[JsonValue] = [*reversed(range(3_000)), -1]
    ops = diff(old, new)
    assert len(ops) == 3_001
    assert ops[-1] == {"op": "add", "path": "/3000", "value": -1}
    assert strictly_equal(apply(old, ops), new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([1, 2, 3], []),
        ([], [1, 2, 3]),
        ([1, 2, 3, 4], [1, 4]),
        ([1, 4], [1, 2, 3, 4]),
        ([1, 1, 1, 2], [2, 1, 1, 1]),
        (["x", 1, "y"], [True, 1, False, "y"]),
        ([{"a": 1}, {"b": 2}], [{"a": 2}, {"c": 2}, {"b": 2}]),
    ],
    ids=["clear", "fill", "cut-middle", "grow-middle", "rotate", "type-changes", "objects"],
)
def test_array_edits_apply_back_to_the_new_array(old: JsonValue, new: JsonValue) -> None:
    assert strictly_equal(apply(old, diff(old, new)), new)
    assert strictly_equal(jsonpatch_apply(old, diff(old, new)), new)


def test_added_members_come_in_the_new_objects_order_wherever_they_are() -> None:
    old: dict[str, JsonValue] = {"a": 1, "b": 2}
    new: dict[str, JsonValue] = {"c": 3, "a": 1, "d": 4, "b": 2}
    assert diff(old, new) == [
        {"op": "add", "path": "/c", "value": 3},
        {"op": "add", "path": "/d", "value": 4},
    ]


# -- diff: skipping what did not change ---------------------------------------------------------


@pytest.mark.parametrize(
    ("position", "value"),
    [(0, True), (37, 1.0), (50, True), (98, 1.0), (99, True)],
    ids=["first", "early", "middle", "late", "last"],
)
def test_a_long_run_that_differs_only_in_json_types_is_not_skipped(
    position: int, value: JsonValue
) -> None:
    old: list[JsonValue] = [0, *([1] * 100), 0]
    new = [*old]
    new[position + 1] = value
    assert diff(old, new) == [{"op": "replace", "path": f"/{position + 1}", "value": value}]
    records = tasks(100)
    changed = copy.deepcopy(records)
    cast("dict[str, JsonValue]", changed[position])["done"] = 0
    assert diff(records, changed) == [{"op": "replace", "path": f"/{position}/done", "value": 0}]


def test_a_type_change_in_a_long_common_suffix_is_not_skipped() -> None:
    old: list[JsonValue] = [0, *([1] * 100)]
    new: list[JsonValue] = [2, *([1] * 60), True, *([1] * 39)]
    assert diff(old, new) == [
        {"op": "replace", "path": "/0", "value": 2},
        {"op": "replace", "path": "/61", "value": True},
    ]


def test_a_run_of_subclassed_items_that_are_the_same_json_is_skipped() -> None:
    old = [cast("JsonValue", OrderedDict(a=1)) for _ in range(50)]
    assert diff(old, [{"a": 1} for _ in range(50)]) == []
    same: list[JsonValue] = [{"a": 1}] * 30
    assert diff([*same, 0], [*same, 1]) == [{"op": "replace", "path": "/30", "value": 1}]


def test_a_loose_diff_misses_only_what_equals_hides() -> None:
    assert loose_diff({"a": [1, 2]}, {"a": [True, 2]}) == []
    assert loose_diff({"a": 1, "b": 2}, {"a": 1, "b": 3}) == [
        {"op": "replace", "path": "/b", "value": 3}
    ]
    assert loose_diff(1, 2) == [{"op": "replace", "path": "", "value": 2}]
    assert loose_diff([1], [1]) == []


# -- exact comparison: Mirror and equal_exactly -------------------------------------------------


def test_a_mirror_of_a_scalar_matches_only_that_scalar_of_that_type() -> None:
    mirror = Mirror.of(1)
    assert mirror is not None
    true: JsonValue = True
    assert mirror.matches(1)
    assert not mirror.matches(true)
    assert not mirror.matches(2)


@pytest.mark.parametrize(
    "doc",
    [
        (1, 2),
        {"a": (1, 2)},
        OrderedDict[str, int](a=1),
        [{"a": 1}, {1: 2}],
        {1: "a"},
        [{"a": 1}, {"b": 1}, {2: 1}],
        [1, [2, 3], {"a": [4]}, {"b": {"c": set[int]()}}],
    ],
    ids=[
        "tuple",
        "nested-tuple",
        "dict-subclass",
        "record-key-not-str",
        "object-key-not-str",
        "mixed-key-not-str",
        "set-deep-inside",
    ],
)
def test_a_mirror_refuses_what_is_not_plain_json(doc: object) -> None:
    assert Mirror.of(doc) is None


@pytest.mark.parametrize(
    ("doc", "changed"),
    [
        ({"a": [1, 2]}, {"a": [1, 2.0]}),
        ([{"x": 1}, {"x": 1}], [{"x": 1}, {"x": True}]),
        ([{"x": 0.0, "y": [1]}], [{"x": 0, "y": [1]}]),
        ([[1, [False]], {"a": [0]}], [[1, [0]], {"a": [0]}]),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"a": [1], "b": 2}, {"b": 2, "a": [1]}),
        ([{"a": 1, "b": 2}, [3]], [{"b": 2, "a": 1}, [3]]),
        ({"a": [1]}, {"a": cast("JsonValue", (1,))}),
        ([1, 2], [1, 2, 3]),
    ],
    ids=[
        "int-to-float",
        "record-int-to-bool",
        "float-to-int",
        "deep-bool-to-int",
        "object-keys-reordered",
        "object-of-containers-keys-reordered",
        "mixed-keys-reordered",
        "list-to-tuple",
        "longer",
    ],
)
def test_a_mirror_matches_the_document_and_not_one_changed(
    doc: JsonValue, changed: JsonValue
) -> None:
    mirror = Mirror.of(doc)
    assert mirror is not None
    assert mirror.matches(doc)
    assert mirror.matches(copy.deepcopy(doc))
    assert not mirror.matches(changed)


def test_a_mirror_sees_a_change_made_in_place_deep_inside() -> None:
    doc: dict[str, JsonValue] = {"tasks": tasks(100)}
    mirror = Mirror.of(doc)
    assert mirror is not None
    cast("dict[str, JsonValue]", tasks_of(doc)[60])["id"] = 60.0
    assert not mirror.matches(doc)
    cast("dict[str, JsonValue]", tasks_of(doc)[60])["id"] = 60
    assert mirror.matches(doc)


def tasks_of(doc: dict[str, JsonValue]) -> list[JsonValue]:
    return cast("list[JsonValue]", doc["tasks"])


def test_a_mirror_matches_records_whose_keys_changed_order_and_zero_of_either_sign() -> None:
    doc: list[JsonValue] = [{"a": 1, "b": 0.0}, {"a": 2, "b": 1.5}]
    mirror = Mirror.of(doc)
    assert mirror is not None
    doc[0] = {"b": -0.0, "a": 1}
    assert mirror.matches(doc)


def test_a_live_value_whose_equality_raises_matches_nothing() -> None:
    class Raising:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError

        __hash__ = None  # type: ignore[assignment]

    mirror = Mirror.of({"a": 1})
    assert mirror is not None
    assert not mirror.matches({"a": Raising()})


def test_a_mirror_without_a_copy_reads_the_document_in_place() -> None:
    doc: JsonValue = {"a": [1, {"b": 2}]}
    mirror = Mirror.of(doc, copy=False)
    assert mirror is not None
    assert mirror.root is doc
    assert mirror._replace(root=copy.deepcopy(doc)).matches(doc)


@pytest.mark.parametrize(
    "doc",
    [
        [{"a": [1], "b": {"c": 2}}, {"a": [3], "b": {"c": 4}}],
        [[1, [2]], [[3], 4], {"a": [5], "b": 6}],
        {"a": [[1], [2]], "b": [{"c": 1}, [2], 3]},
        [{"a": 1}, {"b": [2]}],
    ],
    ids=["records-of-containers", "arrays-and-objects", "object-of-mixed", "records-unlike"],
)
def test_a_mirror_copies_every_container_of_any_shape(doc: JsonValue) -> None:
    mirror = Mirror.of(doc)
    assert mirror is not None
    assert strictly_equal(mirror.root, doc)
    assert not containers(mirror.root) & containers(doc)
    assert mirror.matches(copy.deepcopy(doc))


@pytest.mark.parametrize(
    ("a", "b", "same_json"),
    [
        ([{"n": 1}, 2.0], [{"n": 1}, 2.0], True),
        ([{"n": 1}], [{"n": True}], False),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, False),
        ([cast("JsonValue", OrderedDict[str, int](a=1))], [{"a": 1}], False),
        ([(1,)], [(1,)], False),
        (1, 1, True),
        (1, True, False),
        ((1,), (1,), False),
        ([cast("JsonValue", [])], [cast("JsonValue", [])], True),
    ],
    ids=[
        "same",
        "bool-for-int",
        "key-order",
        "subclass",
        "tuple-inside",
        "scalar",
        "scalar-type",
        "tuple",
        "empty-inside",
    ],
)
def test_equal_exactly_says_yes_only_to_the_same_plain_json(
    a: JsonValue, b: JsonValue, *, same_json: bool
) -> None:
    assert a == b
    assert equal_exactly(a, b) is same_json


def test_exact_comparisons_stop_at_a_thousand_levels() -> None:
    assert equal_exactly(nested(999), nested(999))
    assert Mirror.of(nested(999)) is not None
    assert not equal_exactly(nested(1_000), nested(1_000))
    assert Mirror.of(nested(1_000)) is None


def test_only_exactly_the_same_bytes_vouch_for_a_document() -> None:
    assert writes({"a": [1, 2.0, True, None]}, b'{"a":[1,2.0,true,null]}')
    assert not writes({"a": 1}, b'{"a":1.0}')
    assert not writes("\ud800", b'"\\ud800"')


# -- apply: each operation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "op", "result"),
    [
        ({"a": 1}, {"op": "add", "path": "/b", "value": [2]}, {"a": 1, "b": [2]}),
        ({"a": 1}, {"op": "add", "path": "/a", "value": None}, {"a": None}),
        ([1, 2], {"op": "add", "path": "/1", "value": 9}, [1, 9, 2]),
        ([1, 2], {"op": "add", "path": "/2", "value": 9}, [1, 2, 9]),
        ([1, 2], {"op": "add", "path": "/-", "value": 9}, [1, 2, 9]),
        ({"a": 1}, {"op": "add", "path": "", "value": [1]}, [1]),
        ({"a": {"b": []}}, {"op": "add", "path": "/a/b/0", "value": 1}, {"a": {"b": [1]}}),
        ({"a": 1, "b": 2}, {"op": "remove", "path": "/a"}, {"b": 2}),
        ([1, 2, 3], {"op": "remove", "path": "/1"}, [1, 3]),
        ({"a": 1}, {"op": "replace", "path": "/a", "value": {"b": 2}}, {"a": {"b": 2}}),
        ([1, 2], {"op": "replace", "path": "/0", "value": True}, [True, 2]),
        ({"a": 1}, {"op": "replace", "path": "", "value": "root"}, "root"),
        ({"a": [1], "b": {}}, {"op": "move", "from": "/a", "path": "/b/a"}, {"b": {"a": [1]}}),
        ([1, 2, 3], {"op": "move", "from": "/0", "path": "/2"}, [2, 3, 1]),
        ({"a": {"b": 1}}, {"op": "move", "from": "/a/b", "path": ""}, 1),
        ({"a": [1]}, {"op": "copy", "from": "/a", "path": "/b"}, {"a": [1], "b": [1]}),
        ([1, 2], {"op": "copy", "from": "/0", "path": "/-"}, [1, 2, 1]),
        ({"a": 1}, {"op": "test", "path": "/a", "value": 1}, {"a": 1}),
        ({"a": [1.0]}, {"op": "test", "path": "", "value": {"a": [1.0]}}, {"a": [1.0]}),
    ],
    ids=[
        "add-member",
        "add-over-member",
        "add-insert",
        "add-at-length",
        "add-dash",
        "add-root",
        "add-nested",
        "remove-member",
        "remove-item",
        "replace-member",
        "replace-item",
        "replace-root",
        "move-member",
        "move-item",
        "move-to-root",
        "copy-member",
        "copy-item",
        "test-member",
        "test-root",
    ],
)
def test_each_operation_does_what_rfc_6902_says(
    doc: JsonValue, op: dict[str, JsonValue], result: JsonValue
) -> None:
    assert strictly_equal(apply(doc, [op]), result)
    assert strictly_equal(jsonpatch_apply(doc, [op]), result)


def test_move_to_where_the_value_is_keeps_the_member_order() -> None:
    doc: JsonValue = {"a": 1, "b": 2}
    result = apply(doc, [{"op": "move", "from": "/a", "path": "/a"}])
    assert list(cast("dict[str, JsonValue]", result)) == ["a", "b"]


@pytest.mark.parametrize(
    ("path", "key"),
    [("/a~1b", "a/b"), ("/m~0n", "m~n"), ("/~01", "~1"), ("/", "")],
    ids=["slash", "tilde", "tilde-one", "empty-key"],
)
def test_pointer_tokens_are_unescaped_slash_first(path: str, key: str) -> None:
    assert apply({}, [{"op": "add", "path": path, "value": 1}]) == {key: 1}


def test_an_escaped_key_is_a_pointer_token_that_names_the_key() -> None:
    for key in ["", "a", "/", "~", "~1", "~0", "a/b~c", "~/~/"]:
        token = escape_pointer_token(key)
        assert "/" not in token
        assert apply({}, [{"op": "add", "path": f"/{token}", "value": key}]) == {key: key}


@given(st.lists(st.text(alphabet="ab/~01", max_size=6), max_size=4))
def test_pointer_tokens_read_back_the_keys_their_escaped_tokens_name(keys: list[str]) -> None:
    pointer = "".join(f"/{escape_pointer_token(key)}" for key in keys)
    assert pointer_tokens(pointer) == keys


def test_the_test_operation_compares_numbers_by_value_and_other_values_by_type_too() -> None:
    doc: JsonValue = {"a": 1, "b": [0], "c": {"d": 1.0}, "t": True, "z": None, "s": "1"}
    # RFC 6902 (4.6): numbers are equal when their values are; the JS clients agree.
    accepted: list[tuple[str, JsonValue]] = [("/a", 1.0), ("/b", [0.0]), ("/c", {"d": 1})]
    for path, value in [*accepted, ("/t", True)]:
        assert apply(doc, [{"op": "test", "path": path, "value": value}]) == doc
        assert jsonpatch_apply(doc, [{"op": "test", "path": path, "value": value}]) == doc
    refused: list[tuple[str, JsonValue]] = [
        ("/a", True),
        ("/t", 1),
        ("/b", [False]),
        ("/c", {"d": 1, "e": 2}),
        ("/b", [0, 0]),
        ("/z", 0),
        ("/s", 1),
        ("/a", "1"),
    ]
    for path, value in refused:
        with pytest.raises(PatchError, match=r"^operation 0 \(test\): test failed: path "):
            apply(doc, [{"op": "test", "path": path, "value": value}])


# -- apply: errors ------------------------------------------------------------------------------

DOC: JsonValue = {"tasks": [1, 2, 3], "a": {"b": 1}, "s": "x"}
TO_2 = ", so indices run from 0 to 2"
ADD_HINT = ", so 'add' takes an index from 0 to 3, or '-' to append"
DASH = "'-' is the slot after the last item, which only 'add' can use" + TO_2
NOT_A_POINTER = (
    "is not a JSON Pointer: it must be '' or start with '/', and a '~' in a key is written '~0'"
    " (and a '/' '~1')"
)
NO_VALUE = "it has no 'value' member: add, replace and test need one; write null for a null value"
NO_FROM = "it has no 'from' member: move and copy need one, the JSON Pointer of the value to take"
NEEDS_PATH = "every operation needs one, a JSON Pointer such as '/tasks/0'"
NO_MEMBER = "does not exist: the object at '' has no member 'nope'"
INTO_ITSELF = (
    "from '/a' contains path '/a/b/c', and a value cannot be moved into itself; move it"
    " elsewhere, or copy it"
)
ERRORS: list[tuple[dict[str, JsonValue], str]] = [
    (
        {"op": "remove", "path": "/tasks/5"},
        "path '/tasks/5' does not exist: the array has 3 items" + TO_2,
    ),
    (
        {"op": "add", "path": "/tasks/4", "value": 0},
        "path '/tasks/4' does not exist: the array has 3 items" + ADD_HINT,
    ),
    ({"op": "remove", "path": "/nope"}, f"path '/nope' {NO_MEMBER}"),
    (
        {"op": "replace", "path": "/a/c", "value": 1},
        "path '/a/c' does not exist: the object at '/a' has no member 'c'",
    ),
    (
        {"op": "add", "path": "/x/y", "value": 1},
        "path '/x/y' does not exist: the object at '' has no member 'x'",
    ),
    (
        {"op": "add", "path": "/s/y", "value": 1},
        "path '/s/y' does not exist: the value at '/s' is \"x\", not an object or array",
    ),
    (
        {"op": "test", "path": "/a/b/c", "value": 1},
        "path '/a/b/c' does not exist: the value at '/a/b' is 1, not an object or array",
    ),
    (
        {"op": "remove", "path": "/tasks/01"},
        "path '/tasks/01' does not exist: array indices have no leading zeros, so write '1'",
    ),
    (
        {"op": "remove", "path": "/tasks/x"},
        "path '/tasks/x' does not exist: 'x' is not an array index" + TO_2,
    ),
    (
        {"op": "remove", "path": "/tasks/-1"},
        "path '/tasks/-1' does not exist: '-1' is not an array index" + TO_2,
    ),
    ({"op": "replace", "path": "/tasks/-", "value": 1}, f"path '/tasks/-' does not exist: {DASH}"),
    ({"op": "add", "path": "/tasks/-/x", "value": 1}, f"path '/tasks/-/x' does not exist: {DASH}"),
    ({"op": "move", "from": "/tasks/-", "path": "/b"}, f"from '/tasks/-' does not exist: {DASH}"),
    ({"op": "copy", "from": "/nope", "path": "/b"}, f"from '/nope' {NO_MEMBER}"),
    ({"op": "remove", "path": "tasks"}, f"path 'tasks' {NOT_A_POINTER}"),
    ({"op": "remove", "path": "/a~2b"}, f"path '/a~2b' {NOT_A_POINTER}"),
    ({"op": "move", "from": "/a~", "path": "/b"}, f"from '/a~' {NOT_A_POINTER}"),
    ({"op": "remove", "path": 1}, f"'path' is 1, not a string: {NEEDS_PATH}"),
    (
        {"op": "remove", "path": ""},
        "path '' is the whole document, which cannot be removed; replace it",
    ),
    ({"op": "move", "from": "/a", "path": "/a/b/c"}, INTO_ITSELF),
    (
        {"op": "test", "path": "/a/b", "value": True},
        (
            "test failed: path '/a/b' holds 1, not true (numbers compare by value, other values "
            "by their JSON type too: 1 is not true)"
        ),
    ),
    (
        {"op": "frob", "path": "/a"},
        'unknown op "frob": every operation names one: add, remove, replace, move, copy or test',
    ),
    ({"op": "add", "path": "/a"}, NO_VALUE),
    ({"op": "replace", "path": "/a"}, NO_VALUE),
    ({"op": "test", "path": "/a"}, NO_VALUE),
    ({"op": "move", "path": "/a"}, NO_FROM),
    ({"op": "copy", "path": "/a"}, NO_FROM),
    ({"op": "remove"}, f"it has no 'path' member: {NEEDS_PATH}"),
]
ERROR_IDS = [
    "index-out-of-range",
    "add-past-the-end",
    "missing-member",
    "replace-missing-member",
    "missing-parent",
    "member-of-a-string",
    "member-of-a-number",
    "leading-zero",
    "not-an-index",
    "negative-index",
    "dash-in-replace",
    "dash-inside-add-path",
    "dash-in-from",
    "copy-from-missing",
    "no-leading-slash",
    "bad-escape",
    "trailing-tilde",
    "path-not-a-string",
    "remove-root",
    "move-into-own-child",
    "test-failure",
    "unknown-op",
    "add-without-value",
    "replace-without-value",
    "test-without-value",
    "move-without-from",
    "copy-without-from",
    "remove-without-path",
]


@pytest.mark.parametrize(("op", "message"), ERRORS, ids=ERROR_IDS)
def test_an_operation_that_does_not_apply_raises_with_its_index_and_the_fix(
    op: dict[str, JsonValue], message: str
) -> None:
    ops: Ops = [{"op": "test", "path": "/s", "value": "x"}, op]
    with pytest.raises(PatchError, match=fails(f"operation 1 ({op['op']}): {message}")) as caught:
        apply(DOC, ops)
    assert caught.value.index == 1
    assert caught.value.code == "PATCH_ERROR"


def test_an_empty_array_has_no_index_to_remove() -> None:
    message = "operation 0 (remove): path '/0' does not exist: the array has 0 items"
    with pytest.raises(PatchError, match=fails(message)):
        apply([], [{"op": "remove", "path": "/0"}])


def test_an_operation_without_a_string_op_is_named_by_its_index_only() -> None:
    missing = "operation 0: it has no 'op' member: every operation names one: add, remove, "
    with pytest.raises(PatchError, match=f"^{re.escape(missing)}"):
        apply({}, [{"path": "/a"}])
    with pytest.raises(PatchError, match=re.escape("operation 0: unknown op 1: every operation")):
        apply({}, [{"op": 1, "path": "/a"}])


def test_an_operation_that_is_not_an_object_is_refused() -> None:
    ops = cast("Sequence[Mapping[str, JsonValue]]", ["add"])
    message = "operation 0: it is \"add\", not an object with 'op' and 'path'"
    with pytest.raises(PatchError, match=fails(message)):
        apply({}, ops)


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(PatchError, match=r"holds \"x{56}\.\.\., not 1 "):
        apply({"a": "x" * 100}, [{"op": "test", "path": "/a", "value": 1}])


# -- apply: atomic, and never mutating ----------------------------------------------------------


def test_a_failed_patch_changes_nothing_and_raises_at_the_failing_index() -> None:
    doc: JsonValue = {"tasks": [{"title": "a"}], "n": 1}
    before = copy.deepcopy(doc)
    ops: Ops = [
        {"op": "add", "path": "/tasks/-", "value": {"title": "b"}},
        {"op": "replace", "path": "/tasks/0/title", "value": "z"},
        {"op": "remove", "path": "/n"},
        {"op": "remove", "path": "/n"},
    ]
    ops_before = copy.deepcopy(ops)
    with pytest.raises(PatchError, match=r"^operation 3 \(remove\): path '/n' does not") as caught:
        apply(doc, ops)
    assert caught.value.index == 3
    assert strictly_equal(doc, before)
    assert ops == ops_before


def test_a_successful_patch_leaves_the_input_and_the_operations_unchanged() -> None:
    doc: JsonValue = {"tasks": [{"title": "a", "tags": []}], "meta": {"n": 1}}
    before = copy.deepcopy(doc)
    value: JsonValue = {"title": "b", "tags": []}
    ops: Ops = [
        {"op": "add", "path": "/tasks/-", "value": value},
        {"op": "add", "path": "/tasks/1/tags/-", "value": "new"},
        {"op": "add", "path": "/tasks/0/tags/-", "value": "x"},
        {"op": "move", "from": "/meta/n", "path": "/tasks/0/n"},
    ]
    result = apply(doc, ops)
    assert strictly_equal(doc, before)
    assert value == {"title": "b", "tags": []}
    assert result == {
        "tasks": [{"title": "a", "tags": ["x"], "n": 1}, {"title": "b", "tags": ["new"]}],
        "meta": {},
    }


def test_the_result_shares_untouched_subtrees_with_the_input() -> None:
    doc: dict[str, JsonValue] = {"big": list(range(100)), "small": {"n": 1}}
    result = cast(
        "dict[str, JsonValue]", apply(doc, [{"op": "replace", "path": "/small/n", "value": 2}])
    )
    assert result["big"] is doc["big"]
    assert result["small"] is not doc["small"]
    assert doc["small"] == {"n": 1}


def test_patching_a_result_again_never_reaches_the_first_input() -> None:
    doc: JsonValue = {"a": {"b": [1]}}
    first = apply(doc, [{"op": "add", "path": "/c", "value": 1}])
    second = apply(first, [{"op": "add", "path": "/a/b/-", "value": 2}])
    assert doc == {"a": {"b": [1]}}
    assert first == {"a": {"b": [1]}, "c": 1}
    assert second == {"a": {"b": [1, 2]}, "c": 1}


def test_a_copy_of_a_changed_container_does_not_follow_later_changes() -> None:
    doc: JsonValue = {"a": {"x": 1}, "c": {"z": 1}}
    ops: Ops = [
        {"op": "add", "path": "/a/y", "value": 2},
        {"op": "copy", "from": "/a", "path": "/b"},
        {"op": "add", "path": "/b/w", "value": 3},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "add", "path": "/d/w", "value": 3},
    ]
    assert apply(doc, ops) == {
        "a": {"x": 1, "y": 2},
        "b": {"x": 1, "y": 2, "w": 3},
        "c": {"z": 1},
        "d": {"z": 1, "w": 3},
    }
    assert doc == {"a": {"x": 1}, "c": {"z": 1}}


def test_patching_an_object_of_a_dict_subclass_gives_a_plain_dict() -> None:
    doc = cast("JsonValue", OrderedDict(a=1))
    patched = apply(doc, [{"op": "add", "path": "/b", "value": 2}])
    assert type(patched) is dict
    assert patched == {"a": 1, "b": 2}


def test_an_empty_patch_returns_the_document_itself() -> None:
    doc: JsonValue = {"a": 1}
    assert apply(doc, []) is doc


# -- properties ---------------------------------------------------------------------------------

keys = st.text(alphabet="ab/~01", max_size=4) | st.text(max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, 1.0, -1.0])
    | st.text(max_size=5)
)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(keys, children, max_size=5),
    max_leaves=30,
)
small_lists = st.lists(st.integers(0, 3) | st.booleans(), max_size=30)


@settings(max_examples=400)
@given(json_values, json_values)
def test_applying_the_diff_of_two_documents_gives_the_second(a: JsonValue, b: JsonValue) -> None:
    before = copy.deepcopy(a)
    ops = diff(a, b)
    assert strictly_equal(apply(a, ops), b)
    assert strictly_equal(a, before)
    assert json.loads(json.dumps(ops)) == ops


@settings(max_examples=300)
@given(json_values, json_values)
def test_jsonpatch_applies_our_diff_to_the_same_result(a: JsonValue, b: JsonValue) -> None:
    assert strictly_equal(jsonpatch_apply(copy.deepcopy(a), diff(a, b)), b)


@settings(max_examples=300)
@given(small_lists, small_lists)
def test_the_diff_of_lists_with_repeated_items_applies(
    a: list[JsonValue], b: list[JsonValue]
) -> None:
    ops = diff(a, b)
    assert strictly_equal(apply(a, ops), b)
    assert strictly_equal(jsonpatch_apply(copy.deepcopy(a), ops), b)
    assert len(ops) <= len(a) + len(b)


@given(json_values)
def test_a_document_diffed_with_itself_or_a_copy_gives_no_operations(a: JsonValue) -> None:
    assert diff(a, a) == []
    assert diff(a, copy.deepcopy(a)) == []
    assert json_equal(a, copy.deepcopy(a))


@given(json_values, json_values)
def test_json_equal_agrees_with_the_strict_oracle(a: JsonValue, b: JsonValue) -> None:
    assert json_equal(a, b) == strictly_equal(a, b)


@given(st.lists(st.integers(), min_size=1, max_size=200, unique=True), st.data())
def test_one_insertion_or_removal_in_a_list_of_distinct_items_is_one_operation(
    items: list[JsonValue], data: st.DataObject
) -> None:
    where = data.draw(st.integers(0, len(items) - 1))
    fewer = items[:where] + items[where + 1 :]
    assert diff(items, fewer) == [{"op": "remove", "path": f"/{where}"}]
    assert diff(fewer, items) == [{"op": "add", "path": f"/{where}", "value": items[where]}]


long_items: st.SearchStrategy[JsonValue] = st.sampled_from(
    [0, 1, True, False, 1.0, 0.0, -0.0, "x", None, {"a": 1}, {"a": True}, [1], [True], []]
)
long_lists: st.SearchStrategy[list[JsonValue]] = st.lists(long_items, min_size=40, max_size=120)


@st.composite
def edited(draw: st.DrawFn) -> tuple[list[JsonValue], list[JsonValue]]:
    """A long list, and a copy with a few items replaced, inserted or removed."""
    old: list[JsonValue] = draw(long_lists)
    new = copy.deepcopy(old)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(new)))
        match draw(st.sampled_from(["replace", "insert", "remove"])):
            case "replace" if at < len(new):
                new[at] = draw(long_items)
            case "remove" if at < len(new):
                del new[at]
            case _:
                new.insert(at, draw(long_items))
    return old, new


@settings(max_examples=300)
@given(edited())
def test_the_diff_of_long_lists_with_few_edits_applies_strictly(
    pair: tuple[list[JsonValue], list[JsonValue]],
) -> None:
    old, new = pair
    assert strictly_equal(apply(old, diff(old, new)), new)


@settings(max_examples=300)
@given(json_values, json_values)
def test_a_loose_diff_applies_to_a_document_equal_to_the_second(a: JsonValue, b: JsonValue) -> None:
    patched = apply(a, loose_diff(a, b))
    assert patched == b
    assert not strictly_equal(patched, b) or diff(patched, b) == []


@settings(max_examples=300)
@given(edited())
def test_a_loose_diff_of_long_lists_applies_to_an_equal_list(
    pair: tuple[list[JsonValue], list[JsonValue]],
) -> None:
    old, new = pair
    assert apply(old, loose_diff(old, new)) == new


@given(json_values)
def test_a_mirror_is_a_copy_that_matches_the_document_and_its_copies(a: JsonValue) -> None:
    mirror = Mirror.of(a)
    assert mirror is not None
    assert strictly_equal(mirror.root, a)
    assert not containers(mirror.root) & containers(a)
    assert mirror.matches(a)
    assert mirror.matches(copy.deepcopy(a))


@settings(max_examples=300)
@given(json_values, json_values)
def test_a_mirror_matches_only_the_same_json(a: JsonValue, b: JsonValue) -> None:
    mirror = Mirror.of(a)
    assert mirror is not None
    if mirror.matches(b):
        assert strictly_equal(a, b)


@given(edited())
def test_a_mirror_of_a_long_list_matches_only_the_same_json(
    pair: tuple[list[JsonValue], list[JsonValue]],
) -> None:
    old, new = pair
    mirror = Mirror.of(old)
    assert mirror is not None
    assert mirror.matches(new) == strictly_equal(old, new)


@given(json_values, json_values)
def test_equal_exactly_never_calls_unlike_documents_the_same(a: JsonValue, b: JsonValue) -> None:
    if a == b and equal_exactly(a, b):
        assert strictly_equal(a, b)
    assert equal_exactly(a, copy.deepcopy(a))


def test_module_exports_are_sorted() -> None:
    assert patch.__all__ == sorted(patch.__all__)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        (
            {"op": "add", "path": "/a", "value": 1},
            r"the patch is one object, not a list.*\[operation\]",
        ),
        (None, r"the patch is None, not a list of operations; pass a list"),
        ("add", r"the patch is a str, not a list of operations"),
        (b"[]", r"the patch is a bytes, not a list of operations"),
    ],
)
def test_a_patch_that_is_not_a_list_of_operations_is_refused_whole(
    ops: object, message: str
) -> None:
    with pytest.raises(PatchError, match=message) as caught:
        apply({}, cast("list[dict[str, JsonValue]]", ops))
    assert caught.value.index is None


def test_a_tuple_of_operations_applies_as_a_list_does() -> None:
    ops: tuple[dict[str, JsonValue], ...] = ({"op": "add", "path": "/a", "value": 1},)
    assert apply({}, ops) == {"a": 1}


def test_documents_nested_past_the_recursion_limit_are_a_patch_error_to_diff() -> None:
    old: JsonValue = 1
    for _ in range(5000):
        old = [old]
    with pytest.raises(PatchError, match=r"nest too deep to diff.*200 levels"):
        diff(old, [old])
