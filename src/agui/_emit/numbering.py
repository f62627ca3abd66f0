"""Numbering: the ids a run mints, deterministic and unique within its thread.

A run numbers its messages `{run_id}-msg-N`, its tool calls `{run_id}-call-N` and its subagent
invocations `{run_id}-sub-N`, and the tool loop its model turns (`{run_id}-turn-N`, the parent
of a turn's calls, and `{run_id}-turn-N-call-M` for a call the provider gave no id), so a test
can name them and a replay gives the same ids. A client may send a run id again (CopilotKit
resumes an interrupt with the interrupted run's own id), and its history then already holds ids
of those forms: a run numbers past the highest it finds there, so nothing it mints is an id the
client holds (a reused id would reopen the earlier message, call or invocation in the UI).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from agui.messages import AssistantMessage, Message
from agui.types import RunAgentInput

__all__ = ["Numbered", "numbered_past", "tool_call_ids"]


class Numbered(NamedTuple):
    """The highest number of each kind of id a run mints that the history already holds."""

    message: int
    call: int
    subagent: int
    turn: int


_NONE = Numbered(0, 0, 0, 0)


def tool_call_ids(messages: Iterable[Message]) -> set[str]:
    """The ids of the tool calls the assistant messages of `messages` hold."""
    return {
        call.id
        for message in messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    }


def numbered_past(input: RunAgentInput, calls: Iterable[str]) -> Numbered:  # noqa: A002
    """The highest numbers of the ids of this run's forms that the history holds.

    `calls` are the history's tool call ids. A run with a fresh id (the common case) pays one
    substring search over all the ids joined; only a run whose id they hold parses them.

    Examples:
        >>> from agui.messages import AssistantMessage, UserMessage
        >>> history = [UserMessage(id="u1", content="Hi"), AssistantMessage(id="r-turn-2")]
        >>> history.append(AssistantMessage(id="r-sub-1-msg-3"))
        >>> numbered_past(RunAgentInput(thread_id="t", run_id="r", messages=history), ["r-call-4"])
        Numbered(message=0, call=4, subagent=1, turn=2)
    """
    if not input.messages:
        return _NONE  # a fresh run numbers from 1, with no scan
    run = input.run_id + "-"
    ids = [message.id for message in input.messages]
    ids += calls
    if "\n" + run not in "\n" + "\n".join(ids):
        return _NONE
    ours = [held[len(run) :] for held in ids if held.startswith(run)]
    return Numbered(*(_highest(ours, kind) for kind in ("msg-", "call-", "sub-", "turn-")))


def _highest(ids: Iterable[str], prefix: str) -> int:
    """The highest N of the ids `{prefix}N` or `{prefix}N-...` (a subagent's or turn's own)."""
    numbers = [held[len(prefix) :].split("-", 1)[0] for held in ids if held.startswith(prefix)]
    return max((int(n) for n in numbers if n.isascii() and n.isdigit()), default=0)
