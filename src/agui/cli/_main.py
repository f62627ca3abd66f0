"""The `agui` command line: its parser, the dispatch to one command, and the exit statuses.

Parsing happens in two steps, as git's does. The first parser knows only the command names, their
one-line help and `--version`; it imports nothing of the package's layers, so `agui --version`
and `agui --help` cost little more than `import pydantic`. The command's own module is then
imported by name (`_COMMANDS`), adds its subparser, and parses the whole command line again; only
that command's layers are loaded (uvicorn for `serve`, httpx for `watch`, ...).

Every command ends in one of the same statuses, with the same meaning: `0` done; `1` the run or
the check failed; `2` the command line, the environment or an input cannot be used (a usage
error, a missing extra, a port that cannot be bound, an unreachable server, standard output closed
before the end); `130` interrupted with Ctrl-C. A user error is one line on stderr, never a
traceback: a usage error is `agui COMMAND: error: ...`, like every other.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NoReturn, TypeVar, cast, overload

from agui import __version__

if TYPE_CHECKING:
    # What `add_subparsers()` returns; argparse names no public type for it.
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]  # noqa: SLF001  # pyright: ignore[reportPrivateUsage]

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Parser",
    "fail",
    "main",
    "seconds_of",
    "statuses",
]

EXIT_OK = 0
"""Exit status of a command that did its work: the run finished, the stream is valid."""
EXIT_FAILED = 1
"""Exit status of a run that failed or a stream that breaks AG-UI's rules."""
EXIT_USAGE = 2
"""Exit status of a command line, an environment or an input that cannot be used."""
EXIT_INTERRUPTED = 130
"""Exit status of a command stopped with Ctrl-C (128 + SIGINT, as shells report it)."""

_N = TypeVar("_N")

_COMMANDS = {
    "serve": ("agui.cli._serve", "serve an agent over HTTP (AG-UI over SSE) with uvicorn"),
    "demo": ("agui.cli._demo", "run the travel example and show a run as it streams"),
    "watch": (
        "agui.cli._watch",
        "send one request to an AG-UI endpoint and show the run, verified",
    ),
    "verify": (
        "agui.cli._verify",
        "check a captured stream, or a live endpoint, against AG-UI's rules",
    ),
}
"""Each command: the module whose `add_<command>` adds its subparser, and its one-line help."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, exit status 2, like every error.

    Examples:
        >>> Parser(prog="agui demo").parse_args(["--nope"])
        Traceback (most recent call last):
        ...
        SystemExit: 2
    """

    def error(self, message: str) -> NoReturn:
        """Print the usage error in one line, with where to read the usage, and exit with 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


class _CommandParser(Parser):
    """A command's parser: options it does not know are its usage errors, under its own name.

    argparse hands what a subparser does not know back to the top parser, whose error would
    name `agui` and its usage rather than the command's (`agui serve --nope`).
    """

    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(
        self, args: Iterable[str] | None, namespace: _N
    ) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: object = None
    ) -> tuple[object, list[str]]:
        """Parse as argparse does, but refuse what is left over, naming this command."""
        known, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return known, extras


def statuses(*meanings: tuple[int, str]) -> str:
    """The exit-status table a command's `--help` ends with.

    Examples:
        >>> print(statuses((0, "the stream is valid"), (1, "it is not")), end="")
        exit status:
          0    the stream is valid
          1    it is not
    """
    rows = "".join(
        textwrap.fill(
            meaning,
            width=78,
            initial_indent=f"  {status:<4} ",
            subsequent_indent=" " * 7,
            break_on_hyphens=False,
        )
        + "\n"
        for status, meaning in meanings
    )
    return f"exit status:\n{rows}"


def fail(command: str, message: str, status: int = EXIT_USAGE) -> int:
    """Print why `command` could not do its work, in one line on stderr; return `status`.

    Examples:
        >>> import contextlib, io
        >>> with contextlib.redirect_stderr(io.StringIO()) as err:
        ...     fail("serve", "cannot listen on 127.0.0.1:80: permission denied")
        2
        >>> print(err.getvalue(), end="")
        agui serve: error: cannot listen on 127.0.0.1:80: permission denied
    """
    print(f"agui {command}: error: {message}", file=sys.stderr)  # noqa: T201
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `agui` command line and return its exit status.

    Examples:
        >>> main(["serve", "no_such_module_here:agent"])
        2
    """
    given = list(sys.argv[1:] if argv is None else argv)
    try:
        command = _command_of(given)
        parser = _command_parser(command)
        args = parser.parse_args(given)
    except SystemExit as exit_:  # --help, --version and usage errors end here, not the caller
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except BrokenPipeError:  # the reader went away (`agui demo | head -3`): say so, once
        _discard_stdout()
        return fail(command, "standard output was closed before the command ended")
    except KeyboardInterrupt:
        return fail(command, "interrupted", EXIT_INTERRUPTED)


def _command_of(argv: list[str]) -> str:
    """The command named on the line; `--version`, `--help` and usage errors exit here."""
    parser = Parser(prog="agui", description="Tools for AG-UI agents built with agui.")
    parser.add_argument("--version", action="version", version=f"agui {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, help_) in _COMMANDS.items():
        commands.add_parser(name, help=help_, add_help=False)  # its options: in step two
    command_name: str = parser.parse_known_args(argv)[0].command
    return command_name


def _command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of the whole line, with only `command`'s subparser (and layers) loaded."""
    parser = Parser(prog="agui")
    parser.add_argument("--version", action="version", version=f"agui {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_CommandParser
    )
    module = importlib.import_module(_COMMANDS[command][0])
    add: Callable[[Commands], None] = getattr(module, f"add_{command}")
    add(cast("Commands", commands))  # its parsers are `Parser`s, one-line errors included
    return parser


def _discard_stdout() -> None:
    """Point standard output at the null device, so the exit's flush cannot fail again."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced stdout (in tests) has no fd
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)


def seconds_of(text: str) -> float:
    """The number an option's text gives, for a time in seconds; argparse's error if none.

    Each option then says which range it takes (`--timeout`, `--grace`).
    """
    try:
        return float(text)
    except ValueError:
        message = f"invalid number of seconds: {text!r}"
        raise argparse.ArgumentTypeError(message) from None
