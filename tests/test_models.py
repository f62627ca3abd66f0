"""The model boundary: chat messages, deltas, fragment assembly, history, the scripted model."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agui import AgentError
from agui.agents.models import (
    Call,
    ChatDelta,
    ChatMessage,
    ChatModel,
    ChatToolCall,
    FinishDelta,
    OpenAIModel,
    ReasoningDelta,
    ScriptedModel,
    TextDelta,
    ToolCallAssembler,
    ToolCallDelta,
    Turn,
    UsageDelta,
    chat_messages,
)
from agui.agents.models.scripted import DEFAULT_HISTORY
from agui.errors import UsageError
from agui.messages import (
    ActivityMessage,
    AssistantMessage,
    ContentPart,
    DeveloperMessage,
    FunctionCall,
    ImagePart,
    Message,
    ReasoningMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
)
from agui.types import TokenUsage, Tool


def _deltas(model: ChatModel, messages: Sequence[ChatMessage] = ()) -> list[ChatDelta]:
    async def main() -> list[ChatDelta]:
        return [delta async for delta in model.stream(messages)]

    return asyncio.run(main())


def _assistant(text: str) -> ChatMessage:
    return ChatMessage.assistant(text)


# -- chat messages -----------------------------------------------------------------------------


def test_chat_message_constructors_set_the_role_and_only_their_fields() -> None:
    call = ChatToolCall("c1", "f", "{}")

    assert ChatMessage.system("s") == ChatMessage("system", "s")
    assert ChatMessage.user("u") == ChatMessage("user", "u")
    assert ChatMessage.assistant("a", [call]) == ChatMessage("assistant", "a", tool_calls=(call,))
    assert ChatMessage.tool("c1", "r", name="f", is_error=True) == ChatMessage(
        "tool", "r", tool_call_id="c1", name="f", is_error=True
    )


def test_both_models_satisfy_the_chat_model_protocol() -> None:
    assert isinstance(ScriptedModel([]), ChatModel)
    assert isinstance(OpenAIModel("m", base_url="http://127.0.0.1:1/v1"), ChatModel)


# -- history -----------------------------------------------------------------------------------


def _call(call_id: str, name: str = "f", arguments: str = "{}") -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def test_each_role_maps_to_the_provider_role_and_ui_only_messages_are_dropped() -> None:
    look: list[ContentPart] = [TextPart(text="Look:"), ImagePart(source=UrlSource(value="x"))]
    history: list[Message] = [
        SystemMessage(id="s", content="Be brief."),
        DeveloperMessage(id="d", content="Use metric."),
        UserMessage(id="u", content=look),
        ReasoningMessage(id="r", content="thinking"),
        ActivityMessage(id="p", activity_type="PLAN", content={}),
        AssistantMessage(id="a", content="Seen."),
    ]

    assert chat_messages(history) == [
        ChatMessage.system("Be brief."),
        ChatMessage.system("Use metric."),
        ChatMessage.user("Look:", parts=look),
        ChatMessage.assistant("Seen."),
    ]


def test_consecutive_assistant_messages_merge_into_one_turn() -> None:
    history: list[Message] = [
        UserMessage(id="u", content="Go"),
        AssistantMessage(id="a1", content="First."),
        AssistantMessage(id="a2"),
        AssistantMessage(id="a3", content="Second.", tool_calls=[_call("c1")]),
        ToolMessage(id="t1", tool_call_id="c1", content="done"),
    ]

    assert chat_messages(history) == [
        ChatMessage.user("Go"),
        ChatMessage.assistant("First.\nSecond.", [ChatToolCall("c1", "f", "{}")]),
        ChatMessage.tool("c1", "done", name="f"),
    ]


def test_a_call_without_a_result_gets_an_error_result_where_it_belongs() -> None:
    history: list[Message] = [
        AssistantMessage(id="a1", tool_calls=[_call("c1", "g"), _call("c2", "h")]),
        ToolMessage(id="t2", tool_call_id="c2", content="ok"),
        UserMessage(id="u", content="And?"),
        AssistantMessage(id="a2", tool_calls=[_call("c3", "k")]),
    ]

    missing = "Error: no result was received for this call."
    assert [(m.role, m.tool_call_id, m.content, m.is_error) for m in chat_messages(history)] == [
        ("assistant", None, "", False),
        ("tool", "c2", "ok", False),
        ("tool", "c1", missing, True),
        ("user", None, "And?", False),
        ("assistant", None, "", False),
        ("tool", "c3", missing, True),
    ]


def test_a_tool_error_is_kept_and_stands_in_for_missing_content() -> None:
    history: list[Message] = [
        AssistantMessage(id="a", tool_calls=[_call("c1")]),
        ToolMessage(id="t", tool_call_id="c1", content=[TextPart(text="")], error="timeout"),
    ]

    assert chat_messages(history)[1] == ChatMessage.tool("c1", "timeout", name="f", is_error=True)


# -- fragment assembly -------------------------------------------------------------------------


@given(
    arguments=st.lists(st.text(max_size=30), min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=30), max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_any_interleaving_of_fragments_assembles_the_same_calls(
    arguments: list[str], cuts: list[int], order: random.Random
) -> None:
    lanes: list[list[ToolCallDelta]] = []
    for index, text in enumerate(arguments):
        bounds = sorted({0, len(text), *(cut for cut in cuts if cut <= len(text))})
        pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
        first = ToolCallDelta(index=index, id=f"c{index}", name=f"f{index}")
        lanes.append([first, *(ToolCallDelta(index=index, arguments=p) for p in pieces)])
    stream: list[ToolCallDelta] = []
    while any(lanes):
        stream.append(order.choice([lane for lane in lanes if lane]).pop(0))

    assembler = ToolCallAssembler()
    for delta in stream:
        assembler.add(delta)

    # Calls come out in the order their first fragments arrived.
    firsts = [delta.index for delta in stream if delta.name is not None]
    assert [(c.id, c.name, c.arguments) for c in assembler.calls] == [
        (f"c{i}", f"f{i}", arguments[i]) for i in firsts if i is not None
    ]


# -- the scripted model ------------------------------------------------------------------------


def test_a_scripted_turn_streams_reasoning_then_text_word_by_word() -> None:
    model = ScriptedModel([Turn.text("It is sunny.", reasoning="Look it up.")])

    assert _deltas(model) == [
        ReasoningDelta("Look "),
        ReasoningDelta("it "),
        ReasoningDelta("up."),
        TextDelta("It "),
        TextDelta("is "),
        TextDelta("sunny."),
        FinishDelta("stop"),
    ]


def test_parallel_scripted_calls_are_interleaved_by_index() -> None:
    model = ScriptedModel(
        [
            Turn.tool_calls(
                Call("get_weather", {"location": "Paris"}, id="c1"),
                Call("get_time", "{}"),
                usage=TokenUsage(input_tokens=5, output_tokens=7),
            )
        ]
    )

    assert _deltas(model) == [
        ToolCallDelta(index=0, id="c1", name="get_weather"),
        ToolCallDelta(index=1, name="get_time"),
        ToolCallDelta(index=0, arguments='{"locati'),
        ToolCallDelta(index=1, arguments="{}"),
        ToolCallDelta(index=0, arguments='on":"Par'),
        ToolCallDelta(index=0, arguments='is"}'),
        UsageDelta(TokenUsage(input_tokens=5, output_tokens=7)),
        FinishDelta("tool_calls"),
    ]


def test_without_native_tools_the_scripted_model_writes_think_and_tool_call_tags() -> None:
    model = ScriptedModel(
        [Turn.tool_calls(Call("f", {"a": "é"}), text="Ok.", reasoning="Hm.")],
        supports_native_tools=False,
    )

    text = "".join(d.text for d in _deltas(model) if isinstance(d, TextDelta))

    assert not model.supports_native_tools
    assert (
        text == '<think>Hm.</think>Ok.<tool_call>{"name": "f", "arguments": {"a": "é"}}</tool_call>'
    )


def test_the_turn_is_picked_by_how_many_assistant_messages_the_conversation_holds() -> None:
    model = ScriptedModel([Turn.text("one"), Turn.text("two")])

    assert _deltas(model, [ChatMessage.user("hi")])[0] == TextDelta("one")
    assert _deltas(model, [ChatMessage.user("hi"), _assistant("one")])[0] == TextDelta("two")
    assert [len(request.messages) for request in model.requests] == [1, 2]


def test_a_script_entry_may_pick_its_turn_from_the_conversation() -> None:
    def answer(messages: Sequence[ChatMessage]) -> Turn:
        return Turn.text("declined" if "declined" in messages[-1].content else "done")

    model = ScriptedModel([Turn.text("ask"), answer])
    conversation = [ChatMessage.user("go"), _assistant("ask")]

    assert _deltas(model, [*conversation, ChatMessage.user("declined")])[0] == TextDelta("declined")
    assert _deltas(model, [*conversation, ChatMessage.user("approved")])[0] == TextDelta("done")


def test_a_whole_script_may_be_one_function() -> None:
    model = ScriptedModel(lambda messages: Turn.text(f"{len(messages)} so far"))

    assert _deltas(model, [ChatMessage.user("a"), _assistant("b")])[0] == TextDelta("2 ")


def test_asking_past_the_end_of_the_script_is_an_agent_error() -> None:
    model = ScriptedModel([Turn.text("only")])

    with pytest.raises(AgentError, match=r"has 1 turn.*asked for turn 2; add a turn"):
        _deltas(model, [_assistant("only")])


def test_the_scripted_model_records_the_tools_it_was_offered() -> None:
    model = ScriptedModel([Turn.text("hi")])
    tool = Tool(name="f", description="")

    async def main() -> list[ChatDelta]:
        return [delta async for delta in model.stream([ChatMessage.user("x")], tools=[tool])]

    asyncio.run(main())

    assert model.requests[0].tools == (tool,)


def test_the_scripted_model_keeps_only_its_last_requests() -> None:
    """A model serving run after run (a demo, a load test) must not grow with every request."""
    model = ScriptedModel(lambda messages: Turn.text(messages[-1].content), history=3)

    for number in range(40):
        _deltas(model, [ChatMessage.user(str(number))])

    assert [request.messages[-1].content for request in model.requests] == ["37", "38", "39"]


def test_the_scripted_model_keeps_a_bounded_history_by_default() -> None:
    model = ScriptedModel(lambda _: Turn.text("hi"))

    for _ in range(DEFAULT_HISTORY + 5):
        _deltas(model, [ChatMessage.user("x")])

    assert len(model.requests) == DEFAULT_HISTORY


def test_a_scripted_model_with_no_history_keeps_no_request() -> None:
    model = ScriptedModel([Turn.text("hi")], history=0)

    assert _deltas(model, [ChatMessage.user("x")])[0] == TextDelta("hi")
    assert list(model.requests) == []


def test_a_negative_history_is_refused() -> None:
    with pytest.raises(UsageError, match="history must be 0 or more requests, not -1"):
        ScriptedModel([], history=-1)


def test_a_delay_paces_every_delta_so_a_run_can_be_cancelled_mid_stream() -> None:
    model = ScriptedModel([Turn.text("one two three four")], delay=0.05)

    async def main() -> list[ChatDelta]:
        seen: list[ChatDelta] = []

        async def read() -> None:
            async for delta in model.stream([]):
                seen.append(delta)  # noqa: PERF401 - a partial stream is the point

        task = asyncio.ensure_future(read())
        await asyncio.sleep(0.12)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    started = time.monotonic()
    seen = asyncio.run(main())

    assert 1 <= len(seen) <= 3
    assert time.monotonic() - started < 1


def test_call_arguments_are_compact_json_or_the_raw_text_given() -> None:
    assert Call("f", {"q": "Zürich", "n": 1}).argument_text == '{"q":"Zürich","n":1}'
    assert Call("f", "{broken").argument_text == "{broken"
    assert Call("f").argument_text == "{}"
