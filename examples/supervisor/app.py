"""A supervisor and a researcher: one agent hands a question to another, and the UI sees both.

This is the multi-agent case. The supervisor is a `ToolLoopAgent` whose one tool is the
researcher (`agui.agents.subagent_tool`): when its model calls `ask_researcher`, the researcher,
another `ToolLoopAgent` with its own instructions and its own tool (`look_up_project`), runs as a
subagent inside that call. The stream says so in AG-UI 1.0's words: `SUBAGENT_STARTED` (naming
the call as its parent), every event of the researcher's carrying its `subagentRunId`, then
`SUBAGENT_FINISHED` with its answer as the result, which the supervisor's model reads and
answers from. A 1.0 UI groups the researcher's messages under it; a pre-1.0 client (such as the
one inside CopilotKit's runtime) gets the same run with the researcher's messages as the
supervisor's, since the endpoint downgrades the stream for it.

The notes are fake but fixed: a few facts about a company's projects, which no model knows, so
a real model has to ask its researcher too. Both agents run on a `ScriptedModel` unless an
OpenAI-compatible endpoint is configured, as for the travel example (`AGUI_MODEL_BASE_URL`,
`AGUI_MODEL`, `AGUI_API_KEY`), in which case both use it. A small local model (a 1.5B Qwen)
delegates only some of the time, and sometimes answers from its own invention instead: the
stream is right either way, the answer is the model's.

The scripted supervisor delegates the user's question as it stands, then answers with what the
researcher found. The scripted researcher searches its notes for the question's words, then
answers from the notes it found.

Run it (from the repository root):

    agui serve examples/supervisor/app.py:agent
    agui watch http://127.0.0.1:8000/ -m "Who leads Project Atlas?"
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence

from pydantic import JsonValue

import agui
from agui.agents import ToolLoopAgent, subagent_tool, tool
from agui.agents.models import (
    Call,
    ChatMessage,
    ChatModel,
    OpenAIModel,
    ScriptedModel,
    Turn,
    TurnFunction,
)
from agui.asgi import AguiApp

QUESTION = "When does Project Aurora launch, and who leads it?"
"""A question the notes answer."""

SUPERVISOR_INSTRUCTIONS = (
    "Use ask_researcher to look up the company's projects, then answer from what it returns."
)
RESEARCHER_INSTRUCTIONS = (
    "Use look_up_project to look up a project in the company's project notes, then answer "
    "from what it returns, in one or two sentences. Say so when the notes do not answer."
)
STREAM_DELAY = 0.01
"""Seconds the scripted model waits before each piece it streams, so streaming can be seen."""

NOTES = {
    "aurora": "Project Aurora launches on 14 March 2027 and is led by Dana Reyes.",
    "atlas": "Project Atlas was paused in May 2026; Omar Haddad led it until then.",
    "orion": "Project Orion ships the new billing system; its budget is 2.4 million euros.",
    "vega": "Project Vega is a research prototype with a team of four, led by Mei Tanaka.",
}


@tool
def look_up_project(project: str) -> list[str]:
    """Look up a project in the company's project notes; returns what the notes say about it.

    Examples:
        >>> look_up_project("Project Aurora")
        ['Project Aurora launches on 14 March 2027 and is led by Dana Reyes.']
    """
    words = set(re.findall(r"[a-z]+", project.lower()))
    return [note for key, note in NOTES.items() if key in words]


def _last_user(messages: Sequence[ChatMessage]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


def _answer(messages: Sequence[ChatMessage]) -> str | None:
    """The content of the last message when it is a tool result (the model's calls answered)."""
    last = messages[-1] if messages else None
    return last.content if last is not None and last.role == "tool" else None


def researcher_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted researcher: search the notes for the question, then answer from them.

    Examples:
        >>> [call.arguments for call in researcher_turn([ChatMessage.user("Vega?")]).calls]
        [{'project': 'Vega?'}]
    """
    found = _answer(messages)
    if found is None:
        return Turn.tool_calls(Call("look_up_project", {"project": _last_user(messages)}))
    notes = [str(note) for note in _json_list(found)]
    return Turn.text(" ".join(notes) if notes else "My notes say nothing about that, sorry.")


def supervisor_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted supervisor: hand the question to the researcher, then pass its answer on.

    Examples:
        >>> turn = supervisor_turn([ChatMessage.user("Who leads Project Vega?")])
        >>> [(call.name, call.arguments) for call in turn.calls]
        [('ask_researcher', {'task': 'Who leads Project Vega?'})]
    """
    found = _answer(messages)
    if found is None:
        return Turn.tool_calls(Call("ask_researcher", {"task": _last_user(messages)}))
    return Turn.text(f"Here is what my researcher found: {found}")


def _json_list(text: str) -> list[JsonValue]:
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def build_model(scripted: TurnFunction, env: Mapping[str, str] | None = None) -> ChatModel:
    """The scripted model playing `scripted`, or an `OpenAIModel` when an endpoint is set.

    Examples:
        >>> type(build_model(supervisor_turn, {})).__name__
        'ScriptedModel'
    """
    env = os.environ if env is None else env
    base_url = env.get("AGUI_MODEL_BASE_URL", "").strip()
    if not base_url:
        return ScriptedModel(scripted, delay=STREAM_DELAY)
    model = env.get("AGUI_MODEL", "").strip()
    if not model:
        message = (
            "AGUI_MODEL_BASE_URL is set but AGUI_MODEL is not: name the model to use, "
            "such as AGUI_MODEL=gpt-4o-mini (or unset AGUI_MODEL_BASE_URL for the scripted model)"
        )
        raise RuntimeError(message)
    return OpenAIModel(model, base_url=base_url, api_key=env.get("AGUI_API_KEY"))


def build_researcher(model: ChatModel | None = None) -> ToolLoopAgent:
    """The researcher: its own instructions and its one tool, on `model` or its scripted one.

    Examples:
        >>> build_researcher().toolbox.specs()[0].name
        'look_up_project'
    """
    return ToolLoopAgent(
        model if model is not None else build_model(researcher_turn),
        tools=[look_up_project],
        instructions=RESEARCHER_INSTRUCTIONS,
    )


def build_agent(
    model: ChatModel | None = None, researcher: ToolLoopAgent | None = None
) -> ToolLoopAgent:
    """The supervisor, whose one tool is the researcher (run as a subagent when called).

    Examples:
        >>> build_agent().toolbox.specs()[0].name
        'ask_researcher'
    """
    ask_researcher = subagent_tool(
        researcher if researcher is not None else build_researcher(),
        name="researcher",
        description=(
            "Look up a project in the company's project notes; returns what the notes say about it."
        ),
    )
    return ToolLoopAgent(
        model if model is not None else build_model(supervisor_turn),
        tools=[ask_researcher],
        instructions=SUPERVISOR_INSTRUCTIONS,
    )


agent = build_agent()
"""The agent `agui serve examples/supervisor/app.py:agent` serves."""

app: AguiApp[JsonValue] = agui.asgi_app(agent)
"""The same agent as an ASGI application: `uvicorn examples.supervisor.app:app`."""
