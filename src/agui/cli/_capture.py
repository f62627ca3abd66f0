"""Reading AG-UI streams for the `agui` command: captured files, live endpoints, one judge.

A stream reaches `agui watch` and `agui verify` as items: the `data` of each SSE frame from a
live endpoint, or the entries of a captured file. `read_capture` tells a capture's format from
its first bytes: an SSE body (its first line is a `data:`, `:`, `event:`, `id:` or `retry:`
line), a JSON array of events, a conformance fixture (a JSON object whose `stream` is that
array), one event object, or JSON lines (one event object a line).

`StreamCheck` judges the items as a consumer reads them, with agui's verifier: an item that is
not JSON, or a known event with a malformed field, is a violation (`invalid-json`,
`malformed-event`); an event type AG-UI 1.0 does not define is dropped with a note, as the
official client drops it, and stripped unknown members are notes too. Unlike the verifier it
goes on after a violation, under one policy: **the first violation of each run is reported**,
and later ones in the same run are counted but not shown, since they mostly follow from the
first (a refused `TEXT_MESSAGE_START` makes every delta of that message a violation too). A
refused event changes nothing in the verifier, so the events after it are judged against the
stream as it was; reporting starts again at the next `RUN_STARTED` the verifier accepts. The end
of the stream is always checked: a stream that ends without a terminal event is reported as
`truncated`, whatever came before.
"""

from __future__ import annotations

import dataclasses
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, cast

from pydantic import JsonValue

from agui._protocol.text import unicode_problem
from agui.client import SSEParser
from agui.errors import CaptureError, DecodeError, ProtocolViolation, UnknownEventType
from agui.events import Event, RunStartedEvent
from agui.messages import UserMessage
from agui.runner import PROTOCOL_VERSION
from agui.sse import SSE_MEDIA_TYPE
from agui.types import RunAgentInput, Tool
from agui.verify import Rule, Verifier
from agui.wire import json_kind, parse_event, parse_json

if TYPE_CHECKING:
    import httpx

INVALID_JSON = "invalid-json"
"""The rule an item breaks when it is not JSON."""
MALFORMED_EVENT = "malformed-event"
"""The rule an item breaks when it is not a valid AG-UI event."""

_SSE_FIELDS = ("data:", ":", "event:", "id:", "retry:")
_ERROR_BODY_LIMIT = 64 * 1024
_HIGHEST_PORT = 65535


@dataclasses.dataclass(frozen=True)
class Finding:
    """A violation (or a note) at one item of a stream; `index` is `None` at its end."""

    kind: Literal["violation", "note"]
    index: int | None
    event_type: str | None
    rule: str
    message: str

    @property
    def where(self) -> str:
        """`event 3 (TOOL_CALL_END)`, or `end of stream`."""
        if self.index is None:
            return "end of stream"
        shown = f" ({self.event_type})" if self.event_type else ""
        return f"event {self.index}{shown}"

    def describe(self) -> str:
        """The finding in one line: where, the rule, the message."""
        rule = f"{self.rule}: " if self.rule else ""
        return f"{self.where}: {rule}{self.message}"


