"""The run's verifier: the ordering verifier, with a quick check of the records a run sends.

A handle's delta, a text message's plain start and a message's or tool call's end are nearly
every event of a stream, and while the run is plain the pipeline sends them as records
(`agui._emit.record`). In the common case (the run active, no chunk stream open, the block open
for a delta or an end and not yet open for a start) the record is checked here, against the
ledger's open blocks, exactly as its event would be; otherwise its event is built and observed
the full way. The verifier's public face takes events only; this subclass is the emit core's.
"""

from __future__ import annotations

from collections.abc import Iterable

from agui._emit.record import Kind, Record, materialize
from agui.events import Event
from agui.verify import Verifier
from agui.verify._kinds import TEXT, THOUGHT, TOOL
from agui.verify._lifecycle import Phase

__all__ = ["RunVerifier"]

_LANES = (TEXT, TOOL, THOUGHT, TEXT, TOOL, TEXT)
"""The ledger lane of each record kind, in `Kind` order."""
_LAST_DELTA, _TEXT_START, _RUNNING = Kind.LAST_DELTA, Kind.TEXT_START, Phase.RUNNING


class RunVerifier(Verifier):
    """A run's verifier, which also observes the records its pipeline sends.

    Examples:
        >>> from agui.events import RunFinishedEvent
        >>> verifier = RunVerifier(started=("t", "r"))
        >>> verifier.observe_record((Kind.TEXT_START, "m1", "assistant"))
        >>> verifier.observe_record((Kind.TEXT_CONTENT, "m1", "Hi"))
        >>> verifier.open_messages
        ('m1',)
        >>> verifier.observe_record((Kind.TEXT_END, "m1", ""))
        >>> verifier.observe(RunFinishedEvent(thread_id="t", run_id="r"))
        >>> verifier.running
        False
    """

    def __init__(
        self, *, started: tuple[str, str] | None = None, known_tool_call_ids: Iterable[str] = ()
    ) -> None:
        super().__init__(started=started, known_tool_call_ids=known_tool_call_ids)
        # Each record kind's open blocks, and the chunk streams: the ledger clears its dicts
        # and never replaces them.
        ledger = self._ledger
        self._blocks = tuple(ledger.open[lane] for lane in _LANES)
        self._streams = ledger.lanes
        self.revision = 0
        """Moves with every event and record accepted, except a delta into its open block in an
        active run with no chunk stream open (the quickest check, which changes nothing): while
        it stays put, such a delta is accepted again (the pipeline's grant)."""

    def observe(self, event: Event) -> None:
        """Accept an event, or refuse it and change nothing; the revision moves on."""
        super().observe(event)
        self.revision += 1

    def observe_record(self, record: Record) -> None:
        """Accept a record, or refuse it and change nothing, as observing its event would."""
        if self._phase is _RUNNING and not self._streams:
            kind, entity_id, _ = record
            opened = self._blocks[kind]
            if kind <= _LAST_DELTA:  # the commonest record of all: its block is open
                if entity_id in opened:
                    return
            elif kind == _TEXT_START:
                if entity_id not in opened:
                    opened[entity_id] = self._ledger.tick()  # when it opened: `open_blocks`
                    self._ledger.owners[TEXT].setdefault(entity_id, None)
                    self.revision += 1
                    return
            elif entity_id in opened:  # an end
                del opened[entity_id]
                self.revision += 1
                return
        self.observe(materialize(record))
