"""What the `agui demo`, `agui watch` and `agui verify` commands share: options and output.

They share one reading path (`agui.cli._capture`): every item of a stream goes through
`StreamCheck`, which judges it with agui's verifier and goes on after a violation, and is then
either shown as a person reads it (`agui.cli._render.Renderer`) or, with `--raw`, printed as one
wire JSON object a line. The exit statuses, and the one-line error, are `agui.cli._main`'s.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import textwrap
from typing import Any, TextIO

from agui._protocol.text import check_json, read_json, unicode_problem
from agui.cli._capture import Finding, run_input
from agui.cli._main import fail, seconds_of
from agui.errors import UsageError
from agui.messages import AssistantMessage
from agui.types import RunAgentInput

__all__ = [
    "Problem",
    "add_request_options",
    "described",
    "fail_with_body",
    "known_calls",
    "request",
    "text",
    "wrap",
]


_LONGEST_TIMEOUT = 24 * 60 * 60
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz")  # RFC 9110, lowercased
_CONTROL = frozenset(map(chr, [*range(32), 127])) - {"\t"}  # no header value holds them
# The body is sent whole, its length counted: h11 refuses, or a server misreads, other framing.
_FRAMING = {
    "content-length": "the command sets Content-Length itself, from the JSON body it sends",
    "transfer-encoding": "the command sends the JSON body whole, with its Content-Length",
}


def wrap(text: str) -> str:
    """Help text wrapped for a terminal (the raw formatter keeps the exit-status table as is)."""
    return textwrap.fill(text, width=78)


class Problem(Exception):
    """An option that cannot be used (exit status 2)."""


def add_request_options(parser: argparse.ArgumentParser) -> None:
    """The options that shape the request sent to an endpoint: `-m`, `--state`, `--tool`, ..."""
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
        type=_timeout,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for the connection and between two reads (60)",
    )


def _timeout(text: str) -> float:
    """A timeout from the command line: more than 0 seconds, and at most a day."""
    seconds = seconds_of(text)
    # A socket cannot wait much longer than 292 years; no read is worth more than a day.
    if not 0 < seconds <= _LONGEST_TIMEOUT:  # nan fails both comparisons
        message = (
            f"{text} is not a timeout: give a number of seconds above 0 and at most "
            f"{_LONGEST_TIMEOUT} (a day), such as 60"
        )
        raise argparse.ArgumentTypeError(message)
    return seconds


def request(args: argparse.Namespace) -> tuple[RunAgentInput, dict[str, str]]:
    """The `RunAgentInput` and headers those options ask for; `Problem` when one is unusable."""
    state: Any = None
    for option, given in (("--message", args.message), *(("--tool", t) for t in args.tool)):
        if unicode_problem(given) is not None:  # argv's undecodable bytes: lone surrogates
            message = f"{option} holds bytes that are not UTF-8; give it as UTF-8 text"
            raise Problem(message)
    if args.state is not None:
        try:  # NaN, Infinity and 1e999 are no JSON a request can carry, though `json` reads them
            state = read_json(args.state)
            check_json(state, "--state")
        except ValueError as error:
            message = f"--state is not JSON: {error}"
            raise Problem(message) from None
        except UsageError as error:
            raise Problem(str(error)) from None
    tools = [name.strip() for given in args.tool for name in str(given).split(",") if name.strip()]
    return run_input(message=args.message, state=state, tools=tools), _headers(args.header)


def _headers(given: list[str]) -> dict[str, str]:
    """The `-H` headers by lowercased name; `Problem` for one that HTTP cannot carry."""
    headers: dict[str, str] = {}
    for header in given:
        name, colon, value = str(header).partition(":")
        if not colon or not name.strip():
            message = f"--header {header!r} is not 'Name: value'"
            raise Problem(message)
        name, value = name.strip().lower(), value.strip()
        problem = _header_problem(name, value)
        if problem is not None:
            raise Problem(problem)
        headers[name] = value
    return headers


def _header_problem(name: str, value: str) -> str | None:
    """Why a header cannot be sent, in a message; `None` when it can."""
    if not (name + value).isascii():
        return (
            f"the header {name!r} holds text that is not ASCII ({value!r}); an HTTP header is "
            "ASCII: send non-ASCII text percent- or base64-encoded, as the server reads it"
        )
    if name in _FRAMING:
        return (
            f"the header {name!r} cannot be given: {_FRAMING[name]}; drop -H '{name.title()}: ...'"
        )
    if not _TOKEN.issuperset(name):
        return (
            f"the header name {name!r} is not an HTTP token: a name is letters, digits and "
            "!#$%&'*+-.^_`|~, with no space: give the header as 'Name: value'"
        )
    if _CONTROL.intersection(value):
        return (
            f"the header {name!r} holds a control character ({value!r}); a header value is one "
            "line of printable text: send line breaks and the like encoded, as the server reads it"
        )
    return None


def known_calls(body: RunAgentInput) -> list[str]:
    """The ids of the tool calls in the assistant messages of `body`, which a stream may answer."""
    return [
        call.id
        for message in body.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    ]


def described(finding: Finding) -> str:
    """A finding in one line: a violation with its rule, or a note."""
    if finding.kind == "note":
        return f"{finding.where}: note: {finding.message}"
    return finding.describe()


def text(stream: TextIO) -> TextIO:
    """The stream, set to replace what its encoding cannot write rather than fail on it."""
    _tolerate(stream)
    return stream


def _tolerate(stream: object) -> None:
    if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
        stream.reconfigure(errors="replace")


def fail_with_body(command: str, message: str, body: str | None) -> int:
    """Print why `command` failed, and the body of an HTTP error, to stderr; return 2."""
    status = fail(command, message)
    if body:
        print(_pretty(body), file=sys.stderr)  # noqa: T201
    return status


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        return body.strip()
