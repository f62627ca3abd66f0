"""The protobuf binding: AG-UI events as length-prefixed `ag_ui.Event` messages.

AG-UI 1.0 defines an optional binary binding beside SSE, media type
`application/vnd.ag-ui.event+proto`. Each event is one frame: a 4-byte big-endian unsigned
length, then that many bytes of one `ag_ui.Event` message (a oneof with one arm per event type;
every event message opens with a `BaseEvent` holding `type`, `timestamp`, `rawEvent` and
`metadata`). Frames abut with no separator. It needs the `protobuf` package, installed with the
`proto` extra (`pip install "agui-server[proto]"`), and is imported only when a frame is written
or read: `PROTO_MEDIA_TYPE` (which `agui.asgi` negotiates with) and `import agui.proto` need
nothing but agui, while `encode_proto` and `decode_proto` are loaded on first use. Asking for
them without `protobuf` raises `ImportError` saying how to install it, and with a protobuf older
than the extra's 5.26.1, saying which is installed. Any first use raises it, `hasattr`,
`getattr` with a default and `from agui.proto import *` too, since a missing dependency is an
error to see, not an attribute to lack; `try: from agui.proto import encode_proto` /
`except ImportError:` tells whether the binding can be used.

`agui.asgi_app` answers with this binding when a request's `Accept` names its media type
exactly and prefers it to SSE (see "Protobuf" in `agui.asgi`); `encode_proto` writes one frame
and `decode_proto` reads a body of frames back, for tests and for clients.

The schema is the one `@ag-ui/proto` 1.0 reads and writes, declared in `agui.proto._schema`.
An event is written from the same JSON the SSE binding sends, reshaped where the schema differs
from it: the envelope goes into `baseEvent`, a run's or subagent's outcome is flattened into
`outcome` (a string) beside its payload lists, patch operations name their `op` as an enum, a
content-part list travels as `contentParts` and an activity message's content as
`activityContent`. Reading undoes each step and validates the result like `agui.parse_event`.

What the binary wire cannot carry as JSON does:

- JSON that AG-UI leaves open (state, metadata, payloads, raw events) travels as
  `google.protobuf.Value`, whose numbers are doubles: an integer beyond 2^53 in magnitude arrives
  rounded, and one beyond the range of a double cannot be written at all (`UsageError`). A
  number that arrives with no fraction and at most 2^53 in magnitude reads back as an `int`
  (`2.0` as `2`, and `-0.0` as `0`, as `JSON.stringify` writes it), any other as a `float`:
  past 2^53 a double no longer tells which integer it was. Objects in it are maps, whose order
  the schema does not fix: agui keeps it, another encoder may not. It nests as deep as on SSE:
  agui writes and reads these values itself, since protobuf's own reader stops at about 33
  levels of objects, and a frame nested past 256 levels does not decode (`DecodeError`).
- A list field cannot tell "empty" from "absent": an empty `tools`, `context`, `resume`,
  `toolCalls`, `usage`, `pendingToolCallIds` or `interruptIds` reads back as absent. A required
  string cannot either: `""` is the field's default, and reads back as `""`.
- A JSON Patch operation carries `op`, `path`, `from` and `value`; other members, which RFC 6902
  tells consumers to ignore, are not written.
- Keep-alive comments do not exist in this framing, so a protobuf stream sends no pings.

A body that ends mid-frame, a frame whose bytes are not an `ag_ui.Event`, an empty frame, an
event without its `baseEvent` or whose arm and `baseEvent.type` disagree, and a declared field
sent with another wire type (which would read as its default) raise `DecodeError`; a frame
whose only arm is one this version does not know (an event type from a later protocol) is
dropped with an `UnknownMemberWarning`, as an unknown event type is on the JSON path, and so
are the fields of a known event that the schema does not declare (a later protocol's), as
unknown members are.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from agui.proto._requirement import unavailable

if TYPE_CHECKING:
    from agui.proto._codec import decode_proto, encode_proto

__all__ = ["PROTO_MEDIA_TYPE", "decode_proto", "encode_proto"]

PROTO_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
"""The media type of an AG-UI event stream in the protobuf binding, as the official client
compares it.

Examples:
    >>> PROTO_MEDIA_TYPE
    'application/vnd.ag-ui.event+proto'
"""

_LAZY = frozenset({"decode_proto", "encode_proto"})


def __getattr__(name: str) -> object:
    """Load the codec, and with it `protobuf`, the first time one of its functions is named."""
    if name not in _LAZY:
        message = f"module 'agui.proto' has no attribute {name!r}"
        raise AttributeError(message)
    problem = unavailable(f"agui.proto.{name}")
    if problem is not None:
        raise ImportError(problem, name="google.protobuf")
    value: object = getattr(importlib.import_module("agui.proto._codec"), name)
    globals()[name] = value
    return value
