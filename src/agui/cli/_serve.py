"""The `agui serve` command: an agent over HTTP with uvicorn, one POST per run.

The target may also be an ASGI application (several agui endpoints behind one router, say),
served as it is: the options that configure the endpoint agui builds for an agent are refused
with it, and an `aclose()` coroutine method of its own is awaited before shutdown, as an agui
endpoint's is, so the runs in flight end with their terminal events.

The socket is bound and listening before the command prints `agui: serving on URL`, so a script
may connect as soon as it reads that line. Ctrl-C or SIGTERM shuts down gracefully and ends with
status 0, the one way `serve` is meant to stop: the runs in flight are cancelled first, so each
stream ends with `RUN_FINISHED` (outcome `cancelled`) and the agents' `finally` blocks run, within
`--grace` seconds; then uvicorn closes what is still open, and the command exits, leaving behind
a run that ignored its cancellation and an agent's thread still running (`run_to_end`,
`exit_past_lingering_threads`) rather than waiting for them. Every error before the server starts
is one line: a port outside 0-65535, or a blank `--host` (all interfaces are `0.0.0.0`), is a
usage error of the parser; a target that does not load, uvicorn missing, or an address that
cannot be bound is reported with what to do instead (status 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import ipaddress
import logging
import math
import os
import signal
import socket
import sys
import threading
import typing
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from agui.asgi import (
    BODY_TIMEOUT,
    KEEPALIVE,
    LOOPBACK_HOSTS,
    MAX_BODY_BYTES,
    asgi_app,
)
from agui.asgi._budget import BUFFER_BUDGET
from agui.asgi._server import (
    KEEPALIVE_TIMEOUT,
    LIMITS,
    MAX_HEADER_BYTES,
    graceful_server,
    listen,
    run_to_end,
)
from agui.cli._arguments import duration, host_name, mebibytes, port_number, url_path, worker_count
from agui.cli._main import EXIT_OK, fail, statuses
from agui.cli._mount import PathApp
from agui.cli._targets import AsgiApp, is_asgi_app, load_served, load_state_type
from agui.cli._workers import supervise
from agui.context import RunContext
from agui.errors import TargetError, UsageError
from agui.runs import MemoryRunLog, RedisRunLog, RunLog

if TYPE_CHECKING:
    from agui.cli._main import Commands
    from agui.runner import AgentLike

__all__ = ["add_serve", "exit_past_lingering_threads"]

_GRACEFUL_SHUTDOWN_SECONDS = 5
_PATH_SAFE = "/!$&'()*+,;=:@"  # RFC 3986 path characters that need no percent-encoding
_ENDPOINT_OPTIONS: dict[str, object] = {
    "path": "/",
    "state": None,
    "debug": False,
    "inspector": False,
    "runs": None,
    "keepalive": KEEPALIVE,
    "buffer_budget": BUFFER_BUDGET >> 20,
}
"""The options that configure the endpoint agui builds for an agent, with their defaults."""


@dataclasses.dataclass(frozen=True)
class _Agent:
    """An agent target, loaded: the agent, its state type and its run log."""

    agent: AgentLike[Any]
    state: type[Any] | None
    runs: RunLog | None


@dataclasses.dataclass(frozen=True)
class _Served:
    """What `agui serve` serves, and what the server awaits before it shuts down."""

    app: AsgiApp
    before_shutdown: Callable[[], Awaitable[None]]


def add_serve(commands: Commands) -> None:
    """Add `agui serve`: serve an agent over HTTP with uvicorn.

    Examples:
        >>> parser = argparse.ArgumentParser(prog="agui")
        >>> add_serve(parser.add_subparsers())
        >>> parser.parse_args(["serve", "examples/hello.py:agent", "--port", "0"]).port
        0
    """
    serve = commands.add_parser(
        "serve",
        help="serve an agent over HTTP (AG-UI over SSE) with uvicorn",
        description=(
            "Serve an agent over HTTP: each POST of a RunAgentInput to PATH is answered with "
            "the run's AG-UI event stream. Needs uvicorn: pip install 'agui-server[serve]'.\n\n"
            f"Limits: a request's line and headers at most {MAX_HEADER_BYTES // 1024} KiB, its "
            f"body at most {MAX_BODY_BYTES // (1 << 20)} MiB, arriving whole within "
            f"{BODY_TIMEOUT:g} s; an idle keep-alive connection is closed after "
            f"{KEEPALIVE_TIMEOUT} s. Bound to a loopback address, it answers only requests "
            f"whose Host is {', '.join(LOOPBACK_HOSTS)} or the --host it binds (a page on "
            "another name that resolves here is refused)."
        ),
        epilog=statuses(
            (
                0,
                (
                    "stopped with Ctrl-C or SIGTERM: the runs in flight are cancelled, and "
                    "their streams end with RUN_FINISHED (outcome cancelled), within --grace"
                ),
            ),
            (
                2,
                (
                    "bad options (a port outside 0-65535, ...), a target that does not load, "
                    "uvicorn missing, or an address that cannot be bound (in use, not this "
                    "machine's, no permission)"
                ),
            ),
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "target",
        metavar="TARGET",
        help=(
            "the agent (or an ASGI application, served as it is), as package.module:attr or "
            "path/to/file.py:attr"
        ),
    )
    serve.add_argument(
        "--host",
        type=host_name,
        default="127.0.0.1",
        help="interface to bind; 0.0.0.0 for all of them (127.0.0.1)",
    )
    serve.add_argument(
        "--port", type=port_number, default=8000, help="port to bind; 0 picks a free one (8000)"
    )
    serve.add_argument(
        "--path", type=url_path, default="/", help="the URL path of the endpoint (/)"
    )
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
    serve.add_argument(
        "--runs",
        metavar="memory|redis://...",
        help=(
            "keep runs in a run log, so they outlive their connections and are resumed at "
            "PATH/runs/ID/events: memory (this process) or a Redis URL (many workers)"
        ),
    )
    serve.add_argument(
        "--keepalive",
        type=duration,
        default=KEEPALIVE,
        metavar="SECONDS",
        help=(
            "send a ': ping' comment after this many seconds without an event, so that proxies "
            f"keep a quiet stream open; 0 for none ({KEEPALIVE:g})"
        ),
    )
    serve.add_argument(
        "--grace",
        type=duration,
        default=_GRACEFUL_SHUTDOWN_SECONDS,
        metavar="SECONDS",
        help=(
            "on Ctrl-C or SIGTERM, how long the cancelled runs have to end their streams, and "
            f"then the connections still open to close, before they are cut "
            f"({_GRACEFUL_SHUTDOWN_SECONDS})"
        ),
    )
    serve.add_argument(
        "--buffer-budget",
        type=mebibytes,
        default=BUFFER_BUDGET >> 20,
        metavar="MIB",
        help=(
            "the most all streams together may hold that their clients have not read, in MiB; "
            "past it, the run of the stream holding the most is cancelled "
            f"({BUFFER_BUDGET >> 20})"
        ),
    )
    serve.add_argument(
        "--workers",
        type=worker_count,
        default=1,
        metavar="N",
        help=(
            "serve from N processes sharing the socket (1); durable runs then need a run log "
            "they share: --runs redis://..."
        ),
    )
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    path = "/" + str(args.path).strip("/")
    try:
        loaded = _load(args)
    except (TargetError, UsageError) as error:
        return fail("serve", str(error))
    try:
        import uvicorn  # noqa: PLC0415 - an optional dependency, needed by this command only
    except ImportError:
        return fail(
            "serve",
            'serving needs uvicorn, which is not installed: pip install "agui-server[serve]"',
        )
    del uvicorn  # each server imports it where it runs (a worker, in its own process)
    try:
        sock = listen(args.host, args.port)
    except OSError as error:
        reason = error.strerror or str(error)
        message = (
            f"cannot listen on {args.host}:{args.port}: {reason}; choose another --host or "
            "--port (--port 0 picks a free one)"
        )
        return fail("serve", message)
    host, port = sock.getsockname()[:2]
    try:
        served = _endpoint(args, loaded, host)  # in a worker too: checked here, told once
    except UsageError as error:  # a --state type the client's state cannot be read into, say
        sock.close()
        return fail("serve", str(error))
    shown = f"[{host}]" if ":" in str(host) else host
    shown += f":{port}{quote(path, safe=_PATH_SAFE)}"
    status = EXIT_OK
    with sock:
        print(f"agui: serving on http://{shown}", flush=True)  # noqa: T201
        if args.workers == 1:
            _run(args, served, sock)
        else:
            work = functools.partial(_work, args)
            status = supervise(work, sock, args.workers, grace=args.grace)
    exit_past_lingering_threads()
    return status


def _load(args: argparse.Namespace) -> _Agent | AsgiApp:
    """The agent, its state type and run log, or the ASGI application (raises what they raise)."""
    served = load_served(args.target)
    if is_asgi_app(served):
        _check_app_options(args)
        return cast("AsgiApp", served)
    agent = cast("AgentLike[Any]", served)
    state = load_state_type(args.state) if args.state else _annotated_state(agent)
    if args.workers > 1 and args.runs == "memory":
        message = (
            f"--workers {args.workers} with --runs memory would keep each worker's runs to "
            "itself: give a redis:// URL the workers share, or one worker"
        )
        raise UsageError(message)
    return _Agent(agent, state, _run_log(args.runs))


def _check_app_options(args: argparse.Namespace) -> None:
    """Refuse the endpoint's options for an ASGI application target, which has its own."""
    given = [
        "--" + name.replace("_", "-")
        for name, default in _ENDPOINT_OPTIONS.items()
        if getattr(args, name) != default
    ]
    if given:
        message = (
            f"{' and '.join(given)} configure the endpoint agui builds for an agent, and "
            f"{args.target!r} is an ASGI application, which configures its own: leave them out, "
            "or serve an agent"
        )
        raise UsageError(message)


