"""The thread record a run leaves: the thread's messages and state, folded with the run.

When a durable run ends, its worker writes the thread's record with the run's last batch: the
messages and state the log held for the thread, the run's input, and the run's events folded
on top (`agui.fold`), as a client would fold them. The run's deltas are joined block by block
before the fold, by the emit core while they are still records (`agui._emit.joined`).

The record is its owner's: a record the log holds for another owner (which `RunLog.begin` does
not let a run start on) is never folded into this one, so no thread holds two owners' turns.
"""

from __future__ import annotations

from pydantic import JsonValue, TypeAdapter

from agui.events import (
    Event,
)
from agui.fold import fold
from agui.messages import Message
from agui.runs._log import SHARED, RunLog, ThreadRecord
from agui.types import RunAgentInput

__all__ = ["thread_after"]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


async def thread_after(
    log: RunLog, run_input: RunAgentInput, events: list[Event], *, owner: str = SHARED
) -> ThreadRecord:
    """The thread's record once this run is added: messages received and added, the state.

    `owner` owns the run's thread; the record the log holds is read only when it is theirs.
    """
    prior = await log.thread(run_input.thread_id)
    if prior is not None and prior.owner != owner:
        prior = None
    held: list[JsonValue] = [] if prior is None else list(prior.messages)
    known = {str(m.get("id")) for m in held if isinstance(m, dict)}
    held += [m.model_dump(mode="json") for m in run_input.messages if m.id not in known]
    given_state = run_input.state
    folded = fold(
        events,
        messages=_MESSAGES.validate_python(held),
        state=given_state if given_state is not None or prior is None else prior.state,
    )
    return ThreadRecord(
        run_input.thread_id,
        messages=[m.model_dump(mode="json") for m in folded.messages],
        state=folded.state,
        run_ids=[*([] if prior is None else prior.run_ids), run_input.run_id],
        owner=owner,
    )
