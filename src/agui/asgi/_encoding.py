"""How a stream's events become bytes: the SSE binding, the protobuf one, and a broken event.

The encoding is chosen once per request by content negotiation: `SSE`, or the protobuf
binding's (`proto_encoding()`, present only with the `proto` extra). Each gives a batch's
frames in one call, so the writer pays for the choice once per send, not per event. The binary
framing has no comments, so a protobuf stream gets no keep-alive pings. An event that cannot be
written ends its stream with the frames before it and a `RUN_ERROR` frame
(`SERIALIZATION_ERROR`), written once per encoding.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable

from agui._emit.frames import encode_items, event_of
from agui._emit.record import Item
from agui.errors import AguiError
from agui.events import Event, RunErrorEvent
from agui.proto import PROTO_MEDIA_TYPE
from agui.sse import SSE_MEDIA_TYPE, encode_sse

__all__ = ["SSE", "Encoding", "broken_frames", "proto_encoding"]

_log = logging.getLogger("agui.asgi")
_UNSERIALIZABLE = RunErrorEvent(
    message="an event could not be serialized", code="SERIALIZATION_ERROR"
)
"""What ends a stream whose next event cannot be serialized."""


@dataclasses.dataclass(frozen=True)
class Encoding:
    """How a stream's events become bytes, with the headers of the 200 that carries them."""

    headers: list[tuple[bytes, bytes]]
    """The response headers: the media type, and never cached or buffered."""
    frames: Callable[[list[Item]], bytes]
    """A batch's frames, from the queue's items (events, and deltas held as records, see
    `agui.sink`); raises `ValueError` or `AguiError` when an event cannot be written."""
    frame: Callable[[Event], bytes]
    """One event's frame, for the events before one that cannot be written."""
    pings: bool
    """Whether the framing has comment frames to keep an idle connection open with."""
    unserializable: bytes
    """The RUN_ERROR frame that ends a stream when an event cannot be written."""


def _headers(media_type: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", media_type.encode()),
        (b"cache-control", b"no-cache, no-store, no-transform"),
        (b"x-accel-buffering", b"no"),
        (b"vary", b"Accept"),
    ]


SSE = Encoding(
    headers=_headers(SSE_MEDIA_TYPE),
    frames=encode_items,
    frame=encode_sse,
    pings=True,
    unserializable=encode_sse(_UNSERIALIZABLE),
)
"""Server-Sent Events: `data: <json>\\n\\n` frames, `: ping` comments when idle."""


def proto_encoding() -> Encoding | None:
    """The protobuf binding (`agui.proto`), or `None` when the `proto` extra is not installed."""
    try:
        from agui.proto._codec import encode_proto  # noqa: PLC0415 - the optional extra
    except ImportError:
        return None

    def frames(part: list[Item]) -> bytes:
        return b"".join([encode_proto(event_of(item)) for item in part])

    return Encoding(
        headers=_headers(PROTO_MEDIA_TYPE),
        frames=frames,
        frame=encode_proto,
        pings=False,
        unserializable=_unserializable(encode_proto),
    )


@functools.cache
def _unserializable(encode: Callable[[Event], bytes]) -> bytes:
    """The RUN_ERROR frame of an encoding, written once, however many apps are built."""
    return encode(_UNSERIALIZABLE)


def broken_frames(part: list[Item], encoding: Encoding) -> bytes:
    """The frames before the first event that cannot be serialized, then a RUN_ERROR frame."""
    frames: list[bytes] = []
    for event in map(event_of, part):  # pragma: no branch - `part` holds an event that fails
        try:
            frames.append(encoding.frame(event))
        except (ValueError, AguiError):
            _log.exception("a %s event could not be serialized; ending the stream", event.type)
            break
    return b"".join(frames) + encoding.unserializable
