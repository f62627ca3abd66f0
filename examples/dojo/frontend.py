"""The dojo's pages whose tools run in the browser: human in the loop and tool-based generative UI.

Both pages register a tool of their own and the agent leaves its calls to them: the run ends
with the call pending (`START`, `ARGS`, `END`, no result), the page renders it, and its answer
comes back as a tool message in the next request, which the agent then reads.

- **human_in_the_loop**: `generate_task_steps {steps: [{description, status: "enabled"}]}`,
  registered with `useHumanInTheLoop`: the user unticks the steps they do not want and confirms;
  the agent carries on with the ones they kept.
- **tool_based_generative_ui**: `generate_haiku {japanese[3], english[3], image_name,
  gradient}`, a frontend tool the page draws as a card.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import JsonValue

from agui.agents import ToolLoopAgent
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from examples.dojo.models import answered, build_model, last_user_text, read_json

# -- human_in_the_loop -------------------------------------------------------------------------

PLANNER_INSTRUCTIONS = (
    "You are a planner. For any task, call generate_task_steps with 5 to 10 short imperative "
    'steps, each {"description": ..., "status": "enabled"}, and wait for the user to choose. '
    "Then say in one sentence that you are doing the steps they kept."
)
_TASK = re.compile(r"^(?:please\s+)?(?:plan|help me|i want to|let'?s)\s+(?:to\s+)?", re.IGNORECASE)


def plan_steps(task: str) -> list[str]:
    """Five steps for a task, in the order they are done.

    Examples:
        >>> plan_steps("go to Mars")[0]
        'Research go to Mars'
    """
    return [
        f"Research {task}",
        "Set a budget",
        "Gather what is needed",
        "Book the dates",
        f"Start: {task}",
    ]


def planner_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted planner: propose steps through the page, then act on the ones kept.

    Examples:
        >>> turn = planner_turn([ChatMessage.user("Plan a trip to Mars.")])
        >>> turn.calls[0].arguments["steps"][0]
        {'description': 'Research a trip to Mars', 'status': 'enabled'}
    """
    result = answered(messages)
    if result is not None:
        kept = _kept_steps(read_json(result.content))
        if not kept:
            return Turn.text("Understood: I will not do any of the steps.")
        return Turn.text(f"On it: doing {len(kept)} steps: " + "; ".join(kept) + ".")
    task = _TASK.sub("", last_user_text(messages).strip()).rstrip(".!?") or "the task"
    steps: list[JsonValue] = [
        {"description": step, "status": "enabled"} for step in plan_steps(task)
    ]
    return Turn.tool_calls(Call("generate_task_steps", {"steps": steps}))


def _kept_steps(answer: JsonValue) -> list[str]:
    """The descriptions of the steps the user kept, from the page's answer."""
    if not isinstance(answer, dict) or answer.get("accepted") is False:
        return []
    steps = answer.get("steps")
    if not isinstance(steps, list):
        return []
    return [
        str(step.get("description"))
        for step in steps
        if isinstance(step, dict) and step.get("status", "enabled") == "enabled"
    ]


def human_in_the_loop(model: ChatModel | None = None) -> ToolLoopAgent:
    """The human-in-the-loop route's agent: `generate_task_steps` is the page's.

    Examples:
        >>> human_in_the_loop().toolbox.specs()
        []
    """
    return ToolLoopAgent(model or build_model(planner_turn), instructions=PLANNER_INSTRUCTIONS)


# -- tool_based_generative_ui ------------------------------------------------------------------

HAIKU_INSTRUCTIONS = (
    "You write haiku. For any topic call generate_haiku with three Japanese lines, their three "
    "English translations, an image_name from the page's list and a CSS gradient; afterwards "
    "say one short sentence."
)
HAIKUS: dict[str, dict[str, JsonValue]] = {
    "nature": {
        "japanese": ["古池や", "蛙飛び込む", "水の音"],
        "english": ["An old silent pond", "A frog jumps into the pond", "Splash! Silence again"],
        "image_name": "Mount_Fuji_Lake_Reflection_Cherry_Blossoms_Sakura_Spring.jpg",
        "gradient": "linear-gradient(135deg, #a8e063 0%, #56ab2f 100%)",
    },
    "sea": {
        "japanese": ["荒海や", "佐渡によこたふ", "天河"],
        "english": ["The rough sea", "Stretching toward Sado Island", "The Milky Way"],
        "image_name": "Itsukushima_Shrine_Miyajima_Floating_Torii_Gate_Sunset_Long_Exposure.jpg",
        "gradient": "linear-gradient(135deg, #2193b0 0%, #6dd5ed 100%)",
    },
}


def haiku_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted poet: a haiku through the page's card, then a sentence.

    Examples:
        >>> haiku_turn([ChatMessage.user("A haiku about the sea")]).calls[0].arguments["english"]
        ['The rough sea', 'Stretching toward Sado Island', 'The Milky Way']
    """
    if answered(messages) is not None:
        return Turn.text("Here is your haiku. I hope you like it!")
    text = last_user_text(messages).lower()
    topic = "sea" if re.search(r"\b(sea|ocean|wave|island)", text) else "nature"
    return Turn.tool_calls(Call("generate_haiku", HAIKUS[topic]))


def tool_based_generative_ui(model: ChatModel | None = None) -> ToolLoopAgent:
    """The tool-based generative UI route's agent: `generate_haiku` is the page's.

    Examples:
        >>> tool_based_generative_ui().toolbox.specs()
        []
    """
    return ToolLoopAgent(model or build_model(haiku_turn), instructions=HAIKU_INSTRUCTIONS)
