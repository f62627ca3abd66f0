"""Every feature of the AG-UI dojo, one POST route each, in one ASGI application.

The dojo is AG-UI's feature gallery: a Next.js app with one page per feature, each page a
CopilotKit chat on an agent named as the feature. This application serves those agents, one
agui endpoint per route, with the tool names and state shapes the pages use:

| route | the page | the agent |
|---|---|---|
| `/agentic_chat` | frontend tool `change_background` | text; leaves the page's calls to it |
| `/backend_tool_rendering` | renders `get_weather` as a card | runs `get_weather` |
| `/human_in_the_loop` | `useHumanInTheLoop` tool | proposes steps, acts on kept ones |
| `/agentic_generative_ui` | state `steps` | completes the steps, a delta each |
| `/tool_based_generative_ui` | frontend tool `generate_haiku` | calls it |
| `/shared_state` | state `recipe` | reads it in its prompt, `generate_recipe` |
| `/predictive_state_updates` | state `document`, `confirm_changes` | streams it into state |
| `/agentic_chat_reasoning` | "Thought for ..." | reasoning, then text |
| `/agentic_chat_multimodal` | image attachments | says what it was given |
| `/interrupt` | `useInterrupt` time picker | interrupts `schedule_meeting` |
| `/a2ui_fixed_schema` | A2UI surface | `search_flights` returns A2UI v0.9 |

Every agent runs on a scripted model unless `AGUI_MODEL_BASE_URL` names an OpenAI-compatible
endpoint (see `examples.dojo.models`). Each route is its own `agui.asgi_app`; `Routes` sends
each request to the endpoint its first path segment names (`/shared_state`,
`/shared_state/capabilities`), answers anything else with 404, and on shutdown closes every
endpoint. Point the dojo's integration, or any CopilotKit runtime, at
`http://127.0.0.1:8000/<feature>`.

Run it (from the repository root):

    agui serve examples/dojo/app.py:app

Each agent is also this module's attribute of its route's name, to serve one alone with what
its route adds (its state type, its transformers) given again:
`agui serve examples.dojo.app:agentic_chat`, `agui serve examples.dojo.app:agentic_generative_ui
--state examples.dojo.progress:Plan`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import agui
from agui.asgi import AguiApp, Receive, Scope, Send
from examples.dojo import chat, document, flights, frontend, meeting, progress, recipe

agentic_chat = chat.agentic_chat()
backend_tool_rendering = chat.backend_tool_rendering()
human_in_the_loop = frontend.human_in_the_loop()
agentic_generative_ui = progress.agentic_generative_ui()
tool_based_generative_ui = frontend.tool_based_generative_ui()
shared_state = recipe.shared_state()
predictive_state_updates = document.predictive_state_updates()
agentic_chat_reasoning = chat.agentic_chat_reasoning()
agentic_chat_multimodal = chat.agentic_chat_multimodal()
interrupt = meeting.TimePicker()
a2ui_fixed_schema = flights.a2ui_fixed_schema()


def endpoints() -> dict[str, AguiApp[Any]]:
    """One agui endpoint per dojo feature, by route name.

    Examples:
        >>> list(endpoints())[:3]
        ['agentic_chat', 'backend_tool_rendering', 'human_in_the_loop']
    """
    return {
        "agentic_chat": agui.asgi_app(agentic_chat),
        "backend_tool_rendering": agui.asgi_app(backend_tool_rendering),
        "human_in_the_loop": agui.asgi_app(human_in_the_loop),
        "agentic_generative_ui": agui.asgi_app(agentic_generative_ui, state=progress.Plan),
        "tool_based_generative_ui": agui.asgi_app(tool_based_generative_ui),
        "shared_state": agui.asgi_app(shared_state, state=recipe.Kitchen),
        "predictive_state_updates": agui.asgi_app(
            predictive_state_updates,
            state=document.Draft,
            transformers=lambda: [document.document_arguments()],
        ),
        "agentic_chat_reasoning": agui.asgi_app(agentic_chat_reasoning),
        "agentic_chat_multimodal": agui.asgi_app(agentic_chat_multimodal),
        "interrupt": agui.asgi_app(interrupt),
        "a2ui_fixed_schema": agui.asgi_app(a2ui_fixed_schema),
    }


class Routes:
    """An ASGI application that sends each request to the endpoint its first path segment names.

    Examples:
        >>> routes = Routes(endpoints())
        >>> routes.endpoint_for("/shared_state/capabilities") is routes.endpoints["shared_state"]
        True
        >>> routes.endpoint_for("/nowhere") is None
        True
    """

    def __init__(self, endpoints: Mapping[str, AguiApp[Any]]) -> None:
        self.endpoints = dict(endpoints)

    def endpoint_for(self, path: str) -> AguiApp[Any] | None:
        """The endpoint that answers `path`, or `None`."""
        return self.endpoints.get(path.strip("/").partition("/")[0])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ASGI connection: lifespan here, a request at its feature's endpoint."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        endpoint = self.endpoint_for(str(scope.get("path", "")))
        if endpoint is not None:
            await endpoint(scope, receive, send)
        elif scope["type"] == "http":
            await self._not_found(scope, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def aclose(self) -> None:
        """Cancel every endpoint's runs in flight and wait for their streams to end.

        `agui serve` awaits it before it shuts down, as it awaits an agui endpoint's.
        """
        for endpoint in self.endpoints.values():
            await endpoint.aclose()

    async def _not_found(self, scope: Scope, send: Send) -> None:
        routes = ", ".join(f"/{name}" for name in self.endpoints)
        message = f"no dojo feature at {scope.get('path')!r}; the features are at {routes}"
        body = json.dumps({"code": "NOT_FOUND", "message": message}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 404, "headers": headers})
        await send({"type": "http.response.body", "body": body})


app: Callable[[Scope, Receive, Send], Any] = Routes(endpoints())
"""The dojo: `agui serve examples/dojo/app.py:app`, or `uvicorn examples.dojo.app:app`."""
