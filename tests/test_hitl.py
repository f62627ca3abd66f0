"""Human in the loop: a tool that needs approval interrupts the run; the next run resumes it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import cast

import pytest
from pydantic import BaseModel, JsonValue

from agui import CancellationToken, ResumeEntry, RunAgentInput, run
from agui.agents import ToolLoopAgent, subagent_tool, tool
from agui.agents.dispatch import NativeDispatcher
from agui.agents.loop import approval_interrupt_id
from agui.agents.models import Call, ChatMessage, ScriptedModel, Turn, TurnFunction
from agui.events import (
    Event,
    RunFinishedEvent,
    SubagentStartedEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    TextPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agui.testing import FoldedRun, assert_valid, collect, fold
from agui.types import CancelledOutcome, Interrupt, InterruptOutcome, SuccessOutcome
from agui.verify import Verifier

BOOKED: list[str] = []


@tool(requires_approval=True)
def book_hotel(hotel: str, nights: int = 1) -> str:
    """Book a hotel room."""
    BOOKED.append(hotel)
    return f"booked {hotel} for {nights} night(s)"


@tool
def get_weather(location: str) -> str:
    """Get the weather."""
    return f"sunny in {location}"


def _answer(messages: Sequence[ChatMessage]) -> Turn:
    last = messages[-1]
    return Turn.text("Not booked." if last.is_error else f"Done: {last.content}.")


def _script() -> list[Turn | TurnFunction]:
    return [
        Turn.tool_calls(Call("book_hotel", {"hotel": "Ritz", "nights": 2}), text="Booking."),
        _answer,
    ]


def _agent(model: ScriptedModel | None = None) -> ToolLoopAgent:
    model = model or ScriptedModel(_script())
    return ToolLoopAgent(model, tools=[book_hotel, get_weather])


def _input(
    run_id: str, messages: Sequence[Message], resume: Sequence[ResumeEntry] = ()
) -> RunAgentInput:
    return RunAgentInput(
        thread_id="t", run_id=run_id, messages=list(messages), resume=list(resume) or None
    )


QUESTION = UserMessage(id="u1", content="Book the Ritz for two nights.")


def _first(agent: ToolLoopAgent) -> tuple[list[Event], FoldedRun]:
    given = _input("r1", [QUESTION])
    events = asyncio.run(collect(agent, given))
    return events, fold(events, messages=given.messages)


def _second(
    agent: ToolLoopAgent, before: FoldedRun, *resume: ResumeEntry
) -> tuple[list[Event], FoldedRun]:
    given = _input("r2", before.messages, resume)
    events = asyncio.run(collect(agent, given))
    return events, fold(events, messages=given.messages)


def _resolved(payload: JsonValue, call_id: str = "r1-call-1") -> ResumeEntry:
    return ResumeEntry(
        interrupt_id=approval_interrupt_id(call_id), status="resolved", payload=payload
    )


def _wire(events: Sequence[Event]) -> list[dict[str, JsonValue]]:
    return [cast("dict[str, JsonValue]", json.loads(event.model_dump_json())) for event in events]


def _assert_valid_resumed(first: list[Event], second: list[Event]) -> None:
    assert_valid([*first, *second])
    # On its own, the resumed stream is valid given the calls its input carries.
    verifier = Verifier(known_tool_call_ids=["r1-call-1", "r1-call-2"])
    for event in second:
        verifier.observe(event)
    verifier.finish()


@pytest.fixture(autouse=True)
def _clear_bookings() -> None:
    BOOKED.clear()


# -- the first request -------------------------------------------------------------------------


def test_a_call_that_needs_approval_ends_the_run_with_an_interrupt_and_does_not_run() -> None:
    events, _ = _first(_agent())

    assert_valid(events)
    assert BOOKED == []
    wire = _wire(events)
    assert [(e["type"], e.get("toolCallId")) for e in wire] == [
        ("RUN_STARTED", None),
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", None),
        ("TEXT_MESSAGE_END", None),
        ("TOOL_CALL_START", "r1-call-1"),
        ("TOOL_CALL_ARGS", "r1-call-1"),
        ("TOOL_CALL_END", "r1-call-1"),
        ("STATE_SNAPSHOT", None),
        ("RUN_FINISHED", None),
    ]
    assert wire[-1]["outcome"] == {
        "type": "interrupt",
        "interrupts": [
            {
                "id": "approve-r1-call-1",
                "reason": "tool_call",
                "message": (
                    'Allow the tool \'book_hotel\' to run with {"hotel": "Ritz", "nights": 2}?'
                ),
                "toolCallId": "r1-call-1",
                "responseSchema": {
                    "type": "object",
                    "properties": {
                        "approved": {"type": "boolean", "description": "Whether the tool may run."},
                        "editedArgs": {
                            "type": "object",
                            "properties": {
                                "hotel": {"type": "string"},
                                "nights": {"type": "integer", "default": 1},
                            },
                            "required": ["hotel"],
                            "additionalProperties": False,
                            "description": (
                                "Arguments to run the tool with instead (they replace all of them)."
                            ),
                        },
                    },
                    "required": ["approved"],
                },
                "metadata": {"toolName": "book_hotel", "arguments": {"hotel": "Ritz", "nights": 2}},
            }
        ],
    }


def test_a_request_without_an_answer_to_the_open_interrupt_interrupts_again_without_acting() -> (
    None
):
    agent = _agent()
    first, before = _first(agent)

    again, _ = _second(agent, before)

    assert [event.type for event in again] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    assert _wire(again)[-1]["outcome"] == _wire(first)[-1]["outcome"]
    assert BOOKED == []


def test_arguments_the_tool_would_refuse_go_back_to_the_model_instead_of_a_human() -> None:
    model = ScriptedModel([Turn.tool_calls(Call("book_hotel", {"nights": "many"})), _answer])

    events, _ = _first(_agent(model))

    assert_valid(events)
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, SuccessOutcome)
    assert model.requests[1].messages[-1].is_error


# -- the second request ------------------------------------------------------------------------


def test_an_approval_runs_the_tool_against_the_original_call_and_the_loop_goes_on() -> None:
    agent = _agent()
    first, before = _first(agent)

    second, after = _second(agent, before, _resolved({"approved": True}))

    _assert_valid_resumed(first, second)
    assert BOOKED == ["Ritz"]
    assert _wire(second)[:2] == [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r2", "protocolVersion": "1.0"},
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "approve-r1-call-1-result",
            "toolCallId": "r1-call-1",
            "content": "booked Ritz for 2 night(s)",
            "role": "tool",
        },
    ]
    assert "TOOL_CALL_START" not in [event.type for event in second]
    assert [(m.role, m.id, getattr(m, "content", None)) for m in after.messages] == [
        ("user", "u1", "Book the Ritz for two nights."),
        ("assistant", "r1-msg-1", "Booking."),
        ("tool", "approve-r1-call-1-result", "booked Ritz for 2 night(s)"),
        ("assistant", "r2-msg-1", "Done: booked Ritz for 2 night(s)."),
    ]
    assert isinstance(after.outcome, SuccessOutcome)


def test_an_approved_tool_is_stopped_when_the_run_is_cancelled_as_the_loops_own_are() -> None:
    started: list[asyncio.Event] = []

    @tool(requires_approval=True)
    async def pay(amount: int) -> str:
        """Pay."""
        started[0].set()
        await asyncio.sleep(3600)
        BOOKED.append(f"paid {amount}")
        return "paid"

    model = ScriptedModel([Turn.tool_calls(Call("pay", {"amount": 5})), Turn.text("Paid.")])
    agent = ToolLoopAgent(model, tools=[pay])
    first, before = _first(agent)
    token = CancellationToken()

    async def second() -> list[Event]:
        started.append(asyncio.Event())
        given = _input("r2", before.messages, [_resolved({"approved": True})])
        events: list[Event] = []
        async for event in run(agent, given, token=token):
            events.append(event)
            await started[0].wait()
            token.cancel("the user pressed stop")
        return events

    events = asyncio.run(asyncio.wait_for(second(), timeout=10))
    _assert_valid_resumed(first, events)
    assert [event.type for event in events] == ["RUN_STARTED", "RUN_FINISHED"]
    assert isinstance(cast("RunFinishedEvent", events[-1]).outcome, CancelledOutcome)
    assert BOOKED == []


def test_an_approval_with_edited_arguments_runs_the_tool_with_them() -> None:
    model = ScriptedModel(_script())
    agent = _agent(model)
    first, before = _first(agent)

    second, after = _second(
        agent, before, _resolved({"approved": True, "editedArgs": {"hotel": "Savoy"}})
    )

    _assert_valid_resumed(first, second)
    assert BOOKED == ["Savoy"]
    assert after.messages[2].content == "booked Savoy for 1 night(s)"
    # The model sees the call as it ran.
    echoed = model.requests[-1].messages[-2].tool_calls[0]
    assert (echoed.id, echoed.arguments) == ("r1-call-1", '{"hotel":"Savoy"}')


@pytest.mark.parametrize(
    ("entry", "content"),
    [
        (_resolved({"approved": False}), "declined"),
        (
            ResumeEntry(interrupt_id="approve-r1-call-1", status="cancelled"),
            "cancelled",
        ),
    ],
    ids=["declined", "cancelled"],
)
def test_a_decline_or_cancel_gives_an_error_result_against_the_call_and_the_tool_never_runs(
    entry: ResumeEntry, content: str
) -> None:
    agent = _agent()
    first, before = _first(agent)

    second, after = _second(agent, before, entry)

    _assert_valid_resumed(first, second)
    assert BOOKED == []
    assert _wire(second)[1]["content"] == (
        f"Error: the user {content} this call; the tool did not run."
    )
    assert after.messages[-1].content == "Not booked."


UNREADABLE = (
    "Error: the answer to this call's approval (a {source}) could not be read as one, so the "
    "call was declined; the tool did not run."
)
UNREADABLE_WARNING = (
    "declined a call: its approval answer (a {source}) is unreadable; an answer is an object "
    'with a boolean "approved" and, to change the call, an object "editedArgs"; send one of '
    "that shape"
)
IGNORED_WARNING = (
    "ignored a resume entry: no open approval has its interrupt id (the call is settled, was "
    "moved past, or its tool is gone); answer only the interrupts the last run finished with"
)


@pytest.mark.parametrize(
    "payload",
    ["yes", {"approved": "true"}, {"ok": True}, None],
    ids=["not an object", "approved not a boolean", "no approved", "no payload"],
)
def test_a_resume_payload_the_agent_cannot_read_declines_and_the_run_says_so(
    payload: JsonValue,
) -> None:
    agent = _agent()
    first, before = _first(agent)

    second, after = _second(agent, before, _resolved(payload))

    _assert_valid_resumed(first, second)
    assert BOOKED == []
    warning, result = _wire(second)[1:3]
    assert (warning["type"], warning["name"]) == ("CUSTOM", "agui.warning")
    assert warning["value"] == {
        "message": UNREADABLE_WARNING.format(source="resume"),
        "id": "approve-r1-call-1",
    }
    assert result["content"] == UNREADABLE.format(source="resume")
    assert after.messages[-1].content == "Not booked."


@pytest.mark.parametrize("edited", ["Savoy", ["Savoy"], 3], ids=["a string", "a list", "a number"])
def test_edited_arguments_that_are_not_an_object_decline_rather_than_run_the_call_as_written(
    edited: JsonValue,
) -> None:
    agent = _agent()
    first, before = _first(agent)

    second, after = _second(agent, before, _resolved({"approved": True, "editedArgs": edited}))

    _assert_valid_resumed(first, second)
    assert BOOKED == []
    warning, result = _wire(second)[1:3]
    assert warning["value"] == {
        "message": UNREADABLE_WARNING.format(source="resume"),
        "id": "approve-r1-call-1",
    }
    assert result["content"] == UNREADABLE.format(source="resume")
    assert after.messages[-1].content == "Not booked."


def test_null_edited_arguments_mean_no_edits_and_run_the_call_as_written() -> None:
    agent = _agent()
    first, before = _first(agent)

    second, _ = _second(agent, before, _resolved({"approved": True, "editedArgs": None}))

    _assert_valid_resumed(first, second)
    assert BOOKED == ["Ritz"]


@pytest.mark.parametrize(
    "verdicts", [(True, False), (False, True)], ids=["approve first", "decline first"]
)
def test_resume_entries_that_disagree_on_one_interrupt_decline_the_call_and_say_so(
    verdicts: tuple[bool, bool],
) -> None:
    agent = _agent()
    first, before = _first(agent)
    entries = [_resolved({"approved": verdict}) for verdict in verdicts]

    second, after = _second(agent, before, *entries)

    _assert_valid_resumed(first, second)
    assert BOOKED == []
    warning, result = _wire(second)[1:3]
    assert warning["value"] == {
        "message": (
            "declined a call: its interrupt has resume entries that disagree; an interrupt "
            "takes one answer; send one entry for it"
        ),
        "id": "approve-r1-call-1",
    }
    assert result["content"] == UNREADABLE.format(source="resume")
    assert after.messages[-1].content == "Not booked."


def test_the_same_resume_entry_sent_twice_settles_the_call_once() -> None:
    agent = _agent()
    first, before = _first(agent)
    approve: JsonValue = {"approved": True, "editedArgs": {"nights": 3, "hotel": "Savoy"}}
    reordered: JsonValue = {"editedArgs": {"hotel": "Savoy", "nights": 3}, "approved": True}

    second, _ = _second(agent, before, _resolved(approve), _resolved(reordered))

    _assert_valid_resumed(first, second)
    assert BOOKED == ["Savoy"]
    assert "CUSTOM" not in [event.type for event in second]


def test_edited_arguments_the_tool_refuses_give_an_error_result() -> None:
    agent = _agent()
    first, before = _first(agent)

    second, after = _second(agent, before, _resolved({"approved": True, "editedArgs": {}}))

    _assert_valid_resumed(first, second)
    assert BOOKED == []
    assert "'/hotel': Field required" in str(after.messages[2].content)
    assert after.messages[-1].content == "Not booked."


def test_an_answer_to_no_open_interrupt_is_ignored_with_a_warning() -> None:
    agent = _agent()
    first, before = _first(agent)
    stray = ResumeEntry(interrupt_id="approve-nothing", status="resolved", payload={})

    second, _ = _second(agent, before, _resolved({"approved": True}), stray)

    _assert_valid_resumed(first, second)
    warning = _wire(second)[1]
    assert (warning["type"], warning["name"]) == ("CUSTOM", "agui.warning")
    assert warning["value"] == {
        "message": IGNORED_WARNING,
        "id": "approve-nothing",
    }
    assert BOOKED == ["Ritz"]


def test_an_approval_the_user_moved_past_is_abandoned_not_reopened() -> None:
    model = ScriptedModel([*_script()[:1], Turn.text("Something else?")])
    agent = _agent(model)
    _, before = _first(agent)
    moved_on = UserMessage(id="u2", content="Never mind, what's the weather?")

    second = asyncio.run(collect(agent, _input("r2", [*before.messages, moved_on])))

    assert_valid(second)
    assert BOOKED == []
    assert model.requests[-1].messages[-2] == ChatMessage.tool(
        "r1-call-1",
        "Error: no result was received for this call.",
        name="book_hotel",
        is_error=True,
    )


def test_an_open_approval_with_unreadable_arguments_is_asked_again_as_written() -> None:
    call = ToolCall(id="c1", function=FunctionCall(name="book_hotel", arguments="{broken"))
    history: list[Message] = [QUESTION, AssistantMessage(id="a1", tool_calls=[call])]

    events = asyncio.run(collect(_agent(), _input("r2", history)))

    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, InterruptOutcome)
    interrupt = finished.outcome.interrupts[0]
    assert interrupt.message == "Allow the tool 'book_hotel' to run with \"{broken\"?"
    assert interrupt.metadata == {"toolName": "book_hotel", "arguments": "{broken"}


class Room(BaseModel):
    hotel: str
    beds: int = 1


@tool(requires_approval=True)
def book_room(room: Room) -> str:
    """Book a room."""
    return room.hotel


def test_the_edited_arguments_schema_keeps_nested_definitions_at_the_root() -> None:
    model = ScriptedModel([Turn.tool_calls(Call("book_room", {"room": {"hotel": "Ritz"}}))])

    events = asyncio.run(collect(ToolLoopAgent(model, tools=[book_room]), _input("r1", [QUESTION])))

    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, InterruptOutcome)
    schema = finished.outcome.interrupts[0].response_schema
    assert schema is not None
    assert list(cast("dict[str, JsonValue]", schema["$defs"])) == ["Room"]
    properties = cast("dict[str, dict[str, JsonValue]]", schema["properties"])
    assert "$defs" not in properties["editedArgs"]
    assert properties["editedArgs"]["properties"] == {"room": {"$ref": "#/$defs/Room"}}


# -- several approvals -------------------------------------------------------------------------


def _two_bookings() -> ScriptedModel:
    return ScriptedModel(
        [
            Turn.tool_calls(
                Call("book_hotel", {"hotel": "Ritz"}),
                Call("get_weather", {"location": "Paris"}),
                Call("book_hotel", {"hotel": "Savoy"}),
            ),
            Turn.text("All settled."),
        ]
    )


def test_parallel_approvals_interrupt_together_while_other_tools_run() -> None:
    events, _ = _first(_agent(_two_bookings()))

    assert_valid(events)
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, InterruptOutcome)
    assert [i.id for i in finished.outcome.interrupts] == ["approve-r1-call-1", "approve-r1-call-3"]
    assert [e.type for e in events if e.type == "TOOL_CALL_RESULT"] == ["TOOL_CALL_RESULT"]


def test_answering_only_some_of_the_open_interrupts_acts_on_none_of_them() -> None:
    agent = _agent(_two_bookings())
    first, before = _first(agent)

    again, _ = _second(agent, before, _resolved({"approved": True}))

    assert [event.type for event in again] == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    outcome = _wire(again)[-1]["outcome"]
    assert isinstance(outcome, dict)
    interrupts = cast("list[dict[str, JsonValue]]", outcome["interrupts"])
    assert [i["id"] for i in interrupts] == ["approve-r1-call-1", "approve-r1-call-3"]
    assert BOOKED == []
    assert_valid([*first, *again])


def test_answering_every_open_interrupt_settles_each_then_continues() -> None:
    agent = _agent(_two_bookings())
    first, before = _first(agent)

    second, after = _second(
        agent,
        before,
        _resolved({"approved": True}, "r1-call-1"),
        _resolved({"approved": False}, "r1-call-3"),
    )

    assert_valid([*first, *second])
    assert BOOKED == ["Ritz"]
    assert [(m.role, getattr(m, "tool_call_id", None)) for m in after.messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "r1-call-2"),
        ("tool", "r1-call-1"),
        ("tool", "r1-call-3"),
        ("assistant", None),
    ]


def test_a_streamed_call_that_needs_approval_interrupts_on_its_streamed_id() -> None:
    model = ScriptedModel([Turn.tool_calls(Call("book_hotel", {"hotel": "Ritz"}, id="p1"))])
    agent = ToolLoopAgent(
        model, tools=[book_hotel], dispatcher=NativeDispatcher(stream_tool_calls=True)
    )

    events, _ = _first(agent)

    assert_valid(events)
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert isinstance(finished.outcome, InterruptOutcome)
    assert finished.outcome.interrupts[0].tool_call_id == "p1"
    assert isinstance(finished.outcome.interrupts[0], Interrupt)


# -- settled once, however the client answers ---------------------------------------------------


def _resume(
    agent: ToolLoopAgent,
    before: FoldedRun,
    *answers: Message,
    resume: Sequence[ResumeEntry] = (),
    run_id: str = "r2",
) -> tuple[list[Event], FoldedRun]:
    given = _input(run_id, [*before.messages, *answers], resume)
    events = asyncio.run(collect(agent, given))
    return events, fold(events, messages=given.messages)


def _placeholder(content: str = "", message_id: str = "ck-1") -> ToolMessage:
    """What CopilotKit gives a call it has no result for, before it sends the resume entry."""
    return ToolMessage(id=message_id, tool_call_id="r1-call-1", content=content)


def _results(events: Sequence[Event]) -> list[tuple[str, str]]:
    return [(e.message_id, e.tool_call_id) for e in events if isinstance(e, ToolCallResultEvent)]


def _assert_unique_ids(messages: Sequence[Message]) -> None:
    ids = [message.id for message in messages]
    assert len(ids) == len(set(ids)), ids


@pytest.mark.parametrize("run_id", ["r1", "r2"], ids=["same run id", "new run id"])
@pytest.mark.parametrize("content", ["", "handler output"], ids=["empty", "handler output"])
def test_a_resume_entry_decides_over_the_clients_own_tool_message_and_settles_the_call_once(
    run_id: str, content: str
) -> None:
    model = ScriptedModel(_script())
    agent = _agent(model)
    first, before = _first(agent)

    second, after = _resume(
        agent, before, _placeholder(content), resume=[_resolved({"approved": True})], run_id=run_id
    )

    # Two requests, two streams: a client may resume under the interrupted run's id.
    assert_valid(first)
    assert_valid(second, input=_input(run_id, before.messages))
    assert BOOKED == ["Ritz"]
    assert _results(second) == [("approve-r1-call-1-result", "r1-call-1")]
    assert "TOOL_CALL_START" not in [event.type for event in second]
    # The model reads the agent's answer, not the placeholder it replaced.
    assert [m.content for m in model.requests[-1].messages if m.role == "tool"] == [
        "booked Ritz for 2 night(s)"
    ]
    _assert_unique_ids(after.messages)
    assert isinstance(after.outcome, SuccessOutcome)


def test_a_resume_entry_that_declines_wins_over_a_tool_message_that_approves() -> None:
    agent = _agent()
    first, before = _first(agent)

    second, after = _resume(
        agent,
        before,
        _placeholder('{"approved": true}'),
        resume=[_resolved({"approved": False})],
    )

    assert_valid([*first, *second])
    assert BOOKED == []
    assert after.messages[-1].content == "Not booked."


def test_a_tool_message_alone_answers_the_approval_as_a_resume_payload_would() -> None:
    agent = _agent()
    first, before = _first(agent)
    answer = ToolMessage(
        id="app-1", tool_call_id="r1-call-1", content=[TextPart(text='{"approved": true}')]
    )

    second, after = _resume(agent, before, answer)

    assert_valid([*first, *second])
    assert BOOKED == ["Ritz"]
    assert _results(second) == [("approve-r1-call-1-result", "r1-call-1")]
    assert after.messages[-1].content == "Done: booked Ritz for 2 night(s)."


def test_a_tool_message_the_agent_cannot_read_declines_says_so_and_never_asks_again() -> None:
    model = ScriptedModel([*_script(), Turn.text("Anything else?")])
    agent = _agent(model)
    first, before = _first(agent)

    # A client that ran the tool itself sends its output: not an answer the agent can read.
    second, after = _resume(agent, before, _placeholder("deleted it locally"))
    third, last = _resume(agent, after, run_id="r3")

    assert_valid([*first, *second, *third])
    assert BOOKED == []
    warning = _wire(second)[1]
    assert warning["value"] == {
        "message": UNREADABLE_WARNING.format(source="tool message"),
        "id": "approve-r1-call-1",
    }
    assert _wire(second)[2]["content"] == UNREADABLE.format(source="tool message")
    assert after.messages[-1].content == "Not booked."
    # Settled: the next request neither asks again nor answers the call again.
    assert isinstance(last.outcome, SuccessOutcome)
    assert _results(third) == []
    assert last.messages[-1].content == "Anything else?"


def test_a_settled_call_is_not_run_again_by_a_resume_entry_sent_twice() -> None:
    model = ScriptedModel([*_script(), Turn.text("Still booked.")])
    agent = _agent(model)
    first, before = _first(agent)
    approve = _resolved({"approved": True})
    second, after = _resume(agent, before, _placeholder(), resume=[approve])

    third, _ = _resume(agent, after, resume=[approve], run_id="r3")

    assert_valid([*first, *second, *third])
    assert BOOKED == ["Ritz"]
    assert _results(third) == []
    warning = _wire(third)[1]
    assert warning["value"] == {
        "message": IGNORED_WARNING,
        "id": "approve-r1-call-1",
    }
    # The placeholder stays out of what the model reads in every later request.
    assert "" not in [m.content for m in model.requests[-1].messages if m.role == "tool"]


def test_a_resumed_run_that_keeps_the_run_id_mints_no_id_the_history_holds() -> None:
    agent = _agent(ScriptedModel([*_script()[:1], Turn.text("Booked, and the weather?")]))
    _, before = _first(agent)

    second, after = _resume(agent, before, resume=[_resolved({"approved": True})], run_id="r1")

    verifier = Verifier(known_tool_call_ids=["r1-call-1"])
    for event in second:
        verifier.observe(event)
    verifier.finish()
    _assert_unique_ids(after.messages)
    assert [m.id for m in after.messages] == [
        "u1", "r1-msg-1", "approve-r1-call-1-result", "r1-msg-2"
    ]  # fmt: skip


def _opened(events: Sequence[Event]) -> set[str]:
    """Every id a stream mints: its messages, calls, results, turns and subagent invocations."""
    opened: set[str] = set()
    for event in events:
        if isinstance(event, TextMessageStartEvent):
            opened.add(event.message_id)
        elif isinstance(event, ToolCallStartEvent):
            opened.update([event.tool_call_id, event.parent_message_id or ""])
        elif isinstance(event, ToolCallResultEvent):
            opened.add(event.message_id)
        elif isinstance(event, SubagentStartedEvent):
            opened.add(event.subagent_run_id)
    return opened - {""}


def test_a_resume_under_the_interrupted_runs_id_mints_no_id_the_thread_holds() -> None:
    @tool(requires_approval=True)
    def book(hotel: str) -> str:
        """Book a hotel."""
        return f"booked {hotel}"

    expert = ToolLoopAgent(ScriptedModel([Turn.text("Paris.")]))
    model = ScriptedModel(
        [
            Turn.tool_calls(Call("ask_expert", {"task": "where?"})),
            Turn.tool_calls(Call("book", {"hotel": "Ritz"})),
            Turn.tool_calls(Call("ask_expert", {"task": "and then?"})),
            Turn.text("Done."),
        ]
    )
    # Streamed calls without provider ids take ids of the turn: `r1-turn-N-call-M`.
    agent = ToolLoopAgent(
        model,
        tools=[subagent_tool(expert, name="expert", description="Knows places."), book],
        dispatcher=NativeDispatcher(stream_tool_calls=True),
    )
    first = asyncio.run(collect(agent, _input("r1", [QUESTION])))
    before = fold(first, messages=[QUESTION])
    assert isinstance(before.outcome, InterruptOutcome)
    answer = ResumeEntry(
        interrupt_id=before.outcome.interrupts[0].id, status="resolved", payload={"approved": True}
    )
    given = _input("r1", before.messages, [answer])

    second = asyncio.run(collect(agent, given))

    assert_valid(second, input=given)
    held = _opened(first)
    assert {"r1-turn-1", "r1-turn-2", "r1-sub-1"} <= held
    assert _opened(second).isdisjoint(held)
    after = fold(second, messages=given.messages)
    _assert_unique_ids(after.messages)
    # Each invocation keeps its own message: the second is not appended to the first.
    assert [(m.subagent_run_id, m.content) for m in after.messages if m.subagent_run_id] == [
        ("r1-sub-1", "Paris."),
        ("r1-sub-2", "Paris."),
    ]
