"""What the pipeline needs of an open block: its name, how it closes, whether it nests.

The run's pipeline keeps the blocks its handles hold open (one exclusive block at a time, steps
nested inside) and closes them innermost first when the run ends; a handle is such a block.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Block"]


class Block(Protocol):
    """What the pipeline needs of an open handle: its name, how it closes, whether it nests."""

    @property
    def kind(self) -> str:
        """What it is, for messages: `text message`, `tool call`, `step`, ..."""
        ...

    @property
    def nests(self) -> bool:
        """Whether blocks of its kind nest (steps) rather than exclude each other."""
        ...

    @property
    def opened_at(self) -> tuple[str, int]:
        """The file and line of the code that opened it."""
        ...

    def describe(self) -> str:
        """A short name for messages, such as `tool call 'r-call-1' (get_weather)`."""
        ...

    def close(self) -> None:
        """Emit the closing event, unless it has gone out already."""
        ...
