"""The protobuf the binding needs, and what to say when the installed one is not it.

The `proto` extra asks for `protobuf>=5.26.1`: the codec reads frames with
`json_format.MessageToDict(always_print_fields_with_no_presence=...)`, which 5.26 added, and
finds undeclared fields with `google.protobuf.unknown_fields`, which 4.22 added. An older
protobuf left in an environment (pinned by another package, say) would import, then fail on the
first frame; `require_protobuf` refuses it when the codec is imported instead, and
`unavailable` says which protobuf is needed and which is there, or that there is none.
"""

from __future__ import annotations

import importlib
import re

__all__ = ["PROTOBUF_FLOOR", "require_protobuf", "unavailable"]

PROTOBUF_FLOOR = "5.26.1"
"""The oldest protobuf the binding works with: the floor of the `proto` extra."""


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(number) for number in re.findall(r"\d+", version)[:3])


def require_protobuf(version: str) -> None:
    """Refuse a protobuf older than `PROTOBUF_FLOOR`, as if it were missing.

    Examples:
        >>> require_protobuf("6.31.0")
        >>> require_protobuf("4.25.3")
        Traceback (most recent call last):
        ...
        ImportError: protobuf 4.25.3 is older than 5.26.1, which the protobuf binding needs
    """
    if _release(version) < _release(PROTOBUF_FLOOR):
        message = (
            f"protobuf {version} is older than {PROTOBUF_FLOOR}, which the protobuf binding needs"
        )
        raise ImportError(message, name="google.protobuf")


def unavailable(what: str) -> str | None:
    """Why `what` cannot use the protobuf binding, or `None` when it can.

    Loads the codec, and with it protobuf, to find out; an `ImportError` of agui's own is raised.

    Examples:
        >>> unavailable("agui.proto.encode_proto") is None  # protobuf is installed here
        True
    """
    try:
        importlib.import_module("agui.proto._codec")
    except ImportError as error:
        if error.name is None or not error.name.startswith("google"):
            raise
        return _why(what, error)
    return None


def _why(what: str, error: ImportError) -> str:
    try:
        installed: str = importlib.import_module("google.protobuf").__version__
    except ImportError:
        return (
            f"{what} needs the protobuf package, which is not installed: "
            'pip install "agui-server[proto]"'
        )
    needed = f"{what} needs protobuf {PROTOBUF_FLOOR} or later"
    if _release(installed) < _release(PROTOBUF_FLOOR):
        return (
            f'{needed}, and protobuf {installed} is installed: pip install --upgrade "protobuf>='
            f'{PROTOBUF_FLOOR}"'
        )
    return (
        f"{needed}, and the installed protobuf {installed} does not import as agui needs "
        f'({error}): reinstall it, pip install --force-reinstall "protobuf>={PROTOBUF_FLOOR}"'
    )
