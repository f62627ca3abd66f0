"""A run's coroutine stepped by its task, the writer flushing between steps; a send resumed.

`agui.asgi._writer` writes what each step of the agent queued from the step itself (its direct
path): the run's task steps a `Stepping`, which steps the agent's coroutine and has the writer
flush as each step ends. A send that suspended in such a step is finished by the writer's pump
as a `Resumed`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from types import TracebackType
from typing import Protocol

__all__ = ["Flushing", "Resumed", "Stepping", "Steps"]


class Flushing(Protocol):
    """The writer, as a `Stepping` sees it."""

    stepping: bool
    """Whether the run's coroutine is being stepped: what it queues, its step writes."""

    def flush(self) -> None:
        """Write what the step queued."""


class Stepping(Coroutine[object, object, None]):
    """A run's coroutine stepped as its task would, each step's events written as it ends.

    The run's task steps this object itself: it passes on to the agent's coroutine what the
    task sends or throws into it (a future's result, a cancellation), and returns what that
    yields; between the two, the writer flushes. The task, its cancellation and
    `asyncio.current_task()` are the run's as they would be without it. An object the task
    steps, not a coroutine awaiting a generator: those were two frames more a stream, held
    while it is open (about 0.4 KiB), and two frames resumed on every step.
    """

    __slots__ = ("_agent", "_start", "_thrown", "_writer")

    def __init__(
        self, start: Callable[[], Coroutine[object, object, None]], writer: Flushing
    ) -> None:
        self._start: Callable[[], Coroutine[object, object, None]] | None = start
        self._agent: Coroutine[object, object, None] | None = None
        self._thrown: BaseException | None = None
        self._writer = writer

    def send(self, value: object) -> object:
        """Step the agent with `value` (or what `throw` was given), then write what it queued."""
        agent = self._agent
        if agent is None:
            agent = self._agent = self._begin()
        writer = self._writer
        writer.stepping = True
        try:
            if self._thrown is None:
                return agent.send(value)
            thrown, self._thrown = self._thrown, None
            return agent.throw(thrown)
        finally:
            writer.stepping = False
            writer.flush()

    def throw(
        self,
        typ: type[BaseException] | BaseException,
        val: object = None,
        tb: TracebackType | None = None,
        /,
    ) -> object:
        """Throw into the agent (a cancellation), as a step: what it queued is written."""
        error = typ if val is None else val
        assert isinstance(error, BaseException)  # noqa: S101 - as a task or `await` throws
        if tb is not None:
            error = error.with_traceback(tb)
        if self._agent is None:  # before its first step: the agent never starts
            self._start = None
            raise error
        self._thrown = error
        return self.send(None)

    def close(self) -> None:
        """Close the agent's coroutine, if it was made."""
        self._start = None
        if self._agent is not None:
            self._agent.close()

    def __await__(self) -> Generator[object, object, None]:
        """Awaited rather than run as a task (tests do): stepped as `Resumed` steps a send."""
        try:
            waiting = self.send(None)
        except StopIteration:
            return
        yield from Resumed(self, waiting).__await__()

    def _begin(self) -> Coroutine[object, object, None]:
        start = self._start
        if start is None:
            message = "cannot reuse already awaited coroutine"
            raise RuntimeError(message)
        self._start = None  # held for the whole run, a partial cost each stream 0.4 KiB
        return start()


class Steps(Protocol):
    """What `Resumed` steps: a send's `__await__()`, or a run's coroutine awaited."""

    def send(self, value: None, /) -> object: ...
    def throw(self, error: BaseException, /) -> object: ...
    def close(self) -> None: ...


class Resumed:
    """The rest of something stepped once already, which suspended on `waiting` then.

    Awaited in the pump's task (a send that suspended in the agent's step), it passes on what
    the task sends or throws, as `await` does.
    """

    def __init__(self, steps: Steps, waiting: object) -> None:
        self._steps = steps
        self._waiting = waiting

    def __await__(self) -> Generator[object, object, None]:
        steps, waiting = self._steps, self._waiting
        while True:
            try:
                yield waiting
            except GeneratorExit:
                steps.close()
                raise
            except BaseException as thrown:  # noqa: BLE001 - passed on, as `await` does
                error: BaseException | None = thrown
            else:
                error = None
            try:
                waiting = steps.send(None) if error is None else steps.throw(error)
            except StopIteration:
                return
