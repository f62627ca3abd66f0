"""Content negotiation: the media type to answer a request's `Accept` header with.

`negotiate(accept, offered)` picks it the way the Rust SDK's table does, with the header read
as RFC 9110 (5.6.6, 12.5.1) writes it:

- a missing, empty or blank `Accept` means `*/*`;
- the header is a list of media ranges separated by `,`, each `type/subtype` and then its
  parameters, each after a `;`; a parameter's value may be a quoted string, inside which `,`
  and `;` are text; an entry without a slash is ignored;
- `q` is the range's weight, 1 when missing or unreadable; what follows it is ignored (the
  extensions of RFC 7231). The parameters before it narrow the range: it matches only a media
  type that has each of them. The media types answered here have none, bar the
  `charset=utf-8` that `text/event-stream` (whose only charset it is) and the inspector's
  `text/html` carry, so `text/event-stream;charset=utf-8` asks for SSE and
  `text/event-stream;level=1` for nothing this endpoint sends;
- each media type we can send takes the `q` of the most specific range that matches it
  (exact type and subtype, then `type/*`, then `*/*`; of those, one with more parameters
  first; the first of equally specific ranges);
- the one with the highest `q` above 0 wins, the first offered on a tie; none means the request
  is refused with 406.

The endpoint offers `text/event-stream` first, then, when the protobuf binding is enabled,
`application/vnd.ag-ui.event+proto`. The binary binding is only ever chosen by name: a range
that does not spell its media type out (`*/*`, `application/*`) never selects it, because a
client that sends a wildcard cannot be assumed to read binary frames, and SSE is the binding
every client must support. So `*/*` and `text/*` answer SSE, and protobuf is chosen only when
`Accept` names it with a `q` above SSE's (`application/vnd.ag-ui.event+proto` alone, or with
`text/event-stream;q=0.5`); on a tie SSE wins. The specification lets a producer answer protobuf
whenever it is admitted; agui is stricter, so a wildcard never brings a client binary it did
not ask for. Without the binding, an `Accept` that admits only protobuf is refused with 406.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from agui.proto import PROTO_MEDIA_TYPE
from agui.sse import SSE_MEDIA_TYPE

__all__ = ["OFFERED", "negotiate"]

OFFERED: tuple[str, ...] = (SSE_MEDIA_TYPE,)
"""The media types this endpoint answers with by default, in order of preference."""
_NAMED_ONLY = frozenset({PROTO_MEDIA_TYPE})
"""Media types a wildcard range never selects: the `Accept` header must name them."""
_Parameters = frozenset[tuple[str, str]]
_UTF8: _Parameters = frozenset({("charset", "utf-8")})
_CARRIED = {SSE_MEDIA_TYPE: _UTF8, "text/html": _UTF8}
"""The parameters of the media types answered with, which a range's parameters must be among."""

_Range = tuple[str, str, _Parameters, float]
# A quoted string (to its end if unclosed), a run of other text, or a separator.
_PIECES = re.compile(r'"(?:[^"\\]|\\.)*"?|[^",;]+|[,;]', re.DOTALL)
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)', re.DOTALL)
_QUOTED_PAIR = re.compile(r"\\(.)", re.DOTALL)


def negotiate(accept: str | None, offered: tuple[str, ...] = OFFERED) -> str | None:
    """The media type to answer an `Accept` header with, or `None` when none is acceptable.

    Examples:
        >>> negotiate("text/html;q=0.9, text/event-stream")
        'text/event-stream'
        >>> negotiate(None), negotiate("*/*"), negotiate("text/*")
        ('text/event-stream', 'text/event-stream', 'text/event-stream')
        >>> negotiate("application/json"), negotiate("text/event-stream;q=0")
        (None, None)
        >>> negotiate("application/vnd.ag-ui.event+proto") is None
        True
        >>> both = ("text/event-stream", "application/vnd.ag-ui.event+proto")
        >>> negotiate("application/vnd.ag-ui.event+proto", both)
        'application/vnd.ag-ui.event+proto'
        >>> negotiate("*/*", both), negotiate("application/vnd.ag-ui.event+proto, */*", both)
        ('text/event-stream', 'text/event-stream')
        >>> negotiate("text/event-stream;level=1;q=0, text/event-stream")  # level=1 is not SSE
        'text/event-stream'
        >>> negotiate('text/*;q=0;x="a,text/event-stream"') is None  # a quoted comma is text
        True
    """
    ranges = _parse_accept(accept)
    best: str | None = None
    best_q = 0.0
    for candidate in offered:
        q = _quality(candidate, ranges)
        if q > best_q:
            best, best_q = candidate, q
    return best


def _parse_accept(accept: str | None) -> list[_Range]:
    if accept is None or not accept.strip():
        return [("*", "*", frozenset(), 1.0)]
    ranges: list[_Range] = []
    for media, *parameters in _entries(accept):
        kind, slash, subtype = media.strip().lower().partition("/")
        if slash and kind and subtype:
            ranges.append((kind, subtype, *_parameters(parameters)))
    return ranges


def _entries(accept: str) -> Iterator[list[str]]:
    """Each entry of the header as its media range and its parameters, split at separators."""
    entry = [""]
    for piece in _PIECES.findall(accept):
        if piece == ",":
            yield entry
            entry = [""]
        elif piece == ";":
            entry.append("")
        else:
            entry[-1] += piece
    yield entry


def _parameters(parameters: list[str]) -> tuple[_Parameters, float]:
    """A range's parameters before its `q`, and its `q`."""
    narrowing: set[tuple[str, str]] = set()
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        name, value = name.strip().lower(), _unquoted(value.strip())
        if name == "q":
            return frozenset(narrowing), _weight(value)
        if name:
            # Without case: `charset` is the one parameter a type here carries, and its
            # values have none; any other parameter matches nothing either way.
            narrowing.add((name, value.lower()))
    return frozenset(narrowing), 1.0


def _unquoted(value: str) -> str:
    quoted = _QUOTED.match(value)
    return value if quoted is None else _QUOTED_PAIR.sub(r"\1", quoted[1])


def _weight(value: str) -> float:
    try:
        q = float(value)
    except ValueError:
        return 1.0
    return 1.0 if math.isnan(q) else min(max(q, 0.0), 1.0)


def _quality(candidate: str, ranges: list[_Range]) -> float:
    kind, _, subtype = candidate.partition("/")
    wildcards = ("*",) if candidate not in _NAMED_ONLY else ()
    carried = _CARRIED.get(candidate, frozenset())
    best_specificity = (-1, -1)
    q = 0.0
    for range_kind, range_subtype, parameters, range_q in ranges:
        if (
            range_kind not in (*wildcards, kind)
            or range_subtype not in (*wildcards, subtype)
            or not parameters <= carried
        ):
            continue
        exact = (4 if range_kind == kind else 0) + (2 if range_subtype == subtype else 0)
        specificity = (exact, len(parameters))
        if specificity > best_specificity:
            best_specificity, q = specificity, range_q
    return q
