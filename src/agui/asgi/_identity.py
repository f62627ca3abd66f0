"""Who a request is, and what it may reach: the identity `authorize` names, the owner rule.

`authorize(headers)` admits a request with `True` (the one shared space every such caller
shares, `agui.runs.SHARED`) or with a `str`, the caller's identity (a user id, a tenant id).
An endpoint with a run log keeps each run and thread in its owner's space: a thread belongs to
the identity that started its first run, and its runs to the thread's owner. A caller reaches
what is in its own space; anything else is answered as if it did not exist (404, the same body
as an unknown id), so an identity never learns whether another's id is in use.

`thread_access(identity, thread_id, action)` is how an application shares threads (a team's
workspace, a support agent joining a customer's thread): it is asked whenever the owner rule
would refuse an identity, and its `True` lets the identity `read` the thread and its runs, `run`
on it, or `cancel` its runs. It widens the owner rule and never narrows it: what an identity may
not do at all, `authorize` refuses. The shared space is apart from both: only `True` reaches it.

An identity is part of the key every run is kept under, so a garbled one must never be used: a
`str` that is empty is a refusal (as any falsy verdict), and one that is not printable or is
longer than `MAX_IDENTITY_LENGTH` is the hook's failure, `HOOK_FAILED`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Literal, cast

from agui.asgi._admission import Refusal
from agui.asgi._hooks import hook_failed, lets_through
from agui.runs import SHARED

__all__ = [
    "MAX_IDENTITY_LENGTH",
    "Access",
    "Action",
    "ThreadAccess",
    "identity_of",
    "run_not_found",
    "thread_not_found",
]

_log = logging.getLogger("agui.asgi")

MAX_IDENTITY_LENGTH = 256
"""The longest identity `authorize` may name, in characters."""

Action = Literal["read", "run", "cancel"]
"""What an identity asks to do with a thread: read it or its runs, run on it, cancel its runs."""
ThreadAccess = Callable[[str, str, Action], bool | Awaitable[bool]]
"""`thread_access(identity, thread_id, action) -> bool`, sync or async: `True` shares the thread."""


def identity_of(verdict: object) -> str | None:
    r"""The owner an `authorize` verdict admits: `SHARED` for `True`, or the identity it names.

    `None` is a refusal: `False`, any other falsy value, and anything neither a `bool` nor a
    `str`.

    Raises:
        Refusal: 500 `HOOK_FAILED` for a `str` that cannot be an identity.

    Examples:
        >>> identity_of(True) == SHARED, identity_of("alice"), identity_of(False), identity_of(1)
        (True, 'alice', None, None)
        >>> identity_of("")
        >>> identity_of("a\nb")
        Traceback (most recent call last):
        ...
        agui.asgi._admission.Refusal: the endpoint's authorize hook returned an identity of 3 ...
    """
    if verdict is True:
        return SHARED
    if not verdict or not isinstance(verdict, str):
        return None
    identity = str(verdict)
    if len(identity) > MAX_IDENTITY_LENGTH or not identity.isprintable():
        # Its length, never its text: it may be a credential the hook failed to map.
        message = (
            f"the endpoint's authorize hook returned an identity of {len(identity)} characters "
            f"that cannot be one: an identity is printable text of 1 to {MAX_IDENTITY_LENGTH} "
            "characters (a user or tenant id); return that, True for the shared space, or False "
            "to refuse"
        )
        raise _broke(message)
    return identity


class Access:
    """The owner rule, and the application's `thread_access` hook where the rule refuses."""

    def __init__(self, hook: ThreadAccess | None) -> None:
        self._hook = hook

    async def allows(self, identity: str, thread_id: str, owner: str, action: Action) -> bool:
        """Whether `identity` may do `action` with thread `thread_id`, which `owner` owns.

        Raises:
            Refusal: 500 `HOOK_FAILED` when the hook raises or answers what is not a `bool`.

        Examples:
            >>> import asyncio
            >>> team = Access(lambda identity, thread, action: action == "read")
            >>> asyncio.run(team.allows("bob", "t", "alice", "read"))
            True
            >>> asyncio.run(team.allows("bob", "t", "alice", "cancel"))
            False
            >>> asyncio.run(team.allows("bob", "t", SHARED, "read"))  # only True reaches it
            False
        """
        if identity == owner:
            return True
        hook = self._hook
        if hook is None or SHARED in (identity, owner):
            return False
        try:
            # The application's code: typed to answer a bool, checked that it did.
            answer = cast("object", hook(identity, thread_id, action))
            if inspect.isawaitable(answer):
                answer = await answer
        except BaseException as error:  # its SystemExit too, as every hook's (agui.asgi._hooks)
            if lets_through(error):
                raise
            raise hook_failed(error, "thread_access") from error
        if not isinstance(answer, bool):
            kind = type(answer).__qualname__
            message = f"the endpoint's thread_access hook returned {kind}, not True or False"
            raise _broke(message)
        return answer


def _broke(message: str) -> Refusal:
    """The 500 for a hook that returned what its rule forbids, logged at ERROR."""
    _log.error("%s; answering 500", message)
    return Refusal(500, "HOOK_FAILED", message)


def run_not_found(run_id: str) -> Refusal:
    """The 404 of a run the caller cannot reach: the same whether it exists or not.

    Examples:
        >>> run_not_found("r1").body["code"], thread_not_found("t1").body["code"]
        ('RUN_NOT_FOUND', 'THREAD_NOT_FOUND')
    """
    why = "it never started, or it ended and expired (finished runs are kept"
    return Refusal(404, "RUN_NOT_FOUND", f"no run {run_id!r} here: {why} for the run log's ttl)")


def thread_not_found(thread_id: str) -> Refusal:
    """The 404 of a thread the caller cannot reach: the same whether it exists or not."""
    why = "it has no finished run, or it expired (threads are kept"
    message = f"no thread {thread_id!r} here: {why} for the run log's ttl)"
    return Refusal(404, "THREAD_NOT_FOUND", message)
