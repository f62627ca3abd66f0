"""Targets: the `package.module:attr` or `path/to/file.py:attr` names the command line loads.

A module target is imported with the current directory on `sys.path`, as `python -m` would; a
file target is loaded from its path with its own directory on `sys.path`, then the current
directory (as uvicorn has it: a file in a package may import its package), and only once: the
agent and the `--state` type may come from the same file and then share their classes. Anything
that goes wrong (no such file, an import that raises or exits, a missing attribute, an object
that is not an agent) is one `TargetError` that names what is wrong and how to name the target
instead. Only Ctrl-C (`KeyboardInterrupt`) while a target loads is not: it stops the command, as
it would anywhere else.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from agui.errors import TargetError

if TYPE_CHECKING:
    from agui.runner import AgentLike

__all__ = ["is_asgi_app", "load_agent", "load_served", "load_state_type", "load_target"]

_SHAPE = "package.module:attr or path/to/file.py:attr"
_ASGI_ARGUMENTS = 3  # scope, receive, send

AsgiApp = Callable[[Any, Any, Any], Awaitable[None]]
"""An ASGI application, served by `agui serve` as it is."""


def load_target(target: str) -> object:
    """The object a `package.module:attr` or `path/to/file.py:attr` target names.

    Examples:
        >>> load_target("agui.errors:TargetError").__name__
        'TargetError'
    """
    where, colon, attr = target.rpartition(":")
    if not colon or not where or not attr:
        message = f"target {target!r} must be {_SHAPE}, such as examples/hello.py:agent"
        raise TargetError(message)
    module = _load_file(where) if _is_file_target(where) else _load_module(where)
    value: object = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            message = f"{where!r} has no attribute {attr!r}: name one it defines, after the colon"
            raise TargetError(message) from None
        except Exception as error:  # a module `__getattr__` or a property that raises
            message = (
                f"cannot get {attr!r} from {where!r}: {type(error).__name__}: {error}; name an "
                "attribute the module defines, after the colon"
            )
            raise TargetError(message) from error
    return value


def load_agent(target: str) -> AgentLike[Any]:
    """Load a target and check that it is an agent.

    Examples:
        >>> load_agent("agui.cli:load_agent")
        Traceback (most recent call last):
        ...
        agui.errors.TargetError: 'agui.cli:load_agent' is not an agent: ...
    """
    from agui.runner import agent_problem  # noqa: PLC0415 - lazy, so the command starts light

    value = load_target(target)
    try:
        problem = agent_problem(value)
    except Exception as error:  # its `run` is a property that raises, say
        message = (
            f"{target!r} cannot be checked as an agent: looking at it raised "
            f"{type(error).__name__}: {error}; an agent is an async function or an object "
            "with an async run(ctx) method"
        )
        raise TargetError(message) from error
    if problem is not None:
        message = (
            f"{target!r} is not an agent: {problem}; an agent is an async function taking the "
            "run context (async def agent(ctx)) or an object with an async run(ctx) method"
        )
        raise TargetError(message)
    return cast("AgentLike[Any]", value)


def load_served(target: str) -> AgentLike[Any] | AsgiApp:
    """Load a target that is an agent, or an ASGI application to serve as it is.

    Examples:
        >>> load_served("agui.cli:load_agent")
        Traceback (most recent call last):
        ...
        agui.errors.TargetError: 'agui.cli:load_agent' is not an agent: ...
    """
    value = load_target(target)
    if is_asgi_app(value):
        return cast("AsgiApp", value)
    return load_agent(target)


def is_asgi_app(value: object) -> bool:
    """Whether `value` is an ASGI application: an async callable of `(scope, receive, send)`.

    An agent is an async callable of the run context alone, so the two never mix.

    Examples:
        >>> async def app(scope, receive, send): ...
        >>> async def agent(ctx): ...
        >>> is_asgi_app(app), is_asgi_app(agent), is_asgi_app(42)
        (True, False, False)
    """
    call = (
        value if inspect.isroutine(value) else inspect.getattr_static(type(value), "__call__", None)
    )
    if not inspect.iscoroutinefunction(call):
        return False
    parameters = inspect.signature(cast("Callable[..., object]", value)).parameters
    return len(parameters) == _ASGI_ARGUMENTS


def load_state_type(target: str) -> type[Any]:
    """Load a `MODULE:TYPE` target and check that it is a type.

    Examples:
        >>> load_state_type("agui.errors:TargetError").__name__
        'TargetError'
    """
    value = load_target(target)
    if not isinstance(value, type):
        message = (
            f"state {target!r} is not a type: it is {_describe(value)}; name the class of the "
            "run state, such as a pydantic model"
        )
        raise TargetError(message)
    return value


def _is_file_target(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _load_file(where: str) -> ModuleType:
    path = Path(where).resolve()
    if not path.is_file():
        message = (
            f"cannot load {where!r}: no such file; give the path of a Python file, relative "
            "to the current directory"
        )
        raise TargetError(message)
    name = _module_name(path)
    held = sys.modules.get(name)
    if held is not None and _file_of(held) == path:
        return held  # loaded once: an agent and its state type then share their classes
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        message = f"cannot load {where!r}: it is not a Python file; a file target ends in .py"
        raise TargetError(message)
    _with_working_directory()
    sys.path.insert(0, str(path.parent))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        del sys.modules[name]  # half run: the next load runs the file again
        if isinstance(error, KeyboardInterrupt):
            raise  # Ctrl-C while the file runs stops the command, as anywhere else (130)
        message = f"cannot load {where!r}: {_failed(error, 'running the file', f'python {where}')}"
        raise TargetError(message) from error
    return module


def _module_name(path: Path) -> str:
    """The file's stem, unless another module holds that name: then one made from the path."""
    stem = path.stem if path.stem.isidentifier() else "agui_target"
    held = sys.modules.get(stem)
    if held is None or _file_of(held) == path:
        return stem
    return f"{stem}_{zlib.crc32(str(path).encode()):08x}"


def _file_of(module: ModuleType) -> Path | None:
    where = getattr(module, "__file__", None)
    return Path(where).resolve() if isinstance(where, str) else None


def _with_working_directory() -> None:
    if os.getcwd() not in sys.path:  # noqa: PTH109 - sys.path holds strings
        sys.path.insert(0, os.getcwd())  # noqa: PTH109


def _load_module(where: str) -> ModuleType:
    _with_working_directory()
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as error:
        message = (
            f"cannot import module {where!r}: {error}; a module target is imported from the "
            "current directory: run from the folder above it, or give its file path"
        )
        raise TargetError(message) from None
    except KeyboardInterrupt:
        raise  # Ctrl-C while the module imports stops the command, as anywhere else (130)
    except BaseException as error:  # a `BaseException` of its own is an import failure too
        failed = _failed(error, "importing it", f"python -c 'import {where}'")
        message = f"cannot import module {where!r}: {failed}"
        raise TargetError(message) from error


def _failed(error: BaseException, what: str, rerun: str) -> str:
    """Why a target whose import raised or exited is refused, and how to see the traceback."""
    if isinstance(error, SystemExit):
        # It ran a program on import, rather than only define its agent.
        return (
            f"it exited at import (SystemExit: {error.code!r}); a target module must define the "
            "agent and not run a program when imported: put that code under "
            "if __name__ == '__main__':"
        )
    return f"{type(error).__name__}: {error} ({what} failed; {rerun} shows the traceback)"


def _describe(value: object) -> str:
    return f"a {type(value).__name__} ({value!r:.60})"
