"""The `agui demo`, `agui watch` and `agui verify` commands: their options and their work.

`agui.cli` lists `add_demo`, `add_watch` and `add_verify` in its `_COMMANDS`, beside `serve`.
They share one reading path (`agui._capture`): every item of a stream goes through
`StreamCheck`, which judges it with agui's verifier and goes on after a violation, and is then
either shown as a person reads it (`agui._render.Renderer`) or, with `--raw`, printed as one
wire JSON object a line. The exit statuses are listed in `agui.cli`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agui._capture import CaptureError, Finding, StreamCheck, post_stream, read_capture, run_input
from agui._render import Renderer, compact
from agui.asgi import asgi_app
from agui.errors import DecodeError
from agui.messages import AssistantMessage
from agui.types import RunAgentInput
from agui.wire import parse_input

if TYPE_CHECKING:
    from agui.asgi import AguiApp
    from agui.events import Event

    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]  # noqa: SLF001  # pyright: ignore[reportPrivateUsage]

__all__ = ["DEMO_QUESTION", "add_demo", "add_verify", "add_watch", "travel_example"]

DEMO_QUESTION = "What's the weather like in Paris and suggest some Italian restaurants?"
"""What `agui demo` asks the travel example, unless told otherwise with `-m`."""

EXIT_VALID = 0
EXIT_VIOLATIONS = 1
EXIT_UNREADABLE = 2
EXIT_INTERRUPTED = 130
_SERVER_SECONDS = 10.0
_STATUSES = """\
exit status:
  0    the stream is valid
  1    the stream breaks AG-UI's rules (each violation is shown with its rule)
  2    bad options, or the stream could not be read: no connection, an HTTP error, ...
"""

_INTERRUPTED = "  130  interrupted with Ctrl-C\n"
_DEMO_STATUSES = """\
exit status:
  0    the run finished, and its stream is valid
  1    the run did not finish (it ended with RUN_ERROR), or its stream breaks a rule
  2    the demo could not start: uvicorn or httpx missing, the server did not start, ...
  130  interrupted with Ctrl-C
