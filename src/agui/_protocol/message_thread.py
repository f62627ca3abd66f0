"""The messages a fold holds: in order, indexed by message id and by tool call id.

The official client finds each event's target by scanning its messages and their tool calls,
and puts a tool result in the middle of the list, after the call it answers. Done the same way,
a fold would take time in messages x calls; a linked list with indexes beside it gives the same
answers in constant time each, so `agui.fold` folds a run in time linear in its events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from pydantic import JsonValue

__all__ = ["Node", "Thread"]

_Record = dict[str, JsonValue]


class Node:
    """One message of the thread, linked to the next: a tool result goes in mid-list in O(1)."""

    __slots__ = ("next", "record")

    def __init__(self, record: _Record) -> None:
        self.record = record
        self.next: Node | None = None


class Thread:
    """The messages in order, indexed by message id and by tool call id (first one wins).

    The client looks each event's target up by scanning; the indexes give the same answer (the
    first message with the id, the first call with the id and the message holding it) without
    the scan, so a run folds in time linear in its events rather than in messages x calls.

    Examples:
        >>> thread = Thread([{"id": "a1", "role": "assistant", "toolCalls": [{"id": "c1"}]}])
        >>> _ = thread.append({"id": "u1", "role": "user"})
        >>> thread.insert_result(thread.call("c1")[1], {"id": "t1", "role": "tool"})
        >>> [record["id"] for record in thread.records()]
        ['a1', 't1', 'u1']
    """

    def __init__(self, records: Iterable[_Record]) -> None:
        self._head = Node({})  # a sentinel: every message has a node before it
        self._tail = self._head
        self._by_id: dict[str, Node] = {}
        self._calls: dict[str, tuple[_Record, Node]] = {}
        # Where the last result after each message went: the next one starts its walk there,
        # so a message answered by many calls takes each result in constant time. Nodes are
        # never unlinked, and only tool messages go in after one, so the walk ends where a
        # walk from the message itself would.
        self._last_result: dict[Node, Node] = {}
        for record in records:
            self.append(record)

    def records(self) -> list[_Record]:
        """The messages in order, as the client holds them."""
        held: list[_Record] = []
        node = self._head.next
        while node is not None:
            held.append(node.record)
            node = node.next
        return held

    def node(self, message_id: JsonValue) -> Node | None:
        """The list node of the message with this id, if any."""
        return self._by_id.get(cast("str", message_id))

    def find(self, message_id: JsonValue) -> _Record | None:
        """The message with this id, if any."""
        node = self._by_id.get(cast("str", message_id))
        return None if node is None else node.record

    def call(self, call_id: JsonValue) -> tuple[_Record, Node] | None:
        """The tool call with this id and the node of the message holding it, if any."""
        return self._calls.get(cast("str", call_id))

    def add_call(self, owner: Node, call: _Record) -> None:
        """Add a tool call to the message at `owner`, and index it."""
        cast("list[JsonValue]", owner.record.setdefault("toolCalls", [])).append(call)
        self._calls.setdefault(cast("str", call["id"]), (call, owner))

    def append(self, record: _Record) -> Node:
        """Add a message at the end, and index it and its tool calls."""
        node = self._link(self._tail, record)
        self._by_id.setdefault(cast("str", record["id"]), node)
        for call in cast("list[_Record]", record.get("toolCalls") or []):
            self._calls.setdefault(cast("str", call["id"]), (call, node))
        return node

    def insert_result(self, owner: Node | None, record: _Record) -> None:
        """Put a tool message after the call's message and the tool messages right after it."""
        if owner is None:
            self.append(record)
            return
        after = self._last_result.get(owner, owner)
        while after.next is not None and after.next.record.get("role") == "tool":
            after = after.next
        node = self._last_result[owner] = self._link(after, record)
        first = self._by_id.setdefault(cast("str", record["id"]), node)
        if first is not node and self._precedes(node, first):
            self._by_id[cast("str", record["id"])] = node  # a repeated id, now the first one

    def _link(self, after: Node, record: _Record) -> Node:
        node = Node(record)
        node.next, after.next = after.next, node
        if after is self._tail:
            self._tail = node
        return node

    @staticmethod
    def _precedes(node: Node, other: Node) -> bool:
        walk = node.next
        while walk is not None and walk is not other:
            walk = walk.next
        return walk is other
