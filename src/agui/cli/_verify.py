"""The `agui verify` command: check captured streams, or a live endpoint, with agui's verifier.

A file, standard input or a URL is read as `agui.cli._capture` reads streams, and each violation is
printed with its event's index and its rule (see `agui.cli._command`).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agui.cli._capture import StreamCheck, post_stream, read_capture
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
from agui.errors import CaptureError, DecodeError
from agui.types import RunAgentInput
from agui.wire import parse_input

if TYPE_CHECKING:
    from agui.cli._main import Commands

__all__ = ["add_verify"]

_STATUSES = statuses(
    (0, "every stream is valid"),
    (1, "a stream breaks AG-UI's rules (each violation is shown with its rule)"),
    (
        2,
        (
            "bad options, httpx missing (for a URL), a source that cannot be read: no such file, "
            "no format, no connection, an HTTP error (its body is shown)"
        ),
    ),
    (130, "interrupted with Ctrl-C"),
)


def add_verify(commands: Commands) -> None:
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
        description=wrap(
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
    add_request_options(verify)
    verify.set_defaults(handler=_verify)


def _verify(args: argparse.Namespace) -> int:
    try:
        given = _read_input(args.input) if args.input else None
        body, headers = request(args)
    except Problem as problem:
        return fail("verify", str(problem))
    known = known_calls(given) if given is not None else []
    status = EXIT_OK
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
    out = text(sys.stdout)
    live = source.startswith(("http://", "https://"))
    check = StreamCheck(known_tool_call_ids=known_calls(body) if live else known)
    try:
        items, shape = _items(source, body, headers, args.timeout)
        for item in items:
            _, found = check.feed(item)
            for finding in found:
                out.write(f"{name}: {described(finding)}\n")
    except CaptureError as error:
        return fail_with_body("verify", f"{name}: {error}", error.body)
    end = check.finish()
    if end is not None:
        out.write(f"{name}: {described(end)}\n")
    out.write(f"{name}: {check.summary()} ({shape})\n")
    out.flush()
    return EXIT_FAILED if check.violations else EXIT_OK


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
        raise Problem(message) from None
    except DecodeError as error:
        message = f"--input {source!r} is not a RunAgentInput: {error}"
        raise Problem(message) from None
