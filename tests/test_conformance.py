"""The official AG-UI conformance streams, replayed through `agui.wire` and `agui.verify`.

Each fixture carries the verdict the TypeScript reference client reaches. A consumer decodes
every event (an unknown type is dropped, a malformed known field fails the stream), then checks
the order. Our verifier is a producer's check, so it must refuse every stream the client refuses
for ordering, lifecycle, ids, chunks or subagents, and accept every stream the client accepts,
save where we are stricter on purpose (`STRICTER`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, cast

import pytest

import corpus
from agui._protocol.chunk_lanes import ChunkLanes
from agui.errors import (
    MalformedEvent,
    ProtocolViolation,
    UnknownEventType,
    UnknownMemberWarning,
)
from agui.events import Event, EventType
from agui.fold import fold
from agui.messages import Message
from agui.verify import Verifier
from agui.wire import parse_event

pytestmark = pytest.mark.corpus  # every test here replays the external corpus
STREAMS = corpus.streams()

STRICTER = {
    "truncated-run-reported-as-completed": (
        "the corpus pins the reference clients' admitted gap: a stream that stops without "
        "RUN_FINISHED or RUN_ERROR has no outcome, and agui's finish() refuses it on purpose"
    ),
}
"""Streams the reference client accepts and agui refuses on purpose, with the reason."""

MALFORMED = {
    "malformed-known-field-fatal": "'/delta'",
    "reasoning-message-wrong-role-fatal": "'/role'",
    "subagent-started-missing-name-fatal": "'/name'",
    "unknown-enum-value-role-fatal": "'/role'",
    "unknown-outcome-array-fatal": "'/outcome'",
}
"""Streams that fail at decode, not in the verifier, with what our error names (the fixtures'
`errorContains` quotes zod's wording, which pydantic does not share)."""

UNKNOWN_MATERIAL = {
    "state-delta-unknown-op-dropped",
    "unknown-outcome-stripped",
    "unknown-part-in-message-list",
    "unknown-property-stripped",
}
"""Streams whose decoding strips unknown members, each with an `UnknownMemberWarning`."""

DECODER_GAPS: dict[str, str] = {}
"""Known decoder gaps (not the verifier's): strict xfails, so a fix shows up as XPASS."""


def load(path: Path) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return fixture


def expectation(fixture: dict[str, Any]) -> dict[str, Any]:
    """The TypeScript lane's verdict: the base expectation with its override, if any."""
    overrides: dict[str, Any] = fixture.get("expectOverrides", {})
    return {**fixture["expect"], **overrides.get("typescript", {})}


def decode(fixture: dict[str, Any]) -> tuple[list[Event], list[str]]:
    """Decode every event as a consumer does, dropping unknown types; return the warnings too."""
    events: list[Event] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for raw in fixture["stream"]:
            try:
                events.append(parse_event(raw))
            except UnknownEventType:
                assert raw["type"] not in {member.value for member in EventType}
    assert all(issubclass(w.category, UnknownMemberWarning) for w in caught)
    return events, [str(w.message) for w in caught]


def verdict(events: list[Event]) -> ProtocolViolation | None:
    verifier = Verifier()
    try:
        for event in events:
            verifier.observe(event)
        verifier.finish()
    except ProtocolViolation as violation:
        return violation
    return None


def case(path: Path) -> object:
    marks: list[pytest.MarkDecorator] = []
    if path.stem in DECODER_GAPS:
        marks.append(pytest.mark.xfail(reason=DECODER_GAPS[path.stem], strict=True))
    return pytest.param(path, id=path.stem, marks=marks)


def test_the_corpus_is_there() -> None:
    assert len(STREAMS) > 60
    names = {path.stem for path in STREAMS}
    assert {load(path)["name"] for path in STREAMS} == names
    assert set(STRICTER) | set(MALFORMED) | UNKNOWN_MATERIAL | set(DECODER_GAPS) <= names
    assert set(FOLD_GAPS) <= names


@pytest.mark.parametrize("path", [case(path) for path in STREAMS])
def test_agui_reaches_the_reference_clients_verdict(path: Path) -> None:
    fixture = load(path)
    expect, name = expectation(fixture), fixture["name"]
    if name in MALFORMED:
        assert expect["outcome"] == "failed"
        with pytest.raises(MalformedEvent, match=MALFORMED[name]):
            decode(fixture)
        return
    events, stripped = decode(fixture)
    assert bool(stripped) is (name in UNKNOWN_MATERIAL), stripped
    refused = verdict(events)
    if name in STRICTER:
        assert expect["outcome"] == "completed"
        assert refused is not None
    elif expect["outcome"] == "completed":
        assert refused is None, str(refused)
    else:
        assert refused is not None
        assert expect.get("errorContains", "") in str(refused)


FOLD_GAPS = {
    "era-0-0-45-thinking-translated": (
        "the reference client translates a 0.0.45 peer's THINKING_* events into reasoning; "
        "agui reads the 1.0 event types, and drops those retired ones as unknown"
    ),
}
"""Streams whose folded messages differ from the reference client's, with the reason: strict
xfails, so a change shows up as XPASS."""


def fold_case(path: Path) -> object:
    reason = FOLD_GAPS.get(path.stem)
    marks = [] if reason is None else [pytest.mark.xfail(reason=reason, strict=True)]
    return pytest.param(path, id=path.stem, marks=marks)


def shown(messages: list[Message]) -> list[dict[str, Any]]:
    """Messages as the client holds them: wire JSON, absent fields left out."""
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in messages]


