"""JSON values: what JSON text reads as passes, and the first member that is not is named."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui._protocol.json_value import json_problem

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_every_value_json_text_reads_as_is_json(value: object) -> None:
    assert json_problem(value) is None
    assert json_problem(json.loads(json.dumps(value))) is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"a": [1, {"b~c/d": {2}}]}, "/a/1/b~0c~1d is a set"),
        ([math.inf], "/0 is NaN or an infinity, which JSON has no value for"),
        (("tuple",), "the root is a tuple"),
        ({"ok": 1, 2: "x"}, "the root has the key 2, which is not text"),
        ({"first": object(), "second": {1}}, "/first is an object"),
        ([b"x", {1}], "/0 is a bytes"),
    ],
    ids=["pointer-escaped", "infinity", "tuple", "key", "first-member", "first-item"],
)
def test_the_first_member_that_is_not_json_is_named_by_its_pointer(
    value: object, problem: str
) -> None:
    assert json_problem(value) == problem
