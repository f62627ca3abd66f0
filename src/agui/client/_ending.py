"""How a run the client cannot read to its end is told: truncated, or timed out.

A stream can stop early in three ways, and each gets the error that says what to do about it.
A connection that breaks, or a body that ends before its terminal event, leaves the run
truncated when it cannot be resumed: the server's fault, told as a `ProtocolViolation` with rule
`truncated` whose message names the break or the failed resume. A server that sends nothing for
the client's timeout is not known to be gone, so it is told as the timeout it is, in httpx's own
type (`httpx.ReadTimeout` for a read), with the message httpx leaves empty: where the stream
stopped, and which option waits longer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agui.errors import DecodeError, HTTPStatusError

if TYPE_CHECKING:
    import httpx

    from agui.client._reader import StreamReader

__all__ = ["lost", "reason", "refused_for_good", "timed_out"]


def lost(
    reader: StreamReader,
    failure: Exception | None,
    *,
    tries: int,
    read: bool,
    longer: str,
) -> Exception:
    """The error of a run that cannot be read to its end.

    `failure` is what ended the last try (`None`: its body just ended), `tries` how many resumes
    in a row brought nothing, `read` whether the last try got a stream to read (not a resume that
    failed to open), and `longer` how to give a stalled server more time.

    Examples:
        >>> from agui.client._reader import StreamReader
        >>> from agui.types import RunAgentInput
        >>> run = RunAgentInput(thread_id="t", run_id="r")
        >>> reader = StreamReader("http://x/agent", run, max_frame_bytes=1024, verify=True)
        >>> error = lost(reader, ConnectionError("reset"), tries=2, read=False, longer="")
        >>> str(error).split("; ")[1].split(". ")[0]
        'resuming it failed 2 times in a row: ConnectionError: reset'
    """
    import httpx  # noqa: PLC0415 - optional dependency, checked in AGUIClient

    if read and isinstance(failure, httpx.TimeoutException):
        # The server may still be working on the run: the fix is a longer wait, not a new server.
        return timed_out(failure, reader.stalled(), longer)
    if tries:
        times = f" {tries} times in a row" if tries > 1 else ""
        why = "the resumed stream brought no new frame" if failure is None else reason(failure)
        return reader.truncation(f"resuming it failed{times}: {why}")
    return reader.truncation(
        None if failure is None else f"the connection broke: {reason(failure)}"
    )


def timed_out(error: httpx.TimeoutException, what: str, longer: str) -> httpx.TimeoutException:
    """`error` again, of its own type, saying what timed out (`what`) and how to wait `longer`.

    The type stays, so a caller that catches `httpx.ReadTimeout` still catches it; httpx's own
    timeouts have an empty message.

    Examples:
        >>> import httpx
        >>> error = timed_out(httpx.ReadTimeout(""), "The stream sent nothing", "raise timeout")
        >>> type(error).__name__, str(error).split(". ")[0]
        ('ReadTimeout', "The stream sent nothing within the client's timeout (ReadTimeout)")
    """
    message = (
        f"{what} within the client's timeout ({type(error).__name__}). If the server can be "
        f"silent that long, {longer}, or have it send keep-alive comments while the agent works "
        "(agui's endpoint sends one every `keepalive` seconds, 15 by default)."
    )
    try:
        request: httpx.Request | None = error.request
    except RuntimeError:  # made outside a request: httpx sets it on every error it raises
        request = None
    return type(error)(message, request=request)


def reason(error: Exception) -> str:
    """`error` in a message: agui's own errors say it all; others are named, their text is short.

    Examples:
        >>> reason(ConnectionError("All connection attempts failed"))
        'ConnectionError: All connection attempts failed'
        >>> reason(HTTPStatusError(404, "", url="http://x/runs/r/events"))
        'HTTP 404 from http://x/runs/r/events: (empty body)'
    """
    if isinstance(error, (HTTPStatusError, DecodeError)):
        return str(error)
    return f"{type(error).__name__}: {error}"


_BUSY = frozenset({502, 503, 504})
"""Statuses of a server, or a proxy before it, that is busy or restarting: asked again."""


def refused_for_good(failure: Exception | None) -> bool:
    """Whether a resume's failure is the server's answer, which asking again would not change.

    Examples:
        >>> refused_for_good(HTTPStatusError(404, "", url="http://x/runs/r/events"))
        True
        >>> refused_for_good(HTTPStatusError(503, "", url="http://x/runs/r/events"))
        False
    """
    if isinstance(failure, HTTPStatusError):
        return failure.status not in _BUSY
    return isinstance(failure, DecodeError)
