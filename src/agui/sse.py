r"""Server-Sent Events framing, exactly as AG-UI clients read it.

Each event is one frame, `data: <compact one-line UTF-8 JSON>\n\n`: LF only (the official
TypeScript client splits frames on `\n\n` alone, so CRLF never splits), no `event:` or `id:`
lines, no ASCII escaping. Serialized JSON never holds a raw newline, so one `data:` line is
always enough. Comment frames (`: ping\n\n`) keep an idle connection alive through proxies.
"""

from __future__ import annotations

from typing import cast

from pydantic import BaseModel

from agui.errors import UsageError
from agui.events import Event

__all__ = ["SSE_MEDIA_TYPE", "comment_frame", "encode_sse", "event_json"]

SSE_MEDIA_TYPE = "text/event-stream"
"""The media type of an AG-UI event stream over SSE."""


def event_json(event: Event) -> bytes:
    """The wire JSON of one event: camelCase, compact, optional absent fields left out.

    Example:
        >>> from agui.events import CustomEvent
        >>> event_json(CustomEvent(name="ping", value=None))
        b'{"type":"CUSTOM","name":"ping","value":null}'
    """
    if not isinstance(cast("object", event), BaseModel):
        message = (
            f"expected an AG-UI event model, got {type(event).__name__}: "
            "build one (e.g. agui.events.CustomEvent(...)) or read a dict with agui.parse_event"
        )
        raise UsageError(message)
    return event.__pydantic_serializer__.to_json(event)


def encode_sse(event: Event) -> bytes:
    r"""One SSE frame for one event: `data: <json>\n\n`, UTF-8, LF only.

    Example:
        >>> from agui.events import TextMessageContentEvent
        >>> frame = encode_sse(TextMessageContentEvent(message_id="m1", delta="héllo\n"))
        >>> print(frame.decode(), end="")
        data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"héllo\n"}
        <BLANKLINE>
    """
    return b"data: " + event_json(event) + b"\n\n"


def comment_frame(text: str = "ping") -> bytes:
    r"""An SSE comment frame; clients ignore it, proxies see traffic.

    Example:
        >>> comment_frame()
        b': ping\n\n'
    """
    if "\n" in text or "\r" in text:
        message = f"an SSE comment is one line; got {text!r}"
        raise UsageError(message)
    return b": " + text.encode() + b"\n\n"
