"""The options of `asgi_app`, checked once when the app is built, each problem named with its fix.

`asgi_app` takes about twenty keyword options; checking them here, together, lets one
`UsageError` list every problem at once instead of failing on the first, and keeps the app
module to the order of a request's checks.
"""

from __future__ import annotations

from collections.abc import Mapping

from agui._util.numbers import duration, whole
from agui.asgi._encoding import SSE, Encoding, proto_encoding
from agui.capabilities import AgentCapabilities
from agui.errors import UsageError
from agui.proto import PROTO_MEDIA_TYPE
from agui.proto._requirement import unavailable
from agui.sink import HARD_LIMIT, HIGH_WATER
from agui.sse import SSE_MEDIA_TYPE

__all__ = ["check_options", "encodings_for"]


def encodings_for(protobuf: bool | None) -> dict[str, Encoding]:  # noqa: FBT001 - the option
    """The bindings to offer, by media type: SSE, then protobuf unless it is off or missing."""
    encodings = {SSE_MEDIA_TYPE: SSE}
    proto = None if protobuf is False else proto_encoding()
    if proto is not None:
        encodings[PROTO_MEDIA_TYPE] = proto
    elif protobuf:
        raise UsageError(_no_protobuf())
    return encodings


def _no_protobuf() -> str:
    """Why `protobuf=True` cannot be had: no protobuf, or one the binding cannot use."""
    try:
        reason = unavailable("protobuf=True")
    except ImportError:  # agui's own codec would not import: read as no protobuf at all
        reason = None
    return reason or (
        "protobuf=True needs the protobuf package, which is not installed: "
        'pip install "agui-server[proto]"'
    )


def check_options(options: Mapping[str, object]) -> None:
    """Refuse `asgi_app`'s options, by name, when any is not what it takes; all at once.

    A flag must be a `bool`: a string such as `"0"` from the environment is true to Python,
    and `debug="0"` would put exception text into every `RUN_ERROR`.

    Examples:
        >>> check_options({"debug": False, "keepalive": 15.0})
        >>> check_options({"debug": "0", "cancel_grace": -1})
        Traceback (most recent call last):
        ...
        agui.errors.UsageError: debug must be True or False, not '0'; cancel_grace must be ...
    """
    problems = [
        *(_flag(name, options[name]) for name in _FLAGS if name in options),
        *(_count(name, options[name]) for name in _COUNTS if name in options),
        *(
            _seconds(name, options[name], *rule)
            for name, rule in _SECONDS.items()
            if name in options
        ),
        *(_hook(name, options[name]) for name in _HOOKS if name in options),
        *_choices(options),
    ]
    found = [problem for problem in problems if problem is not None]
    found += _buffering(options)
    if found:
        raise UsageError("; ".join(found))


_FLAGS = ("debug", "inspector", "protobuf")
_COUNTS = ("max_body_bytes", "max_header_bytes", "max_buffered_bytes", "buffer_hard_limit")
# name: (whether zero is allowed, whether None is)
_SECONDS = {
    "body_timeout": (False, False),
    "keepalive": (False, True),
    "cancel_grace": (True, False),
}
_HOOKS = ("transformers", "on_disconnect", "authorize", "thread_access")
_BUFFERING = (("max_buffered_bytes", HIGH_WATER), ("buffer_hard_limit", HARD_LIMIT))
_PROTOCOLS = ("auto", "1.0", "0.x")


def _buffering(options: Mapping[str, object]) -> list[str]:
    """The buffer limits in their order: high-water mark <= hard limit, high-water <= budget."""
    found: list[str] = []
    high, hard = (options.get(name, default) for name, default in _BUFFERING)
    if type(high) is int and type(hard) is int and 0 < hard < high:
        found.append(
            f"buffer_hard_limit must be at least max_buffered_bytes ({high}), not {hard}: past "
            "it, a run whose client stopped reading ends"
        )
    budget = options.get("buffer_budget")
    if budget is None:
        return found
    count = whole(budget)
    if count is None or count <= 0:
        found.append(
            f"buffer_budget must be a positive whole number of bytes, or None, not {budget!r}"
        )
    elif type(high) is int and 0 < count < high:
        found.append(
            f"buffer_budget must be at least max_buffered_bytes ({high}), not {count}: a "
            "stream whose agent awaits ctx.writable() holds that much"
        )
    return found


def _flag(name: str, value: object) -> str | None:
    if type(value) is bool or (value is None and name == "protobuf"):
        return None
    also = ", or None" if name == "protobuf" else ""
    return f"{name} must be True or False{also}, not {value!r}"


def _count(name: str, value: object) -> str | None:
    count = whole(value)
    if count is not None and count > 0:
        return None
    return f"{name} must be a positive whole number of bytes, not {value!r}"


def _seconds(name: str, value: object, zero: bool, none: bool) -> str | None:  # noqa: FBT001
    if value is None and none:
        return None
    if duration(value, zero=zero) is not None:
        return None
    kind = "zero or more seconds" if zero else "a positive number of seconds"
    return f"{name} must be {kind}{' or None' if none else ''}, not {value!r}"


def _hook(name: str, value: object) -> str | None:
    if value is None or callable(value):
        return None
    if name == "transformers":
        return (
            "transformers must be a factory that builds a fresh chain for each request "
            "(transformers keep per-run state), e.g. transformers=lambda: [FilterToolCalls(...)]"
        )
    return f"{name} must be a function (sync or async), not {type(value).__name__}"


def _choices(options: Mapping[str, object]) -> list[str | None]:
    problems: list[str | None] = []
    disconnect = options.get("disconnect", "cancel")
    if disconnect not in ("cancel", "detach"):
        problems.append(f"disconnect must be 'cancel' or 'detach', not {disconnect!r}")
    protocol = options.get("protocol_version", "auto")
    if protocol not in _PROTOCOLS:
        problems.append(f"protocol_version must be 'auto', '1.0' or '0.x', not {protocol!r}")
    runs = options.get("runs")
    if runs is not None and not callable(getattr(runs, "begin", None)):
        problems.append(
            f"runs must be a run log from agui.runs, MemoryRunLog() or RedisRunLog(url), "
            f"not {runs!r}"
        )
    capabilities = options.get("capabilities")
    if not isinstance(capabilities, (bool, AgentCapabilities, type(None))) and not callable(
        capabilities
    ):
        problems.append(
            "capabilities must be None, True or False, an AgentCapabilities, or a function "
            f"of the derived ones, not {type(capabilities).__name__}"
        )
    return problems
