"""The `agui` command: serve an agent, watch and verify AG-UI streams, and a demo.

| command | what it does |
| --- | --- |
| `agui serve TARGET` | serves an agent over HTTP with uvicorn |
| `agui demo` | serves the travel example on a free port, asks it a question, shows the run |
| `agui watch URL` | sends one request to any AG-UI endpoint and shows the run, verified |
| `agui verify SOURCE...` | checks captured streams, or a live endpoint, with agui's verifier |

**serve.** `agui serve TARGET` serves an agent over HTTP with uvicorn
(`pip install "agui-server[serve]"`): one POST per run, answered with the AG-UI event stream, as
`agui.asgi_app` does. TARGET names the agent as `package.module:attr` (imported with the
current directory on `sys.path`) or as `path/to/file.py:attr` (loaded from that file, with its
directory on `sys.path`; a file is loaded once, so the agent and `--state` may come from the
same one). The agent is an `async def agent(ctx)` taking one argument, or an object with such
an async `run` method. Without `--state`, the state type is the one the agent's annotation
names, when it is a class: `async def agent(ctx: RunContext[Board])` is served with `Board`.

```
agui serve examples/hello.py:agent --port 8000 --path /agent
agui serve myapp.agents:support --state myapp.state:Draft --debug
```

`--port 0` picks a free port. Once the socket is bound, the command prints one line,
`agui: serving on http://HOST:PORT/PATH`, so scripts and tests can read the address; the socket
is already listening then. Ctrl-C (SIGINT) shuts the server down gracefully, with status 0. A target
that cannot be loaded is reported on stderr with exit status 2, naming what is wrong: the file or
module, the attribute, or why the object is not an agent. A port that cannot be bound, or
uvicorn missing, exits with status 1.

**demo, watch, verify.** `agui demo` and `agui watch` show a run as a person reads it:
`[Run Started]`, `[Tool Call: NAME] ARGUMENTS`, `[Tool Result: NAME] CONTENT`, the answer as
its deltas arrive, `[Run Finished]`, and the state at the end (`[Final State]`). With `--raw`
they print the events instead, one wire JSON object a line, which `agui verify -` reads back.
Every event is checked by agui's verifier as it arrives, and a violation is shown with its
rule where it happens; `agui verify` prints each one with its event's index. They go on after
a violation: the first violation of each run is reported and the rest of that run counted
(they mostly follow from the first), and the end of the stream is always checked, so a stream
without a terminal event is reported as `truncated`. An item that is not JSON, or not a valid
event, is a violation (`invalid-json`, `malformed-event`); an event type AG-UI 1.0 does not
define is dropped with a note, as the official client drops it. The demo and `watch` need httpx
(`agui-server[client]`), the demo uvicorn too.

Exit statuses:

- `0`: done, and the stream is valid (`serve`: stopped with Ctrl-C).
- `1`: the stream breaks AG-UI's rules, or the demo's run did not finish; `serve`: the port
  cannot be bound, or uvicorn is missing.
- `2`: the command line, a target or an input cannot be used: a usage error, a target that does
  not load, a file that cannot be read or whose format cannot be told, a server that cannot be
  reached or answers with an HTTP error (its JSON body is printed), a missing optional
  dependency (`demo`, `watch`, `verify`).
- `130`: interrupted with Ctrl-C (`demo`, `watch`).

Each command is a subparser added by one `_add_<command>` function listed in `_COMMANDS`, so
further commands plug in beside `serve`; `demo`, `watch` and `verify` come from a private module.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import socket
import sys
import typing
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agui import __version__
from agui.asgi import Receive, Scope, Send, asgi_app
from agui.cli import _demo, _verify, _watch
from agui.context import RunContext

if TYPE_CHECKING:
    from agui.runner import AgentLike

    # What `add_subparsers()` returns; argparse names no public type for it.
    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]  # noqa: SLF001  # pyright: ignore[reportPrivateUsage]

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "TargetError",
    "load_agent",
    "load_state_type",
    "load_target",
    "main",
]

EXIT_FAILURE = 1
"""Exit status for a command that could not do its work (a port in use, uvicorn missing)."""
EXIT_USAGE = 2
"""Exit status for a command line or target that cannot be used."""
_GRACEFUL_SHUTDOWN_SECONDS = 5
_BACKLOG = 2048


class TargetError(Exception):
    """A `module:attr` or `file.py:attr` target that cannot be loaded or is the wrong kind.

    Examples:
        >>> try:
        ...     load_target("no_such_module_here:agent")
        ... except TargetError as error:
        ...     print(error)
        cannot import module 'no_such_module_here': No module named 'no_such_module_here'
    """


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `agui` command line and return its exit status.

    Examples:
        >>> main(["serve", "no_such_module_here:agent"])
        2
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors end here, not the caller
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agui", description="Tools for AG-UI agents built with agui."
    )
    parser.add_argument("--version", action="version", version=f"agui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in _COMMANDS:
        add(commands)
    return parser


# -- serve -------------------------------------------------------------------------------------


def _add_serve(commands: _Commands) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve an agent over HTTP (AG-UI over SSE) with uvicorn",
        description=(
            "Serve an agent over HTTP: each POST of a RunAgentInput to PATH is answered with "
            "the run's AG-UI event stream. Needs uvicorn: pip install 'agui-server[serve]'."
        ),
    )
    serve.add_argument(
        "target",
        metavar="TARGET",
        help="the agent, as package.module:attr or path/to/file.py:attr",
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=8000, help="port to bind; 0 picks a free one (8000)"
    )
    serve.add_argument("--path", default="/", help="the URL path of the endpoint (/)")
    serve.add_argument(
        "--state", metavar="MODULE:TYPE", help="the run state type, loaded like TARGET"
    )
    serve.add_argument(
        "--debug",
        action="store_true",
        help="put exception text into RUN_ERROR messages (never in production)",
    )
    serve.add_argument(
        "--inspector",
        action="store_true",
        help="also answer GET on PATH with the inspector page: open the URL in a browser",
    )
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    path = "/" + str(args.path).strip("/")
    try:
        agent = load_agent(args.target)
        state = load_state_type(args.state) if args.state else _annotated_state(agent)
    except TargetError as error:
        return _fail("serve", str(error), EXIT_USAGE)
    try:
        import uvicorn  # noqa: PLC0415 - an optional dependency, needed by this command only
    except ImportError:
        message = 'serving needs uvicorn, which is not installed: pip install "agui-server[serve]"'
        return _fail("serve", message, EXIT_FAILURE)
    try:
        sock = _listen(args.host, args.port)
    except OSError as error:
        return _fail("serve", f"cannot listen on {args.host}:{args.port}: {error}", EXIT_FAILURE)
    host, port = sock.getsockname()[:2]
    app = _PathApp(
        asgi_app(agent, state=state, debug=bool(args.debug), inspector=bool(args.inspector)), path
    )
    config = uvicorn.Config(
        app, host=host, port=port, timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS
    )
    shown = f"[{host}]" if ":" in str(host) else host
    with sock:
        try:
            print(f"agui: serving on http://{shown}:{port}{path}", flush=True)  # noqa: T201
            uvicorn.Server(config).run(sockets=[sock])
        except KeyboardInterrupt:  # Ctrl-C: uvicorn has shut down gracefully and re-raised it
            pass
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening, so clients may connect as soon as its address is printed."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


class _PathApp:
    """Answers at one path (with or without a trailing slash) and 404s everything else."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Any], path: str) -> None:
        self._app = app
        self._paths = {path, path.rstrip("/") + "/", path.rstrip("/") or "/"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") not in self._paths:
            body = json.dumps(
                {"code": "NOT_FOUND", "message": f"no agent at {scope.get('path')!r}"}
            ).encode()
            headers = [(b"content-type", b"application/json"), (b"vary", b"Accept")]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)


