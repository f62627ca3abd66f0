"""Predictive state with a confirmation: the document streams into state, the user keeps it."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from agui import RunAgentInput, RunContext, Tool
from agui.agents import ToolLoopAgent, tool
from agui.agents.confirmation import CONFIRM_CHANGES, ask_confirmation, confirmation
from agui.agents.dispatch import NativeDispatcher
from agui.agents.models import Call, ScriptedModel, Turn
from agui.events import CustomEvent, Event
from agui.messages import Message, ToolMessage, UserMessage
from agui.testing import FoldedRun, assert_valid, collect, fold
from agui.transform import ToolArgsToState
from agui.types import RunOutcome

STORY = "A dragon named Atlantis guarded the bay."
CONFIRM = Tool(name=CONFIRM_CHANGES, description="Ask the user to keep or drop the changes")


class Document(BaseModel):
    document: str = ""


@tool
def write_document_local(ctx: RunContext[Document], document: str) -> str:
    """Write the document."""
    ctx.state.document = document
    ctx.publish_state()
    return "Document written; ask the user to confirm it."


MODEL = ScriptedModel(
    [
        Turn.tool_calls(Call("write_document_local", {"document": STORY})),
        Turn.tool_calls(Call(CONFIRM_CHANGES, {})),
    ]
)
LOOP = ToolLoopAgent(
    MODEL,
    tools=[write_document_local],
    dispatcher=NativeDispatcher(stream_tool_calls=True),
)


async def writer(ctx: RunContext[Document]) -> RunOutcome | None:
    """The loop, until the user answers the confirmation; then a word on the answer."""
    answer = confirmation(ctx)
    if answer is None:
        return await LOOP.run(ctx)
    ctx.say("Kept the new document." if answer.accepted else "Dropped the changes.")
    return None


def _run(messages: list[Message], run_id: str) -> tuple[list[Event], FoldedRun]:
    given = RunAgentInput(
        thread_id="t",
        run_id=run_id,
        messages=messages,
        tools=[CONFIRM],
        state={"document": "Once"},
    )
    predict = ToolArgsToState("write_document_local", "document", state=Document)
    events = asyncio.run(collect(writer, given, state=Document, transformers=[predict]))
    assert_valid(events)
    return events, fold(events, messages=messages)


def _asked() -> FoldedRun:
    _, asked = _run([UserMessage(id="u1", content="Write a story")], "r1")
    return asked


def test_the_run_streams_the_document_then_leaves_the_confirmation_pending() -> None:
    events, asked = _run([UserMessage(id="u1", content="Write a story")], "r1")

    assert asked.state == {"document": STORY}
    assert asked.outcome is not None
    assert asked.outcome.model_dump(by_alias=True, exclude_none=True) == {
        "type": "success",
        "pendingToolCallIds": ["r1-turn-2-call-0"],
    }
    kinds = [event.type for event in events]
    first_end = kinds.index("TOOL_CALL_END")
    assert kinds[:first_end].count("STATE_DELTA") > 2  # the document grew during the call


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"accepted": true}', "Kept the new document."),
        ('{"approved": true}', "Kept the new document."),
        ('{"accepted": false}', "Dropped the changes."),
    ],
    ids=["dojo-accepted", "approval-contract", "rejected"],
)
def test_the_answer_to_the_confirmation_is_read_in_the_next_request(
    content: str, said: str
) -> None:
    asked = _asked()
    answer = ToolMessage(id="ck-1", tool_call_id="r1-turn-2-call-0", content=content)

    _, answered = _run([*asked.messages, answer], "r2")

    assert answered.messages[-1].content == said


def test_an_answer_agui_cannot_read_rejects_with_a_warning_saying_what_to_send() -> None:
    asked = _asked()
    answer = ToolMessage(id="ck-1", tool_call_id="r1-turn-2-call-0", content="yes please")

    events, answered = _run([*asked.messages, answer], "r2")

    assert answered.messages[-1].content == "Dropped the changes."
    (warning,) = [e for e in events if isinstance(e, CustomEvent)]
    assert isinstance(warning.value, dict)
    assert 'such as {"accepted": true}' in str(warning.value["message"])


def test_a_confirmation_the_user_moved_past_is_not_read_again() -> None:
    asked = _asked()
    answer = ToolMessage(id="ck-1", tool_call_id="r1-turn-2-call-0", content='{"accepted": true}')
    later = UserMessage(id="u2", content="Now a shorter one")
    ctx, _ = RunContext.new(
        RunAgentInput(thread_id="t", run_id="r3", messages=[*asked.messages, answer, later])
    )

    assert confirmation(ctx) is None


def test_ask_confirmation_sends_its_arguments_and_the_call_stays_pending() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))

    call_id = ask_confirmation(ctx, name="review", arguments={"summary": "one dragon"})

    args = [e for e in events.drain() if e.type == "TOOL_CALL_ARGS"]
    assert [e.model_dump(by_alias=True)["delta"] for e in args] == ['{"summary":"one dragon"}']
    assert ctx.pending_tool_call_ids == [call_id]


def test_a_history_without_an_answer_or_a_user_message_holds_no_confirmation() -> None:
    asked = _asked()
    ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r2", messages=asked.messages[1:]))

    assert confirmation(ctx) is None


def test_a_verdict_that_is_no_boolean_rejects() -> None:
    asked = _asked()
    answer = ToolMessage(id="ck-1", tool_call_id="r1-turn-2-call-0", content='{"accepted": "yes"}')

    _, answered = _run([*asked.messages, answer], "r2")

    assert answered.messages[-1].content == "Dropped the changes."