class StreamCheck:
    """Judges a stream item by item with agui's verifier, going on after a violation."""

    def __init__(self, *, known_tool_call_ids: Iterable[str] = ()) -> None:
        self._verifier = Verifier(known_tool_call_ids=known_tool_call_ids)
        self._quiet = False
        self.items = 0
        self.events = 0
        self.runs = 0
        self.suppressed = 0
        self.violations: list[Finding] = []
        self.notes: list[Finding] = []

    def feed(self, item: object) -> tuple[Event | None, list[Finding]]:
        """Judge the next item (JSON text, or a parsed value); return its event and findings."""
        index = self.items
        self.items += 1
        found: list[Finding] = []
        event = self._decode(item, index, found)
        if event is None:
            return None, found
        self.events += 1
        try:
            self._verifier.observe(event)
        except ProtocolViolation as violation:
            rule = Rule(violation.rule).value
            self._violation(Finding("violation", index, event.type, rule, str(violation)), found)
        else:
            if isinstance(event, RunStartedEvent):
                self.runs += 1
                self._quiet = False
        return event, found

    def finish(self) -> Finding | None:
        """Check the end of the stream; the truncation it reports is never held back."""
        try:
            self._verifier.finish()
        except ProtocolViolation as violation:
            finding = Finding("violation", None, None, Rule.TRUNCATED.value, str(violation))
            self.violations.append(finding)
            return finding
        return None

    def summary(self) -> str:
        """`5 events in 1 run: valid`, or the count of violations."""
        events = f"{self.events} event{'s' * (self.events != 1)}"
        runs = f"{self.runs} run{'s' * (self.runs != 1)}"
        if not self.violations:
            return f"{events} in {runs}: valid"
        count = len(self.violations)
        held = f" ({self.suppressed} more in the same runs not shown)" if self.suppressed else ""
        return f"{events} in {runs}: {count} violation{'s' * (count != 1)}{held}"

    def _violation(self, finding: Finding, found: list[Finding]) -> None:
        if self._quiet:
            self.suppressed += 1
            return
        self._quiet = True
        self.violations.append(finding)
        found.append(finding)

    def _decode(self, item: object, index: int, found: list[Finding]) -> Event | None:
        value = item
        if isinstance(item, str):
            try:
                value = parse_json(item)
            except DecodeError as error:
                message = str(error).replace("the body is", "the item is")
                self._violation(Finding("violation", index, None, INVALID_JSON, message), found)
                return None
        shown = _type_of(value)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            event = self._parse(value, index, shown, found)
        for warning in caught:
            note = Finding("note", index, shown, "", str(warning.message))
            self.notes.append(note)
            found.append(note)
        return event

    def _parse(
        self, item: object, index: int, shown: str | None, found: list[Finding]
    ) -> Event | None:
        try:
            if not isinstance(item, Mapping):
                message = f"an event must be a JSON object, not {json_kind(item)}"
                raise DecodeError(message)  # noqa: TRY301 - reported below like the others
            return parse_event(cast("Mapping[str, object]", item))
        except UnknownEventType as error:
            note = Finding("note", index, shown, "", f"dropped: {error}")
            self.notes.append(note)
            found.append(note)
        except DecodeError as error:
            self._violation(Finding("violation", index, shown, MALFORMED_EVENT, str(error)), found)
        return None


def _type_of(value: object) -> str | None:
    kind = cast("Mapping[str, object]", value).get("type") if isinstance(value, Mapping) else None
    return kind if isinstance(kind, str) else None


# -- captures ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Capture:
    """A captured stream: its format, its items, and what reading it noticed."""

    format: str
    items: list[object]
    notes: list[str]


def read_capture(data: bytes) -> Capture:
    """Read a captured stream, telling its format from its first bytes.

    Raises:
        CaptureError: The input is empty, or in none of the formats.
    """
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    stripped = text.strip()
    if not stripped:
        message = "the input is empty: no events to check"
        raise CaptureError(message)
    if stripped.splitlines()[0].startswith(_SSE_FIELDS):
        return _sse_capture(data)
    if stripped[0] == "[":
        return Capture("JSON array", _json_array(stripped), [])
    if stripped[0] == "{":
        return _object_capture(stripped)
    message = (
        "cannot tell the format: expected a JSON array of events, JSON lines (one event object "
        "a line), or an SSE body (data: lines)"
    )
    raise CaptureError(message)


def _json_array(text: str) -> list[object]:
    try:
        value = parse_json(text)
    except DecodeError as error:
        message = f"the input starts like a JSON array but is not JSON: {error}"
        raise CaptureError(message) from None
    if not isinstance(value, list):  # pragma: no cover - JSON text starting with "[" is an array
        raise CaptureError("the input is not a JSON array")  # noqa: EM101, TRY003
    return list(value)  # pyright: ignore[reportUnknownArgumentType]


def _object_capture(text: str) -> Capture:
    try:
        value = parse_json(text)
    except DecodeError:
        lines: list[object] = [line for line in text.splitlines() if line.strip()]
        return Capture("JSON lines", lines, [])
    stream = cast("dict[str, object]", value).get("stream") if isinstance(value, dict) else None
    if isinstance(stream, list):
        return Capture("conformance fixture", cast("list[object]", stream), [])
    return Capture("JSON lines", [value], [])


def _sse_capture(data: bytes) -> Capture:
    parser = SSEParser(max_frame_bytes=len(data) + 1)
    items: list[object] = list(parser.feed(data))
    notes: list[str] = []
    if parser.incomplete:
        # A file may lose its last blank line on the way; read the frame, and say so.
        items += parser.feed(b"\n\n")
        notes.append("the last frame had no blank line after it; it was read anyway")
    return Capture("SSE", items, notes)


