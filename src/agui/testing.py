"""Helpers for testing agents: run one, check its stream, and see what a UI would show.

`collect` drives an agent to completion and returns its events; `assert_valid` checks a stream
with agui's verifier in strict end-of-stream mode; `fold` applies a stream the way the official
client does (its `defaultApplyEvents` rules) and returns the messages and state a UI would hold
afterwards, so a test can assert on the conversation rather than on event lists (it lives in
`agui.fold`, which `agui.client` uses too; the kit offers it because tests are where it is used
most). `serving` runs an ASGI app under a real uvicorn on 127.0.0.1 for tests over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar, cast

from agui.asgi._server import serving
from agui.errors import ProtocolViolation, UsageError
from agui.events import Event
from agui.fold import FoldedRun, event_models, fold
from agui.messages import AssistantMessage
from agui.runner import AgentLike, run
from agui.transform import Transformer
from agui.types import RunAgentInput
from agui.verify import Verifier

__all__ = ["FoldedRun", "assert_valid", "collect", "fold", "serving"]

S = TypeVar("S")


async def collect(
    agent: AgentLike[S],
    input: RunAgentInput,  # noqa: A002 - the protocol's name for it
    *,
    state: type[S] | None = None,
    transformers: Sequence[Transformer] = (),
    debug: bool = False,
) -> list[Event]:
    """Drive `agent` for one run and return every event, terminal event included.

    Examples:
        >>> import asyncio
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> events = asyncio.run(collect(hello, RunAgentInput(thread_id="t", run_id="r")))
        >>> [event.type for event in events][0], [event.type for event in events][-1]
        ('RUN_STARTED', 'RUN_FINISHED')
    """
    stream = run(agent, input, state=state, transformers=transformers, debug=debug)
    return [event async for event in stream]


def assert_valid(events: Iterable[Event], *, input: RunAgentInput | None = None) -> None:  # noqa: A002
    """Check a whole stream: every ordering rule, and that it ends with a terminal event.

    Pass the run's `input` when the stream answers tool calls from its history (a resumed
    run reports results against calls of an earlier run). Raises `ProtocolViolation` naming
    the broken rule and the index of the offending event.

    Examples:
        >>> from agui.events import RunStartedEvent, TextMessageEndEvent
        >>> stream = [RunStartedEvent(thread_id="t", run_id="r")]
        >>> stream.append(TextMessageEndEvent(message_id="m"))
        >>> assert_valid(stream)
        Traceback (most recent call last):
        ...
        agui.errors.ProtocolViolation: event 1 (TEXT_MESSAGE_END): ...
    """
    verifier = Verifier(known_tool_call_ids=_known_calls(input))
    index = -1
    for index, event in enumerate(event_models(events, "assert_valid()")):
        try:
            verifier.observe(event)
        except Exception as error:  # noqa: BLE001 - re-raised with the position added
            _reraise_at(error, index, event.type)
    try:
        verifier.finish()
    except Exception as error:  # noqa: BLE001 - re-raised with the position added
        _reraise_at(error, index + 1, "end of stream")


def _known_calls(given: RunAgentInput | None) -> list[str]:
    if given is None:
        return []
    if not isinstance(cast("object", given), RunAgentInput):
        message = (
            f"assert_valid(input=...) takes a RunAgentInput, got a {type(given).__name__}: read "
            "a wire dict with agui.parse_input(...)"
        )
        raise UsageError(message)
    return [
        call.id
        for message in given.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    ]


def _reraise_at(error: Exception, index: int, what: str) -> None:
    if isinstance(error, ProtocolViolation):
        message = f"event {index} ({what}): {error}"
        raise ProtocolViolation(message, rule=error.rule, event=error.event) from error
    raise error
