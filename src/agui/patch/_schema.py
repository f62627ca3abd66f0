"""Whether a JSON Pointer names a member a JSON Schema declares (for a state key, say).

A pointer into a state is checked against the state type's schema before any patch goes out
with it: a client applying `add` under a parent its state lacks fails in the browser, far from
the line that chose the path. Object members are followed through `properties` (and `$ref`s to
`$defs`), and through `additionalProperties` for a mapping of any keys.
"""

from __future__ import annotations

from pydantic import JsonValue

from agui.patch import pointer_tokens

__all__ = ["missing_member"]

_Object = dict[str, JsonValue]


def missing_member(schema: _Object, pointer: str) -> str | None:
    """Why `pointer` names no member of `schema`, or `None` when it names one.

    Examples:
        >>> schema = {"properties": {"document": {"type": "string"}}}
        >>> missing_member(schema, "/document") is None
        True
        >>> missing_member(schema, "/title")
        "'/' has no member 'title' (its members: document)"
    """
    defs = schema.get("$defs")
    tokens = pointer_tokens(pointer)
    node = schema
    for depth, token in enumerate(tokens):
        node = _resolved(node, defs if isinstance(defs, dict) else {})
        members = node.get("properties")
        extra = node.get("additionalProperties")
        if isinstance(members, dict) and token in members:
            found = members[token]
        elif isinstance(extra, dict):
            found = extra
        else:
            names = ", ".join(sorted(members)) if isinstance(members, dict) else "none"
            at = "/" + "/".join(tokens[:depth])
            return f"{at!r} has no member {token!r} (its members: {names})"
        node = found if isinstance(found, dict) else {}
    return None


def _resolved(node: _Object, defs: _Object) -> _Object:
    """`node`, or the definition its `$ref` names (followed to the end)."""
    seen: set[str] = set()
    while isinstance(ref := node.get("$ref"), str) and ref not in seen:
        seen.add(ref)
        target = defs.get(ref.rpartition("/")[2])
        node = target if isinstance(target, dict) else {}
    return node
