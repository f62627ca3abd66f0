"""Another AG-UI endpoint, served by agui: `agui.bridges.remote`.

`remote(url)` relays each run to an AG-UI endpoint elsewhere (another process, language or
environment: a framework that cannot share agui's dependencies, say) and serves its answer with
agui's guarantees: every event verified, one terminal event on every path, a sanitised
`RUN_ERROR`, a broken stream resumed by `Last-Event-ID` where the far side keeps durable runs,
and the far run cancelled when our client leaves.

Serve the adapter example on port 8001, then this proxy in front of it (the `client` and
`bridges` extras), from the repository root:

    agui serve examples/bridges/adapter.py:agent --port 8001
    AGUI_UPSTREAM_URL=http://127.0.0.1:8001/ agui serve examples/bridges/proxy.py:agent
"""

from __future__ import annotations

import os

from agui.bridges import RemoteAgent, remote


def build(url: str) -> RemoteAgent:
    """The proxy for the endpoint at `url`."""
    return remote(url)


agent = build(os.environ.get("AGUI_UPSTREAM_URL", "http://127.0.0.1:8001/"))
