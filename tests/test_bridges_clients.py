"""The bridges through the official TypeScript client, 1.0.0 and 0.0.59.

`tests/js/hitl.mjs` drives `HttpAgent` against the pydantic-ai shopping list and the OpenAI
Agents SDK front desk, each served by a real uvicorn on 127.0.0.1, through an approval answered
in `resume[]`; and 0.0.59 (CopilotKit's, which gets the legacy-peer profile) against an adapter's
stream served by `from_events`, and by `remote` in front of that, through the adapter's own
approval. Collected from Python 3.11 on, as the bridges are (`conftest.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import ag_ui.core as foreign
import pytest
from examples.bridges import openai_agents_app as desk
from examples.bridges import pydantic_ai_app as shopping

from agui import asgi_app
from agui.bridges import from_events, remote
from agui.testing import serving
from test_hitl_clients import CLIENTS, Json, drive


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with serving(shopping.app) as shopping_url, serving(desk.app) as desk_url:
        yield {"AGUI_SHOPPING_URL": shopping_url, "AGUI_DESK_URL": desk_url}


def _outcomes(result: Json) -> list[str]:
    return [run["outcome"]["type"] if run["outcome"] else "none" for run in result["runs"]]


@pytest.mark.parametrize("client", CLIENTS)
def test_the_pydantic_ai_example_clears_its_list_once_the_client_approves(
    urls: dict[str, str], client: str
) -> None:
    result = drive(urls, client, "shopping")

    assert _outcomes(result) == ["success", "interrupt", "success"]
    assert result["state"] == {"items": []}
    assert result["messages"][-1]["content"] == "Cleared the list."
    assert result["runs"][-1]["pendingInterrupts"] == []


@pytest.mark.parametrize("client", CLIENTS)
def test_the_openai_agents_example_books_once_the_client_approves(
    urls: dict[str, str], client: str
) -> None:
    result = drive(urls, client, "desk")

    assert _outcomes(result) == ["success", "interrupt", "success"]
    assert result["messages"][-1]["content"] == "Booked a room at Lumen."
    assert result["runs"][-1]["pendingInterrupts"] == []


# -- from_events and remote, read by CopilotKit's client (the legacy-peer profile) -------------

CALL = "call-delete"


async def approving_adapter(run: foreign.RunAgentInput) -> AsyncIterator[object]:
    """An adapter that asks before it deletes, with a subagent of its own, then acts on resume."""
    yield foreign.RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id)
    if not run.resume:
        yield foreign.SubagentStartedEvent(subagent_run_id="planner-1", name="planner")
        yield foreign.StepStartedEvent(step_name="plan", subagent_run_id="planner-1")
        yield foreign.StepFinishedEvent(step_name="plan", subagent_run_id="planner-1")
        yield foreign.SubagentFinishedEvent(subagent_run_id="planner-1")
        yield foreign.TextMessageStartEvent(message_id="ask-1", role="assistant")
        yield foreign.TextMessageContentEvent(message_id="ask-1", delta="I need your approval.")
        yield foreign.TextMessageEndEvent(message_id="ask-1")
        yield foreign.ToolCallStartEvent(
            tool_call_id=CALL, tool_call_name="delete_task", parent_message_id="ask-1"
        )
        yield foreign.ToolCallArgsEvent(tool_call_id=CALL, delta='{"task": 1}')
        yield foreign.ToolCallEndEvent(tool_call_id=CALL)
        asked = foreign.Interrupt(
            id="approve-delete", reason="tool_call", tool_call_id=CALL, message="Delete task 1?"
        )
        outcome = foreign.RunFinishedInterruptOutcome(interrupts=[asked])
        yield foreign.RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id, outcome=outcome)
        return
    [answer] = run.resume
    approved = answer.status == "resolved" and answer.payload == {"approved": True}
    done = "Deleted task 1." if approved else "Kept task 1."
    yield foreign.ToolCallResultEvent(
        message_id="result-1", tool_call_id=CALL, content="deleted" if approved else "declined"
    )
    yield foreign.TextMessageStartEvent(message_id="done-1", role="assistant")
    yield foreign.TextMessageContentEvent(message_id="done-1", delta=done)
    yield foreign.TextMessageEndEvent(message_id="done-1")
    yield foreign.RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id)


@pytest.fixture(scope="module")
def bridge_urls() -> Iterator[dict[str, str]]:
    bridge = asgi_app(from_events(approving_adapter))
    with serving(bridge) as direct, serving(asgi_app(remote(direct))) as relayed:
        yield {"from_events": direct, "remote": relayed}


@pytest.mark.parametrize("bridge", ["from_events", "remote"])
@pytest.mark.parametrize("answer", ["approve", "decline"])
def test_copilotkit_s_client_settles_a_bridged_adapter_s_approval_on_the_legacy_profile(
    bridge_urls: dict[str, str], bridge: str, answer: str
) -> None:
    result = drive({"AGUI_BRIDGE_URL": bridge_urls[bridge]}, "legacy", f"bridge-{answer}")
    approved = answer == "approve"

    asked, answered = result["runs"]
    assert _outcomes(result) == ["interrupt", "success"]
    assert [question["id"] for question in asked["pendingInterrupts"]] == ["approve-delete"]
    assert answered["pendingInterrupts"] == []
    # The legacy profile: the subagent's events are dropped, its steps become the run's own.
    assert not [kind for kind in asked["events"] if kind.startswith("SUBAGENT")]
    assert asked["events"][1:3] == ["STEP_STARTED", "STEP_FINISHED"]
    tool = [message for message in result["messages"] if message["role"] == "tool"]
    assert [(m["toolCallId"], m["content"]) for m in tool] == [
        (CALL, "deleted" if approved else "declined")
    ]
    done = "Deleted task 1." if approved else "Kept task 1."
    assert result["messages"][-1]["content"] == done
