"""Answering a request other than a POST at an endpoint with the inspector: the page, or why not.

`agui.asgi` sends such requests here when `inspector=True` (see "The inspector" there), so the
endpoint's admission of runs stays apart from serving the static page.
"""

from __future__ import annotations

import contextlib

from agui.asgi import inspector as _inspector
from agui.asgi._admission import Refusal, Scope, Send, negotiate, request_headers

__all__ = ["answer_inspector"]

_PAGE_ALLOWS = "GET, HEAD, POST"


async def answer_inspector(scope: Scope, send: Send, method: str) -> None:
    """Answer a request that is not a POST at an endpoint with the inspector: the page, or why not.

    Raises:
        Refusal: 405 for a method other than GET or HEAD, 406 for an `Accept` without HTML.
    """
    if method not in ("GET", "HEAD"):
        message = (
            f"this endpoint runs an agent on POST and serves its inspector page on GET; "
            f"{method} is not allowed"
        )
        raise Refusal(405, "METHOD_NOT_ALLOWED", message, [("allow", _PAGE_ALLOWS)])
    accept = request_headers(scope).get("accept")
    if negotiate(accept, ("text/html",)) is None:
        message = (
            f"GET serves the inspector page, text/html, which this request does not accept "
            f"({accept!r}); an event stream is the answer to a POST of a RunAgentInput"
        )
        raise Refusal(406, "NOT_ACCEPTABLE", message)
    body = _inspector.page().encode("utf-8")
    headers = [
        *(
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in _inspector.headers()
        ),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"vary", b"Accept"),
    ]
    with contextlib.suppress(OSError):
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