"""


def _wrap(text: str) -> str:
    """Help text wrapped for a terminal (the raw formatter keeps the exit-status table as is)."""
    return textwrap.fill(text, width=78)


class _Problem(Exception):
    """An option that cannot be used (exit status 2)."""


# -- options -----------------------------------------------------------------------------------


def _add_request_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-m", "--message", metavar="TEXT", help="the user message to send")
    parser.add_argument(
        "--state", metavar="JSON", help="the state to send, as JSON (default: none)"
    )
    parser.add_argument(
        "--tool",
        metavar="NAME",
        action="append",
        default=[],
        help="offer a tool of that name (repeat it, or separate names with commas)",
    )
    parser.add_argument(
        "-H",
        "--header",
        metavar="'NAME: VALUE'",
        action="append",
        default=[],
        help="a request header, such as 'Authorization: Bearer ...' (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for the connection and between two reads (60)",
    )


def _request(args: argparse.Namespace) -> tuple[RunAgentInput, dict[str, str]]:
    state: Any = None
    if args.state is not None:
        try:
            state = json.loads(args.state)
        except ValueError as error:
            message = f"--state is not JSON: {error}"
            raise _Problem(message) from None
    headers: dict[str, str] = {}
    for header in args.header:
        name, colon, value = str(header).partition(":")
        if not colon or not name.strip():
            message = f"--header {header!r} is not 'Name: value'"
            raise _Problem(message)
        headers[name.strip()] = value.strip()
    tools = [name.strip() for given in args.tool for name in str(given).split(",") if name.strip()]
    return run_input(message=args.message, state=state, tools=tools), headers


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
        description=_wrap(
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


def add_watch(commands: _Commands) -> None:
    """Add `agui watch`: run an AG-UI endpoint once and show the run, verified, as it streams.

    Examples:
        >>> parser = argparse.ArgumentParser(prog="agui")
        >>> add_watch(parser.add_subparsers())
        >>> parser.parse_args(["watch", "http://127.0.0.1:8000/", "--tool", "a,b"]).tool
        ['a,b']
    """
    watch = commands.add_parser(
        "watch",
        help="send one request to an AG-UI endpoint and show the run, verified",
        description=_wrap(
            "POST a RunAgentInput to an AG-UI endpoint (agui's or any other) and show the run "
            "as its events arrive, checking each with agui's verifier; a violation is shown "
            "where it happens, with its rule. Needs httpx: pip install 'agui-server[client]'."
        ),
        epilog=_STATUSES + _INTERRUPTED,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("url", metavar="URL", help="the endpoint, such as http://127.0.0.1:8000/")
    _add_request_options(watch)
    watch.add_argument("--raw", action="store_true", help="print the events as JSON lines")
    watch.set_defaults(handler=_watch)


def add_verify(commands: _Commands) -> None:
    """Add `agui verify`: check captured streams, or a live endpoint, with agui's verifier.

    Examples:
        >>> parser = argparse.ArgumentParser(prog="agui")
        >>> add_verify(parser.add_subparsers())
        >>> parser.parse_args(["verify", "run.jsonl", "-"]).sources
        ['run.jsonl', '-']
    """
    verify = commands.add_parser(
        "verify",
        help="check a captured stream, or a live endpoint, against AG-UI's rules",
        description=_wrap(
            "Check AG-UI event streams with agui's verifier. A SOURCE is a file, '-' for "
            "standard input, or an http(s) URL. A file holds a JSON array of events, JSON lines "
            "(one event a line), or an SSE body (data: lines); the format is told from its "
            "first bytes. A URL is sent a minimal RunAgentInput (shaped by -m, --state and "
            "--tool) and its answer is checked. Each violation is printed with the index of its "
            "event and its rule; the first violation of each run is shown (the rest of that "
            "run is counted), and a stream that ends without a terminal event is reported as "
            "truncated."
        ),
        epilog=_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument(
        "sources", metavar="SOURCE", nargs="+", help="a file, '-' for standard input, or a URL"
    )
    verify.add_argument(
        "--input",
        metavar="FILE",
        help="the RunAgentInput the captured stream answers (its tool calls may be answered)",
    )
    _add_request_options(verify)
    verify.set_defaults(handler=_verify)


# -- demo --------------------------------------------------------------------------------------


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
        return _fail("demo", message, EXIT_UNREADABLE)
    path = travel_example()
    if path is None:
        message = "cannot find the travel example (examples/travel/app.py)"
        return _fail("demo", message, EXIT_UNREADABLE)
    from agui.cli import TargetError, load_agent  # noqa: PLC0415 - agui.cli imports this module

    try:
        agent = load_agent(f"{path}:agent")
    except TargetError as error:
        return _fail("demo", str(error), EXIT_UNREADABLE)
    body = run_input(message=args.message)
    try:
        with _serving(asgi_app(agent)) as url:
            return _follow("demo", url, body, {}, raw=bool(args.raw), timeout=60.0, demo=True)
    except CaptureError as error:
        return _fail("demo", str(error), EXIT_UNREADABLE)
    except KeyboardInterrupt:
        return _fail("demo", "interrupted", EXIT_INTERRUPTED)


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


# -- watch -------------------------------------------------------------------------------------


def _watch(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("httpx") is None:
        message = "watch needs httpx: pip install 'agui-server[client]'"
        return _fail("watch", message, EXIT_UNREADABLE)
    try:
        body, headers = _request(args)
    except _Problem as problem:
        return _fail("watch", str(problem), EXIT_UNREADABLE)
    try:
        return _follow("watch", args.url, body, headers, raw=bool(args.raw), timeout=args.timeout)
    except CaptureError as error:
        return _fail("watch", str(error), EXIT_UNREADABLE, body=error.body)
    except KeyboardInterrupt:
        return _fail("watch", "interrupted", EXIT_INTERRUPTED)


def _follow(
    command: str,
    url: str,
    body: RunAgentInput,
    headers: dict[str, str],
    *,
    raw: bool,
    timeout: float,
    demo: bool = False,
) -> int:
    """Send `body` to `url` and show the answer as it streams; return the exit status."""
    out = _text(sys.stdout)
    check = StreamCheck(known_tool_call_ids=_known_calls(body))
    shown = _Raw(out, command) if raw else _Shown(out, body)
    last: Event | None = None
    try:
        for data in post_stream(url, body, headers=headers, timeout=timeout):
            event, found = check.feed(data)
            shown.item(data, event, found)
            last = event if event is not None else last
    finally:
        shown.close()
    end = check.finish()
    if end is not None:
        shown.item(None, None, [end])
    if check.violations:
        print(f"agui {command}: {check.summary()}", file=sys.stderr)  # noqa: T201
        return EXIT_VIOLATIONS
    if demo and (last is None or last.type != "RUN_FINISHED"):
        print("agui demo: the run did not finish", file=sys.stderr)  # noqa: T201
        return EXIT_VIOLATIONS
    return EXIT_VALID


class _Shown:
    """Shows each event as a person reads it, with violations where they happen."""

    def __init__(self, out: TextIO, body: RunAgentInput) -> None:
        self._renderer = Renderer(out, state=body.state)

    def item(self, data: str | None, event: Event | None, found: list[Finding]) -> None:
        del data
        if event is not None:
            self._renderer.event(event)
        for finding in found:
            self._renderer.finding(finding)

    def close(self) -> None:
        self._renderer.close()


class _Raw:
    """Prints each item as one line of wire JSON; violations and notes go to stderr."""

    def __init__(self, out: TextIO, command: str) -> None:
        self._out = out
        self._command = command

    def item(self, data: str | None, event: Event | None, found: list[Finding]) -> None:
        del event
        if data is not None:
            self._out.write(_one_line(data) + "\n")
            self._out.flush()
        for finding in found:
            print(f"agui {self._command}: {_described(finding)}", file=sys.stderr)  # noqa: T201

    def close(self) -> None:
        self._out.flush()


def _one_line(data: str) -> str:
    if "\n" not in data and "\r" not in data:
        return data
    try:
        return compact(json.loads(data))
    except ValueError:
        return data.replace("\r", " ").replace("\n", " ")


# -- verify ------------------------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    try:
        given = _read_input(args.input) if args.input else None
        body, headers = _request(args)
    except _Problem as problem:
        return _fail("verify", str(problem), EXIT_UNREADABLE)
    known = _known_calls(given) if given is not None else []
    status = EXIT_VALID
    for source in args.sources:
        status = max(status, _verify_one(source, args, known, body, headers))
    return status


def _verify_one(
    source: str,
    args: argparse.Namespace,
    known: list[str],
    body: RunAgentInput,
    headers: dict[str, str],
) -> int:
    name = "<stdin>" if source == "-" else source
    out = _text(sys.stdout)
    live = source.startswith(("http://", "https://"))
    check = StreamCheck(known_tool_call_ids=_known_calls(body) if live else known)
    try:
        items, shape = _items(source, body, headers, args.timeout)
        for item in items:
            _, found = check.feed(item)
            for finding in found:
                out.write(f"{name}: {_described(finding)}\n")
    except CaptureError as error:
        return _fail("verify", f"{name}: {error}", EXIT_UNREADABLE, body=error.body)
    end = check.finish()
    if end is not None:
        out.write(f"{name}: {_described(end)}\n")
    out.write(f"{name}: {check.summary()} ({shape})\n")
    out.flush()
    return EXIT_VIOLATIONS if check.violations else EXIT_VALID


def _items(
    source: str, body: RunAgentInput, headers: dict[str, str], timeout: float
) -> tuple[Iterable[object], str]:
    if source.startswith(("http://", "https://")):
        if importlib.util.find_spec("httpx") is None:
            message = "checking a URL needs httpx: pip install 'agui-server[client]'"
            raise CaptureError(message)
        return post_stream(source, body, headers=headers, timeout=timeout), "HTTP"
    capture = read_capture(_read_bytes(source))
    notes = [f"note: {note}" for note in capture.notes]
    return capture.items, "; ".join([capture.format, *notes])


def _read_bytes(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as error:
        message = f"cannot read {source!r}: {error.strerror or error}"
        raise CaptureError(message) from None


def _read_input(source: str) -> RunAgentInput:
    try:
        return parse_input(Path(source).read_bytes())
    except OSError as error:
        message = f"cannot read --input {source!r}: {error.strerror or error}"
        raise _Problem(message) from None
    except DecodeError as error:
        message = f"--input {source!r} is not a RunAgentInput: {error}"
        raise _Problem(message) from None


# -- shared ------------------------------------------------------------------------------------


def _known_calls(body: RunAgentInput) -> list[str]:
    return [
        call.id
        for message in body.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    ]


def _described(finding: Finding) -> str:
    if finding.kind == "note":
        return f"{finding.where}: note: {finding.message}"
    return finding.describe()


def _text(stream: TextIO) -> TextIO:
    """The stream, set to replace what its encoding cannot write rather than fail on it."""
    _tolerate(stream)
    return stream


def _tolerate(stream: object) -> None:
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="replace")


def _fail(command: str, message: str, status: int, *, body: str | None = None) -> int:
    print(f"agui {command}: error: {message}", file=sys.stderr)  # noqa: T201
    if body:
        print(_pretty(body), file=sys.stderr)  # noqa: T201
    return status


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        return body.strip()
