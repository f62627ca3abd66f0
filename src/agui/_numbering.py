"""Numbering: the ids a run mints, deterministic and unique within its thread.

A run numbers its messages `{run_id}-msg-N` and its tool calls `{run_id}-call-N`, so a test can
name them and a replay gives the same ids. A client may send a run id again (CopilotKit resumes
an interrupt with the interrupted run's own id), and its history then already holds ids of that
form: a run numbers past the highest it finds there, so no handle mints an id the client holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from agui.messages import AssistantMessage, Message
from agui.types import RunAgentInput

__all__ = ["numbered_past", "tool_call_ids"]


def tool_call_ids(messages: Iterable[Message]) -> set[str]:
    """The ids of the tool calls the assistant messages of `messages` hold."""
    return {
        call.id
        for message in messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    }


def numbered_past(input: RunAgentInput, calls: Iterable[str]) -> tuple[int, int]:  # noqa: A002
    """The highest `{run_id}-msg-N` and `{run_id}-call-N` numbers the history holds.

    `calls` are the history's tool call ids. A run with a fresh id (the common case) pays one
    substring search over all the ids joined; only a run whose id they hold parses them.
    """
    if not input.messages:
        return 0, 0  # a fresh run numbers from 1, with no scan
    run = input.run_id + "-"
    ids = [message.id for message in input.messages]
    ids += calls
    if "\n" + run not in "\n" + "\n".join(ids):
        return 0, 0
    ours = [held for held in ids if held.startswith(run)]
    return _highest(ours, run + "msg-"), _highest(ours, run + "call-")


def _highest(ids: Iterable[str], prefix: str) -> int:
    numbers = [held[len(prefix) :] for held in ids if held.startswith(prefix)]
    return max((int(n) for n in numbers if n.isascii() and n.isdigit()), default=0)
