"""`OpenAICompatibleModel`: the streaming `/chat/completions` API over httpx.

One wire format serves OpenAI and the local servers that copy it (Ollama, llama.cpp's server,
vLLM, LM Studio) and many hosted gateways. The response is Server-Sent Events of JSON chunks:
text in `delta.content`, reasoning in `delta.reasoning_content` or `delta.reasoning` (the field
differs between servers), tool-call fragments in `delta.tool_calls` (interleaved by `index`; id
and name only in a call's first fragment), the finish reason, and, with
`stream_options.include_usage`, a last chunk with the token counts. Each becomes a `ChatDelta`;
assembling calls is the dispatcher's job.

Failures never hang and never leak a raw traceback to the client: an HTTP error status, a chunk
that is not JSON, an error object sent mid-stream, a connection dropped mid-stream and a timeout
(connect and per-read) all raise `AgentError` with a message naming the endpoint, which the run
driver sends as `RUN_ERROR`. The API key travels only in the Authorization header and is never
shown by `repr`.

httpx is imported lazily: install it with the `agui-server[openai]` extra.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, JsonValue, ValidationError

from agui.agents.models.base import (
    ChatDelta,
    ChatMessage,
    FinishDelta,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
from agui.errors import AgentError
from agui.messages import JsonObject
from agui.types import TokenUsage, Tool

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAICompatibleModel"]

_MAX_COUNT = 2**53 - 1
_SHOWN = 200


def _httpx() -> object:
    try:
        import httpx  # noqa: PLC0415 - an optional dependency, imported when first needed
    except ImportError:  # pragma: no cover - the test environment has httpx
        message = (
            "OpenAICompatibleModel needs httpx; install it with: pip install 'agui-server[openai]'"
        )
        raise ImportError(message) from None
    return httpx


class OpenAICompatibleModel:
    """A `ChatModel` for any OpenAI-compatible `/chat/completions` endpoint, streamed.

    `base_url` is the API root (`https://api.openai.com/v1`, `http://localhost:11434/v1` for
    Ollama); a blank `api_key` counts as none. `timeout` bounds each read, `connect_timeout`
    the connection. `extra_body` is merged into every request (say, `{"temperature": 0}`).
    Pass `client` to reuse an `httpx.AsyncClient` (it is then not closed here).

    Examples:
        >>> model = OpenAICompatibleModel("http://localhost:11434/v1/", "qwen3", api_key="sk-1")
        >>> model.url, model
        ('http://localhost:11434/v1/chat/completions',
         OpenAICompatibleModel(base_url='http://localhost:11434/v1', model='qwen3', api_key='***'))
    """

    def __init__(  # noqa: PLR0913 - each option is a keyword a deployment may need
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        provider: str | None = None,
        supports_native_tools: bool = True,
        include_usage: bool = True,
        extra_body: Mapping[str, JsonValue] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        _httpx()
        self.base_url: str = base_url.rstrip("/")
        self.model = model
        self.provider = provider
        self._api_key = api_key.strip() if api_key and api_key.strip() else None
        self._native = supports_native_tools
        self._include_usage = include_usage
        self._extra = dict(extra_body or {})
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._client = client

    @property
    def url(self) -> str:
        """The endpoint the requests go to."""
        return f"{self.base_url}/chat/completions"

    @property
    def supports_native_tools(self) -> bool:
        """As configured (`True` by default; set `False` for a model without tool calling)."""
        return self._native

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        shown = f"base_url={self.base_url!r}, model={self.model!r}, api_key={key}"
        return f"OpenAICompatibleModel({shown})"

    def request_body(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> JsonObject:
        """The JSON body of a streaming request for `messages` offering `tools`."""
        body: JsonObject = {
            "model": self.model,
            "messages": [_wire_message(message) for message in messages],
            "stream": True,
        }
        if self._include_usage:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [_wire_tool(tool) for tool in tools]
        body.update(self._extra)
        return body

    async def stream(
        self, messages: Sequence[ChatMessage], *, tools: Sequence[Tool] = ()
    ) -> AsyncIterator[ChatDelta]:
        """POST the conversation and stream the response's deltas.

        Raises `AgentError` on an HTTP error, a malformed or error chunk, a dropped connection
        or a timeout.
        """
        import httpx  # noqa: PLC0415 - optional; _httpx() in __init__ gave the friendly error

        timeout = httpx.Timeout(self._timeout, connect=self._connect_timeout)
        client = self._client or httpx.AsyncClient(timeout=timeout)
        body = self.request_body(messages, tools)
        try:
            async with client.stream(
                "POST", self.url, json=body, headers=self._request_headers(), timeout=timeout
            ) as response:
                await self._check(response)
                async for data in _sse_data(response.aiter_lines()):
                    for delta in self._deltas(data):
                        yield delta
        except httpx.TimeoutException:
            message = f"the model endpoint {self.url} did not answer within {self._timeout:g} s"
            raise AgentError(message) from None
        except httpx.HTTPError as error:
            message = f"the connection to the model endpoint {self.url} failed: {error}"
            raise AgentError(message) from None
        finally:
            if self._client is None:
                await client.aclose()

    async def _check(self, response: httpx.Response) -> None:
        if not response.is_success:
            detail = _error_detail(await response.aread())
            message = f"the model endpoint {self.url} returned HTTP {response.status_code}"
            raise AgentError(message + (f": {detail}" if detail else ""))
        if response.headers.get("content-type", "").startswith("application/json"):
            # A server that ignores `stream: true` would otherwise look like an empty answer.
            message = f"the model endpoint {self.url} answered with JSON, not an event stream"
            raise AgentError(message)

    def _request_headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", **self._headers}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _deltas(self, data: str) -> list[ChatDelta]:
        try:
            chunk = _Chunk.model_validate_json(data)
        except ValidationError:
            shown = data if len(data) <= _SHOWN else data[:_SHOWN] + "..."
            message = f"the model endpoint {self.url} sent a malformed chunk: {shown!r}"
            raise AgentError(message) from None
        if chunk.error is not None:
            detail = _error_text(chunk.error)
            message = f"the model endpoint {self.url} reported an error mid-stream: {detail}"
            raise AgentError(message)
        deltas: list[ChatDelta] = []
        if chunk.choices:
            deltas += _choice_deltas(chunk.choices[0])
        if chunk.usage is not None:
            deltas.append(UsageDelta(self._usage(chunk.usage, chunk.model)))
        return deltas

    def _usage(self, usage: _Usage, model: str | None) -> TokenUsage:
        output = usage.completion_tokens_details
        cached = usage.prompt_tokens_details
        return TokenUsage(
            provider=self.provider,
            model=model or self.model,
            input_tokens=_count(usage.prompt_tokens),
            output_tokens=_count(usage.completion_tokens),
            total_tokens=_count(usage.total_tokens),
            reasoning_tokens=_count(output.reasoning_tokens) if output else None,
            cached_input_tokens=_count(cached.cached_tokens) if cached else None,
        )


# -- the wire ----------------------------------------------------------------------------------


class _Function(BaseModel):
    name: str | None = None
    arguments: str | None = None


class _Fragment(BaseModel):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Delta(BaseModel):
    content: str | None = None
    reasoning_content: JsonValue = None
    reasoning: JsonValue = None
    tool_calls: list[_Fragment] | None = None


class _Choice(BaseModel):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Details(BaseModel):
    reasoning_tokens: JsonValue = None
    cached_tokens: JsonValue = None


class _Usage(BaseModel):
    prompt_tokens: JsonValue = None
    completion_tokens: JsonValue = None
    total_tokens: JsonValue = None
    completion_tokens_details: _Details | None = None
    prompt_tokens_details: _Details | None = None


class _Chunk(BaseModel):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    model: str | None = None
    error: JsonValue = None


def _choice_deltas(choice: _Choice) -> list[ChatDelta]:
    delta = choice.delta or _Delta()
    deltas: list[ChatDelta] = [
        ReasoningDelta(reasoning)
        for reasoning in (delta.reasoning_content, delta.reasoning)
        if isinstance(reasoning, str) and reasoning
    ]
    if delta.content:
        deltas.append(TextDelta(delta.content))
    for fragment in delta.tool_calls or ():
        function = fragment.function or _Function()
        deltas.append(
            ToolCallDelta(
                index=fragment.index,
                id=fragment.id or None,
                name=function.name or None,
                arguments=function.arguments or "",
            )
        )
    if choice.finish_reason:
        deltas.append(FinishDelta(choice.finish_reason))
    return deltas


def _count(value: JsonValue) -> int | None:
    # Absent means not reported; a count that breaks AG-UI's rules is dropped, never invented.
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT:
        return value
    return None


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    data: list[str] = []
    async for line in lines:
        if line:
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value.removeprefix(" "))
            continue
        if data:
            payload, data = "\n".join(data), []
            if payload == "[DONE]":
                return
            yield payload
    if data and "\n".join(data) != "[DONE]":
        yield "\n".join(data)


def _wire_message(message: ChatMessage) -> JsonObject:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        calls: list[JsonValue] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content or None, "tool_calls": calls}
    return {"role": message.role, "content": message.content}


def _wire_tool(tool: Tool) -> JsonObject:
    parameters: JsonValue = tool.parameters
    if not isinstance(parameters, dict):
        parameters = {"type": "object", "properties": {}}
    function: JsonObject = {"name": tool.name, "description": tool.description}
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def _error_detail(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed: JsonValue = json.loads(text)
    except ValueError:
        parsed = text
    detail = _error_text(parsed)
    return detail if len(detail) <= _SHOWN else detail[:_SHOWN] + "..."


def _error_text(error: JsonValue) -> str:
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        return inner if isinstance(inner, str) else json.dumps(inner)
    return error if isinstance(error, str) else json.dumps(error)
