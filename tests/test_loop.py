"""The tool-loop agent: model, backend tools, client tools, errors, state, usage, cancellation."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import cast

import openai
import pytest
from pydantic import BaseModel, JsonValue

from agui import CancellationToken, RunAgentInput, RunContext, Tool, run
from agui.agents import ToolLoopAgent, tool
from agui.agents.dispatch import NativeDispatcher
from agui.agents.models import (
    Call,
    ChatDelta,
    ChatMessage,
    FinishDelta,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    Turn,
)
from agui.errors import UsageError
from agui.events import Event, RunErrorEvent, RunFinishedEvent, TextMessageContentEvent
from agui.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agui.testing import assert_valid, collect, fold
from agui.types import Context, SuccessOutcome, TokenUsage

_Wire = dict[str, JsonValue]


@tool
def get_weather(location: str) -> str:
    """Get the current weather for a city."""
    return f"Sunny, 24 C in {location}"


@tool
def search_restaurants(location: str, cuisine: str = "any") -> list[str]:
    """Find restaurants in a city."""
    return [f"Chez Paul ({cuisine}, {location})"]


@tool
def broken_search(location: str, cuisine: str = "any") -> list[str]:
    """Find restaurants in a city (the backend is down)."""
    message = f"database password rejected for {location}/{cuisine}"
    raise ConnectionError(message)


class Trip(BaseModel):
    stops: list[str] = []


@tool
def add_stop(ctx: RunContext[Trip], city: str) -> str:
    """Add a stop to the trip."""
    ctx.state.stops.append(city)
    ctx.publish_state()
    return f"{len(ctx.state.stops)} stops"


def _input(
    run_id: str = "r1",
    messages: Sequence[Message] = (),
    *,
    tools: Sequence[Tool] | None = None,
    context: Sequence[Context] | None = None,
) -> RunAgentInput:
    history = list(messages) or [UserMessage(id="u1", content="Weather and food in Paris?")]
    return RunAgentInput(
        thread_id="t",
        run_id=run_id,
        messages=history,
        tools=list(tools) if tools is not None else None,
        context=list(context) if context is not None else None,
    )


def _wire(events: Sequence[Event]) -> list[_Wire]:
    return [cast("_Wire", json.loads(event.model_dump_json())) for event in events]


def _text(*words: str, message_id: str) -> list[_Wire]:
    content: list[_Wire] = [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": word} for word in words
    ]
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        *content,
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def _call(
    call_id: str, name: str, arguments: str, result: str | None, *, parent: str, result_id: str = ""
) -> list[_Wire]:
    events: list[_Wire] = [
        {
            "type": "TOOL_CALL_START",
            "toolCallId": call_id,
            "toolCallName": name,
            "parentMessageId": parent,
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": arguments},
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]
    if result is not None:
        events.append(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": result_id,
                "toolCallId": call_id,
                "content": result,
                "role": "tool",
            }
        )
    return events


STARTED: _Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1", "protocolVersion": "1.0"}


def _finished(outcome: _Wire | None = None, **extra: JsonValue) -> _Wire:
    finished: _Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}
    finished["outcome"] = outcome or {"type": "success"}
    finished.update(extra)
    return finished


TRAVEL_SCRIPT = [
    Turn.tool_calls(
        Call("get_weather", {"location": "Paris"}),
        Call("search_restaurants", {"location": "Paris", "cuisine": "french"}),
    ),
    Turn.text("It is sunny. Try Chez Paul."),
]


# -- the travel assistant ----------------------------------------------------------------------


def test_the_travel_assistant_runs_both_tools_then_answers() -> None:
    model = ScriptedModel(TRAVEL_SCRIPT)
    agent = ToolLoopAgent(model, tools=[get_weather, search_restaurants])

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    assert _wire(events) == [
        STARTED,
        *_call(
            "r1-call-1",
            "get_weather",
            '{"location":"Paris"}',
            "Sunny, 24 C in Paris",
            parent="r1-turn-1",
            result_id="r1-msg-1",
        ),
        *_call(
            "r1-call-2",
            "search_restaurants",
            '{"location":"Paris","cuisine":"french"}',
            '["Chez Paul (french, Paris)"]',
            parent="r1-turn-1",
            result_id="r1-msg-2",
        ),
        *_text("It ", "is ", "sunny. ", "Try ", "Chez ", "Paul.", message_id="r1-msg-3"),
        _finished(),
    ]


def test_the_model_gets_the_specs_then_the_calls_and_their_results() -> None:
    model = ScriptedModel(TRAVEL_SCRIPT)
    agent = ToolLoopAgent(model, tools=[get_weather, search_restaurants], instructions="Be brief.")

    asyncio.run(collect(agent, _input()))

    first, second = model.requests
    assert [spec.name for spec in first.tools] == ["get_weather", "search_restaurants"]
    assert first.messages == (
        ChatMessage.system("Be brief."),
        ChatMessage.user("Weather and food in Paris?"),
    )
    assert [(m.role, m.tool_call_id, m.content) for m in second.messages[2:]] == [
        ("assistant", None, ""),
        ("tool", "r1-call-1", "Sunny, 24 C in Paris"),
        ("tool", "r1-call-2", '["Chez Paul (french, Paris)"]'),
    ]
    assert [c.id for c in second.messages[2].tool_calls] == ["r1-call-1", "r1-call-2"]


def test_a_tool_that_raises_gives_an_error_result_and_the_run_still_finishes() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(Call("broken_search", {"location": "Paris"})),
            Turn.text("Sorry, no restaurants."),
        ]
    )
    agent = ToolLoopAgent(model, tools=[broken_search])

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    result = _wire(events)[4]
    assert result["content"] == "Error: the tool 'broken_search' failed"
    assert "password" not in json.dumps(_wire(events))
    assert isinstance(events[-1], RunFinishedEvent)
    assert model.requests[1].messages[-1].is_error


def test_the_conversation_a_ui_shows_after_the_travel_run() -> None:
    agent = ToolLoopAgent(ScriptedModel(TRAVEL_SCRIPT), tools=[get_weather, search_restaurants])
    given = _input()

    folded = fold(asyncio.run(collect(agent, given)), messages=given.messages)

    assert [(m.role, m.id) for m in folded.messages] == [
        ("user", "u1"),
        ("assistant", "r1-turn-1"),
        ("tool", "r1-msg-1"),
        ("tool", "r1-msg-2"),
        ("assistant", "r1-msg-3"),
    ]
    assert isinstance(folded.outcome, SuccessOutcome)


# -- text, reasoning and calls in one turn -----------------------------------------------------


def test_calls_hang_on_the_text_message_of_their_turn_and_reasoning_comes_first() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(
                Call("get_weather", {"location": "Oslo"}), text="Checking.", reasoning="Oslo."
            ),
            Turn.text("Sunny."),
        ]
    )
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    wire = _wire(events)
    assert [event["type"] for event in wire[1:6]] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    assert wire[9]["parentMessageId"] == "r1-msg-2"
    assert model.requests[1].messages[-2] == ChatMessage.assistant(
        "Checking.", model.requests[1].messages[-2].tool_calls
    )


def test_a_tool_that_changes_state_publishes_it_while_its_call_is_open() -> None:
    model = ScriptedModel([Turn.tool_calls(Call("add_stop", {"city": "Rome"})), Turn.text("Ok.")])
    agent = ToolLoopAgent(model, tools=[add_stop])

    events = asyncio.run(collect(agent, _input(), state=Trip))

    assert_valid(events)
    assert [event.type for event in events[:7]] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "STATE_SNAPSHOT",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
    ]
    assert fold(events).state == {"stops": ["Rome"]}


# -- client tools and unknown tools ------------------------------------------------------------

CONFIRM = Tool(name="confirm_booking", description="Ask the user to confirm a booking")


def test_a_client_tool_call_is_left_open_and_the_run_finishes_with_it_pending() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(
                Call("get_weather", {"location": "Nice"}), Call("confirm_booking", {"hotel": "X"})
            )
        ]
    )
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input(tools=[CONFIRM])))

    assert_valid(events)
    assert _wire(events)[5:] == [
        *_call("r1-call-2", "confirm_booking", '{"hotel":"X"}', None, parent="r1-turn-1"),
        _finished({"type": "success", "pendingToolCallIds": ["r1-call-2"]}),
    ]
    assert [spec.name for spec in model.requests[0].tools] == ["get_weather", "confirm_booking"]


def test_the_clients_result_comes_back_with_the_next_request_and_the_loop_goes_on() -> None:
    model = ScriptedModel(
        [Turn.tool_calls(Call("confirm_booking", {"hotel": "X"})), Turn.text("Booked.")]
    )
    agent = ToolLoopAgent(model)
    first_input = _input(tools=[CONFIRM])
    first = fold(asyncio.run(collect(agent, first_input)), messages=first_input.messages)
    answer = ToolMessage(id="c-1", tool_call_id="r1-call-1", content="confirmed")
    second_input = _input("r2", [*first.messages, answer], tools=[CONFIRM])

    events = asyncio.run(collect(agent, second_input))

    assert [event.type for event in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert model.requests[1].messages[-1] == ChatMessage.tool(
        "r1-call-1", "confirmed", name="confirm_booking"
    )


def test_a_backend_tool_wins_over_a_client_tool_of_the_same_name_and_the_app_is_warned() -> None:
    offered = Tool(name="get_weather", description="client weather")
    model = ScriptedModel(
        [Turn.tool_calls(Call("get_weather", {"location": "Nice"})), Turn.text("Ok.")]
    )
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input(tools=[offered])))

    assert_valid(events)
    assert [spec.description for spec in model.requests[0].tools] == [get_weather.description]
    assert events[5].type == "TOOL_CALL_RESULT"
    assert _wire(events)[1] == {
        "type": "CUSTOM",
        "name": "agui.warning",
        "value": {
            "message": "the client offers a tool named 'get_weather', and the agent has a backend "
            "tool of that name: the backend tool is the one the model sees and calls; rename one "
            "of them for the model to have both",
            "tool": "get_weather",
        },
    }


def test_a_call_to_a_tool_nobody_has_gives_an_error_result_the_model_reads() -> None:
    model = ScriptedModel([Turn.tool_calls(Call("teleport", {})), Turn.text("I cannot.")])
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input(tools=[CONFIRM])))

    assert_valid(events)
    expected = (
        "Error: there is no tool named 'teleport'. Available tools: get_weather, confirm_booking."
    )
    assert _wire(events)[4]["content"] == expected
    assert model.requests[1].messages[-1].is_error


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ('{"hotel":', "are not JSON (EOF while parsing a value at line 1 column 9)"),
        ('["X"]', "must be a JSON object, not an array"),
        ('{"nights": NaN}', "are not JSON (expected value at line 1 column 12)"),
    ],
    ids=["not json", "not an object", "nan"],
)
def test_a_client_tool_call_whose_arguments_are_not_an_object_goes_back_to_the_model(
    arguments: str, problem: str
) -> None:
    model = ScriptedModel([Turn.tool_calls(Call("confirm_booking", arguments)), Turn.text("Oops.")])
    agent = ToolLoopAgent(model)

    events = asyncio.run(collect(agent, _input(tools=[CONFIRM])))

    assert_valid(events)
    assert _wire(events)[1:5] == _call(
        "r1-call-1",
        "confirm_booking",
        arguments,
        f"Error: the arguments of tool 'confirm_booking' {problem}",
        parent="r1-turn-1",
        result_id="r1-msg-1",
    )
    assert _wire(events)[-1] == _finished()
    assert model.requests[1].messages[-1].is_error


class _Replay:
    """A model that answers the conversation holding N assistant turns with deltas N, as given."""

    supports_native_tools = True

    def __init__(self, *turns: Sequence[ChatDelta]) -> None:
        self.turns = turns
        self.requests: list[tuple[ChatMessage, ...]] = []

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),  # noqa: ARG002 - the protocol's signature
        stop: Sequence[str] = (),  # noqa: ARG002 - the protocol's signature
    ) -> AsyncIterator[ChatDelta]:
        self.requests.append(tuple(messages))
        for delta in self.turns[sum(1 for m in messages if m.role == "assistant")]:
            yield delta


CUT_OFF = (
    "the model's reply was cut off at its output token limit (finish reason 'length'); "
    "raise the model's max_tokens to let it finish"
)


@pytest.mark.parametrize("name", ["get_weather", "confirm_booking"], ids=["backend", "client"])
def test_a_call_cut_off_at_the_token_limit_is_not_run_and_the_model_is_told_why(name: str) -> None:
    model = _Replay(
        [
            ToolCallDelta(index=0, id="c1", name="get_weather", arguments='{"location": "Nice"}'),
            ToolCallDelta(index=1, id="c2", name=name, arguments='{"location": "Pa'),
            FinishDelta("length"),
        ],
        [TextDelta("Nice is sunny."), FinishDelta("stop")],
    )
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input(tools=[CONFIRM])))

    assert_valid(events)
    wire = _wire(events)
    assert wire[1] == {
        "type": "CUSTOM",
        "name": "agui.warning",
        "value": {"message": CUT_OFF, "reason": "length"},
    }
    results = [e["content"] for e in wire if e["type"] == "TOOL_CALL_RESULT"]
    assert results == [
        "Sunny, 24 C in Nice",
        (
            "Error: the reply was cut off at the output token limit inside the arguments of tool "
            f"{name!r}; call it again with shorter arguments"
        ),
    ]
    assert wire[-1] == _finished()
    assert model.requests[1][-1].is_error


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("length", CUT_OFF),
        (
            "content_filter",
            (
                "the provider's content filter stopped the model's reply "
                "(finish reason 'content_filter')"
            ),
        ),
        ("refusal", "the model refused to answer (finish reason 'refusal')"),
    ],
    ids=["length", "content filter", "refusal"],
)
def test_a_reply_cut_short_by_the_provider_finishes_with_a_warning_saying_why(
    reason: str, message: str
) -> None:
    model = _Replay([TextDelta("The answer is"), FinishDelta(reason)])

    events = asyncio.run(collect(ToolLoopAgent(model), _input()))

    assert_valid(events)
    assert _wire(events)[-2:] == [
        {"type": "CUSTOM", "name": "agui.warning", "value": {"message": message, "reason": reason}},
        _finished(),
    ]


# -- limits and failures -----------------------------------------------------------------------


def test_a_model_that_keeps_calling_tools_ends_the_run_with_a_clear_error() -> None:
    model = ScriptedModel(lambda _: Turn.tool_calls(Call("get_weather", {"location": "Paris"})))
    agent = ToolLoopAgent(model, tools=[get_weather], max_turns=2)

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "AGENT_ERROR"
    assert error.message == (
        "the model was still calling tools after 2 turns; stopped (raise max_turns to allow more)"
    )
    assert len(model.requests) == 2


def test_max_turns_must_be_positive() -> None:
    with pytest.raises(
        UsageError, match="max_turns must be a whole number of turns, at least 1, not 0"
    ):
        ToolLoopAgent(ScriptedModel([]), max_turns=0)


def test_a_model_failure_mid_text_closes_the_message_and_ends_with_run_error() -> None:
    def fail(_: Sequence[ChatMessage]) -> Turn:
        message = "boom"
        raise RuntimeError(message)

    model = ScriptedModel([Turn.tool_calls(Call("get_weather", {"location": "A"})), fail])
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    assert isinstance(events[-1], RunErrorEvent)
    assert events[-1].message == "the agent failed with an unexpected error"


def test_cancelling_a_run_mid_stream_finishes_it_as_cancelled() -> None:
    model = ScriptedModel([Turn.text("one two three four five six")], delay=0.02)
    agent = ToolLoopAgent(model)
    token = CancellationToken()

    async def main() -> list[Event]:
        events: list[Event] = []
        async for event in run(agent, _input(), token=token):
            events.append(event)
            if isinstance(event, TextMessageContentEvent):
                token.cancel("the user pressed stop")
        return events

    events = asyncio.run(main())

    assert_valid(events)
    assert [event.type for event in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.outcome is not None
    assert finished.outcome.type == "cancelled"


def test_cancelling_a_run_while_a_tool_runs_stops_waiting_for_it() -> None:
    started = asyncio.Event()

    @tool
    async def slow_search(query: str) -> str:
        started.set()
        await asyncio.sleep(30)
        return query

    model = ScriptedModel([Turn.tool_calls(Call("slow_search", {"query": "x"}))])
    token = CancellationToken()

    async def main() -> list[Event]:
        async def stop() -> None:
            await started.wait()
            token.cancel("the user pressed stop")

        stopper = asyncio.ensure_future(stop())
        agent = ToolLoopAgent(model, tools=[slow_search])
        events = [event async for event in run(agent, _input(), token=token)]
        await stopper
        return events

    events = asyncio.run(asyncio.wait_for(main(), timeout=10))

    assert_valid(events)
    assert [event.type for event in events] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    assert _wire(events)[-1]["outcome"] == {"type": "cancelled"}


# -- usage, instructions and context -----------------------------------------------------------


def test_usage_of_every_turn_is_summed_per_model_and_reported_on_run_finished() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(
                Call("get_weather", {"location": "A"}),
                usage=TokenUsage(model="m", input_tokens=10, output_tokens=2),
            ),
            Turn.text("Ok.", usage=TokenUsage(model="m", input_tokens=20, reasoning_tokens=1)),
        ]
    )
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input()))

    assert _wire(events)[-1] == _finished(
        usage=[{"model": "m", "inputTokens": 30, "outputTokens": 2, "reasoningTokens": 1}]
    )


def test_usage_of_different_models_is_kept_apart() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(Call("get_weather", {"location": "A"}), usage=TokenUsage(model="a")),
            Turn.text("Ok.", usage=TokenUsage(model="b", output_tokens=1)),
        ]
    )

    events = asyncio.run(collect(ToolLoopAgent(model, tools=[get_weather]), _input()))

    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent)
    assert finished.usage == [TokenUsage(model="a"), TokenUsage(model="b", output_tokens=1)]


def test_the_application_context_joins_the_system_prompt() -> None:
    model = ScriptedModel([Turn.text("Ok.")])
    context = [Context(description="user's timezone", value="Europe/Paris")]

    asyncio.run(collect(ToolLoopAgent(model, instructions="Hi."), _input(context=context)))

    assert model.requests[0].messages[0] == ChatMessage.system(
        "Hi.\n\nContext from the application:\n- user's timezone: Europe/Paris"
    )


class _Counter(BaseModel):
    count: int = 0


@tool
def bump(ctx: RunContext[_Counter]) -> str:
    """Add one to the counter."""
    ctx.state.count += 1
    ctx.publish_state()
    return "bumped"


def _counted(ctx: RunContext[_Counter]) -> str:
    return f"The counter is at {ctx.state.count}."


def test_instructions_as_a_function_see_the_state_as_it_stands_before_each_model_call() -> None:
    model = ScriptedModel([Turn.tool_calls(Call("bump", {})), Turn.text("Done.")])
    agent = ToolLoopAgent(model, tools=[bump], instructions=_counted)
    context = [Context(description="user", value="Ana")]

    events = asyncio.run(collect(agent, _input(context=context), state=_Counter))

    assert_valid(events)
    systems = [request.messages[0] for request in model.requests]
    assert systems == [
        ChatMessage.system(f"The counter is at {n}.\n\nContext from the application:\n- user: Ana")
        for n in (0, 1)
    ]


def test_instructions_that_are_neither_text_nor_a_function_are_refused_at_construction() -> None:
    with pytest.raises(UsageError, match=r"takes a string or a function .* got int"):
        ToolLoopAgent(ScriptedModel([]), instructions=cast("str", 3))


async def _async_prompt(ctx: RunContext[JsonValue]) -> str:
    return f"{ctx.state}"


def _no_prompt(ctx: RunContext[JsonValue]) -> JsonValue:
    return ctx.state.get("prompt") if isinstance(ctx.state, dict) else None


@pytest.mark.parametrize(
    ("prompt", "returned"),
    [(_async_prompt, "coroutine"), (_no_prompt, "NoneType")],
    ids=["async", "none"],
)
def test_an_instructions_function_that_returns_no_string_fails_the_run_with_a_usage_error(
    prompt: Callable[..., object], returned: str, caplog: pytest.LogCaptureFixture
) -> None:
    agent = ToolLoopAgent(
        ScriptedModel([Turn.text("Ok.")]), instructions=cast("Callable[..., str]", prompt)
    )

    events = asyncio.run(collect(agent, _input()))

    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "USAGE_ERROR"
    assert [event.type for event in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert f"returned {returned}, not a string" in caplog.text


# -- the XML dispatcher, end to end ------------------------------------------------------------


def test_a_model_without_tool_calling_gets_json_blocks_in_the_prompt_and_results_as_text() -> None:
    model = ScriptedModel(TRAVEL_SCRIPT, supports_native_tools=False)
    agent = ToolLoopAgent(model, tools=[get_weather, search_restaurants])

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    # Both calls stream where their tags close; the tools run after the turn.
    assert [event.type for event in events if event.type.startswith("TOOL_CALL")] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ] * 2 + ["TOOL_CALL_RESULT"] * 2
    first, second = model.requests
    assert first.tools == ()
    assert first.stop == ("<tool_result",)
    assert "```json" in first.messages[0].content
    assert '"description": "Get the current weather for a city."' in first.messages[0].content
    assert second.messages[-1].role == "user"
    assert second.messages[-1].content.startswith(
        '<tool_result name="get_weather" status="ok">Sunny, 24 C in Paris</tool_result>'
    )


def test_a_turn_whose_only_call_is_malformed_is_answered_and_the_model_calls_again() -> None:
    broken = '<tool_call><think>Paris</think>{"name": "get_weather"}</tool_call>'
    model = ScriptedModel(
        [
            Turn.text(broken),
            Turn.tool_calls(Call("get_weather", {"location": "Paris"})),
            Turn.text("Sunny."),
        ],
        supports_native_tools=False,
    )

    events = asyncio.run(collect(ToolLoopAgent(model, tools=[get_weather]), _input()))

    assert_valid(events)
    told = model.requests[1].messages[-1]
    assert told.role == "user"
    assert "could not be read" in told.content
    assert [e["content"] for e in _wire(events) if e["type"] == "TOOL_CALL_RESULT"] == [
        "Sunny, 24 C in Paris"
    ]
    assert isinstance(events[-1], RunFinishedEvent)


def test_a_native_call_without_a_name_alone_in_its_turn_is_answered_and_called_again() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(Call("", {"location": "Paris"})),
            Turn.tool_calls(Call("get_weather", {"location": "Paris"})),
            Turn.text("Sunny."),
        ]
    )

    events = asyncio.run(collect(ToolLoopAgent(model, tools=[get_weather]), _input()))

    assert_valid(events)
    assert "it has no name" in str(model.requests[1].messages[-1].content)
    assert len(model.requests) == 3


# -- streaming native calls --------------------------------------------------------------------


def test_streamed_native_calls_are_answered_against_their_streamed_ids() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(
                Call("get_weather", {"location": "Paris"}, id="p1"),
                Call("confirm_booking", {}, id="p2"),
            )
        ]
    )
    agent = ToolLoopAgent(
        model, tools=[get_weather], dispatcher=NativeDispatcher(stream_tool_calls=True)
    )

    events = asyncio.run(collect(agent, _input(tools=[CONFIRM])))

    assert_valid(events)
    assert [(e["type"], e.get("toolCallId")) for e in _wire(events)] == [
        ("RUN_STARTED", None),
        ("TOOL_CALL_START", "p1"),
        ("TOOL_CALL_START", "p2"),
        ("TOOL_CALL_ARGS", "p1"),
        ("TOOL_CALL_ARGS", "p2"),
        ("TOOL_CALL_ARGS", "p1"),
        ("TOOL_CALL_ARGS", "p1"),
        ("TOOL_CALL_END", "p1"),
        ("TOOL_CALL_END", "p2"),
        ("TOOL_CALL_RESULT", "p1"),
        ("RUN_FINISHED", None),
    ]
    assert _wire(events)[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["p2"]}


@pytest.mark.parametrize("streamed", [False, True], ids=["assembled", "streamed"])
def test_a_model_that_reuses_its_call_ids_gets_fresh_ones_and_the_run_stays_valid(
    *, streamed: bool
) -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(Call("get_weather", {"location": "Paris"}, id="call_0")),
            Turn.tool_calls(Call("get_weather", {"location": "Rome"}, id="call_0")),
            Turn.text("Both sunny."),
        ]
    )
    agent = ToolLoopAgent(
        model, tools=[get_weather], dispatcher=NativeDispatcher(stream_tool_calls=streamed)
    )

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    starts = [e["toolCallId"] for e in _wire(events) if e["type"] == "TOOL_CALL_START"]
    results = [e["toolCallId"] for e in _wire(events) if e["type"] == "TOOL_CALL_RESULT"]
    assert starts[0] == "call_0"
    assert starts[1] != "call_0"
    assert results == starts


@pytest.mark.parametrize("streamed", [False, True], ids=["assembled", "streamed"])
def test_two_parallel_calls_sharing_one_id_both_run_under_distinct_ids(*, streamed: bool) -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(
                Call("get_weather", {"location": "Paris"}, id="call_0"),
                Call("get_weather", {"location": "Rome"}, id="call_0"),
            ),
            Turn.text("Both sunny."),
        ]
    )
    agent = ToolLoopAgent(
        model, tools=[get_weather], dispatcher=NativeDispatcher(stream_tool_calls=streamed)
    )

    events = asyncio.run(collect(agent, _input()))

    assert_valid(events)
    results = [e for e in _wire(events) if e["type"] == "TOOL_CALL_RESULT"]
    assert [e["content"] for e in results] == ["Sunny, 24 C in Paris", "Sunny, 24 C in Rome"]
    assert results[0]["toolCallId"] == "call_0"
    assert results[1]["toolCallId"] != "call_0"
    assert not [e for e in events if e.type == "CUSTOM"]


def test_a_model_call_id_the_history_holds_is_replaced() -> None:
    earlier = AssistantMessage(
        id="a0",
        tool_calls=[
            ToolCall(id="call_0", function=FunctionCall(name="get_weather", arguments="{}"))
        ],
    )
    answered = ToolMessage(id="t0", tool_call_id="call_0", content="Rainy")
    question = UserMessage(id="u2", content="And now?")
    # The script's turns count the history's assistant turns: the first stands for `earlier`.
    model = ScriptedModel(
        [
            Turn.text("(the earlier turn)"),
            Turn.tool_calls(Call("get_weather", {"location": "Paris"}, id="call_0")),
            Turn.text("Ok."),
        ]
    )
    agent = ToolLoopAgent(model, tools=[get_weather])

    events = asyncio.run(collect(agent, _input(messages=[earlier, answered, question])))

    assert_valid(events)
    [start] = [e for e in _wire(events) if e["type"] == "TOOL_CALL_START"]
    assert start["toolCallId"] == "r1-call-1"


class _NotAModel:
    pass


@pytest.mark.parametrize(
    ("model", "hint"),
    [
        ("gpt-4o", "name the model in one: OpenAIModel('gpt-4o') or AnthropicModel('gpt-4o')"),
        (None, "pass one, or an object with supports_native_tools and stream(messages, ...)"),
        (_NotAModel(), "pass one, or an object with supports_native_tools"),
    ],
)
def test_a_model_that_is_not_a_chat_model_is_refused_naming_what_to_pass(
    model: object, hint: str
) -> None:
    with pytest.raises(UsageError, match=r"ToolLoopAgent\(model=...\) takes a chat model from "):
        ToolLoopAgent(cast("ScriptedModel", model))
    with pytest.raises(UsageError, match=re.escape(hint)):
        ToolLoopAgent(cast("ScriptedModel", model))


def test_a_provider_client_given_as_the_model_is_refused_naming_its_wrapper() -> None:
    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9")

    with pytest.raises(
        UsageError,
        match=re.escape("got AsyncOpenAI; wrap the openai client in one: OpenAIModel('<model>', "),
    ):
        ToolLoopAgent(cast("ScriptedModel", client))


@pytest.mark.parametrize("turns", [True, 2.0, "3", 0])
def test_max_turns_is_a_whole_number_at_least_one(turns: object) -> None:
    with pytest.raises(UsageError, match="max_turns must be a whole number of turns, at least 1"):
        ToolLoopAgent(ScriptedModel([]), max_turns=cast("int", turns))
