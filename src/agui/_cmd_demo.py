"""The `agui demo` command: serve the travel example, ask it a question, show the run.

The run is shown as `agui watch` shows one (`agui._cmd_watch.follow`), from a uvicorn server
this command starts in a thread and stops when it is done.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import socket
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agui._capture import CaptureError, run_input
from agui._cmd_watch import follow
from agui._commands import EXIT_INTERRUPTED, EXIT_UNREADABLE, fail, wrap
from agui.asgi import asgi_app

if TYPE_CHECKING:
    from agui.asgi import AguiApp

    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]  # noqa: SLF001  # pyright: ignore[reportPrivateUsage]

__all__ = ["DEMO_QUESTION", "add_demo", "travel_example"]

DEMO_QUESTION = "What's the weather like in Paris and suggest some Italian restaurants?"
"""What `agui demo` asks the travel example, unless told otherwise with `-m`."""

_SERVER_SECONDS = 10.0
_DEMO_STATUSES = """\
exit status:
  0    the run finished, and its stream is valid
  1    the run did not finish (it ended with RUN_ERROR), or its stream breaks a rule
  2    the demo could not start: uvicorn or httpx missing, the server did not start, ...
  130  interrupted with Ctrl-C
"""


def add_demo(commands: _Commands) -> None:
    """Add `agui demo`: serve the travel example, ask it a question, show the run.

    Examples:
        >>> parser = argparse.ArgumentParser(prog="agui")
        >>> add_demo(parser.add_subparsers())
        >>> parser.parse_args(["demo", "--raw"]).raw
        True
    """
    demo = commands.add_parser(
        "demo",
        help="run the travel example and show a run as it streams",
        description=wrap(
            "Start the travel example (examples/travel/app.py) on a free port of 127.0.0.1, "
            "ask it a question, show the run as its events arrive, and stop the server. Needs "
            "uvicorn and httpx: pip install 'agui-server[serve,client]'. With "
            "AGUI_MODEL_BASE_URL and AGUI_MODEL set (and AGUI_API_KEY when needed), the example "
            "asks that OpenAI-compatible model instead of its scripted one."
        ),
        epilog=_DEMO_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "-m", "--message", metavar="TEXT", default=DEMO_QUESTION, help="the question to ask"
    )
    demo.add_argument("--raw", action="store_true", help="print the events as JSON lines")
    demo.set_defaults(handler=_demo)


def travel_example() -> Path | None:
    """Where the travel example is: in the installed package, or in this source checkout.

    Examples:
        >>> travel_example() is None or travel_example().name == "app.py"
        True
    """
    here = Path(__file__).resolve().parent
    for candidate in (
        here / "_examples" / "travel" / "app.py",  # a wheel carries a copy
        here.parents[1] / "examples" / "travel" / "app.py",  # a checkout (editable install)
    ):
        if candidate.is_file():
            return candidate
    return None


def _demo(args: argparse.Namespace) -> int:
    missing = [name for name in ("uvicorn", "httpx") if importlib.util.find_spec(name) is None]
    if missing:
        message = f"the demo needs {' and '.join(missing)}: pip install 'agui-server[serve,client]'"
        return fail("demo", message, EXIT_UNREADABLE)
    path = travel_example()
    if path is None:
        message = "cannot find the travel example (examples/travel/app.py)"
        return fail("demo", message, EXIT_UNREADABLE)
    from agui.cli import TargetError, load_agent  # noqa: PLC0415 - agui.cli imports this module

    try:
        agent = load_agent(f"{path}:agent")
    except TargetError as error:
        return fail("demo", str(error), EXIT_UNREADABLE)
    body = run_input(message=args.message)
    try:
        with _serving(asgi_app(agent)) as url:
            return follow("demo", url, body, {}, raw=bool(args.raw), timeout=60.0, demo=True)
    except CaptureError as error:
        return fail("demo", str(error), EXIT_UNREADABLE)
    except KeyboardInterrupt:
        return fail("demo", "interrupted", EXIT_INTERRUPTED)


@contextlib.contextmanager
def _serving(app: AguiApp[Any]) -> Generator[str, None, None]:
    """Serve `app` with uvicorn in a thread on a free port of 127.0.0.1; stop it on exit."""
    import uvicorn  # noqa: PLC0415 - an optional dependency, checked by the caller

    sock = socket.socket(socket.AF_INET)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, ws="none", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="agui demo server", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + _SERVER_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                message = "the demo server did not start"
                raise CaptureError(message)
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(_SERVER_SECONDS)
        if thread.is_alive():  # pragma: no cover - a run that ignores its cancellation
            server.force_exit = True
            thread.join(_SERVER_SECONDS)
        sock.close()
