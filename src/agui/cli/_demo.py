"""The `agui demo` command: serve the travel example, ask it a question, show the run.

The run is shown as `agui watch` shows one (`agui.cli._watch.follow`), from a uvicorn server
this command starts in a thread and stops when it is done.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from agui.asgi import asgi_app
from agui.asgi._server import serving
from agui.cli._capture import run_input
from agui.cli._command import wrap
from agui.cli._main import fail, statuses
from agui.cli._targets import load_agent
from agui.cli._watch import follow
from agui.errors import CaptureError, TargetError

if TYPE_CHECKING:
    from agui.cli._main import Commands

__all__ = ["DEMO_QUESTION", "add_demo", "travel_example"]

DEMO_QUESTION = "What's the weather like in Paris and suggest some Italian restaurants?"
"""What `agui demo` asks the travel example, unless told otherwise with `-m`."""

_SERVER_SECONDS = 10.0
_DEMO_STATUSES = statuses(
    (0, "the run finished, and its stream is valid"),
    (1, "the run did not finish (it ended with RUN_ERROR), or its stream breaks a rule"),
    (
        2,
        (
            "the demo could not start (uvicorn or httpx missing, the server did not start), or "
            "standard output was closed before the end (a pipe into head, ...)"
        ),
    ),
    (130, "interrupted with Ctrl-C"),
)


def add_demo(commands: Commands) -> None:
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
    package = Path(__file__).resolve().parents[1]
    for candidate in (
        package / "_examples" / "travel" / "app.py",  # a wheel carries a copy
        package.parents[1] / "examples" / "travel" / "app.py",  # a checkout (editable install)
    ):
        if candidate.is_file():
            return candidate
    return None


def _demo(args: argparse.Namespace) -> int:
    missing = [name for name in ("uvicorn", "httpx") if importlib.util.find_spec(name) is None]
    if missing:
        message = f"the demo needs {' and '.join(missing)}: pip install 'agui-server[serve,client]'"
        return fail("demo", message)
    path = travel_example()
    if path is None:
        message = (
            "cannot find the travel example (examples/travel/app.py): reinstall agui-server, "
            "or run from a checkout of its repository"
        )
        return fail("demo", message)
    try:
        agent = load_agent(f"{path}:agent")
    except TargetError as error:
        return fail("demo", str(error))
    body = run_input(message=args.message)
    try:
        with serving(asgi_app(agent), timeout=_SERVER_SECONDS) as url:
            return follow("demo", url, body, {}, raw=bool(args.raw), timeout=60.0)
    except (CaptureError, TimeoutError) as error:
        return fail("demo", str(error))
