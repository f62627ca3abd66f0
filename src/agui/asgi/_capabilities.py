"""The capabilities route: `GET <path>/capabilities` answers what the agent declares it can do.

AG-UI 1.0 defines the shape of an agent's capabilities (`agui.capabilities`) but no route to
fetch them. agui serves them where the ADK serves them, next to the endpoint, so a client can
ask before it runs anything: CopilotKit's runtime lists them in its `/info` once its `HttpAgent`
reads them in `getCapabilities()`. What agui can know is derived: streaming always, interrupts
always (every run context can end a run with one), the binary transport when the protobuf
binding is offered, state snapshots and deltas with the state's JSON schema when the endpoint
has a state type, and a tool loop's backend tools. An application that knows more (its name,
its multimodal input) overrides the whole answer on `asgi_app`, with the model or a function of
the derived one.

The route is any path whose last segment is `capabilities`: the endpoint cannot know where it is
mounted, and a run is never posted to such a path. It answers GET (and HEAD) after the same
host, origin and authorization checks as a run; other methods get 405. With `capabilities=False`
on `asgi_app` the route answers 404, so an agent can keep what it can do to itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import JsonValue

from agui.asgi._admission import Refusal, Scope, Send
from agui.asgi._writer import try_send
from agui.capabilities import (
    AgentCapabilities,
    HumanInTheLoopCapabilities,
    StateCapabilities,
    ToolsCapabilities,
    TransportCapabilities,
)
from agui.state import state_adapter

if TYPE_CHECKING:
    from agui.types import Tool

__all__ = [
    "CapabilitiesSetting",
    "answer_capabilities",
    "derive",
    "is_capabilities_path",
    "not_found",
    "resolve",
]

CapabilitiesSetting = (
    AgentCapabilities | Callable[[AgentCapabilities], AgentCapabilities] | bool | None
)
"""`asgi_app(capabilities=...)`: the model, a function of the derived one, or `False` for none."""

_ALLOWS = "GET, HEAD"


def is_capabilities_path(scope: Scope) -> bool:
    """Whether a request is for the capabilities route: its path's last segment.

    Examples:
        >>> is_capabilities_path({"path": "/agent/capabilities"}), is_capabilities_path({})
        (True, False)
    """
    path: str = scope.get("path", "")
    return path.rstrip("/").rpartition("/")[2] == "capabilities"


def derive(agent: object, state: type[object] | None, *, protobuf: bool) -> AgentCapabilities:
    """What agui knows of an agent's capabilities: streaming, interrupts, state, protobuf, tools.

    Examples:
        >>> async def hello(ctx):
        ...     ctx.say("Hello!")
        >>> derive(hello, None, protobuf=False).model_dump_json()
        '{"transport":{"streaming":true},"humanInTheLoop":{"supported":true,"interrupts":true}}'
    """
    schema: dict[str, JsonValue] | None = None
    if state is not None:
        schema = state_adapter(state).json_schema()
    return AgentCapabilities(
        transport=TransportCapabilities(streaming=True, http_binary=True if protobuf else None),
        tools=_tools(agent),
        state=StateCapabilities(snapshots=True, deltas=True) if state is not None else None,
        human_in_the_loop=HumanInTheLoopCapabilities(supported=True, interrupts=True),
        custom={"stateSchema": schema} if schema is not None else None,
    )


def _tools(agent: object) -> ToolsCapabilities | None:
    # A tool loop's class is loaded only when an agent is one: the endpoint does not load the
    # agents layer for an agent that is a plain function.
    if "agui.agents.loop" not in sys.modules:
        return None
    from agui.agents.loop import ToolLoopAgent  # noqa: PLC0415 - see above

    if not isinstance(agent, ToolLoopAgent):
        return None
    items: list[Tool] = agent.toolbox.specs()
    # The loop also offers the model the tools the client sends with each run.
    return ToolsCapabilities(supported=True, items=items or None, client_provided=True)


def resolve(setting: CapabilitiesSetting, derived: AgentCapabilities) -> AgentCapabilities | None:
    """The capabilities to serve for a setting of `asgi_app`: `None` when the route is off.

    Examples:
        >>> derived = AgentCapabilities()
        >>> resolve(None, derived) is derived, resolve(False, derived)
        (True, None)
    """
    if setting is None or setting is True:
        return derived
    if setting is False:
        return None
    if isinstance(setting, AgentCapabilities):
        return setting
    return setting(derived)


def _check_method(method: str) -> None:
    if method not in ("GET", "HEAD"):
        message = f"this path serves the agent's capabilities on GET; {method} is not allowed"
        raise Refusal(405, "METHOD_NOT_ALLOWED", message, [("allow", _ALLOWS)])


def not_found() -> Refusal:
    """The 404 of the capabilities route on an endpoint that serves none."""
    message = (
        "this endpoint does not serve its agent's capabilities (asgi_app(capabilities=False)); "
        "POST a RunAgentInput to the endpoint itself to run the agent"
    )
    return Refusal(404, "NOT_FOUND", message)


async def answer_capabilities(
    send: Send,
    method: str,
    capabilities: AgentCapabilities,
    cors: list[tuple[bytes, bytes]],
) -> None:
    """Answer the route: the capabilities as AG-UI JSON (camelCase, nulls omitted), or 405."""
    _check_method(method)
    body = capabilities.model_dump_json().encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *cors,
    ]
    await try_send(send, {"type": "http.response.start", "status": 200, "headers": headers})
    await try_send(send, {"type": "http.response.body", "body": b"" if method == "HEAD" else body})