def _endpoint(args: argparse.Namespace, loaded: _Agent | AsgiApp, host: str) -> _Served:
    """What serves: an agent's endpoint at `--path` with its routes, or the application itself."""
    if not isinstance(loaded, _Agent):
        return _Served(loaded, _closer(loaded))
    endpoint = asgi_app(
        loaded.agent,
        cancel_grace=args.grace,
        keepalive=args.keepalive or None,
        state=loaded.state,
        debug=bool(args.debug),
        inspector=bool(args.inspector),
        allowed_hosts=_allowed_hosts(args.host, host),
        runs=loaded.runs,
        buffer_budget=args.buffer_budget << 20,
    )
    path = "/" + str(args.path).strip("/")
    return _Served(PathApp(endpoint, path, routes=args.runs is not None), endpoint.aclose)


def _run(args: argparse.Namespace, served: _Served, sock: socket.socket) -> None:
    """Serve on `sock` until a signal stops it, gracefully."""
    import uvicorn  # noqa: PLC0415 - an optional dependency, needed by this command only

    host, port = sock.getsockname()[:2]
    grace = math.ceil(args.grace)
    config = uvicorn.Config(
        served.app, host=host, port=port, timeout_graceful_shutdown=grace, **LIMITS
    )
    # uvicorn re-raises the signal it shut down on once it is done: SIGTERM, like Ctrl-C, then
    # raises KeyboardInterrupt here rather than killing the process (status 0, not -15).
    terminate = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        run_to_end(graceful_server(config, served.before_shutdown), [sock], grace=args.grace)
    except KeyboardInterrupt:  # uvicorn has shut down gracefully and re-raised the signal
        pass
    finally:
        signal.signal(signal.SIGTERM, terminate)