# -- targets -----------------------------------------------------------------------------------


def load_target(target: str) -> object:
    """The object a `package.module:attr` or `path/to/file.py:attr` target names.

    Examples:
        >>> load_target("agui.testing:collect").__name__
        'collect'
    """
    where, colon, attr = target.rpartition(":")
    if not colon or not where or not attr:
        message = f"target {target!r} must be package.module:attr or path/to/file.py:attr"
        raise TargetError(message)
    module = _load_file(where) if _is_file_target(where) else _load_module(where)
    value: object = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            message = f"{where!r} has no attribute {attr!r}"
            raise TargetError(message) from None
    return value


def load_agent(target: str) -> AgentLike[Any]:
    """Load a target and check that it is an agent.

    Examples:
        >>> load_agent("agui.testing:fold")
        Traceback (most recent call last):
        ...
        agui.cli.TargetError: 'agui.testing:fold' is not an agent: ...
    """
    value = load_target(target)
    problem = _agent_problem(value)
    if problem is not None:
        message = (
            f"{target!r} is not an agent: {problem}; an agent is an async function taking the "
            "run context (async def agent(ctx)) or an object with an async run(ctx) method"
        )
        raise TargetError(message)
    return value  # type: ignore[return-value]


def load_state_type(target: str) -> type[Any]:
    """Load a `MODULE:TYPE` target and check that it is a type.

    Examples:
        >>> load_state_type("agui.types:RunAgentInput").__name__
        'RunAgentInput'
    """
    value = load_target(target)
    if not isinstance(value, type):
        message = f"state {target!r} is not a type: it is {_describe(value)}"
        raise TargetError(message)
    return value