def holds(actual: object, expected: object) -> bool:
    """Whether `actual` has everything `expected` names, as the reference tests match (objects
    may hold more members; arrays hold exactly the items given)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        held = cast("dict[str, object]", actual)
        return all(
            key in held and holds(held[key], value)
            for key, value in cast("dict[str, object]", expected).items()
        )
    if isinstance(expected, list):
        items = cast("list[object]", expected)
        return (
            isinstance(actual, list)
            and len(cast("list[object]", actual)) == len(items)
            and all(holds(a, e) for a, e in zip(cast("list[object]", actual), items, strict=True))
        )
    return actual == expected and type(actual) is type(expected)


def accepted(path: Path, *, naming: str = "outcome") -> bool:
    """Whether the client accepts the stream, and its verdict names `naming`; the placeholder
    of an absent corpus is kept, so that its tests fail saying so."""
    if path.stem == corpus.PLACEHOLDER:
        return True
    fixture = load(path)
    expect = expectation(fixture)
    return (
        expect["outcome"] == "completed" and fixture["name"] not in MALFORMED and naming in expect
    )


@pytest.mark.parametrize("path", [fold_case(path) for path in STREAMS if accepted(path)])
def test_the_fold_holds_what_the_reference_client_holds(path: Path) -> None:
    fixture = load(path)
    expect = expectation(fixture)
    folded = fold(decode(fixture)[0])
    if "messages" in expect:
        assert holds(shown(folded.messages), expect["messages"]), shown(folded.messages)
    if "messageCount" in expect:
        assert len(folded.messages) == expect["messageCount"]
    if "state" in expect:
        assert folded.state == expect["state"]
    failed_patch = any("Failed to apply" in text for text in expect.get("warnings", []))
    assert bool(folded.warnings) is failed_patch, folded.warnings


@pytest.mark.parametrize(
    "path", [case(path) for path in STREAMS if accepted(path, naming="eventTypes")]
)
def test_chunks_expand_into_the_events_the_reference_client_applies(path: Path) -> None:
    fixture = load(path)
    lanes = ChunkLanes()
    expanded = [each.type for event in decode(fixture)[0] for each in lanes.expand(event)[0]]
    assert expanded == expectation(fixture)["eventTypes"]
