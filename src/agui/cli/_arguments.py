"""The values of `agui serve`'s options, read from the command line: each refusal one line.

Each reader raises `argparse.ArgumentTypeError` with what was wrong and what to give instead,
which the parser prints as a usage error (status 2) before anything loads.
"""

from __future__ import annotations

import argparse
import math

from agui._protocol.text import unicode_problem
from agui.cli._main import seconds_of

__all__ = [
    "HIGHEST_PORT",
    "duration",
    "host_name",
    "mebibytes",
    "port_number",
    "url_path",
    "worker_count",
]

HIGHEST_PORT = 65535
"""The highest TCP port."""


def duration(text: str) -> float:
    """A duration from the command line: zero or more seconds."""
    seconds = seconds_of(text)
    if not 0 <= seconds < math.inf:
        message = f"{text} is not a duration: give zero or more seconds"
        raise argparse.ArgumentTypeError(message)
    return seconds


def worker_count(text: str) -> int:
    """A number of worker processes from the command line: 1 or more."""
    try:
        workers = int(text)
    except ValueError:
        workers = 0
    if workers < 1:
        message = f"{text!r} is not a number of workers: give a whole number, 1 or more"
        raise argparse.ArgumentTypeError(message)
    return workers


def mebibytes(text: str) -> int:
    """A size from the command line: a positive whole number of MiB."""
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size <= 0:
        message = f"{text!r} is not a size: give a positive whole number of MiB, such as 256"
        raise argparse.ArgumentTypeError(message)
    return size


def host_name(text: str) -> str:
    """An interface to bind: an address or a name, never blank, which would bind them all."""
    if not text.strip():
        message = (
            f"{text!r} names no interface: give an address, such as 127.0.0.1, or "
            "--host 0.0.0.0 to serve on all interfaces"
        )
        raise argparse.ArgumentTypeError(message)
    if any(char.isspace() for char in text):
        message = f"{text!r} has a space in it: give the address or name alone, such as 127.0.0.1"
        raise argparse.ArgumentTypeError(message)
    return _utf8(text)


def url_path(text: str) -> str:
    """The endpoint's URL path, which is percent-encoded to be shown: UTF-8 text."""
    return _utf8(text)


def _utf8(text: str) -> str:
    if unicode_problem(text) is not None:  # argv's undecodable bytes: lone surrogates
        message = f"{text!r} holds bytes that are not UTF-8; give it as UTF-8 text"
        raise argparse.ArgumentTypeError(message)
    return text


def port_number(text: str) -> int:
    """A TCP port from the command line: 0 (any free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        message = f"invalid int value: {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not 0 <= port <= HIGHEST_PORT:
        message = f"{port} is not a port: a port is 0 to {HIGHEST_PORT}, and 0 picks a free one"
        raise argparse.ArgumentTypeError(message)
    return port
