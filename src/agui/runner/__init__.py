"""The run driver: RUN_STARTED, the agent's events, and exactly one terminal event.

Whatever agent code does, the stream ends with one `RUN_FINISHED` or one `RUN_ERROR`, never
both, never two, never none:

- The agent returns: open handles are closed, then `RUN_FINISHED` with its outcome (`None` is
  success; calls started and not answered are listed in `pendingToolCallIds`).
- The agent raises: open handles are closed innermost first, then `RUN_ERROR` with the error's
  stable code. Only `AgentError` carries its own message to the client; anything else gets a
  message per code, and the exception's text only with `debug=True` (the server log always has
  the traceback). That includes what is not an `Exception`: `SystemExit` and `GeneratorExit`
  end the run with code `AGENT_EXIT`, `KeyboardInterrupt` with `AGENT_INTERRUPTED`, and the
  process serving it lives on. `asyncio.CancelledError` is cancellation, below; one the agent
  raised while its task was not being cancelled (it awaited something cancelled elsewhere) ends
  the run cancelled too, and goes no further.
- The run is cancelled (`Cancelled`, a tripped token, or the task being cancelled): handles are
  closed, then `RUN_FINISHED` with the `cancelled` outcome.
- `RUN_FINISHED` is refused by the verifier (a raw-emitted block left open): `RUN_ERROR` with
  code `PROTOCOL_VIOLATION` instead. A stream that ends badly beats a stream with no end.

On the error and cancel paths the driver closes not only the handles but every block the
verifier holds open, also those opened through `ctx.emit` (`RunContext.close_open`), so a
relayed stream that fails mid-message still ends with each block closed before its terminal
event. A success is the agent's word that it is done, so a block it left open through `emit`
stays its error, the `PROTOCOL_VIOLATION` above (whose `RUN_ERROR` then closes it).

A handle still open when the run ends is closed by the driver and reported at the line that
opened it (`agui.errors.UnclosedHandleWarning`, and the `agui` log): the run succeeds, but the
author hears of the block that never closed where it should. What cannot be an agent (a plain
function, an async generator, a class) is refused before anything runs (`check_agent`), with
the same message by every entry point.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar, cast

from agui._util.tasks import cancelling
from agui.cancellation import CancellationToken
from agui.context import RunContext
from agui.errors import AgentError, AguiError, Cancelled, UnclosedHandleWarning, UpstreamError
from agui.events import Event, RunErrorEvent, RunFinishedEvent, RunStartedEvent
from agui.handles import Handle
from agui.runner._agent import Agent, AgentFunction, AgentLike, agent_problem, check_agent
from agui.state import state_adapter
from agui.transform import Transformer
from agui.types import (
    CancelledOutcome,
    InterruptOutcome,
    RunAgentInput,
    RunFinishedOutcome,
    RunOutcome,
    SuccessOutcome,
)

__all__ = [
    "PROTOCOL_VERSION",
    "Agent",
    "AgentFunction",
    "AgentLike",
    "agent_problem",
    "check_agent",
    "drive",
    "run",
]

S = TypeVar("S")

PROTOCOL_VERSION = "1.0"
"""The AG-UI version agui speaks, declared on every RUN_STARTED."""

_log = logging.getLogger("agui")

_MESSAGES = {
    "PROTOCOL_VIOLATION": "the agent broke an AG-UI ordering rule",
    "STATE_ERROR": "the run state could not be read or published",
    "USAGE_ERROR": "the agent used the agui SDK in a way it does not allow",
    "INVALID_ARGUMENTS": "a tool call's arguments could not be read",
    "CANCELLED": "the run was cancelled",
    "AGENT_EXIT": "the agent tried to exit, which ends only its run",
    "AGENT_INTERRUPTED": "the agent raised KeyboardInterrupt, which ends only its run",
    "UPSTREAM_ERROR": "the agent this server relays failed",
    "UPSTREAM_TRUNCATED": "the agent this server relays stopped before its run ended",
}


async def run(
    agent: AgentLike[S],
    input: RunAgentInput,  # noqa: A002 - the protocol's name for it
    *,
    state: type[S] | None = None,
    transformers: Sequence[Transformer] = (),
    debug: bool = False,
    token: CancellationToken | None = None,
) -> AsyncGenerator[Event, None]:
    """Drive `agent` for one run and yield its events, ending with exactly one terminal event.

    Closing the iterator early cancels the agent and waits for it to finish unwinding.

    Examples:
        >>> import asyncio
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> async def main():
        ...     stream = run(hello, RunAgentInput(thread_id="t", run_id="r"))
        ...     return [event.type async for event in stream]
        >>> asyncio.run(main())
        ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
         'RUN_FINISHED']
    """
    check_agent(agent)
    if state is not None:
        state_adapter(state)  # a type that cannot be one is the caller's error: before any event
    ctx: RunContext[S] = RunContext(input, state=state, transformers=transformers, token=token)
    task = asyncio.ensure_future(drive(agent, ctx, debug=debug))
    try:
        async for batch in ctx.receiver.batches():
            for event in batch:
                yield event
        await task
    finally:
        if not task.done():
            ctx.token.cancel("the event stream was closed by its reader")
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def drive(agent: AgentLike[S], ctx: RunContext[S], *, debug: bool = False) -> None:
    """Run `agent` in `ctx` from RUN_STARTED to its terminal event, then close the receiver.

    This is the engine under `run()` and the HTTP endpoint; it never raises for agent errors.
    It refuses an agent that is not async (`check_agent`) before RUN_STARTED.

    Examples:
        >>> import asyncio
        >>> async def broken(ctx):
        ...     raise ValueError("a secret")
        >>> ctx = RunContext(RunAgentInput(thread_id="t", run_id="r"))
        >>> asyncio.run(drive(broken, ctx))
        >>> [(event.type, getattr(event, "message", "")) for event in ctx.receiver.drain()]
        [('RUN_STARTED', ''), ('RUN_ERROR', 'the agent failed with an unexpected error')]
    """
    left_open: Sequence[Handle[S]] = ()  # a list made only when the run is over
    try:
        check_agent(agent)
        try:
            # Inside: a transformer failing on RUN_STARTED still leaves the stream its end, a
            # RUN_ERROR (which AG-UI allows as a first event).
            ctx.emit(_run_started(ctx.input), forced=True)
            ctx.init_state()
            try:
                outcome = await _call(agent, ctx)
            finally:
                left_open = _note_left_open(ctx)
        except asyncio.CancelledError:
            _end_cancelled(ctx)
            # Cancellation of this task goes on; a CancelledError of the agent's own (it awaited
            # something cancelled elsewhere) ends only its run, as any other error would.
            task = asyncio.current_task()
            assert task is not None  # noqa: S101 - a coroutine awaited by asyncio runs in a task
            if cancelling(task):
                raise
        except Cancelled:
            _end_cancelled(ctx)
        except BaseException as error:  # noqa: BLE001 - even SystemExit must end only the run
            # SystemExit, KeyboardInterrupt and GeneratorExit raised by agent code are the
            # run's failure, not the server's: let past here, they stop the event loop (and the
            # whole server with it). A real signal never gets here: the server's handler has it.
            _end_with_error(ctx, error, debug=debug)
        else:
            if ctx.terminated:
                pass  # the agent emitted its own terminal event
            elif ctx.cancelled:
                _end_cancelled(ctx)
            else:
                _end_with_outcome(ctx, outcome, debug=debug)
    finally:
        ctx.receiver.close()
        _warn_unclosed(left_open)


def _call(agent: AgentLike[S], ctx: RunContext[S]) -> Awaitable[RunOutcome | None]:
    """The agent's run, for `drive` to await: no frame of its own between the two.

    Every frame between the run's task and the agent is resumed on every step of the agent and
    held for the whole run (about 0.3 KiB).
    """
    # What has a `run` is run by it, as `agent_problem` judged it. Not `isinstance(agent,
    # Agent)`: a runtime Protocol's check walks the protocol's members, 10 us on every run.
    run = cast(
        "Callable[[RunContext[S]], Awaitable[RunOutcome | None]] | None",
        getattr(agent, "run", None),
    )
    return run(ctx) if run is not None else cast("AgentFunction[S]", agent)(ctx)


def _note_left_open(ctx: RunContext[S]) -> list[Handle[S]]:
    """Note and log what the agent left open, by any way out (`drive` warns of it at the end).

    Only what the agent's own code opened and nothing tried to end (a block whose end failed is
    the error's business; agui's tool loop leaves its blocks to the driver on the way out), and
    nothing after a terminal event: the driver closes nothing then.
    """
    left_open: list[Handle[S]] = []
    if not ctx.terminated:
        left_open.extend(h for h in ctx.open_handles if h.abandoned and _foreign(h))
    for handle in left_open:
        filename, line = handle.opened_at
        _log.warning("%s (opened at %s:%d)", _unclosed(handle), filename, line)
    return left_open


_PACKAGE = str(Path(__file__).parents[1]) + os.sep


def _foreign(handle: Handle[S]) -> bool:
    """Whether code outside agui opened the handle."""
    return not handle.opened_at[0].startswith(_PACKAGE)


def _unclosed(handle: Handle[S]) -> str:
    return (
        f"{handle.describe()} was still open when its run ended, so the run closed it; "
        "open it in a `with` block (or call end()) so that it closes where it should"
    )


def _warn_unclosed(left_open: Sequence[Handle[S]]) -> None:
    """Warn of each handle the run had to close, at the line that opened it, once it ended."""
    for handle in left_open:
        filename, line = handle.opened_at
        warnings.warn_explicit(_unclosed(handle), UnclosedHandleWarning, filename, line)


def _run_started(input: RunAgentInput) -> RunStartedEvent:  # noqa: A002
    return RunStartedEvent(
        thread_id=input.thread_id,
        run_id=input.run_id,
        protocol_version=PROTOCOL_VERSION,
        parent_run_id=input.parent_run_id,
    )


def _end_with_outcome(ctx: RunContext[S], outcome: RunOutcome | None, *, debug: bool) -> None:
    try:
        _close_open(ctx, ctx.close_open_handles)
        if isinstance(outcome, InterruptOutcome):
            ctx.publish_state()
        finished = RunFinishedEvent(
            thread_id=ctx.thread_id,
            run_id=ctx.run_id,
            result=ctx.result if not isinstance(outcome, InterruptOutcome) else None,
            outcome=_complete(outcome, ctx),
            usage=ctx.usage or None,
        )
        ctx.emit(finished, forced=True)
    except BaseException as error:  # noqa: BLE001 - a refused RUN_FINISHED still ends the run
        _end_with_error(ctx, error, debug=debug)


def _complete(outcome: RunOutcome | None, ctx: RunContext[S]) -> RunFinishedOutcome:
    if outcome is None or (
        isinstance(outcome, SuccessOutcome) and not outcome.pending_tool_call_ids
    ):
        pending = ctx.pending_tool_call_ids
        return SuccessOutcome(pending_tool_call_ids=pending or None)
    if not isinstance(outcome, (SuccessOutcome, InterruptOutcome, CancelledOutcome)):
        # Only the type: the value itself may hold anything, and this message reaches the client.
        message = (
            "an agent must return RunOutcome.success(), .interrupt() or .cancelled(), or None; "
            f"it returned a {type(outcome).__name__}"
        )
        raise AgentError(message)
    return outcome


def _end_cancelled(ctx: RunContext[S]) -> None:
    try:
        _close_open(ctx, ctx.close_open)
        finished = RunFinishedEvent(
            thread_id=ctx.thread_id,
            run_id=ctx.run_id,
            outcome=CancelledOutcome(),
            usage=ctx.usage or None,
        )
        ctx.emit(finished, forced=True)
    except BaseException as error:  # noqa: BLE001 - a run that cannot end cancelled ends in error
        _end_with_error(ctx, error, debug=False)


def _end_with_error(ctx: RunContext[S], error: BaseException, *, debug: bool) -> None:
    code = _code(error)
    if ctx.terminated:
        _log.error("run %s failed after its terminal event", ctx.run_id, exc_info=error)
        return
    if isinstance(error, AgentError):
        # A failure the agent chose, with a message meant for the user: no traceback.
        _log.info("run %s ended with %s: %s", ctx.run_id, code, error)
    elif not isinstance(error, Exception):
        _log.error(
            "run %s failed with %s: agent code raised %s, which ends only the run, not the "
            "process; end a run by returning, or by raising agui.AgentError",
            ctx.run_id,
            code,
            type(error).__name__,
            exc_info=error,
        )
    else:
        _log.error("run %s failed with %s", ctx.run_id, code, exc_info=error)
    for handle_error in ctx.close_open():
        _log.error("closing a block of run %s failed", ctx.run_id, exc_info=handle_error)
    event = RunErrorEvent(
        message=_error_message(error, debug=debug), code=code, usage=ctx.usage or None
    )
    try:
        ctx.emit(event, forced=True)
    except Exception:  # noqa: BLE001 - refused only after a terminal event went out
        _log.exception("run %s: RUN_ERROR was refused; the stream already ended", ctx.run_id)


def _close_open(ctx: RunContext[S], close: Callable[[], list[Exception]]) -> None:
    """Close what is still open; each close that failed is logged, and the first raised."""
    failures = close()
    for failure in failures:
        _log.error("closing a block of run %s failed", ctx.run_id, exc_info=failure)
    if failures:
        raise failures[0]


def _code(error: BaseException) -> str:
    if isinstance(error, UpstreamError):
        return error.wire_code  # the upstream's own code, kept for the frontend
    if isinstance(error, AguiError):
        return error.code
    if isinstance(error, KeyboardInterrupt):
        return "AGENT_INTERRUPTED"
    return "AGENT_ERROR" if isinstance(error, Exception) else "AGENT_EXIT"


def _error_message(error: BaseException, *, debug: bool) -> str:
    if isinstance(error, AgentError):
        text = _text_of(error)
        return type(error).__name__ if text is None else text
    code = _code(error)
    if isinstance(error, AguiError) or code != "AGENT_ERROR":
        fallback = error.code if isinstance(error, AguiError) else code
        base = _MESSAGES.get(code) or _MESSAGES.get(fallback, "the run failed")
    else:
        base = "the agent failed with an unexpected error"
    if not debug:
        return base
    text = _text_of(error)
    if not text:
        return f"{base}: {type(error).__name__}"
    return f"{base}: {type(error).__name__}: {text}"


def _text_of(error: BaseException) -> str | None:
    """The error's text, written so that it serializes; `None` when its `__str__` fails."""
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - a broken __str__ must not cost the run its terminal event
        _log.warning("the text of a %s could not be read", type(error).__name__, exc_info=True)
        return None
    # A lone surrogate would make the RUN_ERROR itself unserializable: escape it.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
