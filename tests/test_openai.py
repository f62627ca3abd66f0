"""`OpenAIModel` (the official SDK) against a local fake `/chat/completions` server.

The server is a tiny ASGI app under uvicorn on 127.0.0.1, port 0, started and stopped by each
test. It replays responses shaped like the recorded ones: SSE chunks with text, reasoning,
tool-call fragments interleaved by index, a usage chunk and `[DONE]`; or an HTTP error, an error
object mid-stream, a malformed chunk, a dropped connection, or silence.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from typing import cast

import openai
import pytest
from pydantic import JsonValue
from typing_extensions import TypedDict, Unpack

from agui import RunAgentInput
from agui.agents import ToolLoopAgent, tool
from agui.agents.models import (
    ChatDelta,
    ChatMessage,
    ChatToolCall,
    FinishDelta,
    OpenAIModel,
    ReasoningDelta,
    TextDelta,
    UsageDelta,
)
from agui.errors import UsageError
from agui.events import Event, RunErrorEvent
from agui.messages import (
    AudioPart,
    ContentPart,
    DataSource,
    DocumentPart,
    FileSource,
    ImagePart,
    TextPart,
    UrlSource,
    UserMessage,
    VideoPart,
)
from agui.testing import assert_valid, collect
from agui.types import TokenUsage, Tool
from fake_endpoint import FakeEndpoint, Reply, serving

_Json = dict[str, JsonValue]


@tool
def get_weather(location: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {location}"


@tool
def get_time(city: str) -> str:
    """Get the local time in a city."""
    return f"12:00 in {city}"


# -- the fake endpoint -------------------------------------------------------------------------


def sse(*chunks: _Json | str, done: bool = True) -> Reply:
    frames = [
        b"data: " + (c if isinstance(c, str) else json.dumps(c)).encode() + b"\n\n" for c in chunks
    ]
    return Reply(pieces=[*frames, b"data: [DONE]\n\n"] if done else frames)


def _run(
    replies: Sequence[Reply],
    *,
    timeout: float = 5.0,
    native: bool = True,
    tools: Sequence[Callable[..., object]] = (get_weather, get_time),
) -> tuple[list[Event], FakeEndpoint, str]:
    endpoint = FakeEndpoint(replies)

    async def main() -> tuple[list[Event], str]:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel(
                "gpt-test",
                base_url=base_url,
                api_key="sk-test",
                provider="openai",
                timeout=timeout,
                max_retries=0,
                supports_native_tools=native,
            )
            agent = ToolLoopAgent(model, tools=tools)
            question = UserMessage(id="u1", content="Weather and time in Paris?")
            given = RunAgentInput(thread_id="t", run_id="r1", messages=[question])
            return await collect(agent, given), model.base_url

    events, url = asyncio.run(main())
    return events, endpoint, url


def _wire(events: Sequence[Event]) -> list[_Json]:
    return [cast("_Json", json.loads(event.model_dump_json())) for event in events]


def _chunk(delta: _Json, finish: str | None = None) -> _Json:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test-2025",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def _fragment(index: int, arguments: str, call_id: str | None = None, name: str = "") -> _Json:
    call: _Json = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        call.update({"id": call_id, "type": "function"})
        call["function"] = {"name": name, "arguments": arguments}
    return _chunk({"tool_calls": [call]})


USAGE: _Json = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "gpt-test-2025",
    "choices": [],
    "usage": {
        "prompt_tokens": 50,
        "completion_tokens": 20,
        "total_tokens": 70,
        "prompt_tokens_details": {"cached_tokens": 10},
        "completion_tokens_details": {"reasoning_tokens": 5},
    },
}

PARALLEL_CALLS = sse(
    _chunk({"role": "assistant", "content": None}),
    _fragment(0, "", "call_w", "get_weather"),
    _fragment(1, "", "call_t", "get_time"),
    _fragment(0, '{"locat'),
    _fragment(1, '{"city":'),
    _fragment(0, 'ion": "Par'),
    _fragment(1, ' "Paris"}'),
    _fragment(0, 'is"}'),
    _chunk({}, "tool_calls"),
    USAGE,
)
ANSWER = sse(
    _chunk({"role": "assistant", "content": ""}),
    _chunk({"reasoning_content": "Both tools answered."}),
    _chunk({"content": "Sunny, "}),
    _chunk({"content": "and it is noon."}),
    _chunk({}, "stop"),
    USAGE,
)


# -- the happy path ----------------------------------------------------------------------------


def test_interleaved_parallel_calls_run_whole_then_the_answer_streams() -> None:
    events, endpoint, _ = _run([PARALLEL_CALLS, ANSWER])

    assert_valid(events)
    wire = _wire(events)
    assert [(e["type"], e.get("toolCallId"), e.get("delta"), e.get("content")) for e in wire] == [
        ("RUN_STARTED", None, None, None),
        ("TOOL_CALL_START", "call_w", None, None),
        ("TOOL_CALL_ARGS", "call_w", '{"location": "Paris"}', None),
        ("TOOL_CALL_END", "call_w", None, None),
        ("TOOL_CALL_RESULT", "call_w", None, "sunny in Paris"),
        ("TOOL_CALL_START", "call_t", None, None),
        ("TOOL_CALL_ARGS", "call_t", '{"city": "Paris"}', None),
        ("TOOL_CALL_END", "call_t", None, None),
        ("TOOL_CALL_RESULT", "call_t", None, "12:00 in Paris"),
        ("REASONING_START", None, None, None),
        ("REASONING_MESSAGE_START", None, None, None),
        ("REASONING_MESSAGE_CONTENT", None, "Both tools answered.", None),
        ("REASONING_MESSAGE_END", None, None, None),
        ("REASONING_END", None, None, None),
        ("TEXT_MESSAGE_START", None, None, None),
        ("TEXT_MESSAGE_CONTENT", None, "Sunny, ", None),
        ("TEXT_MESSAGE_CONTENT", None, "and it is noon.", None),
        ("TEXT_MESSAGE_END", None, None, None),
        ("RUN_FINISHED", None, None, None),
    ]
    assert wire[-1]["usage"] == [
        {
            "provider": "openai",
            "model": "gpt-test-2025",
            "inputTokens": 100,
            "outputTokens": 40,
            "totalTokens": 140,
            "reasoningTokens": 10,
            "cachedInputTokens": 20,
        }
    ]
    assert len(endpoint.requests) == 2


def test_the_requests_carry_the_specs_and_then_the_calls_with_their_results() -> None:
    _, endpoint, _ = _run([PARALLEL_CALLS, ANSWER])

    first, second = endpoint.requests
    assert first["model"] == "gpt-test"
    assert first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather for a city.",
                "parameters": get_weather.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "description": "Get the local time in a city.",
                "parameters": get_time.parameters,
            },
        },
    ]
    assert first["messages"] == [{"role": "user", "content": "Weather and time in Paris?"}]
    assert second["messages"] == [
        {"role": "user", "content": "Weather and time in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'},
                },
                {
                    "id": "call_t",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"city": "Paris"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_w", "content": "sunny in Paris"},
        {"role": "tool", "tool_call_id": "call_t", "content": "12:00 in Paris"},
    ]
    assert endpoint.headers[0]["authorization"] == "Bearer sk-test"
    assert endpoint.headers[0]["user-agent"].startswith("AsyncOpenAI/Python")


def test_without_native_tools_the_request_has_no_specs_and_tags_are_parsed() -> None:
    tagged = sse(
        _chunk({"content": "<think>Need weather.</think>"}),
        _chunk({"content": '<tool_call>{"name": "get_weather", '}),
        _chunk({"content": '"arguments": {"location": "Oslo"}}</tool_call>'}),
    )

    events, endpoint, _ = _run([tagged, sse(_chunk({"content": "Sunny."}))], native=False)

    assert_valid(events)
    assert "tools" not in endpoint.requests[0]
    assert [e.type for e in events if e.type.startswith("TOOL_CALL")] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    messages = cast("list[_Json]", endpoint.requests[1]["messages"])
    assert messages[-1] == {
        "role": "user",
        "content": '<tool_result name="get_weather" status="ok">sunny in Oslo</tool_result>',
    }


def test_the_sse_reader_takes_crlf_comments_multiline_data_and_ignores_what_follows_done() -> None:
    body = (
        b": keep-alive\r\n\r\n"
        b'data: {"choices": [{"delta": {"reasoning": "Ollama '
        b'style"}}]}\r\n\r\n'
        b'event: message\ndata: {"choices": [{"delta":\ndata: {"content": "Hi"}}]}\n\n'
        b'data: {"choices": [{"delta": {"content": ""}, "finish_reason": "stop"}]}\n\n'
        b"data: [DONE]\n\n"
        b"data: this is never read\n\n"
    )

    events, _, _ = _run([Reply(pieces=[body[:37], body[37:90], body[90:]])])

    assert_valid(events)
    assert [(e["type"], e.get("delta")) for e in _wire(events)][1:-1] == [
        ("REASONING_START", None),
        ("REASONING_MESSAGE_START", None),
        ("REASONING_MESSAGE_CONTENT", "Ollama style"),
        ("REASONING_MESSAGE_END", None),
        ("REASONING_END", None),
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", "Hi"),
        ("TEXT_MESSAGE_END", None),
    ]


@pytest.mark.parametrize(
    "body",
    [
        b'data: {"choices": [{"delta": {"content": "Bye"}}]}\n\ndata: [DONE]',
    ],
    ids=["done without a blank line"],
)
def test_a_stream_that_ends_without_a_blank_line_still_ends_with_its_last_frame(
    body: bytes,
) -> None:
    events, _, _ = _run([Reply(pieces=[body])])

    assert [(e["type"], e.get("delta")) for e in _wire(events)] == [
        ("RUN_STARTED", None),
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", "Bye"),
        ("TEXT_MESSAGE_END", None),
        ("RUN_FINISHED", None),
    ]


# -- failures ----------------------------------------------------------------------------------


def _error(events: Sequence[Event], code: str = "MODEL_ERROR") -> RunErrorEvent:
    assert_valid(events)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == code
    return error


def test_an_error_object_mid_stream_closes_the_message_and_ends_with_run_error() -> None:
    reply = sse(
        _chunk({"content": "Let me"}),
        {"error": {"message": "the model is overloaded", "type": "server_error"}},
        done=False,
    )

    events, _, url = _run([reply])

    error = _error(events)
    assert error.message == f"the model API at {url} failed mid-stream: the model is overloaded"
    assert [event.type for event in events[-3:]] == [
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]


@pytest.mark.parametrize(
    ("reply", "code", "detail"),
    [
        (
            Reply(
                status=500,
                pieces=[b'{"error": {"message": "internal failure"}}'],
                content_type=b"application/json",
            ),
            "MODEL_UNAVAILABLE",
            "answered HTTP 500: internal failure",
        ),
        (
            Reply(status=401, pieces=[b"unauthorized"], content_type=b"text/plain"),
            "MODEL_AUTHENTICATION",
            "answered HTTP 401: unauthorized",
        ),
        (Reply(status=403), "MODEL_AUTHENTICATION", "answered HTTP 403"),
        (Reply(status=404), "MODEL_ERROR", "answered HTTP 404"),
        (
            Reply(status=400, pieces=[b"x" * 300], content_type=b"text/plain"),
            "MODEL_ERROR",
            "answered HTTP 400: " + "x" * 200 + "...",
        ),
        (
            Reply(status=429, pieces=[b'{"error": "slow down"}'], content_type=b"application/json"),
            "MODEL_RATE_LIMITED",
            "answered HTTP 429: slow down",
        ),
        (
            Reply(status=503, pieces=[b'{"detail": [1]}'], content_type=b"application/json"),
            "MODEL_UNAVAILABLE",
            'answered HTTP 503: {"detail": [1]}',
        ),
    ],
    ids=[
        "500 json",
        "401 text",
        "403 empty",
        "404 empty",
        "400 long",
        "429 string error",
        "503 other json",
    ],
)
def test_an_http_error_status_ends_the_run_with_its_code_naming_the_endpoint_and_status(
    reply: Reply, code: str, detail: str
) -> None:
    events, _, url = _run([reply])

    assert _error(events, code).message == f"the model API at {url} {detail}"


@pytest.mark.parametrize(
    ("chunk", "shown"),
    [
        ("not json at all", "sent a chunk that is not JSON: Expecting value"),
        ('{"choices": "many"}', "sent a malformed chunk: 1 validation error for _Chunk"),
        ("[" * 250, "sent a chunk that is not JSON: Expecting value"),
    ],
    ids=["not json", "wrong shape", "long"],
)
def test_a_malformed_chunk_ends_the_run_with_a_clear_error(chunk: str, shown: str) -> None:
    events, _, url = _run([sse(_chunk({"content": "Hi"}), chunk)])

    assert _error(events).message.startswith(f"the model API at {url} {shown}")


def test_a_connection_dropped_mid_stream_ends_the_run_with_a_clear_error() -> None:
    reply = Reply(pieces=sse(_chunk({"content": "Partial"})).pieces[:1], ending="drop")

    events, _, url = _run([reply])

    message = _error(events, "MODEL_UNAVAILABLE").message
    assert message.startswith(f"the model API at {url} broke the stream: peer closed connection")
    assert [event.type for event in events[-2:]] == ["TEXT_MESSAGE_END", "RUN_ERROR"]


def test_an_endpoint_that_does_not_stream_is_an_error_not_an_empty_answer() -> None:
    body = b'{"choices": [{"message": {"role": "assistant", "content": "Hi"}}]}'
    reply = Reply(pieces=[body], content_type=b"application/json")

    events, _, url = _run([reply])

    assert _error(events).message == (
        f"the model API at {url} answered with JSON, not an event stream"
    )


def test_an_endpoint_that_goes_silent_times_out_instead_of_hanging() -> None:
    reply = Reply(pieces=sse(_chunk({"content": "Wait"})).pieces[:1], ending="hang")

    events, _, url = _run([reply], timeout=0.3)

    assert _error(events, "MODEL_TIMEOUT").message == (
        f"the model API at {url} went silent mid-stream: raise timeout= if it is slow"
    )


def test_arguments_a_server_sends_as_an_object_are_read_as_their_json_text() -> None:
    call: _Json = {"index": 0, "id": "call_w", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": {"location": "Paris"}}
    turn = sse(_chunk({"tool_calls": [call]}), _chunk({}, "tool_calls"))

    events, endpoint, _ = _run([turn, ANSWER])

    assert_valid(events)
    args = [e["delta"] for e in _wire(events) if e["type"] == "TOOL_CALL_ARGS"]
    assert args == ['{"location":"Paris"}']
    assert len(endpoint.requests) == 2


def test_an_endpoint_that_never_answers_times_out_on_the_request() -> None:
    events, _, url = _run([Reply(ending="silent")], timeout=0.3)

    assert _error(events, "MODEL_TIMEOUT").message == (
        f"the model API at {url} did not answer in time: raise timeout= if it is slow"
    )


def test_an_endpoint_nobody_listens_on_ends_the_run_with_a_clear_error() -> None:
    async def main() -> list[Event]:
        model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=2)
        agent = ToolLoopAgent(model)
        given = RunAgentInput(thread_id="t", run_id="r1", messages=[])
        return await collect(agent, given)

    message = _error(asyncio.run(main()), "MODEL_UNAVAILABLE").message

    assert message.startswith("the model API at http://127.0.0.1:9/v1/ could not be reached: ")


def test_any_other_sdk_error_is_a_model_error() -> None:
    async def no_key() -> str:
        message = "no luck"
        raise openai.OpenAIError(message)

    async def main() -> list[Event]:
        client = openai.AsyncOpenAI(api_key=no_key, base_url="http://127.0.0.1:9/v1")
        model = OpenAIModel("m", client=client)
        return await collect(ToolLoopAgent(model), RunAgentInput(thread_id="t", run_id="r"))

    message = _error(asyncio.run(main())).message

    assert message == "the model API at http://127.0.0.1:9/v1/ failed mid-stream: no luck"


# -- the model on its own ----------------------------------------------------------------------


def test_usage_counts_that_break_ag_ui_rules_are_dropped_not_invented() -> None:
    usage: _Json = {
        "choices": [],
        "usage": {"prompt_tokens": -1, "completion_tokens": 2.5, "total_tokens": True},
    }
    endpoint = FakeEndpoint([sse(usage)])

    async def main() -> list[ChatDelta]:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel("m", base_url=base_url)
            return [delta async for delta in model.stream([ChatMessage.user("hi")])]

    assert asyncio.run(main()) == [UsageDelta(TokenUsage(model="m"))]


def test_a_client_given_to_the_model_is_used_and_left_open() -> None:
    endpoint = FakeEndpoint([sse(_chunk({"content": "Hi"}, "stop"))])

    async def main() -> tuple[list[ChatDelta], bool]:
        async with serving(endpoint, "/v1") as base_url:
            client = openai.AsyncOpenAI(
                api_key="sk-mine", base_url=base_url, default_headers={"X-Trace": "1"}
            )
            model = OpenAIModel("m", client=client, include_usage=False, timeout=5)
            deltas = [delta async for delta in model.stream([ChatMessage.user("hi")])]
            closed = client.is_closed()
            await client.close()
            return deltas, closed

    deltas, closed = asyncio.run(main())

    assert deltas == [TextDelta("Hi"), FinishDelta("stop")]
    assert not closed
    assert "stream_options" not in endpoint.requests[0]
    assert endpoint.headers[0]["authorization"] == "Bearer sk-mine"
    assert endpoint.headers[0]["x-trace"] == "1"


def test_a_given_client_keeps_its_timeout_and_retries_unless_told_otherwise() -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url="http://x/v1", timeout=7, max_retries=5)

    kept = OpenAIModel("m", client=client)
    changed = OpenAIModel("m", client=client, timeout=1)

    assert (kept.client.timeout, kept.client.max_retries) == (7, 5)
    assert (changed.client.timeout, changed.client.max_retries) == (1, 5)
    assert OpenAIModel("m", client=client, max_retries=0).client.timeout == 7


def test_the_request_body_maps_every_role_and_merges_extra_options() -> None:
    model = OpenAIModel("m", base_url="http://x/v1/", extra_body={"temperature": 0})
    messages = [
        ChatMessage.system("Be brief."),
        ChatMessage.user("Hi"),
        ChatMessage.assistant("Looking.", [ChatToolCall("c1", "f", "{}")]),
        ChatMessage.tool("c1", "done", name="f"),
        ChatMessage.assistant("Done."),
    ]

    body = model.request_body(messages, [Tool(name="f", description="F")])

    assert body == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
            {"role": "assistant", "content": "Done."},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "description": "F",
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        ],
        "temperature": 0,
    }


@pytest.mark.parametrize(
    ("api_key", "sent"),
    [("sk-secret", "Bearer sk-secret"), ("  ", "Bearer none"), (None, "Bearer none")],
    ids=["key", "blank", "none"],
)
def test_the_key_goes_only_in_the_header_and_a_local_server_needs_none(
    api_key: str | None, sent: str
) -> None:
    endpoint = FakeEndpoint([sse(_chunk({"content": "Hi"}))])

    async def main() -> str:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel("m", base_url=base_url, api_key=api_key)
            _ = [delta async for delta in model.stream([ChatMessage.user("hi")])]
            return repr(model).replace(base_url, "URL")

    assert asyncio.run(main()) == "OpenAIModel(model='m', base_url='URL/')"
    assert endpoint.headers[0].get("authorization") == sent


def test_the_stop_sequences_go_in_the_request() -> None:
    endpoint = FakeEndpoint([sse(_chunk({"content": "Hi"}))])

    async def main() -> None:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel("m", base_url=base_url)
            stream = model.stream([ChatMessage.user("hi")], stop=["<tool_result"])
            _ = [delta async for delta in stream]

    asyncio.run(main())

    assert endpoint.requests[0]["stop"] == ["<tool_result"]


def test_reasoning_from_either_field_becomes_reasoning_deltas() -> None:
    reply = sse(_chunk({"reasoning_content": "a"}), _chunk({"reasoning": "b", "content": "c"}))
    endpoint = FakeEndpoint([reply])

    async def main() -> list[ChatDelta]:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel("m", base_url=base_url)
            return [delta async for delta in model.stream([ChatMessage.user("hi")])]

    assert asyncio.run(main()) == [ReasoningDelta("a"), ReasoningDelta("b"), TextDelta("c")]


def test_a_chunk_with_reasoning_in_both_fields_gives_it_once() -> None:
    both: _Json = {"reasoning_content": "Paris?", "reasoning": "Paris?"}
    reply = sse(_chunk(both), _chunk({"reasoning": "", "reasoning_content": "Yes."}))
    endpoint = FakeEndpoint([reply])

    async def main() -> list[ChatDelta]:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel("m", base_url=base_url)
            return [delta async for delta in model.stream([ChatMessage.user("hi")])]

    assert asyncio.run(main()) == [ReasoningDelta("Paris?"), ReasoningDelta("Yes.")]


@pytest.mark.parametrize("name", ["", "  ", None, 5])
def test_a_model_name_that_is_not_text_is_refused_before_a_client_is_made(
    name: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    with pytest.raises(
        UsageError, match=r"OpenAIModel\(model\) takes the provider's name of the model, such as"
    ):
        OpenAIModel(cast("str", name))


# -- media in user messages --------------------------------------------------------------------

PNG = "iVBORw0KGgo="  # eight bytes of base64, a PNG's signature


def _ask(
    parts: Sequence[ContentPart], **options: Unpack[_MediaOptions]
) -> tuple[list[Event], FakeEndpoint]:
    endpoint = FakeEndpoint([sse(_chunk({"content": "A cat."}), _chunk({}, "stop"))])

    async def main() -> list[Event]:
        async with serving(endpoint, "/v1") as base_url:
            model = OpenAIModel(
                "gpt-test", base_url=base_url, api_key="k", max_retries=0, **options
            )
            question = UserMessage(id="u1", content=list(parts))
            given = RunAgentInput(thread_id="t", run_id="r1", messages=[question])
            return await collect(ToolLoopAgent(model), given)

    return asyncio.run(main()), endpoint


class _MediaOptions(TypedDict, total=False):
    input_media: Sequence[str]
    max_image_bytes: int


def test_images_and_audio_reach_the_model_as_its_own_content_parts_in_order() -> None:
    # The shape CopilotKit sends for an attached image: a data source with its mime type.
    parts: list[ContentPart] = [
        TextPart(text="What is in these?"),
        ImagePart(source=DataSource(value=PNG, mime_type="image/png")),
        ImagePart(source=UrlSource(value="https://example.com/cat.jpg")),
        AudioPart(source=DataSource(value="UklGRg==", mime_type="audio/wav")),
        AudioPart(source=DataSource(value="SUQz", mime_type="audio/mpeg")),
    ]

    events, endpoint = _ask(parts)

    assert_valid(events)
    assert endpoint.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
            ],
        }
    ]


def test_a_text_only_user_message_stays_a_plain_string() -> None:
    _, endpoint = _ask([TextPart(text="Hi"), TextPart(text="there")])

    assert endpoint.requests[0]["messages"] == [{"role": "user", "content": "Hi\nthere"}]


@pytest.mark.parametrize(
    ("part", "options", "shown"),
    [
        (
            VideoPart(source=UrlSource(value="https://example.com/a.mp4")),
            {},
            r"video part \(a URL\) cannot go to OpenAIModel 'gpt-test': its API carries image",
        ),
        (
            DocumentPart(source=DataSource(value=PNG, mime_type="application/pdf")),
            {},
            r"document part \(application/pdf, inline data\) cannot go to",
        ),
        (
            ImagePart(source=DataSource(value=PNG, mime_type="image/png")),
            {"input_media": ()},
            r"image part \(image/png, inline data\) cannot go to .*: it is configured to take text",
        ),
        (
            ImagePart(source=DataSource(value=PNG, mime_type="image/png")),
            {"input_media": ("audio",)},
            r"image part .*: it is configured to take audio only",
        ),
        (
            ImagePart(source=FileSource(value="file-1")),
            {},
            r"image part \(a file id\) .*: the API takes an image as inline data or a URL",
        ),
        (
            AudioPart(source=UrlSource(value="https://example.com/a.wav")),
            {},
            r"audio part \(a URL\) .*: the API takes audio as inline wav or mp3 data",
        ),
        (
            AudioPart(source=DataSource(value="T2dn", mime_type="audio/ogg")),
            {},
            r"audio part \(audio/ogg, inline data\) .*: the API takes audio as inline wav or mp3",
        ),
    ],
    ids=["video", "document", "text-only", "audio-only", "file-id", "audio-url", "ogg"],
)
def test_a_part_the_model_cannot_take_fails_the_run_before_any_request(
    part: ContentPart, options: _MediaOptions, shown: str
) -> None:
    events, endpoint = _ask([TextPart(text="Look"), part], **options)

    error = _error(events, "UNSUPPORTED_CONTENT")
    assert re.search(r"user message 1's " + shown, error.message)
    assert endpoint.requests == []


def test_an_inline_image_over_the_limit_fails_the_run_with_its_size_and_the_limit() -> None:
    image = ImagePart(source=DataSource(value="A" * 4000, mime_type="image/png"))

    events, endpoint = _ask([image], max_image_bytes=2000)

    error = _error(events, "CONTENT_TOO_LARGE")
    assert "image part (image/png, inline data) is 0.0 MiB, over the 0.0 MiB limit" in error.message
    assert endpoint.requests == []


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        (
            {"input_media": ("image", "video")},
            r"input_media takes .* \(image, audio\), not \['video'\]",
        ),
        ({"max_image_bytes": 0}, r"max_image_bytes must be a whole number, at least 1, not 0"),
    ],
    ids=["video", "zero-limit"],
)
def test_media_options_the_api_cannot_honour_are_refused_when_the_model_is_built(
    options: _MediaOptions, shown: str
) -> None:
    with pytest.raises(UsageError, match=shown):
        OpenAIModel("gpt-test", base_url="http://127.0.0.1:9", **options)
