"""The inspector: one self-contained HTML page that runs an agent and shows what it sends.

`agui.asgi_app(agent, inspector=True)` (or `agui serve TARGET --inspector`) answers a `GET` on
the endpoint's path with this page. Open it in a browser, type a message, and watch the run: the
conversation as a user would see it (streaming text, reasoning folded away, each tool call with
its arguments growing and its result), the shared state after each snapshot or delta (JSON
Patch applied in the page), the run's outcome (with a form to answer an interrupt), and the raw
event log, where an event that breaks an ordering rule is marked with the rule's name from
`agui.verify.Rule`. A Stop button aborts the request, which the server sees as a disconnect.
On an endpoint with a run log (`runs=`) a reload does not lose the run: the page keeps it in the
tab's `sessionStorage` and reads it again from `<path>/runs/<run id>/events`.

The page is static: `index.html`, `inspector.js` and `inspector.css` ship inside this package,
and `page()` inlines the script and the style sheet into the HTML, so it is one response that
makes no other request but its POSTs to its own URL (no CDN, no build step). `headers()` gives
the response headers, among them a `Content-Security-Policy` that allows exactly the inlined
script and style (by hash) and connections to the page's own origin. The page is not tied to
agui: any AG-UI endpoint that serves `page()` with `headers()` on GET can be inspected with it
(agui's own tests do that with recorded streams of the official conformance corpus).

The page's checks are a port of `agui.verify` (every `Rule`, by its kebab-case name; chunks are
expanded as the official client expands them), plus the schema faults the official client
refuses ("malformed"), the JSON Patch failures it warns about, and notes on what it tolerates
(an unknown event type, a legacy `THINKING_*` event). An event that breaks a rule is still
applied to the view as far as it can be, so what the server sent stays visible.

Examples:
    >>> html = page()
    >>> html.startswith("<!doctype html>"), "<script>" in html, "http://" in html
    (True, True, False)
"""

from __future__ import annotations

import base64
import functools
import hashlib
from importlib import resources

__all__ = ["MEDIA_TYPE", "headers", "page"]

MEDIA_TYPE = "text/html; charset=utf-8"
"""The page's `Content-Type`."""

_SCRIPT_TAG = '<script src="inspector.js"></script>'
_STYLE_TAG = '<link rel="stylesheet" href="inspector.css">'


@functools.cache
def _assembled() -> tuple[str, str]:
    """The page with its script and style inlined, and the matching Content-Security-Policy."""
    files = resources.files(__name__)
    html = files.joinpath("index.html").read_text(encoding="utf-8")
    script = "\n" + files.joinpath("inspector.js").read_text(encoding="utf-8")
    style = "\n" + files.joinpath("inspector.css").read_text(encoding="utf-8")
    # Inlined text must not close its own element early.
    if "</script" in script.lower() or "</style" in style.lower():  # pragma: no cover - a build bug
        message = "the inspector's script or style sheet contains its own closing tag"
        raise RuntimeError(message)
    if html.count(_SCRIPT_TAG) != 1 or html.count(_STYLE_TAG) != 1:  # pragma: no cover
        message = "index.html must load inspector.js and inspector.css exactly once each"
        raise RuntimeError(message)
    html = html.replace(_STYLE_TAG, f"<style>{style}</style>")
    html = html.replace(_SCRIPT_TAG, f"<script>{script}</script>")
    policy = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_hash(script)}",
            f"style-src {_hash(style)}",
            "connect-src 'self'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
            "require-trusted-types-for 'script'",
            "trusted-types 'none'",
        ]
    )
    return html, policy


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def page() -> str:
    """The inspector page: HTML with its script and style sheet inlined, ready to serve.

    Serve it with `headers()`: its Content-Security-Policy allows exactly these inlined blocks.

    Examples:
        >>> "<title>agui inspector</title>" in page()
        True
    """
    return _assembled()[0]


def headers() -> list[tuple[str, str]]:
    """The response headers the page is served with (names lower-case), but its length.

    A strict `Content-Security-Policy`: nothing loads but the page's own inlined script and style
    (allowed by their SHA-256), connections go only to the page's origin, no framing, and Trusted
    Types keep HTML out of the DOM APIs. The page is never cached, so an upgraded agui serves its
    upgraded page.

    Examples:
        >>> dict(headers())["content-type"]
        'text/html; charset=utf-8'
        >>> "connect-src 'self'" in dict(headers())["content-security-policy"]
        True
    """
    return [
        ("content-type", MEDIA_TYPE),
        ("content-security-policy", _assembled()[1]),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
        ("cache-control", "no-store"),
    ]
