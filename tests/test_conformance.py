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
from typing import Any

import pytest

import corpus
from agui.errors import (
    MalformedEvent,
    ProtocolViolation,
    UnknownEventType,
    UnknownMemberWarning,
)
from agui.events import Event, EventType
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
