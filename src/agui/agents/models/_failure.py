"""How a provider SDK's failure reads in a `ModelError`: shortened, and named for when it came.

The SDKs raise the same connection and timeout errors for a request that never got an answer
and for a stream that broke after its first events: from openai 3.x and anthropic 2.17 on, a
failure to read the body is mapped too, with the transport's own error as its cause. To the
person reading the run's error those are different faults (a host that is down, against a
model server that crashed or stalled mid-answer), so the models say which one it was, and show
the transport's text rather than the SDK's "Connection error.".
"""

from __future__ import annotations

from agui.errors import ModelError, ModelTimeout, ModelUnavailable

__all__ = ["SHOWN", "shown", "stream_failure"]

SHOWN = 200
"""How much of a provider's error text a message shows."""


def shown(text: str) -> str:
    """`text`, cut to `SHOWN` characters with an ellipsis when it is longer.

    Examples:
        >>> shown("rate limited"), len(shown("x" * 500))
        ('rate limited', 203)
    """
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def stream_failure(where: str, error: BaseException, *, timed_out: bool) -> ModelError:
    """The error of a stream that had begun and then stalled (`timed_out`) or broke.

    `error` is the SDK's; its cause, when it has one, is the transport's error, which says
    what broke.

    Examples:
        >>> broken = ConnectionError("Connection error.")
        >>> broken.__cause__ = OSError("peer closed connection")
        >>> print(stream_failure("the model API at http://m", broken, timed_out=False))
        the model API at http://m broke the stream: peer closed connection
        >>> print(stream_failure("the model API at http://m", broken, timed_out=True))
        the model API at http://m went silent mid-stream: raise timeout= if it is slow
    """
    if timed_out:
        return ModelTimeout(f"{where} went silent mid-stream: raise timeout= if it is slow")
    cause = error.__cause__ or error
    return ModelUnavailable(f"{where} broke the stream: {shown(str(cause))}")
