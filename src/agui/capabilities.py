"""What an agent declares it can do (`AgentCapabilities`), in the AG-UI 1.0 shape.

AG-UI defines the shape but no route to fetch it: an application may serve it where it likes.
Every field is optional and absent means undeclared; the event stream stays authoritative. A
flag is a JSON boolean and nothing else (`"yes"` and `1` are refused, as the official client's
schema refuses them), and a limit an integer a JavaScript number holds exactly.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, JsonValue, StrictBool

from agui._protocol.model import Opt, WireModel
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

    streaming: Opt[StrictBool] = None
    websocket: Opt[StrictBool] = None
    http_binary: Opt[StrictBool] = None
    push_notifications: Opt[StrictBool] = None
    resumable: Opt[StrictBool] = None


class ToolsCapabilities(WireModel, frozen=True):
    """The agent's own tools and how it calls tools.

    Examples:
        >>> ToolsCapabilities(supported=True, client_provided=True).model_dump_json()
        '{"supported":true,"clientProvided":true}'
    """

    supported: Opt[StrictBool] = None
    items: Opt[list[Tool]] = None
    parallel_calls: Opt[StrictBool] = None
    client_provided: Opt[StrictBool] = None


class OutputCapabilities(WireModel, frozen=True):
    """What the agent can produce.

    Examples:
        >>> OutputCapabilities(supported_mime_types=["text/plain"]).supported_mime_types
        ['text/plain']
    """

    structured_output: Opt[StrictBool] = None
    supported_mime_types: Opt[list[str]] = None


class StateCapabilities(WireModel, frozen=True):
    """How the agent shares state.

    Examples:
        >>> StateCapabilities(snapshots=True, deltas=True).model_dump_json()
        '{"snapshots":true,"deltas":true}'
    """

    snapshots: Opt[StrictBool] = None
    deltas: Opt[StrictBool] = None
    memory: Opt[StrictBool] = None
    persistent_state: Opt[StrictBool] = None


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

    supported: Opt[StrictBool] = None
    delegation: Opt[StrictBool] = None
    handoffs: Opt[StrictBool] = None
    subagents: Opt[list[SubagentInfo]] = None


class ReasoningCapabilities(WireModel, frozen=True):
    """Whether the agent shows its reasoning.

    Examples:
        >>> ReasoningCapabilities(streaming=True).streaming
        True
    """

    supported: Opt[StrictBool] = None
    streaming: Opt[StrictBool] = None
    encrypted: Opt[StrictBool] = None


class MultimodalInputCapabilities(WireModel, frozen=True):
    """Media the agent accepts.

    Examples:
        >>> MultimodalInputCapabilities(image=True).image
        True
    """

    image: Opt[StrictBool] = None
    audio: Opt[StrictBool] = None
    video: Opt[StrictBool] = None
    pdf: Opt[StrictBool] = None
    file: Opt[StrictBool] = None


class MultimodalOutputCapabilities(WireModel, frozen=True):
    """Media the agent produces.

    Examples:
        >>> MultimodalOutputCapabilities(audio=False).audio
        False
    """

    image: Opt[StrictBool] = None
    audio: Opt[StrictBool] = None


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

    code_execution: Opt[StrictBool] = None
    sandboxed: Opt[StrictBool] = None
    max_iterations: Opt[_LIMIT] = None
    max_execution_time: Opt[_LIMIT] = None


class HumanInTheLoopCapabilities(WireModel, frozen=True):
    """Approvals, interrupts and feedback.

    Examples:
        >>> HumanInTheLoopCapabilities(approvals=True, interrupts=True).model_dump_json()
        '{"approvals":true,"interrupts":true}'
    """

    supported: Opt[StrictBool] = None
    approvals: Opt[StrictBool] = None
    interventions: Opt[StrictBool] = None
    feedback: Opt[StrictBool] = None
    interrupts: Opt[StrictBool] = None
    approve_with_edits: Opt[StrictBool] = None


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
