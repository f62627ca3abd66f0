"""agui: a server-side SDK for the AG-UI protocol.

The top level is the core a user needs to write and serve an agent: the run context and its
handles, the run input and the events, the run driver, the endpoint and the three errors a
caller meets most. Everything else lives in the module named for its concept and is imported
from there: the tool loop in `agui.agents`, every other error in `agui.errors`, the testing kit
in `agui.testing`, JSON Patch in `agui.patch`, the client in `agui.client`.

`import agui` loads nothing but this module: each name is imported from its home module on
first use, through the module `__getattr__` below (PEP 562), and kept. A process pays for what
it touches: `agui --version` for a constant, a process that only builds events never for the
HTTP layer or the testing kit, and `from agui import RunContext` for the run core alone.

The package is built in layers. Data flows one way: a run input is read, a run context drives
the agent and sends its events through the emit core (transformers, verifier, queue), an
encoder turns them into SSE or protobuf, and the HTTP layer sends them. A module imports only
from its own layer and the layers under it, and nothing imports its way back up (the layout
test reads this map and holds the code to it). A public package is one layer with everything
in it; a private package (`_util`, `_protocol`, `_emit`) holds code of several layers, so each
of its modules is placed by name. The layers, bottom first:

1. errors: `agui._util`, `agui._util.numbers`, `agui._util.tasks`, `agui._util.wording`,
   `agui._protocol`, `agui._protocol.rules`, `agui.errors`. The exception tree, the rule names
   it refers to, and leaf utilities.
2. wire models: `agui._protocol.model`, `agui.messages`, `agui.types`, `agui.events`,
   `agui.capabilities`, `agui._emit`, `agui._emit.record`. The pydantic models of events,
   messages, run input and capabilities, and the queue records (an event kept compact until
   it is read).
3. reading and checking: `agui._protocol.json_value`, `agui._protocol.json_text`,
   `agui._protocol.nulls`, `agui._protocol.text`, `agui._protocol.chunk_lanes`,
   `agui._protocol.message_thread`, `agui.wire`, `agui.patch`, `agui.verify`, `agui.fold`.
   JSON in, JSON Patch, the ordering verifier, and the fold (a stream applied as a client
   applies it). None of them runs anything.
4. the run: `agui._emit.block`, `agui._emit.numbering`, `agui._emit.verifier`,
   `agui._emit.receiver`, `agui._emit.pipeline`, `agui._emit.attributed`, `agui._emit.joined`,
   `agui.cancellation`, `agui.transform`, `agui.sink`, `agui.state`, `agui.context`,
   `agui.handles`, `agui.runner`. The context and its handles, the emit core (its pipeline,
   verifier and queue, a subagent's view of it, a run's deltas joined for its thread),
   cancellation, state publishing, the run driver.
5. encoding: `agui.sse`, `agui.proto`, `agui._emit.frames`. SSE and the protobuf binding, which
   read what the run produced, and the emit core's writer of a run's queue as it is.
6. agents: `agui.agents`. The tool loop and its models, built on the run context alone.
7. run logs: `agui.runs`. Where durable runs keep their frames, leases and threads.
8. HTTP: `agui.asgi`. The ASGI endpoint: admission, streaming, the inspector page.
9. consumers: `agui.client`, `agui.testing`. They drive or read the layers below.
10. bridges: `agui.bridges`. Agents written in other frameworks, served as agui agents.
11. command line: `agui.cli`, which uses all of the above.
12. facade: `agui`, this module, which re-exports the core.

Examples:
    >>> import agui
    >>> agui.RunAgentInput(thread_id="t", run_id="r").run_id
    'r'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agui import patch as patch
    from agui import testing as testing
    from agui.asgi import asgi_app
    from agui.cancellation import CancellationToken
    from agui.context import RunContext
    from agui.errors import (
        AgentError,
        AguiError,
        ProtocolViolation,
        UnknownMemberWarning,
        UsageError,
    )
    from agui.events import Event, EventType
    from agui.handles import MessageHandle, ReasoningHandle, StepHandle, ToolCallHandle
    from agui.messages import Message
    from agui.runner import PROTOCOL_VERSION, Agent, run
    from agui.sse import encode_sse
    from agui.types import (
        Context,
        Interrupt,
        ResumeEntry,
        RunAgentInput,
        RunOutcome,
        TokenUsage,
        Tool,
    )
    from agui.wire import parse_event, parse_input

__all__ = [
    "PROTOCOL_VERSION",
    "Agent",
    "AgentError",
    "AguiError",
    "CancellationToken",
    "Context",
    "Event",
    "EventType",
    "Interrupt",
    "Message",
    "MessageHandle",
    "ProtocolViolation",
    "ReasoningHandle",
    "ResumeEntry",
    "RunAgentInput",
    "RunContext",
    "RunOutcome",
    "StepHandle",
    "TokenUsage",
    "Tool",
    "ToolCallHandle",
    "UnknownMemberWarning",
    "UsageError",
    "__version__",
    "asgi_app",
    "encode_sse",
    "parse_event",
    "parse_input",
    "run",
]

__version__ = "0.1.0"

# name -> (module, attribute); attribute None means the module itself.
_LAZY: dict[str, tuple[str, str | None]] = {
    "PROTOCOL_VERSION": ("agui.runner", "PROTOCOL_VERSION"),
    "Agent": ("agui.runner", "Agent"),
    "AgentError": ("agui.errors", "AgentError"),
    "AguiError": ("agui.errors", "AguiError"),
    "CancellationToken": ("agui.cancellation", "CancellationToken"),
    "Context": ("agui.types", "Context"),
    "Event": ("agui.events", "Event"),
    "EventType": ("agui.events", "EventType"),
    "Interrupt": ("agui.types", "Interrupt"),
    "Message": ("agui.messages", "Message"),
    "MessageHandle": ("agui.handles", "MessageHandle"),
    "ProtocolViolation": ("agui.errors", "ProtocolViolation"),
    "ReasoningHandle": ("agui.handles", "ReasoningHandle"),
    "ResumeEntry": ("agui.types", "ResumeEntry"),
    "RunAgentInput": ("agui.types", "RunAgentInput"),
    "RunContext": ("agui.context", "RunContext"),
    "RunOutcome": ("agui.types", "RunOutcome"),
    "StepHandle": ("agui.handles", "StepHandle"),
    "TokenUsage": ("agui.types", "TokenUsage"),
    "Tool": ("agui.types", "Tool"),
    "ToolCallHandle": ("agui.handles", "ToolCallHandle"),
    "UnknownMemberWarning": ("agui.errors", "UnknownMemberWarning"),
    "UsageError": ("agui.errors", "UsageError"),
    "asgi_app": ("agui.asgi", "asgi_app"),
    "encode_sse": ("agui.sse", "encode_sse"),
    "parse_event": ("agui.wire", "parse_event"),
    "parse_input": ("agui.wire", "parse_input"),
    "patch": ("agui.patch", None),
    "run": ("agui.runner", "run"),
    "testing": ("agui.testing", None),
}


def __getattr__(name: str) -> object:
    """Import a top-level name from its home module on first use, and keep it."""
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        message = f"module 'agui' has no attribute {name!r}"
        raise AttributeError(message) from None
    module = importlib.import_module(module_name)
    value: object = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