# -- live endpoints ----------------------------------------------------------------------------


def run_input(
    *, message: str | None = None, state: JsonValue = None, tools: Sequence[str] = ()
) -> RunAgentInput:
    """A minimal run input: one user message, the state, and tools offered by name.

    It declares AG-UI 1.0, which the command reads (subagents included): an endpoint that
    downgrades requests without a version would otherwise send the pre-1.0 stream.
    """
    suffix = uuid.uuid4().hex[:8]
    offered = [
        Tool(
            name=name,
            description=f"{name} (offered by the agui command)",
            parameters={"type": "object", "properties": {}},
        )
        for name in tools
    ]
    return RunAgentInput(
        thread_id=f"thread-{suffix}",
        run_id=f"run-{suffix}",
        messages=[UserMessage(id="user-1", content=message)] if message else [],
        state=state,
        tools=offered,
        protocol_version=PROTOCOL_VERSION,
    )


def post_stream(
    url: str,
    body: RunAgentInput,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Iterator[str]:
    """POST `body` to `url` and yield the data of each SSE frame of the answer as it arrives.

    Raises:
        CaptureError: The URL cannot be reached, the connection failed, the server answered
            with a non-2xx status (its body is kept) or with something other than an event
            stream, or the stream broke.
    """
    import httpx  # noqa: PLC0415 - an optional dependency, needed by these commands only

    sent = {name.lower(): value for name, value in (headers or {}).items()}
    sent.update({"content-type": "application/json", "accept": SSE_MEDIA_TYPE})
    content = body.model_dump_json().encode()
    try:
        _check_url(url)
        with (
            httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=True) as client,
            client.stream("POST", url, content=content, headers=sent) as response,
        ):
            _check_response(url, response)
            parser = SSEParser()
            for chunk in response.iter_bytes():
                yield from parser.feed(chunk)
    except httpx.InvalidURL as error:
        message = (
            f"{url!r} is not a URL that can be reached ({error}); give one as http://host:port/path"
        )
        raise CaptureError(message) from None
    except UnicodeError as error:  # the URL's host passed `_check_url`: a redirect's did not
        message = (
            f"the connection to {url} failed: it was redirected to a URL whose host is not a "
            f"name: {error}"
        )
        raise CaptureError(message) from None
    except httpx.HTTPError as error:
        detail = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        message = f"the connection to {url} failed: {detail}"
        raise CaptureError(message) from None
    except DecodeError as error:  # a frame larger than the parser takes
        raise CaptureError(str(error)) from None


def _check_url(url: str) -> None:
    """Refuse what httpx lets through: bytes that are not UTF-8, a bad host, no port (99999)."""
    import httpx  # noqa: PLC0415 - an optional dependency, needed by these commands only

    if unicode_problem(url) is not None:  # argv's undecodable bytes, which no URL can carry
        message = f"the URL {url!r} holds bytes that are not UTF-8; give it as UTF-8 text"
        raise CaptureError(message)
    parsed = httpx.URL(url)
    try:
        parsed.host  # noqa: B018 - building the request decodes its punycode labels so
        parsed.raw_host.decode("ascii").encode("idna")  # and the resolver is given this
    except UnicodeError as error:
        message = (
            f"{url!r} is not a URL that can be reached: its host is not a name: {error}; a host "
            "name is labels of 1 to 63 letters, digits and hyphens, separated by dots"
        )
        raise CaptureError(message) from None
    port = parsed.port
    if port is not None and not 0 < port <= _HIGHEST_PORT:  # a socket connects 99999 to 34463
        message = (
            f"{url!r} is not a URL that can be reached: its port {port} is no port; a port is "
            f"1 to {_HIGHEST_PORT}"
        )
        raise CaptureError(message)


def _check_response(url: str, response: httpx.Response) -> None:
    if not response.is_success:
        raw = b""
        for chunk in response.iter_bytes():
            raw += chunk
            if len(raw) >= _ERROR_BODY_LIMIT:
                break
        body = raw[:_ERROR_BODY_LIMIT].decode("utf-8", errors="replace")
        message = f"HTTP {response.status_code} {response.reason_phrase} from {url}".strip()
        raise CaptureError(message, body=body)
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media and media != SSE_MEDIA_TYPE:
        message = f"{url} answered with {media}, not an event stream ({SSE_MEDIA_TYPE})"
        raise CaptureError(message)
