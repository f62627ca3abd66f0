"""The smallest agent: it says hello.

Serve it over HTTP with either of these, from the repository root:

    agui serve examples/hello.py:agent
    uvicorn examples.hello:app

and talk to it with `agui watch http://127.0.0.1:8000/ -m "Hi"`.
"""

from __future__ import annotations

import agui


async def agent(ctx: agui.RunContext[object]) -> None:
    """Answer every request with one streamed text message."""
    ctx.say("Hello from agui!")


app = agui.asgi_app(agent)
