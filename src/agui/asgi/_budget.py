"""The server's budget of buffered bytes: what all its streams' clients have not read yet.

Each stream has its own limits (`max_buffered_bytes`, `buffer_hard_limit`, see `agui.sink`), but
a thousand clients that stop reading while their agents emit without awaiting `ctx.writable()`
could each hold a stream's hard limit. A `Budget` adds up what every stream holds, as its
receiver reports it (`EventReceiver.bind(..., ledger=)`), and once the sum passes the limit it
cancels the run of the stream holding the most, as a stream past its own hard limit is
cancelled, and logs it at WARNING with the run and its bytes; the next push past the limit
cancels the next largest, and so on. A cancelled run stops adding to its stream, whose frames
stay queued for its client to read (its stream then ends with `RUN_FINISHED`, outcome
`cancelled`) until the client reads them or leaves, and they count against the budget until
then.

Nothing is weighed for the budget beyond what the receivers already weigh: a stream reports a
change only at a send and while a send waits on its client, so a server whose clients keep up
pays one addition per send.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from agui.sink import EventReceiver

__all__ = ["BUFFER_BUDGET", "Budget"]

BUFFER_BUDGET = 256 << 20
"""The default budget of a server's buffered bytes, all streams together: 256 MiB."""

_log = logging.getLogger("agui.asgi")


class Budget:
    """What all the streams of one endpoint hold unread, against a limit (`None` for none).

    Examples:
        >>> budget = Budget(100)
        >>> shed = []
        >>> small, large = EventReceiver(), EventReceiver()
        >>> grow_small = budget.enter(small, "r1", shed.append)
        >>> grow_large = budget.enter(large, "r2", shed.append)
        >>> small.bind(10, 1000, print, ledger=grow_small)
        >>> large.bind(10, 1000, print, ledger=grow_large)
        >>> small.sending(30)
        >>> large.sending(80)  # 110 in all: the run holding the most is cancelled
        >>> shed, budget.total
        ([80], 110)
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.total = 0
        """About how many bytes all the streams hold that their clients have not read."""
        self._holders: dict[EventReceiver, tuple[str, Callable[[int], None]]] = {}
        self._grow = self.grow  # bound once: every stream's ledger is this same method

    def grow(self, change: int) -> None:
        """Count a change of what one stream holds; past the limit, shed the largest holder."""
        self.total += change
        if change > 0 and self.limit is not None and self.total > self.limit:
            self._shed(self.limit)

    def enter(
        self, receiver: EventReceiver, run_id: str, shed: Callable[[int], None]
    ) -> Callable[[int], None]:
        """Count a stream: the ledger its receiver is bound with; `shed(bytes)` cancels its run."""
        self._holders[receiver] = (run_id, shed)
        return self._grow

    def leave(self, receiver: EventReceiver) -> None:
        """The stream has ended: its run is no longer one to cancel (its bytes are back to 0)."""
        self._holders.pop(receiver, None)

    def _shed(self, limit: int) -> None:
        """Cancel the run of the stream holding the most, of those not cancelled yet.

        A stream holding nothing is never cancelled: what is over the budget then is held by
        streams cancelled already, and cancelling one more would free nothing.
        """
        largest = max(self._holders, key=lambda receiver: receiver.queued_bytes, default=None)
        held = 0 if largest is None else largest.queued_bytes
        if largest is None or held == 0:
            return
        run_id, shed = self._holders.pop(largest)
        _log.warning(
            "run %s: its client has not read about %d bytes of its stream, the most of any "
            "stream, and the server's streams hold about %d, past its buffer_budget of %d; "
            "cancelling the run",
            run_id,
            held,
            self.total,
            limit,
        )
        shed(held)
