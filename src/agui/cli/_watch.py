"""The `agui watch` command: run an AG-UI endpoint once and show the run, verified, as it streams.

`follow` does the work of `watch`, and of `demo` once its server is up (see `agui.cli._command`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import TYPE_CHECKING, TextIO

from agui.cli._capture import CaptureError, Finding, StreamCheck, post_stream
from agui.cli._command import (
    EXIT_INTERRUPTED,
    EXIT_UNREADABLE,
    EXIT_VALID,
    EXIT_VIOLATIONS,
    STATUSES,
    Problem,
    add_request_options,
    described,
    fail,
    known_calls,
    request,
    text,
    wrap,
)
from agui.cli._render import Renderer, compact
from agui.types import RunAgentInput

if TYPE_CHECKING:
    from agui.events import Event

    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]  # noqa: SLF001  # pyright: ignore[reportPrivateUsage]

__all__ = ["add_watch", "follow"]

_INTERRUPTED = "  130  interrupted with Ctrl-C\n"


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
        description=wrap(
            "POST a RunAgentInput to an AG-UI endpoint (agui's or any other) and show the run "
            "as its events arrive, checking each with agui's verifier; a violation is shown "
            "where it happens, with its rule. Needs httpx: pip install 'agui-server[client]'."
        ),
        epilog=STATUSES + _INTERRUPTED,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("url", metavar="URL", help="the endpoint, such as http://127.0.0.1:8000/")
    add_request_options(watch)
    watch.add_argument("--raw", action="store_true", help="print the events as JSON lines")
    watch.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("httpx") is None:
        message = "watch needs httpx: pip install 'agui-server[client]'"
        return fail("watch", message, EXIT_UNREADABLE)
    try:
        body, headers = request(args)
    except Problem as problem:
        return fail("watch", str(problem), EXIT_UNREADABLE)
    try:
        return follow("watch", args.url, body, headers, raw=bool(args.raw), timeout=args.timeout)
    except CaptureError as error:
        return fail("watch", str(error), EXIT_UNREADABLE, body=error.body)
    except KeyboardInterrupt:
        return fail("watch", "interrupted", EXIT_INTERRUPTED)


def follow(
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
    out = text(sys.stdout)
    check = StreamCheck(known_tool_call_ids=known_calls(body))
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
            print(f"agui {self._command}: {described(finding)}", file=sys.stderr)  # noqa: T201

    def close(self) -> None:
        self._out.flush()


def _one_line(data: str) -> str:
    if "\n" not in data and "\r" not in data:
        return data
    try:
        return compact(json.loads(data))
    except ValueError:
        return data.replace("\r", " ").replace("\n", " ")
