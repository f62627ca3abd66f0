"""A run's coroutine stepped by its task with the writer flushing between steps; a send resumed."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator

import pytest

from agui.asgi._stepping import Resumed, Stepping


class Writer:
    """A writer as a `Stepping` sees it, logging when it flushes and whether it was stepping."""

    def __init__(self) -> None:
        self.stepping = False
        self.log: list[str] = []

    def flush(self) -> None:
        self.log.append(f"flush (stepping {self.stepping})")


def never() -> Coroutine[object, object, None]:
    message = "the agent must not start"
    raise AssertionError(message)


def test_the_run_runs_in_its_own_task_and_the_writer_flushes_after_each_step() -> None:
    writer = Writer()
    run: asyncio.Task[None] | None = None

    async def agent() -> None:
        writer.log.append(f"step (stepping {writer.stepping})")
        assert asyncio.current_task() is run
        await asyncio.sleep(0)
        writer.log.append(f"step (stepping {writer.stepping})")

    async def main() -> None:
        nonlocal run
        stepping = Stepping(agent, writer)
        assert asyncio.iscoroutine(stepping)
        run = asyncio.create_task(stepping)
        await run

    asyncio.run(main())

    assert writer.log == [
        "step (stepping True)",
        "flush (stepping False)",
        "step (stepping True)",
        "flush (stepping False)",
    ]


def test_a_cancellation_is_thrown_into_the_agent_as_a_step_that_flushes() -> None:
    writer = Writer()

    async def agent() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            writer.log.append("cancelled")
            raise

    async def main() -> bool:
        run = asyncio.create_task(Stepping(agent, writer))
        await asyncio.sleep(0)
        run.cancel()
        await asyncio.wait({run})
        return run.cancelled()

    assert asyncio.run(main()) is True
    assert writer.log == ["flush (stepping False)", "cancelled", "flush (stepping False)"]


def test_an_error_thrown_before_the_first_step_never_starts_the_agent_nor_may_it_start_later() -> (
    None
):
    stepping = Stepping(never, Writer())

    with pytest.raises(ValueError, match="before it started"):
        stepping.throw(ValueError("before it started"))
    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine"):
        stepping.send(None)


def test_a_throw_in_the_three_argument_form_passes_its_value_and_traceback_on() -> None:
    thrown: list[BaseException] = []

    async def agent() -> None:
        try:
            await asyncio.sleep(0)
        except KeyError as error:
            thrown.append(error)

    message = "with a traceback"
    try:
        raise KeyError(message)  # noqa: TRY301 - a traceback to pass on
    except KeyError as error:
        value, traceback = error, error.__traceback__
    stepping = Stepping(agent, Writer())
    stepping.send(None)

    with pytest.raises(StopIteration):
        stepping.throw(KeyError, value, traceback)
    assert thrown == [value]
    assert thrown[0].__traceback__ is not None


def test_closing_it_closes_the_agent_and_closing_it_unstarted_never_starts_one() -> None:
    log: list[str] = []

    async def agent() -> None:
        try:
            await asyncio.sleep(0)
        finally:
            log.append("closed")

    started = Stepping(agent, Writer())
    started.send(None)
    started.close()
    Stepping(never, Writer()).close()

    assert log == ["closed"]


def test_awaited_rather_than_run_as_a_task_it_steps_the_agent_the_same_way() -> None:
    writer = Writer()

    async def agent() -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    async def main() -> None:
        await Stepping(agent, writer)

    asyncio.run(main())

    assert writer.log == ["flush (stepping False)"] * 3


def test_an_agent_that_ends_in_its_first_step_ends_the_await_at_once() -> None:
    writer = Writer()

    async def agent() -> None:
        writer.log.append("ran")

    async def main() -> None:
        await Stepping(agent, writer)

    asyncio.run(main())

    assert writer.log == ["ran", "flush (stepping False)"]


def test_the_rest_of_a_send_passes_on_what_its_task_throws_and_closes_the_send_when_closed() -> (
    None
):
    log: list[str] = []

    def send_steps() -> Generator[object, None, None]:
        try:
            for waited in ("first", "second", "third"):
                try:
                    yield waited
                except ValueError as error:
                    log.append(f"thrown {error}")
        finally:
            log.append("closed")

    steps = send_steps()
    rest = Resumed(steps, next(steps)).__await__()
    assert next(rest) == "first"
    assert rest.send(None) == "second"
    assert rest.throw(ValueError("in the task")) == "third"
    rest.close()
    assert log == ["thrown in the task", "closed"]


def test_the_rest_of_a_send_ends_when_the_send_does() -> None:
    def send_steps() -> Generator[object, None, None]:
        yield "first"

    steps = send_steps()
    rest = Resumed(steps, next(steps)).__await__()
    assert next(rest) == "first"
    with pytest.raises(StopIteration):
        rest.send(None)
