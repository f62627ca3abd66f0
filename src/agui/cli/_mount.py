"""An endpoint at one path, as `agui serve` serves it: its routes there, 404 for any other path."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agui.asgi import Receive, Scope, Send
from agui.asgi._routes import parse_route

__all__ = ["PathApp"]


class PathApp:
    """Answers at one path (with or without a trailing slash) and its routes; 404s the rest.

    The routes are the capabilities route and, with a run log, those of durable runs.
    """

    def __init__(
        self, app: Callable[[Scope, Receive, Send], Any], path: str, *, routes: bool = False
    ) -> None:
        self._app = app
        self._paths = {path, path.rstrip("/") + "/", path.rstrip("/") or "/"}
        self._paths |= {path.rstrip("/") + "/capabilities", path.rstrip("/") + "/capabilities/"}
        self._below = (path.rstrip("/") + "/") if routes else None

    def _answers(self, scope: Scope) -> bool:
        path = str(scope.get("path"))
        if path in self._paths:
            return True
        # With a run log, the routes of durable runs below PATH too.
        below = self._below
        return below is not None and path.startswith(below) and parse_route(scope) is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._answers(scope):
            body = json.dumps(
                {"code": "NOT_FOUND", "message": f"no agent at {scope.get('path')!r}"}
            ).encode()
            headers = [(b"content-type", b"application/json"), (b"vary", b"Accept")]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)
