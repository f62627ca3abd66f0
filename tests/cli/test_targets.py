"""Loading targets, `module:attr` or `path.py:attr`: the agent, its state type, what is refused."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from agui.cli import (
    _serve,
    load_agent,
    load_state_type,
    load_target,
    main,
)
from agui.cli._targets import is_asgi_app
from agui.errors import TargetError

# -- the command line, in process --------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing.py:agent", "cannot load 'missing.py': no such file"),
        ("nowhere/agents.py:agent", "cannot load 'nowhere/agents.py': no such file"),
        ("no_such_module_xyz:agent", "cannot import module 'no_such_module_xyz'"),
        ("broken:agent", "cannot import module 'broken': RuntimeError: this module fails"),
        ("broken.py:agent", "cannot load 'broken.py': RuntimeError: this module fails on import"),
        ("exits:agent", "cannot import module 'exits': it exited at import (SystemExit: 3); a"),
        ("exits.py:agent", "cannot load 'exits.py': it exited at import (SystemExit: 3); a"),
        (
            "boom:agent",
            (
                "cannot import module 'boom': Boom: bang (importing it failed; python -c "
                "'import boom' shows the traceback)\n"
            ),
        ),
        (
            "boom.py:agent",
            "cannot load 'boom.py': Boom: bang (running the file failed; python boom.py shows",
        ),
        (
            "lazy:agent",
            (
                "cannot get 'agent' from 'lazy': ImportError: agent needs an extra that is not "
                "installed; name an attribute the module defines, after the colon\n"
            ),
        ),
        (
            "lazy:computed",
            (
                "'lazy:computed' cannot be checked as an agent: looking at it raised "
                "RuntimeError: run is computed, and computing it fails; an agent is an async"
            ),
        ),
        ("agents:missing", "'agents' has no attribute 'missing'"),
        ("agents.py:Runner.missing", "'agents.py' has no attribute 'Runner.missing'"),
        ("agents", "target 'agents' must be package.module:attr or path/to/file.py:attr"),
        ("agents:", "target 'agents:' must be package.module:attr"),
        ("agents:not_async", "is not an agent: it is a function that is not async"),
        ("agents:two_arguments", "is not an agent: it does not take exactly one argument"),
        ("agents:Runner", "is not an agent: it is the class Runner; use an instance of it"),
        ("agents:sync_runner", "is not an agent: its run method is not async"),
        ("agents:wide_runner", "its run method does not take exactly one argument"),
        ("agents:streams", "is not an agent: it is an async generator function (it yields)"),
        ("agents:number", "is not an agent: it is a int (42)"),
    ],
)
def test_a_target_that_is_not_an_agent_exits_2_naming_the_problem(
    project: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    del project

    assert main(["serve", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("agui serve: error: ")
    assert message in captured.err


@pytest.mark.parametrize("target", ["interrupts:agent", "interrupts.py:agent"])
def test_a_target_interrupted_while_it_loads_stops_the_command_with_130_and_is_not_kept(
    project: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """Ctrl-C during a slow import stops the command; the half-run module is not loaded."""
    del project

    assert main(["serve", target]) == 130
    assert capsys.readouterr().err == "agui serve: error: interrupted\n"
    assert "interrupts" not in sys.modules


def test_a_state_that_is_not_a_type_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    del project

    assert main(["serve", "agents:agent", "--state", "agents:number"]) == 2
    assert "state 'agents:number' is not a type: it is a int (42)" in capsys.readouterr().err


def test_a_state_type_the_clients_state_cannot_be_read_into_exits_2_in_one_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "kinds.py").write_text("class Strange(BaseException):\n    pass\n")

    assert main(["serve", "agents:agent", "--state", "kinds:Strange", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agui serve: error: the state type must be one the client's state can")
    assert err.count("\n") == 1


# -- loading targets ---------------------------------------------------------------------------


def test_targets_load_from_modules_files_and_dotted_attributes(project: Path) -> None:
    by_module = load_target("agents:runner")
    by_file = load_target(str(project / "agents.py") + ":Runner.run")

    assert type(by_module).__name__ == "Runner"
    assert callable(by_file)


def test_load_agent_accepts_functions_and_objects_with_a_run_method(project: Path) -> None:
    del project

    assert callable(load_agent("agents:agent"))
    assert hasattr(load_agent("agents:runner"), "run")
    assert callable(load_agent("agents:callable_agent"))  # an async __call__, as run() takes
    with pytest.raises(TargetError, match="is not an agent"):
        load_agent("agents:number")


def test_load_state_type_returns_the_class(project: Path) -> None:
    del project

    assert load_state_type("agents:Counter").__name__ == "Counter"


def test_a_file_whose_name_is_not_an_identifier_still_loads(project: Path) -> None:
    odd = project / "my-agent.py"
    odd.write_text("async def agent(ctx):\n    ctx.say('hi')\n")

    assert callable(load_agent(f"{odd}:agent"))


def test_a_file_that_is_not_python_is_refused(project: Path) -> None:
    data = project / "data.txt"
    data.write_text("not python")

    with pytest.raises(TargetError, match=r"cannot load '.*data\.txt': it is not a Python file"):
        load_target(f"{data}:agent")


# -- serve: state types and files loaded once --------------------------------------------------

STATE_FILE = """
from dataclasses import dataclass
from typing import Any

