"""The `agui watch` command: run an AG-UI endpoint once and show the run, verified, as it streams.

`follow` does the work of `watch`, and of `demo` once its server is up (see `agui.cli._command`):
both exit with 1 when the run ends with `RUN_ERROR`, as when its stream breaks a rule.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
from typing import TYPE_CHECKING, TextIO

from agui.cli._capture import Finding, StreamCheck, post_stream
from agui.cli._command import (
    Problem,
    add_request_options,
    described,
    fail_with_body,
    known_calls,
    request,
    text,
    wrap,
)
from agui.cli._main import EXIT_FAILED, EXIT_OK, fail, statuses
from agui.cli._render import Renderer, compact
from agui.errors import CaptureError
from agui.types import RunAgentInput

if TYPE_CHECKING:
    from agui.cli._main import Commands
    from agui.events import Event

__all__ = ["add_watch", "follow"]

_STATUSES = statuses(
    (0, "the run finished, and its stream is valid"),
    (
        1,
        (
            "the run ended with RUN_ERROR, or its stream breaks AG-UI's rules (each violation "
            "is shown with its rule)"
        ),
    ),
    (
        2,
        (
            "bad options, httpx missing, no connection, an HTTP error (its body is shown), an "
            "answer that is not an event stream, standard output closed before the end"
        ),
    ),
    (130, "interrupted with Ctrl-C"),
)


def add_watch(commands: Commands) -> None:
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
        epilog=_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("url", metavar="URL", help="the endpoint, such as http://127.0.0.1:8000/")
    add_request_options(watch)
    watch.add_argument("--raw", action="store_true", help="print the events as JSON lines")
    watch.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("httpx") is None:
        return fail("watch", "watch needs httpx: pip install 'agui-server[client]'")
    try:
        body, headers = request(args)
    except Problem as problem:
        return fail("watch", str(problem))
    try:
        return follow("watch", args.url, body, headers, raw=bool(args.raw), timeout=args.timeout)
    except CaptureError as error:
        return fail_with_body("watch", str(error), error.body)


def follow(
    command: str,
    url: str,
    body: RunAgentInput,
    headers: dict[str, str],
    *,
    raw: bool,
    timeout: float,
) -> int:
    """Send `body` to `url` and show the answer as it streams; return the exit status.

    The status is 1 when the stream breaks a rule or its run ends with `RUN_ERROR`: the run
    failed, though the stream that says so is valid.
    """
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
        return EXIT_FAILED
    if last is None or last.type != "RUN_FINISHED":
        print(f"agui {command}: the run did not finish: it ended with RUN_ERROR", file=sys.stderr)  # noqa: T201
        return EXIT_FAILED
    return EXIT_OK


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
        _write_utf8(out)
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


def _write_utf8(stream: object) -> None:
    """Set a text stream to write UTF-8, the encoding of wire JSON, whatever the terminal's.

    So `agui verify -` reads back every character; a lone surrogate comes out as the JSON
    escape it came from.
    """
    if isinstance(stream, io.TextIOWrapper):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")


def _one_line(data: str) -> str:
    if "\n" not in data and "\r" not in data:
        return data
    try:
        return compact(json.loads(data))
    except ValueError:
        return data.replace("\r", " ").replace("\n", " ")