def _is_file_target(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _load_file(where: str) -> ModuleType:
    path = Path(where).resolve()
    if not path.is_file():
        message = f"cannot load {where!r}: no such file"
        raise TargetError(message)
    name = _module_name(path)
    held = sys.modules.get(name)
    if held is not None and _file_of(held) == path:
        return held  # loaded once: an agent and its state type then share their classes
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        message = f"cannot load {where!r}: it is not a Python file"
        raise TargetError(message)
    sys.path.insert(0, str(path.parent))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        message = f"cannot load {where!r}: {type(error).__name__}: {error}"
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


def _load_module(where: str) -> ModuleType:
    if os.getcwd() not in sys.path:  # noqa: PTH109 - sys.path holds strings
        sys.path.insert(0, os.getcwd())  # noqa: PTH109
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as error:
        message = f"cannot import module {where!r}: {error}"
        raise TargetError(message) from None
    except Exception as error:
        message = f"cannot import module {where!r}: {type(error).__name__}: {error}"
        raise TargetError(message) from error


def _agent_problem(value: object) -> str | None:
    """Why `value` is not an agent, or `None` when it is one."""
    if inspect.isclass(value):
        return f"it is the class {value.__name__}; serve an instance of it"
    if inspect.iscoroutinefunction(value):
        return None if _takes_one_argument(value) else "it does not take exactly one argument"
    run = getattr(value, "run", None)
    if run is not None:
        if not inspect.iscoroutinefunction(run):
            return "its run method is not async"
        return None if _takes_one_argument(run) else "its run method does not take one argument"
    if callable(value):
        return "it is a function that is not async"
    return f"it is {_describe(value)}"


def _annotated_state(agent: AgentLike[Any]) -> type[Any] | None:
    """The state type the agent's annotation names (`ctx: RunContext[Board]`), if a class."""
    function: object = agent if inspect.isroutine(agent) else getattr(agent, "run", None)
    if not callable(function):
        return None
    try:
        hints = typing.get_type_hints(function)
        first = next(iter(inspect.signature(function).parameters), None)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve names no state type
        return None
    hint = hints.get(first) if first is not None else None
    if typing.get_origin(hint) is not RunContext:
        return None
    state = typing.get_args(hint)[0]
    return state if isinstance(state, type) and state is not object else None


def _takes_one_argument(function: Callable[..., object]) -> bool:
    try:
        inspect.signature(function).bind(None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (some builtins): give it the benefit of the doubt
        return True
    return True


def _describe(value: object) -> str:
    return f"a {type(value).__name__} ({value!r:.60})"


def _fail(command: str, message: str, status: int) -> int:
    print(f"agui {command}: error: {message}", file=sys.stderr)  # noqa: T201
    return status


_COMMANDS: tuple[Callable[[_Commands], None], ...] = (
    _add_serve,
    _demo.add_demo,
    _watch.add_watch,
    _verify.add_verify,
)
"""Each adds one subcommand to the `agui` parser."""