def _closer(app: object) -> Callable[[], Awaitable[None]]:
    """What the server awaits before it shuts down: the application's `aclose()`, if it has one."""
    aclose: object = getattr(app, "aclose", None)
    if inspect.iscoroutinefunction(aclose):
        return cast("Callable[[], Awaitable[None]]", aclose)
    return _nothing


async def _nothing() -> None:
    """Nothing to close: an ASGI application without `aclose()` has its lifespan's shutdown."""


def _work(args: argparse.Namespace, sock: socket.socket) -> None:  # pragma: no cover - a worker
    """A worker of `--workers N`: load the target again and serve on the shared socket."""
    _run(args, _endpoint(args, _load(args), sock.getsockname()[0]), sock)
    exit_past_lingering_threads()


def exit_past_lingering_threads() -> None:
    """Exit now if an agent's thread outlives the server (blocking code past its cancellation).

    The interpreter would wait for it at exit (`asyncio.to_thread` runs in worker threads it
    joins), keeping the process past its shutdown; a stopped server has nothing left to finish.
    """
    lingering = [t for t in threading.enumerate() if t.is_alive() and not t.daemon]
    lingering.remove(threading.main_thread())
    if lingering:
        names = ", ".join(t.name for t in lingering)
        message = f"agui serve: exiting without the agents' threads still running: {names}"
        print(message, file=sys.stderr)  # noqa: T201
        logging.shutdown()
        sys.stdout.flush()
        os._exit(EXIT_OK)


def _allowed_hosts(given: str, bound: str) -> tuple[str, ...] | None:
    """The names `Host` may give: on loopback, this machine's and the host bound; else any.

    The host the user bound (`--host 127.0.0.2`, or a name that resolves to loopback) is how
    they will reach the server, so it is allowed too; a page on any other name is refused.
    """
    if not ipaddress.ip_address(bound).is_loopback:
        return None
    extra = [name for name in (given, bound) if name not in LOOPBACK_HOSTS]
    return (*LOOPBACK_HOSTS, *dict.fromkeys(extra))


def _run_log(given: str | None) -> RunLog | None:
    """The run log `--runs` names: none, the memory log, or a Redis log at a URL."""
    if given is None:
        return None
    if given == "memory":
        return MemoryRunLog()
    if given.startswith(("redis://", "rediss://", "unix://")):
        return RedisRunLog(given)
    message = f"--runs {given!r} names no run log: give memory or a redis:// URL"
    raise UsageError(message)


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
    # A generic alias (`dict[str, int]`) passes `isinstance(..., type)` on Python 3.10.
    is_class = isinstance(state, type) and typing.get_origin(state) is None
    return state if is_class and state is not object else None
