"""What an agent is, and the one check of it that every entry point makes before anything runs.

An agent is an async function taking the run context, or an object with an async `run(ctx)`
method. `run`, `drive`, `collect`, `asgi_app` and `agui serve` all refuse anything else with the
same message (`check_agent`), before `RUN_STARTED`: a class instead of an instance, a coroutine
(an agent already called), a plain or generator function, one that takes other arguments. The
verdict is kept per agent, since the driver checks on every run and reading a signature is
slow. The names are public through `agui.runner`.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, cast, runtime_checkable

from agui.context import RunContext
from agui.errors import UsageError
from agui.types import RunOutcome

__all__ = ["Agent", "AgentFunction", "AgentLike", "agent_problem", "check_agent"]

S = TypeVar("S")


@runtime_checkable
class Agent(Protocol[S]):
    """An object whose `run(ctx)` does one run; it may return a `RunOutcome` or `None`.

    Examples:
        >>> class Greeter:
        ...     async def run(self, ctx):
        ...         ctx.say("Hello!")
        >>> isinstance(Greeter(), Agent)
        True
    """

    async def run(self, ctx: RunContext[S], /) -> RunOutcome | None:
        """Do one run, emitting through `ctx`."""
        ...


AgentFunction = Callable[[RunContext[S]], Awaitable[RunOutcome | None]]
"""`async def agent(ctx) -> RunOutcome | None`."""

AgentLike = Agent[S] | AgentFunction[S]
"""An agent function, or an object with an agent `run` method."""


def check_agent(agent: object) -> None:
    """Refuse, before anything runs, what cannot be an agent: a `UsageError` saying what it is.

    Examples:
        >>> def greet(ctx):
        ...     ctx.say("Hello!")
        >>> check_agent(greet)
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: greet is not an agent: it is a function that is not async; ...
    """
    problem = agent_problem(agent)
    if problem is not None:
        name = getattr(agent, "__qualname__", None) or type(agent).__name__
        message = (
            f"{name} is not an agent: {problem}; an agent is an async function taking the run "
            "context (async def agent(ctx)) or an object with an async run(ctx) method"
        )
        raise UsageError(message)


def agent_problem(agent: object) -> str | None:
    """Why `agent` is not an agent, or `None` when it is one (what `check_agent` refuses).

    An object with a `run` attribute is run by it, as the driver does, whatever else it has.

    Examples:
        >>> async def stream(ctx):
        ...     yield "Hello!"
        >>> print(agent_problem(stream))
        it is an async generator function (it yields): an agent sends its events through the
        run context, ctx.emit(event) where it would yield event
    """
    # Kept while the agent lives: `drive` checks it every run; reading a signature costs 15 us.
    with contextlib.suppress(KeyError, TypeError):  # not judged yet, or not weakly referable
        return _verdicts[agent]
    problem = _problem(agent)
    with contextlib.suppress(TypeError):
        _verdicts[agent] = problem
    return problem


_verdicts: weakref.WeakKeyDictionary[object, str | None] = weakref.WeakKeyDictionary()


def _problem(agent: object) -> str | None:
    if inspect.isclass(agent):
        return f"it is the class {agent.__name__}; use an instance of it"
    run: object = getattr(agent, "run", None)
    if run is not None:
        return _callable_problem(run, "its run method")
    if inspect.iscoroutine(agent):
        return "it is a coroutine, an agent already called: pass the function itself, not a call"
    if not callable(agent):
        return f"it is a {type(agent).__name__} ({agent!r:.60}), which cannot be called"
    return _callable_problem(agent, "it")


def _callable_problem(function: object, subject: str) -> str | None:
    # An object with an async __call__ is as good as an async function.
    call = getattr(type(function), "__call__", None)  # noqa: B004 - its coroutine-ness is the question
    if inspect.isasyncgenfunction(function) or inspect.isasyncgenfunction(call):
        return (
            f"{subject} is an async generator function (it yields): an agent sends its events "
            "through the run context, ctx.emit(event) where it would yield event"
        )
    if not (inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)):
        return (
            f"{subject} is not async" if subject != "it" else "it is a function that is not async"
        )
    try:
        inspect.signature(cast("Callable[..., object]", function)).bind(None)
    except TypeError:
        return f"{subject} does not take exactly one argument (the run context)"
    except ValueError:  # no signature to read (some builtins): give it the benefit of the doubt
        pass
    return None
