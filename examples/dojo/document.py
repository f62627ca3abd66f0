"""The dojo's predictive state updates page: a document that fills in as the model writes it.

The page's editor shows the state's `document`. The model writes with `write_document_local
{document}`, and while that call's arguments stream, the document in the state grows with them
(`agui.transform.ToolArgsToState` reads the partial arguments and sends each longer text as a
delta), so the editor fills before the tool has even run. The tool then sets the document for
good, and the model asks the page to confirm with its `confirm_changes` tool, which the page
registers with `useHumanInTheLoop`: the run ends with that call pending, the user confirms or
rejects (`{"accepted": true | false}`), and the agent answers that.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from agui import RunContext
from agui.agents import ToolLoopAgent, tool
from agui.agents.dispatch import NativeDispatcher
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from agui.transform import ToolArgsToState
from examples.dojo.models import answered, build_model, last_user_text, read_json

INSTRUCTIONS = (
    "You write documents in Markdown. To write or change the document, call "
    "write_document_local with the whole new document; then call confirm_changes (no "
    "arguments) so the user can accept or reject it. After their answer, reply in one sentence."
)
STORY = (
    "# The dragon of Atlantis\n\n"
    "Once upon a time, a dragon named Atlantis lived beneath the waves. "
    "Every night she rose to count the stars, and every morning she sank back "
    "to tell the fish what she had seen."
)


class Draft(BaseModel):
    """The page's state: the document in its editor."""

    document: str = ""


def document_arguments() -> ToolArgsToState:
    """The transformer that streams `write_document_local`'s `document` into the state.

    Examples:
        >>> from agui import RunAgentInput
        >>> ctx, events = RunContext.new(
        ...     RunAgentInput(thread_id="t", run_id="r", state={"document": ""}),
        ...     transformers=[document_arguments()],
        ... )
        >>> with ctx.tool_call("write_document_local") as call:
        ...     call.args('{"document":"Once up')
        ...     call.args('on a time"}')
        >>> [e.delta[0].value for e in events.drain() if e.type == "STATE_DELTA"]
        ['Once up', 'Once upon a time']
    """
    return ToolArgsToState("write_document_local", "document", state=Draft)


@tool
def write_document_local(ctx: RunContext[Draft], document: str) -> str:
    """Write the whole document (Markdown); the user then confirms or rejects it."""
    ctx.state.document = document
    ctx.publish_state()
    return "The document is written; ask the user to confirm it with confirm_changes."


def document_turn(messages: Sequence[ChatMessage]) -> Turn:
    """The scripted writer: write the story, ask to confirm it, then answer the confirmation.

    Examples:
        >>> document_turn([ChatMessage.user("Write a story about a dragon")]).calls[0].name
        'write_document_local'
    """
    result = answered(messages)
    if result is None:
        return Turn.tool_calls(Call("write_document_local", {"document": _story(messages)}))
    if result.name == "write_document_local":
        return Turn.tool_calls(Call("confirm_changes"))
    answer = read_json(result.content)
    if isinstance(answer, dict) and answer.get("accepted") is True:
        return Turn.text("Great: the changes are in the document.")
    return Turn.text("Understood: I left the document as it was.")


def _story(messages: Sequence[ChatMessage]) -> str:
    text = last_user_text(messages).lower()
    return STORY if "dragon" in text or not text else f"# A story\n\n{STORY}"


def predictive_state_updates(model: ChatModel | None = None) -> ToolLoopAgent:
    """The predictive state updates route's agent (serve it with `document_arguments()`).

    Examples:
        >>> [spec.name for spec in predictive_state_updates().toolbox.specs()]
        ['write_document_local']
    """
    return ToolLoopAgent(
        model or build_model(document_turn),
        tools=[write_document_local],
        instructions=INSTRUCTIONS,
        # The call's arguments go out as they arrive, so the document grows while it is written.
        dispatcher=NativeDispatcher(stream_tool_calls=True),
    )
