"""`AnthropicModel` (the official SDK) against a local fake Messages API server.

The server is a tiny ASGI app under uvicorn on 127.0.0.1, port 0, started and stopped by each
test. It replays responses in the documented streaming wire format (`event:` lines with
`message_start`, `content_block_start`/`_delta`/`_stop` carrying `text_delta`,
`input_json_delta`, `thinking_delta`, `signature_delta` and `redacted_thinking` blocks,
`message_delta` with the stop reason and usage, `message_stop`, `ping`), or an HTTP error, an
`error` event mid-stream, a malformed event, a dropped connection, or silence; and it records
each request body, so the tests read what the model sent back.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import (
    AsyncIterator,
    Generator,
    Sequence,
)
from typing import cast

import anthropic
import pytest
from ag_ui.core import Event as OfficialEvent
from anthropic.lib.credentials import AccessToken
from anthropic.lib.vertex import AsyncAnthropicVertex
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue, TypeAdapter

from agui import RunAgentInput
from agui.agents import ToolLoopAgent, tool
from agui.agents.dispatch import DispatcherChoice
from agui.agents.models import (
    AnthropicModel,
    ChatDelta,
    ChatMessage,
    ChatModel,
    ChatReasoning,
    ChatToolCall,
    FinishDelta,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
    chat_messages,
)
from agui.agents.models._anthropic_wire import ThinkingMemory
from agui.errors import UsageError
from agui.events import (
    Event,
    ReasoningEncryptedValueEvent,
    ReasoningMessageContentEvent,
    RunErrorEvent,
    ToolCallArgsEvent,
)
from agui.messages import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    DataSource,
    DocumentPart,
    FileSource,
    ImagePart,
    Message,
    ReasoningMessage,
    TextPart,
    ToolMessage,
    UrlSource,
    UserMessage,
)
from agui.testing import assert_valid, collect, fold
from agui.types import TokenUsage, Tool
from fake_endpoint import FakeEndpoint, Reply, serving, serving_in_a_thread

_Json = dict[str, JsonValue]
OFFICIAL: TypeAdapter[object] = TypeAdapter(OfficialEvent)


@tool
def get_weather(location: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {location}"


@tool
def get_time(city: str) -> str:
    """Get the local time in a city."""
    return f"12:00 in {city}"


# -- the fake endpoint -------------------------------------------------------------------------


def frame(kind: str, data: _Json | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps({"type": kind, **data})
    return f"event: {kind}\ndata: {text}\n\n".encode()


def stream(*frames: bytes) -> Reply:
    return Reply(pieces=frames)


def start(usage: _Json | None = None) -> bytes:
    message: _Json = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test-2025",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage if usage is not None else {"input_tokens": 40, "output_tokens": 1},
    }
    return frame("message_start", {"message": message})


def block(index: int, content: _Json) -> bytes:
    return frame("content_block_start", {"index": index, "content_block": content})


def delta(index: int, content: _Json) -> bytes:
    return frame("content_block_delta", {"index": index, "delta": content})


def stop(index: int) -> bytes:
    return frame("content_block_stop", {"index": index})


def end(reason: str, usage: _Json | None = None) -> list[bytes]:
    counts: _Json = usage if usage is not None else {"output_tokens": 20}
    body: _Json = {"delta": {"stop_reason": reason, "stop_sequence": None}, "usage": counts}
    return [frame("message_delta", body), frame("message_stop", {})]


def text(index: int, *pieces: str) -> list[bytes]:
    out = [block(index, {"type": "text", "text": ""})]
    out += [delta(index, {"type": "text_delta", "text": piece}) for piece in pieces]
    return [*out, stop(index)]


def thinking(index: int, thought: str, signature: str) -> list[bytes]:
    return [
        block(index, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(index, {"type": "thinking_delta", "thinking": thought}),
        delta(index, {"type": "signature_delta", "signature": signature}),
        stop(index),
    ]


def tool_use(index: int, call_id: str, name: str, *pieces: str) -> list[bytes]:
    out = [block(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})]
    out += [delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces]
    return [*out, stop(index)]


PING = frame("ping", {})


def _model(base_url: str, *, timeout: float = 5.0, max_retries: int = 0) -> AnthropicModel:
    return AnthropicModel(
        "claude-test",
        base_url=base_url,
        api_key="sk-ant-test",
        timeout=timeout,
        max_retries=max_retries,
    )


def _run(
    replies: Sequence[Reply],
    *,
    timeout: float = 5.0,
    max_retries: int = 0,
    dispatcher: DispatcherChoice = "native",
    given: RunAgentInput | None = None,
) -> tuple[list[Event], FakeEndpoint, str]:
    endpoint = FakeEndpoint(replies)

    async def main() -> tuple[list[Event], str]:
        async with serving(endpoint) as base_url:
            model = _model(base_url, timeout=timeout, max_retries=max_retries)
            agent = ToolLoopAgent(
                model,
                tools=[get_weather, get_time],
                instructions="Answer briefly.",
                dispatcher=dispatcher,
            )
            question = UserMessage(id="u1", content="Weather and time in Paris?")
            run_input = given or RunAgentInput(thread_id="t", run_id="r1", messages=[question])
            return await collect(agent, run_input), model.base_url

    events, url = asyncio.run(main())
    return events, endpoint, url


def _wire(events: Sequence[Event]) -> list[_Json]:
    return [cast("_Json", json.loads(event.model_dump_json())) for event in events]


def _checked(events: Sequence[Event], *, validated: bool = True) -> list[_Json]:
    """The stream, valid by our verifier, by the official SDK's models and by ag-ui-validate.

    `validated=False` leaves out ag-ui-validate where it cannot install (Python 3.10): the error
    paths run on every Python, judged there by the first two.
    """
    assert_valid(events)
    wire = _wire(events)
    for event in wire:
        OFFICIAL.validate_python(event)
    if validated or sys.version_info >= (3, 11):
        from ag_ui_validate.pytest_plugin import assert_valid_agui  # noqa: PLC0415 - 3.11+

        assert_valid_agui(cast("list[object]", wire), max_warnings=0)
    return wire


THOUGHT = "The user wants Paris weather."
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pk"
CALLS = stream(
    start(),
    PING,
    *thinking(0, THOUGHT, SIGNATURE),
    *text(1, "Let me check."),
    *tool_use(2, "toolu_w", "get_weather", '{"locat', 'ion": "Pa', 'ris"}'),
    *tool_use(3, "toolu_t", "get_time", '{"city": "Paris"}'),
    *end("tool_use"),
)
ANSWER = stream(start(), *text(0, "Sunny, ", "and noon."), *end("end_turn"))


# -- the tool loop -----------------------------------------------------------------------------


@pytest.mark.ag_ui_validate
def test_thinking_text_and_calls_stream_then_the_tools_run_and_the_answer_streams() -> None:
    events, endpoint, _ = _run([CALLS, ANSWER])

    wire = _checked(events)
    assert [
        (e["type"], e.get("delta") or e.get("encryptedValue") or e.get("content")) for e in wire
    ] == [
        ("RUN_STARTED", None),
        ("REASONING_START", None),
        ("REASONING_MESSAGE_START", None),
        ("REASONING_MESSAGE_CONTENT", THOUGHT),
        ("REASONING_ENCRYPTED_VALUE", SIGNATURE),
        ("REASONING_MESSAGE_END", None),
        ("REASONING_END", None),
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", "Let me check."),
        ("TEXT_MESSAGE_END", None),
        ("TOOL_CALL_START", None),
        ("TOOL_CALL_ARGS", '{"location": "Paris"}'),
        ("TOOL_CALL_END", None),
        ("TOOL_CALL_RESULT", "sunny in Paris"),
        ("TOOL_CALL_START", None),
        ("TOOL_CALL_ARGS", '{"city": "Paris"}'),
        ("TOOL_CALL_END", None),
        ("TOOL_CALL_RESULT", "12:00 in Paris"),
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", "Sunny, "),
        ("TEXT_MESSAGE_CONTENT", "and noon."),
        ("TEXT_MESSAGE_END", None),
        ("RUN_FINISHED", None),
    ]
    value = next(e for e in events if isinstance(e, ReasoningEncryptedValueEvent))
    assert (value.subtype, value.entity_id) == ("message", wire[2]["messageId"])
    assert [e["toolCallId"] for e in wire if e["type"] == "TOOL_CALL_START"] == [
        "toolu_w",
        "toolu_t",
    ]
    assert len(endpoint.requests) == 2


def test_the_next_request_echoes_the_signed_thinking_and_groups_the_results() -> None:
    _, endpoint, _ = _run([CALLS, ANSWER])

    first, second = endpoint.requests
    assert first["model"] == "claude-test"
    assert first["max_tokens"] == 4096
    assert first["stream"] is True
    assert first["system"] == "Answer briefly."
    assert "stop_sequences" not in first
    assert first["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the weather for a city.",
            "input_schema": get_weather.parameters,
        },
        {
            "name": "get_time",
            "description": "Get the local time in a city.",
            "input_schema": get_time.parameters,
        },
    ]
    question = {"role": "user", "content": [{"type": "text", "text": "Weather and time in Paris?"}]}
    assert first["messages"] == [question]
    assert second["messages"] == [
        question,
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": THOUGHT, "signature": SIGNATURE},
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_w",
                    "name": "get_weather",
                    "input": {"location": "Paris"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_t",
                    "name": "get_time",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_w", "content": "sunny in Paris"},
                {"type": "tool_result", "tool_use_id": "toolu_t", "content": "12:00 in Paris"},
            ],
        },
    ]
    assert endpoint.headers[0]["authorization"] == "Bearer sk-ant-test"
    assert endpoint.headers[0]["anthropic-version"]


@pytest.mark.ag_ui_validate
def test_redacted_and_interleaved_thinking_go_back_in_place_and_a_wrong_call_is_an_error() -> None:
    calls = stream(
        start(),
        block(0, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
        stop(0),
        *tool_use(1, "toolu_1", "get_weather", '{"location": "Oslo"}'),
        *thinking(2, "Now the time.", "sig-2"),
        *tool_use(3, "toolu_2", "no_such_tool"),
        *end("tool_use"),
    )

    events, endpoint, _ = _run([calls, ANSWER])

    wire = _checked(events)
    values = [e["encryptedValue"] for e in wire if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert values == ["redacted_thinking:EmwKAhgBEgy3va3pzix", "sig-2"]
    assert [e["type"] for e in wire[1:5]] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_MESSAGE_END",
    ]
    assistant, results = cast("list[_Json]", endpoint.requests[1]["messages"])[1:]
    assert assistant["content"] == [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"location": "Oslo"}},
        {"type": "thinking", "thinking": "Now the time.", "signature": "sig-2"},
        {"type": "tool_use", "id": "toolu_2", "name": "no_such_tool", "input": {}},
    ]
    error = cast("list[_Json]", results["content"])[1]
    assert error["is_error"] is True
    assert str(error["content"]).startswith("Error: there is no tool named 'no_such_tool'")


@pytest.mark.ag_ui_validate
def test_the_signature_survives_the_round_trip_through_the_client_to_another_server() -> None:
    # A tool only the client offers ends the run; the client folds the stream into its history
    # and sends it to a fresh model (another worker) with the tool's result.
    locate = Tool(name="locate_user", description="Where the user is.")
    asks = stream(
        start(),
        *thinking(0, "Where is the user?", "sig-loc"),
        *tool_use(1, "toolu_loc", "locate_user", "{}"),
        *end("tool_use"),
    )
    question = UserMessage(id="u1", content="Weather here?")
    first_input = RunAgentInput(thread_id="t", run_id="r1", messages=[question], tools=[locate])
    events, _, _ = _run([asks], given=first_input)
    _checked(events)
    held = fold(events, messages=[question]).messages
    reasoning = next(m for m in held if isinstance(m, ReasoningMessage))
    assert (reasoning.content, reasoning.encrypted_value) == ("Where is the user?", "sig-loc")
    result = ToolMessage(id="tr1", tool_call_id="toolu_loc", content="Lyon")
    second = RunAgentInput(thread_id="t", run_id="r2", messages=[*held, result], tools=[locate])

    events, endpoint, _ = _run([ANSWER], given=second)

    _checked(events)
    assert cast("list[_Json]", endpoint.requests[0]["messages"])[1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Where is the user?", "signature": "sig-loc"},
                {"type": "tool_use", "id": "toolu_loc", "name": "locate_user", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_loc", "content": "Lyon"}],
        },
    ]


@pytest.mark.ag_ui_validate
def test_thinking_that_starts_blank_goes_back_byte_exact_with_its_signature() -> None:
    # The signature covers the exact text: the blank start must reach the client and return.
    thought = ["\n\n", "  Where is the user?", "\n"]
    asks = stream(
        start(),
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        *(delta(0, {"type": "thinking_delta", "thinking": piece}) for piece in thought),
        delta(0, {"type": "signature_delta", "signature": "sig-blank"}),
        stop(0),
        *tool_use(1, "toolu_loc", "locate_user", "{}"),
        *end("tool_use"),
    )
    locate = Tool(name="locate_user", description="Where the user is.")
    question = UserMessage(id="u1", content="Weather here?")
    first_input = RunAgentInput(thread_id="t", run_id="r1", messages=[question], tools=[locate])
    events, _, _ = _run([asks], given=first_input)
    _checked(events)
    shown = "".join(e.delta for e in events if isinstance(e, ReasoningMessageContentEvent))
    assert shown == "\n\n  Where is the user?\n"
    held = fold(events, messages=[question]).messages
    result = ToolMessage(id="tr1", tool_call_id="toolu_loc", content="Lyon")
    second = RunAgentInput(thread_id="t", run_id="r2", messages=[*held, result], tools=[locate])

    _, endpoint, _ = _run([ANSWER], given=second)

    assistant = cast("list[_Json]", endpoint.requests[0]["messages"])[1]
    assert cast("list[_Json]", assistant["content"])[0] == {
        "type": "thinking",
        "thinking": "\n\n  Where is the user?\n",
        "signature": "sig-blank",
    }


@pytest.mark.ag_ui_validate
def test_usage_with_cache_and_thinking_tokens_reaches_run_finished_summed_over_turns() -> None:
    cached: _Json = {
        "input_tokens": 100,
        "output_tokens": 1,
        "cache_read_input_tokens": 20,
        "cache_creation_input_tokens": 10,
    }
    final: _Json = {"output_tokens": 30, "output_tokens_details": {"thinking_tokens": 12}}
    calls = stream(
        start(cached), *tool_use(0, "toolu_1", "get_time", "{}"), *end("tool_use", final)
    )
    answer = stream(start(cached), *text(0, "Noon."), *end("end_turn", final))

    events, _, _ = _run([calls, answer])

    assert _checked(events)[-1]["usage"] == [
        {
            "provider": "anthropic",
            "model": "claude-test-2025",
            "inputTokens": 260,
            "outputTokens": 60,
            "totalTokens": 320,
            "reasoningTokens": 24,
            "cachedInputTokens": 40,
            "cacheWriteInputTokens": 20,
        }
    ]


@pytest.mark.ag_ui_validate
def test_the_xml_dispatcher_sends_its_stop_sequence_and_no_tool_specs() -> None:
    tagged = stream(
        start(),
        *text(
            0, '<tool_call>{"name": "get_weather", "arguments": {"location": "Rome"}}</tool_call>'
        ),
        *end("stop_sequence"),
    )

    events, endpoint, _ = _run([tagged, ANSWER], dispatcher="xml")

    _checked(events)
    first, second = endpoint.requests
    assert "tools" not in first
    assert first["stop_sequences"] == ["<tool_result"]
    assert "get_weather" in str(first["system"])
    results = cast("list[_Json]", second["messages"])[-1]
    assert results["role"] == "user"
    assert "sunny in Rome" in json.dumps(results["content"])


# -- failures ----------------------------------------------------------------------------------


def _error(events: Sequence[Event], code: str = "MODEL_ERROR") -> RunErrorEvent:
    _checked(events, validated=False)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == code
    return error


def _json_error(status: int, kind: str, message: str) -> Reply:
    body = json.dumps({"type": "error", "error": {"type": kind, "message": message}})
    return Reply(status=status, pieces=[body.encode()], content_type=b"application/json")


@pytest.mark.parametrize(
    ("reply", "code", "detail"),
    [
        (
            _json_error(401, "authentication_error", "invalid x-api-key"),
            "MODEL_AUTHENTICATION",
            "answered HTTP 401: invalid x-api-key",
        ),
        (Reply(status=403), "MODEL_AUTHENTICATION", "answered HTTP 403"),
        (
            _json_error(429, "rate_limit_error", "slow down"),
            "MODEL_RATE_LIMITED",
            "answered HTTP 429: slow down",
        ),
        (
            _json_error(500, "api_error", "internal failure"),
            "MODEL_UNAVAILABLE",
            "answered HTTP 500: internal failure",
        ),
        (
            _json_error(529, "overloaded_error", "Overloaded"),
            "MODEL_UNAVAILABLE",
            "answered HTTP 529: Overloaded",
        ),
        (
            _json_error(400, "invalid_request_error", "max_tokens: " + "x" * 300),
            "MODEL_ERROR",
            "answered HTTP 400: max_tokens: " + "x" * 188 + "...",
        ),
        (
            Reply(status=404, pieces=[b"no such route"], content_type=b"text/plain"),
            "MODEL_ERROR",
            "answered HTTP 404: no such route",
        ),
        (
            Reply(status=502, pieces=[b'{"detail": [1]}'], content_type=b"application/json"),
            "MODEL_UNAVAILABLE",
            'answered HTTP 502: {"detail": [1]}',
        ),
    ],
    ids=["401", "403 empty", "429", "500", "529 overloaded", "400 long", "404 text", "502 other"],
)
def test_an_http_error_status_ends_the_run_with_its_code_naming_the_endpoint_and_status(
    reply: Reply, code: str, detail: str
) -> None:
    events, _, url = _run([reply])

    assert _error(events, code).message == f"the model API at {url} {detail}"


@pytest.mark.ag_ui_validate
def test_an_overloaded_answer_is_retried_by_the_sdk_when_retries_are_allowed() -> None:
    overloaded = _json_error(529, "overloaded_error", "Overloaded")

    events, endpoint, _ = _run([overloaded, ANSWER], max_retries=1)

    assert _checked(events)[-1]["type"] == "RUN_FINISHED"
    assert [headers["x-stainless-retry-count"] for headers in endpoint.headers] == ["0", "1"]


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("overloaded_error", "MODEL_UNAVAILABLE"),
        ("rate_limit_error", "MODEL_RATE_LIMITED"),
        ("invalid_request_error", "MODEL_ERROR"),
    ],
)
def test_an_error_event_mid_stream_closes_the_message_and_ends_with_its_code(
    kind: str, code: str
) -> None:
    error = frame("error", {"error": {"type": kind, "message": "it went wrong"}})
    reply = stream(
        start(),
        block(0, {"type": "text", "text": ""}),
        delta(0, {"type": "text_delta", "text": "Let me"}),
        error,
    )

    events, _, url = _run([reply])

    message = _error(events, code).message
    assert message == f"the model API at {url} failed mid-stream: {kind}: it went wrong"
    assert [event.type for event in events[-3:]] == [
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]


def test_an_error_event_without_a_body_is_a_model_error() -> None:
    events, _, url = _run([stream(start(), frame("error", "upstream gone"))])

    assert (
        _error(events).message == f"the model API at {url} failed mid-stream: error: upstream gone"
    )


def test_a_connection_dropped_mid_stream_ends_the_run_with_a_clear_error() -> None:
    reply = Reply(pieces=[start(), *text(0, "Partial")[:2]], ending="drop")

    events, _, url = _run([reply])

    message = _error(events, "MODEL_UNAVAILABLE").message
    assert message.startswith(f"the model API at {url} broke the stream: peer closed connection")
    assert [event.type for event in events[-2:]] == ["TEXT_MESSAGE_END", "RUN_ERROR"]


def test_a_stream_closed_before_message_stop_is_unavailable_not_an_answer() -> None:
    events, _, url = _run([stream(start(), *text(0, "Half"))])

    assert _error(events, "MODEL_UNAVAILABLE").message == (
        f"the model API at {url} ended the stream before message_stop"
    )


@pytest.mark.parametrize(
    ("event", "shown"),
    [
        (frame("content_block_delta", "not json"), "sent an event that is not JSON: "),
        (
            frame("content_block_start", {"index": "first", "content_block": {"type": "text"}}),
            "sent a malformed event: 1 validation error for _Event",
        ),
    ],
    ids=["not json", "wrong shape"],
)
def test_a_malformed_event_ends_the_run_with_a_clear_error(event: bytes, shown: str) -> None:
    events, _, url = _run([stream(start(), event)])

    assert _error(events).message.startswith(f"the model API at {url} {shown}")


def test_an_endpoint_that_does_not_stream_is_an_error_not_an_empty_answer() -> None:
    reply = Reply(pieces=[b'{"type": "message", "content": []}'], content_type=b"application/json")

    events, _, url = _run([reply])

    assert _error(events).message == (
        f"the model API at {url} answered with JSON, not an event stream"
    )


def test_an_endpoint_that_goes_silent_times_out_instead_of_hanging() -> None:
    reply = Reply(pieces=[start()], ending="hang")

    events, _, url = _run([reply], timeout=0.3)

    assert _error(events, "MODEL_TIMEOUT").message == (
        f"the model API at {url} went silent mid-stream: raise timeout= if it is slow"
    )


def test_an_endpoint_that_never_answers_times_out_on_the_request() -> None:
    events, _, url = _run([Reply(ending="silent")], timeout=0.3)

    assert _error(events, "MODEL_TIMEOUT").message == (
        f"the model API at {url} did not answer in time: raise timeout= if it is slow"
    )


def test_an_endpoint_nobody_listens_on_ends_the_run_with_a_clear_error() -> None:
    async def main() -> list[Event]:
        model = AnthropicModel("m", base_url="http://127.0.0.1:9", max_retries=0, timeout=2)
        return await collect(ToolLoopAgent(model), RunAgentInput(thread_id="t", run_id="r"))

    message = _error(asyncio.run(main()), "MODEL_UNAVAILABLE").message

    assert message.startswith("the model API at http://127.0.0.1:9 could not be reached: ")


def test_any_other_sdk_error_is_a_model_error() -> None:
    async def no_token(*, force_refresh: bool = False) -> AccessToken:
        message = f"no luck (force_refresh={force_refresh})"
        raise anthropic.CredentialsError(message)

    async def main() -> list[Event]:
        client = anthropic.AsyncAnthropic(credentials=no_token, base_url="http://127.0.0.1:9")
        model = AnthropicModel("m", client=client)
        return await collect(ToolLoopAgent(model), RunAgentInput(thread_id="t", run_id="r"))

    message = _error(asyncio.run(main())).message

    assert message == "the model API at http://127.0.0.1:9 failed: no luck (force_refresh=False)"


# -- the model on its own ----------------------------------------------------------------------


def _deltas(replies: Sequence[Reply]) -> tuple[list[ChatDelta], FakeEndpoint]:
    endpoint = FakeEndpoint(replies)

    async def main() -> list[ChatDelta]:
        async with serving(endpoint) as base_url:
            model = _model(base_url)
            return [d async for d in model.stream([ChatMessage.user("hi")])]

    return asyncio.run(main()), endpoint


async def _drain(deltas: AsyncIterator[ChatDelta]) -> list[ChatDelta]:
    return [delta async for delta in deltas]


def test_the_stop_reasons_map_to_the_common_ones_and_unknown_ones_pass_through() -> None:
    replies = [
        stream(start(), *end(reason, {})) for reason in ("end_turn", "max_tokens", "refusal")
    ]
    endpoint = FakeEndpoint(replies)

    async def main() -> list[list[ChatDelta]]:
        async with serving(endpoint) as base_url:
            model = _model(base_url)
            ask = [ChatMessage.user("hi")]
            return [await _drain(model.stream(ask)) for _ in replies]

    reasons = [[d.reason for d in run if isinstance(d, FinishDelta)] for run in asyncio.run(main())]
    assert reasons == [["stop"], ["length"], ["refusal"]]


def test_usage_counts_that_break_ag_ui_rules_are_dropped_not_invented() -> None:
    odd: _Json = {"input_tokens": -1, "output_tokens": 2.5, "cache_read_input_tokens": "many"}
    deltas, _ = _deltas(
        [
            stream(
                start(odd),
                frame("message_delta", {"delta": {}, "usage": None}),
                frame("message_stop", {}),
            )
        ]
    )

    assert deltas == [UsageDelta(TokenUsage(provider="anthropic", model="claude-test-2025"))]


def test_blocks_it_does_not_know_are_skipped_and_unsigned_thinking_is_shown_only() -> None:
    reply = stream(
        start(),
        block(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}),
        delta(0, {"type": "citations_delta", "citation": {}}),
        stop(0),
        block(1, {"type": "thinking", "thinking": "Hm.", "signature": ""}),
        stop(1),
        block(2, {"type": "text", "text": "Hello"}),
        block(3, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}),
        frame("something_new", {}),
        *end("tool_use", {}),
    )

    deltas, _ = _deltas([reply])

    assert deltas[:-1] == [
        ReasoningDelta("Hm."),
        TextDelta("Hello"),
        ToolCallDelta(index=3, id="toolu_1", name="f", arguments='{"a": 1}'),
        FinishDelta("tool_calls"),
    ]


def test_a_client_given_to_the_model_is_used_and_left_open() -> None:
    endpoint = FakeEndpoint([stream(start(), *text(0, "Hi"), *end("end_turn", {}))])

    async def main() -> tuple[list[ChatDelta], bool]:
        async with serving(endpoint) as base_url:
            client = anthropic.AsyncAnthropic(
                api_key="sk-mine", base_url=base_url, default_headers={"X-Trace": "1"}
            )
            model = AnthropicModel("m", client=client, timeout=5, max_tokens=64)
            deltas = [d async for d in model.stream([ChatMessage.user("hi")], stop=["END"])]
            closed = client.is_closed()
            await client.close()
            return deltas, closed

    deltas, closed = asyncio.run(main())

    assert deltas[:2] == [TextDelta("Hi"), FinishDelta("stop")]
    assert not closed
    assert endpoint.requests[0]["max_tokens"] == 64
    assert endpoint.requests[0]["stop_sequences"] == ["END"]
    assert endpoint.headers[0]["authorization"] == "Bearer sk-mine"
    assert endpoint.headers[0]["x-trace"] == "1"


def test_a_vertex_client_works_as_its_messages_api_is_the_same() -> None:
    endpoint = FakeEndpoint([stream(start(), *text(0, "Hi"), *end("end_turn", {}))])

    async def main() -> list[ChatDelta]:
        async with serving(endpoint) as base_url:
            client = AsyncAnthropicVertex(
                region="us-east5",
                project_id="proj",
                access_token="ya29.token",  # noqa: S106 - a fake token for the fake server
                base_url=base_url,
            )
            model = AnthropicModel("claude-test", client=client, timeout=5, max_retries=0)
            try:
                return [d async for d in model.stream([ChatMessage.user("hi")])]
            finally:
                await client.close()

    assert asyncio.run(main())[:2] == [TextDelta("Hi"), FinishDelta("stop")]
    assert endpoint.paths[0].endswith("/models/claude-test:streamRawPredict")
    assert endpoint.headers[0]["authorization"] == "Bearer ya29.token"
    assert "model" not in endpoint.requests[0]
    assert endpoint.requests[0]["anthropic_version"]


def test_a_given_client_keeps_its_timeout_and_retries_unless_told_otherwise() -> None:
    client = anthropic.AsyncAnthropic(api_key="k", base_url="http://x", timeout=7, max_retries=5)

    kept = AnthropicModel("m", client=client)
    changed = AnthropicModel("m", client=client, timeout=1)

    assert (kept.client.timeout, kept.client.max_retries) == (7, 5)
    assert (changed.client.timeout, changed.client.max_retries) == (1, 5)
    assert AnthropicModel("m", client=client, max_retries=0).client.timeout == 7


def test_the_model_is_a_chat_model_that_calls_tools_natively() -> None:
    model = AnthropicModel("m", base_url="http://127.0.0.1:9", api_key="k")

    assert isinstance(model, ChatModel)
    assert model.supports_native_tools


@pytest.mark.parametrize("max_tokens", [0, -1, "100", 10.0, True])
def test_max_tokens_must_allow_a_reply(max_tokens: object) -> None:
    with pytest.raises(
        UsageError, match=r"max_tokens must be a whole number, at least 1, not .*: the API requires"
    ):
        AnthropicModel("m", base_url="http://x", max_tokens=cast("int", max_tokens))


@pytest.mark.parametrize("name", ["", "  ", None, 5])
def test_a_model_name_that_is_not_text_is_refused_before_a_client_is_made(name: object) -> None:
    with pytest.raises(
        UsageError, match=r"AnthropicModel\(model\) takes the provider's name of the model, such as"
    ):
        AnthropicModel(cast("str", name), base_url="http://x")


@pytest.mark.parametrize(
    ("api_key", "sent"),
    [("sk-secret", "sk-secret"), ("  ", "none"), (None, "none")],
    ids=["key", "blank", "none"],
)
def test_the_key_goes_only_in_the_header_and_a_local_server_needs_none(
    api_key: str | None, sent: str
) -> None:
    endpoint = FakeEndpoint([stream(start(), *end("end_turn", {}))])

    async def main() -> str:
        async with serving(endpoint) as base_url:
            model = AnthropicModel("m", base_url=base_url, api_key=api_key)
            _ = [d async for d in model.stream([ChatMessage.user("hi")])]
            return repr(model).replace(base_url, "URL")

    assert asyncio.run(main()) == "AnthropicModel(model='m', base_url='URL')"
    assert endpoint.headers[0].get("authorization") == f"Bearer {sent}"


def test_the_request_body_maps_every_role_and_merges_thinking_and_extra_options() -> None:
    model = AnthropicModel(
        "m",
        base_url="http://x",
        thinking={"type": "enabled", "budget_tokens": 1024},
        extra_body={"temperature": 0},
    )
    messages = [
        ChatMessage.system("Be brief."),
        ChatMessage.user("Hi"),
        ChatMessage.user("  "),
        ChatMessage.assistant(
            "Looking.",
            [ChatToolCall("c1", "f", "{not json"), ChatToolCall("c2", "g", "[1]")],
            [
                ChatReasoning("Plan.", "sig"),
                ChatReasoning("lost", None),
                ChatReasoning("", "redacted_thinking:xyz"),
            ],
        ),
        ChatMessage.tool("c1", "", name="f", is_error=True),
        ChatMessage.tool("c2", "ok", name="g"),
        ChatMessage.user("And now?"),
        ChatMessage.system("Use metric units."),
        ChatMessage.assistant(""),
    ]

    body = model.request_body(
        messages, [Tool(name="f", description="", parameters=None)], stop=["</s>"]
    )

    assert body == {
        "model": "m",
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Plan.", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "xyz"},
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
                    {"type": "tool_use", "id": "c2", "name": "g", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "is_error": True},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "ok"},
                    {"type": "text", "text": "And now?"},
                ],
            },
        ],
        "stream": True,
        "system": "Be brief.\n\nUse metric units.",
        "tools": [{"name": "f", "input_schema": {"type": "object", "properties": {}}}],
        "stop_sequences": ["</s>"],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "temperature": 0,
    }


def test_the_history_carries_signed_reasoning_onto_the_next_assistant_message() -> None:
    history: list[Message] = [
        UserMessage(id="u1", content="Hi"),
        ReasoningMessage(id="r0", content="unsigned, for the UI only"),
        ReasoningMessage(id="r1", content="Greet.", encrypted_value="sig-1"),
        AssistantMessage(id="a1", content="Hello"),
        # A turn can reach the client as two assistant messages; they merge, reasoning and all.
        ReasoningMessage(id="r2", content="And more.", encrypted_value="sig-2"),
        AssistantMessage(id="a2", content="again"),
        ReasoningMessage(id="r3", content="Stray.", encrypted_value="sig-3"),
        UserMessage(id="u2", content="Bye"),
    ]

    converted = chat_messages(history)

    assert [(m.role, m.content, m.reasoning) for m in converted] == [
        ("user", "Hi", ()),
        (
            "assistant",
            "Hello\nagain",
            (ChatReasoning("Greet.", "sig-1"), ChatReasoning("And more.", "sig-2")),
        ),
        ("user", "Bye", ()),
    ]


def test_the_memory_of_thinking_keeps_only_the_latest_calls() -> None:
    memory = ThinkingMemory(size=2)
    for name in ("a", "b", "a", "c"):
        memory.remember(name, [{"type": "thinking", "thinking": name, "signature": "s"}])

    assert [memory.recall(name) is not None for name in ("a", "b", "c")] == [True, False, True]


def test_importing_the_models_does_not_load_the_sdk() -> None:
    code = (
        "import sys, agui.agents, agui.agents.models; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'anthropic'))"
    )

    loaded = subprocess.run(  # noqa: S603 - this interpreter, on a fixed program
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert loaded == "[]"


# -- a property: however the arguments are split, the call is the same ------------------------


ARGUMENTS = st.dictionaries(
    st.text(min_size=1, max_size=8),
    st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.none()),
    max_size=4,
)


@given(arguments=ARGUMENTS, data=st.data())
@settings(max_examples=40, deadline=None)
def test_any_split_of_the_json_into_input_json_deltas_gives_the_same_arguments(
    arguments: _Json, data: st.DataObject, shared_endpoint: tuple[FakeEndpoint, str]
) -> None:
    endpoint, base_url = shared_endpoint
    encoded = json.dumps(arguments, ensure_ascii=False)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(encoded) - 1)), max_size=6)))
    pieces = [encoded[a:b] for a, b in zip([0, *cuts], [*cuts, len(encoded)], strict=True)]
    endpoint.replies = [
        stream(start(), *tool_use(0, "toolu_p", "f", *pieces), *end("tool_use", {})),
    ]
    model = AnthropicModel("m", base_url=base_url, max_retries=0, timeout=5)

    async def main() -> list[Event]:
        # A tool the client offers: the run ends with the call, as the client will run it.
        question = UserMessage(id="u", content="go")
        ask = RunAgentInput(
            thread_id="t", run_id="r", messages=[question], tools=[Tool(name="f", description="F")]
        )
        return await collect(ToolLoopAgent(model), ask)

    events = asyncio.run(main())

    assert_valid(events)
    args = "".join(e.delta for e in events if isinstance(e, ToolCallArgsEvent))
    assert json.loads(args) == arguments
    echoed = ChatMessage.assistant("", [ChatToolCall("toolu_p", "f", args)])
    sent = cast("list[_Json]", model.request_body([echoed], [])["messages"])[0]
    assert cast("list[_Json]", sent["content"])[0]["input"] == arguments


@pytest.fixture(scope="module")
def shared_endpoint() -> Generator[tuple[FakeEndpoint, str], None, None]:
    endpoint = FakeEndpoint([])
    with serving_in_a_thread(endpoint) as base_url:
        yield endpoint, base_url


def test_a_model_without_credentials_ends_the_run_with_an_authentication_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    agent = ToolLoopAgent(AnthropicModel("claude-sonnet-4-5"))
    question = RunAgentInput(
        thread_id="t", run_id="r", messages=[UserMessage(id="u1", content="Hi")]
    )

    events = asyncio.run(collect(agent, question))

    assert_valid(events)
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "MODEL_AUTHENTICATION"
    assert "set ANTHROPIC_API_KEY, or pass api_key=" in error.message


# -- media in user messages --------------------------------------------------------------------

PNG = "iVBORw0KGgo="  # eight bytes of base64, a PNG's signature
PDF = "JVBERi0xLjQ="  # "%PDF-1.4"


def _ask(
    parts: Sequence[ContentPart], *, max_image_bytes: int = 5 * 2**20
) -> tuple[list[Event], FakeEndpoint]:
    endpoint = FakeEndpoint([stream(start(), *text(0, "A cat."), *end("end_turn"))])

    async def main() -> list[Event]:
        async with serving(endpoint) as base_url:
            model = AnthropicModel(
                "claude-test",
                base_url=base_url,
                api_key="k",
                max_retries=0,
                max_image_bytes=max_image_bytes,
            )
            question = UserMessage(id="u1", content=list(parts))
            given = RunAgentInput(thread_id="t", run_id="r1", messages=[question])
            return await collect(ToolLoopAgent(model), given)

    return asyncio.run(main()), endpoint


@pytest.mark.ag_ui_validate
def test_images_and_documents_reach_the_model_as_image_and_document_blocks_in_order() -> None:
    parts: list[ContentPart] = [
        TextPart(text="Compare these."),
        ImagePart(source=DataSource(value=PNG, mime_type="image/png")),
        ImagePart(source=UrlSource(value="https://example.com/cat.jpg")),
        DocumentPart(source=DataSource(value=PDF, mime_type="application/pdf")),
        DocumentPart(source=UrlSource(value="https://example.com/a.pdf")),
        DocumentPart(source=DataSource(value="bm90ZXM=", mime_type="text/plain")),
    ]

    events, endpoint = _ask(parts)

    _checked(events)
    pdf = {"type": "base64", "media_type": "application/pdf", "data": PDF}
    assert endpoint.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Compare these."},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
                {"type": "document", "source": pdf},
                {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}},
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
                },
            ],
        }
    ]


@pytest.mark.parametrize(
    ("part", "shown"),
    [
        (
            AudioPart(source=DataSource(value="UklGRg==", mime_type="audio/wav")),
            r"audio part \(audio/wav, inline data\) cannot go to AnthropicModel 'claude-test'",
        ),
        (
            ImagePart(source=DataSource(value=PNG, mime_type="image/bmp")),
            r"image part \(image/bmp, inline data\) .*: the API takes a JPEG, PNG, GIF or WebP",
        ),
        (
            DocumentPart(source=DataSource(value="//4=", mime_type="text/plain")),
            r"document part \(text/plain, inline data\) .*: the API takes a PDF",
        ),
        (
            DocumentPart(source=DataSource(value=PDF, mime_type="application/msword")),
            r"document part \(application/msword, inline data\) .*: the API takes a PDF",
        ),
        (
            DocumentPart(source=FileSource(value="file-1")),
            r"document part \(a file id\) .*: the API takes a PDF",
        ),
    ],
    ids=["audio", "bmp", "text-not-utf8", "word", "file-id"],
)
def test_a_part_the_messages_api_cannot_take_fails_the_run_before_any_request(
    part: ContentPart, shown: str
) -> None:
    events, endpoint = _ask([part])

    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "UNSUPPORTED_CONTENT"
    assert re.search(r"user message 1's " + shown, error.message)
    assert endpoint.requests == []


def test_an_inline_image_over_the_limit_is_refused_with_content_too_large() -> None:
    events, endpoint = _ask(
        [ImagePart(source=DataSource(value=PNG * 400, mime_type="image/png"))], max_image_bytes=1000
    )

    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert error.code == "CONTENT_TOO_LARGE"
    assert endpoint.requests == []
