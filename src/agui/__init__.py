"""agui: a server-side SDK for the AG-UI protocol.

The names a user needs are re-exported here; each lives in the module named for its concept.
"""

from __future__ import annotations

from agui import patch, testing
from agui.agents.loop import ToolLoopAgent
from agui.agents.tools import BackendTool, Toolbox, tool
from agui.asgi import asgi_app
from agui.cancellation import CancellationToken
from agui.context import RunContext
from agui.errors import (
    AgentError,
    AguiError,
    Cancelled,
    DecodeError,
    InvalidArguments,
    InvalidInput,
    MalformedEvent,
    PatchError,
    ProtocolViolation,
    StateError,
    UnknownEventType,
    UsageError,
)
from agui.events import Event, EventType
from agui.handles import MessageHandle, ReasoningHandle, StepHandle, ToolCallHandle
from agui.messages import Message
from agui.runner import PROTOCOL_VERSION, Agent, run
from agui.sink import EventReceiver
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
from agui.wire import UnknownMemberWarning, parse_event, parse_input

__all__ = [
    "PROTOCOL_VERSION",
    "Agent",
    "AgentError",
    "AguiError",
    "BackendTool",
    "CancellationToken",
    "Cancelled",
    "Context",
    "DecodeError",
    "Event",
    "EventReceiver",
    "EventType",
    "Interrupt",
    "InvalidArguments",
    "InvalidInput",
    "MalformedEvent",
    "Message",
    "MessageHandle",
    "PatchError",
    "ProtocolViolation",
    "ReasoningHandle",
    "ResumeEntry",
    "RunAgentInput",
    "RunContext",
    "RunOutcome",
    "StateError",
    "StepHandle",
    "TokenUsage",
    "Tool",
    "ToolCallHandle",
    "ToolLoopAgent",
    "Toolbox",
    "UnknownEventType",
    "UnknownMemberWarning",
    "UsageError",
    "__version__",
    "asgi_app",
    "encode_sse",
    "parse_event",
    "parse_input",
    "patch",
    "run",
    "testing",
    "tool",
]

__version__ = "0.1.0"
