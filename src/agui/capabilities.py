"""What an agent declares it can do (`AgentCapabilities`), in the AG-UI 1.0 shape.

AG-UI defines the shape but no route to fetch it: an application may serve it where it likes.
Every field is optional and absent means undeclared; the event stream stays authoritative.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, JsonValue

from agui._model import Opt, WireModel
from agui.messages import JsonObject
from agui.types import Tool

__all__ = [
    "AgentCapabilities",
    "ExecutionCapabilities",
    "HumanInTheLoopCapabilities",
    "IdentityCapabilities",
    "MultiAgentCapabilities",
    "MultimodalCapabilities",
    "MultimodalInputCapabilities",
    "MultimodalOutputCapabilities",
    "OutputCapabilities",
    "ReasoningCapabilities",
    "StateCapabilities",
    "SubagentInfo",
    "ToolsCapabilities",
    "TransportCapabilities",
]

# The 1.0 schema's bounds: a count or a duration in ms that JavaScript holds exactly.
_LIMIT = Annotated[int, Field(strict=True, ge=0, le=2**53 - 1)]


class IdentityCapabilities(WireModel, frozen=True):
    """Who the agent is.

    Examples:
        >>> IdentityCapabilities(name="travel").model_dump_json()
        '{"name":"travel"}'
    """

    name: Opt[str] = None
    type: Opt[str] = None
    description: Opt[str] = None
    version: Opt[str] = None
    provider: Opt[str] = None
    documentation_url: Opt[str] = None
    metadata: Opt[JsonObject] = None


class TransportCapabilities(WireModel, frozen=True):
    """How the agent can be reached.

    Examples:
        >>> TransportCapabilities(streaming=True).streaming
        True
    """

    streaming: Opt[bool] = None
    websocket: Opt[bool] = None
    http_binary: Opt[bool] = None
    push_notifications: Opt[bool] = None
    resumable: Opt[bool] = None


class ToolsCapabilities(WireModel, frozen=True):
    """The agent's own tools and how it calls tools.

    Examples:
        >>> ToolsCapabilities(supported=True, client_provided=True).model_dump_json()
        '{"supported":true,"clientProvided":true}'
    """

    supported: Opt[bool] = None
    items: Opt[list[Tool]] = None
    parallel_calls: Opt[bool] = None
    client_provided: Opt[bool] = None


class OutputCapabilities(WireModel, frozen=True):
    """What the agent can produce.

    Examples:
        >>> OutputCapabilities(supported_mime_types=["text/plain"]).supported_mime_types
        ['text/plain']
    """

    structured_output: Opt[bool] = None
    supported_mime_types: Opt[list[str]] = None


class StateCapabilities(WireModel, frozen=True):
    """How the agent shares state.

    Examples:
        >>> StateCapabilities(snapshots=True, deltas=True).model_dump_json()
        '{"snapshots":true,"deltas":true}'
    """

    snapshots: Opt[bool] = None
    deltas: Opt[bool] = None
    memory: Opt[bool] = None
    persistent_state: Opt[bool] = None


class SubagentInfo(WireModel, frozen=True):
    """A subagent the agent may delegate to.

    Examples:
        >>> SubagentInfo(name="researcher").name
        'researcher'
    """

    name: str
    description: Opt[str] = None


class MultiAgentCapabilities(WireModel, frozen=True):
    """Delegation, handoffs and subagents.

    Examples:
        >>> MultiAgentCapabilities(subagents=[SubagentInfo(name="r")]).model_dump_json()
        '{"subagents":[{"name":"r"}]}'
    """

    supported: Opt[bool] = None
    delegation: Opt[bool] = None
    handoffs: Opt[bool] = None
    subagents: Opt[list[SubagentInfo]] = None


class ReasoningCapabilities(WireModel, frozen=True):
    """Whether the agent shows its reasoning.

    Examples:
        >>> ReasoningCapabilities(streaming=True).streaming
        True
    """

    supported: Opt[bool] = None
    streaming: Opt[bool] = None
    encrypted: Opt[bool] = None


class MultimodalInputCapabilities(WireModel, frozen=True):
    """Media the agent accepts.

    Examples:
        >>> MultimodalInputCapabilities(image=True).image
        True
    """

    image: Opt[bool] = None
    audio: Opt[bool] = None
    video: Opt[bool] = None
    pdf: Opt[bool] = None
    file: Opt[bool] = None


class MultimodalOutputCapabilities(WireModel, frozen=True):
    """Media the agent produces.

    Examples:
        >>> MultimodalOutputCapabilities(audio=False).audio
        False
    """

    image: Opt[bool] = None
    audio: Opt[bool] = None


class MultimodalCapabilities(WireModel, frozen=True):
    """Media in and out.

    Examples:
        >>> MultimodalCapabilities(input=MultimodalInputCapabilities(pdf=True)).model_dump_json()
        '{"input":{"pdf":true}}'
    """

    input: Opt[MultimodalInputCapabilities] = None
    output: Opt[MultimodalOutputCapabilities] = None


class ExecutionCapabilities(WireModel, frozen=True):
    """Limits and sandboxing of execution; `max_execution_time` is in milliseconds.

    Both limits are integers from 0 to 2**53 - 1, as the 1.0 schema bounds them.

    Examples:
        >>> ExecutionCapabilities(max_iterations=8).max_iterations
        8
    """

    code_execution: Opt[bool] = None
    sandboxed: Opt[bool] = None
    max_iterations: Opt[_LIMIT] = None
    max_execution_time: Opt[_LIMIT] = None


class HumanInTheLoopCapabilities(WireModel, frozen=True):
    """Approvals, interrupts and feedback.

    Examples:
        >>> HumanInTheLoopCapabilities(approvals=True, interrupts=True).model_dump_json()
        '{"approvals":true,"interrupts":true}'
    """

    supported: Opt[bool] = None
    approvals: Opt[bool] = None
    interventions: Opt[bool] = None
    feedback: Opt[bool] = None
    interrupts: Opt[bool] = None
    approve_with_edits: Opt[bool] = None


class AgentCapabilities(WireModel, frozen=True):
    """Everything an agent may declare about itself; `custom` is open.

    Examples:
        >>> caps = AgentCapabilities(state=StateCapabilities(deltas=True), custom={"x": None})
        >>> caps.model_dump_json()
        '{"state":{"deltas":true},"custom":{"x":null}}'
    """

    identity: Opt[IdentityCapabilities] = None
    transport: Opt[TransportCapabilities] = None
    tools: Opt[ToolsCapabilities] = None
    output: Opt[OutputCapabilities] = None
    state: Opt[StateCapabilities] = None
    multi_agent: Opt[MultiAgentCapabilities] = None
    reasoning: Opt[ReasoningCapabilities] = None
    multimodal: Opt[MultimodalCapabilities] = None
    execution: Opt[ExecutionCapabilities] = None
    human_in_the_loop: Opt[HumanInTheLoopCapabilities] = None
    custom: Opt[dict[str, JsonValue]] = None
