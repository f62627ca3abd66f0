"""The options of `asgi_app`, checked once when the app is built, each problem named with its fix.

`asgi_app` takes about twenty keyword options; checking them here, together, lets one
`UsageError` list every problem at once instead of failing on the first, and keeps the app
module to the order of a request's checks.
"""

from __future__ import annotations

from agui.asgi._encoding import SSE, Encoding, proto_encoding
from agui.asgi._streaming import buffering_problems
from agui.errors import UsageError
from agui.proto import PROTO_MEDIA_TYPE
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
        message = (
            "protobuf=True needs the protobuf package, which is not installed: "
            'pip install "agui-server[proto]"'
        )
        raise UsageError(message)
    return encodings


def check_options(
    transformers: object,
    limits: tuple[int, float],
    keepalive: float | None,
    disconnect: str,
    cancel_grace: float,
    *,
    buffering: tuple[int, int] = (HIGH_WATER, HARD_LIMIT),
) -> None:
    problems: list[str] = []
    if transformers is not None and not callable(transformers):
        problems.append(
            "transformers must be a factory that builds a fresh chain for each request "
            "(transformers keep per-run state), e.g. transformers=lambda: [FilterToolCalls(...)]"
        )
    max_body_bytes, body_timeout = limits
    if max_body_bytes <= 0:
        problems.append(f"max_body_bytes must be positive, not {max_body_bytes}")
    if not body_timeout > 0:
        problems.append(f"body_timeout must be a positive number of seconds, not {body_timeout}")
    if keepalive is not None and not keepalive > 0:
        problems.append(f"keepalive must be a positive number of seconds or None, not {keepalive}")
    if disconnect not in ("cancel", "detach"):
        problems.append(f"disconnect must be 'cancel' or 'detach', not {disconnect!r}")
    if not cancel_grace >= 0:
        problems.append(f"cancel_grace must be zero or more seconds, not {cancel_grace}")
    problems += buffering_problems(*buffering)
    if problems:
        raise UsageError("; ".join(problems))