from agui import RunContext


@dataclass
class Board:
    tasks: list[str]


async def typed(ctx: RunContext[Board]) -> None:
    ctx.say(str(ctx.state))


async def untyped(ctx):
    ctx.say("no annotation")


async def loose(ctx: RunContext[object]) -> None:
    ctx.say("object")


async def generic(ctx: RunContext[dict[str, Any]]) -> None:
    ctx.say("a generic alias is no class")


async def unresolved(ctx: "RunContext[Missing]") -> None:
    ctx.say("the name does not resolve")


class Runner:
    async def run(self, ctx: RunContext[Board]) -> None:
        ctx.say("from a method")


runner = Runner()
"""


@pytest.mark.parametrize(
    ("attr", "state"),
    [
        ("typed", "Board"),
        ("runner", "Board"),
        ("untyped", None),
        ("loose", None),
        ("generic", None),
        ("unresolved", None),
    ],
)
def test_serve_reads_the_state_type_from_the_agents_annotation(
    project: Path, attr: str, state: str | None
) -> None:
    (project / "typed_agents.py").write_text(STATE_FILE)

    agent = load_agent(f"{project / 'typed_agents.py'}:{attr}")
    found = _serve._annotated_state(agent)  # pyright: ignore[reportPrivateUsage]

    assert (found.__name__ if found is not None else None) == state


def test_a_file_is_loaded_once_so_an_agent_and_its_state_share_their_classes(
    project: Path,
) -> None:
    path = project / "typed_agents.py"
    path.write_text(STATE_FILE)

    agent = load_agent(f"{path}:typed")
    state = load_state_type(f"{path}:Board")

    assert _serve._annotated_state(agent) is state  # pyright: ignore[reportPrivateUsage]
    assert load_agent(f"{path}:typed") is agent


def test_a_file_whose_module_name_is_taken_loads_beside_the_other(project: Path) -> None:
    other = project / "elsewhere"
    other.mkdir()
    (other / "agents.py").write_text("async def agent(ctx):\n    ctx.say('the other one')\n")
    first = load_target(f"{project / 'agents.py'}:agent")

    second = load_target(f"{other / 'agents.py'}:agent")

    assert first is not second
    assert sys.modules["agents"].__file__ == str(project / "agents.py")
    assert inspect.getmodule(second) is not inspect.getmodule(first)


def test_an_asgi_application_is_told_from_an_agent_by_its_three_arguments() -> None:
    class App:
        async def __call__(self, scope: object, receive: object, send: object) -> None: ...

    class Agent:
        async def __call__(self, ctx: object) -> None: ...

    async def app(scope: object, receive: object, send: object) -> None: ...

    def sync_app(scope: object, receive: object, send: object) -> None: ...

    assert is_asgi_app(App())
    assert is_asgi_app(app)
    assert not is_asgi_app(Agent())
    assert not is_asgi_app(sync_app)
    assert not is_asgi_app(len)  # a builtin: no coroutine function
