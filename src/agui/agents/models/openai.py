"""`OpenAIModel`: the streaming Chat Completions API through the official `openai` SDK.

One wire format serves OpenAI, Azure OpenAI and the local servers that copy it (Ollama,
llama.cpp's server, vLLM, LM Studio) and many gateways; the SDK already reads its Server-Sent
Events, retries, times out and types its errors, so this module only maps. Text comes in
`delta.content`, reasoning in `delta.reasoning_content` or `delta.reasoning` (the field differs
between servers, so it is read from the SDK's extra members; a chunk with both is read once),
tool-call fragments in `delta.tool_calls` (interleaved by `index`; id and name only in a call's
first fragment), the finish reason, and, with `stream_options.include_usage`, a last chunk with
the token counts. Each becomes a `ChatDelta`; assembling calls is the dispatcher's job.

A user message's media goes as the API's content parts: an image (inline data or a URL) as
`image_url`, wav or mp3 audio data as `input_audio`. `input_media` says which of the two the
model reads (both by default; `()` for a text-only model such as a local coder model), and a part
outside it, or one the API cannot carry (video, a document, a provider's file id), fails the run
with `UNSUPPORTED_CONTENT` before the request is sent; an inline image over `max_image_bytes`
fails it with `CONTENT_TOO_LARGE`.

A chunk is read back through models of our own (`from_attributes`), because the SDK builds
streamed chunks without validating them: a server's malformed chunk is refused here instead of
surfacing as a wrong type three calls later. Failures never hang and never leak a raw traceback:
each SDK error becomes an `agui.errors.ModelError` whose code says what went wrong
(`MODEL_AUTHENTICATION`, `MODEL_RATE_LIMITED`, `MODEL_TIMEOUT`, `MODEL_UNAVAILABLE`,
`MODEL_ERROR`), which the run driver sends as `RUN_ERROR`.

The SDK is imported when a model is built: install it with the `agui-server[openai]` extra.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from pydantic import BaseModel, JsonValue, ValidationError, field_validator

from agui.agents.models._failure import SHOWN, shown, stream_failure
from agui.agents.models._media import MediaKind, MediaRules, data_url
from agui.agents.models._options import checked_count, checked_name
from agui.agents.models.base import (
    ChatDelta,
    ChatMessage,
    FinishDelta,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
from agui.errors import (
    ModelAuthenticationError,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
)
from agui.messages import AudioPart, ContentPart, DataSource, ImagePart, JsonObject, TextPart
from agui.types import TokenUsage, Tool

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

__all__ = ["OpenAIModel"]

_MAX_COUNT = 2**53 - 1
_SERVER_ERROR = 500
_API_MEDIA: tuple[MediaKind, ...] = ("image", "audio")
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/wave": "wav",
    "audio/x-wav": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


def _sdk() -> None:
    # An optional dependency, imported where it is first needed; here only looked for.
    if importlib.util.find_spec("openai") is None:  # pragma: no cover - tests have the SDK
        message = (
            "OpenAIModel needs the openai SDK; install it with: pip install 'agui-server[openai]'"
        )
        raise ImportError(message)


class OpenAIModel:
    """A `ChatModel` on the OpenAI SDK's streaming Chat Completions, for any compatible server.

    Pass `client` to use an `openai.AsyncOpenAI` (or `AsyncAzureOpenAI`) made your way, with
    its own proxy, headers or credentials; otherwise one is made from `base_url` and `api_key`
    (the SDK reads `OPENAI_API_KEY` and `OPENAI_BASE_URL` when they are not given; a local
    server needs no key, so a blank one is sent as `"none"`). `timeout` (seconds) and
    `max_retries` go to the SDK; left unset, a given client keeps its own. `extra_body` is
    merged into every request (say, `{"temperature": 0, "max_tokens": 256}`). `input_media` lists
    the media a user message may carry to this model (`"image"`, `"audio"`), and
    `max_image_bytes` caps an inline image.

    Examples:
        >>> model = OpenAIModel("qwen3", base_url="http://localhost:11434/v1", api_key="sk-1")
        >>> model
        OpenAIModel(model='qwen3', base_url='http://localhost:11434/v1/')
        >>> model.request_body([ChatMessage.user("Hi")], [], stop=["</s>"])["stop"]
        ['</s>']
    """

    def __init__(  # noqa: PLR0913 - each option is a keyword a deployment may need
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str | None = None,
        supports_native_tools: bool = True,
        include_usage: bool = True,
        extra_body: Mapping[str, JsonValue] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        input_media: Iterable[str] = ("image", "audio"),
        max_image_bytes: int = 20 * 2**20,
    ) -> None:
        _sdk()
        import openai  # noqa: PLC0415 - optional; _sdk() gave the friendly error

        model = checked_name(model, "OpenAIModel", "gpt-4o-mini")
        limit = checked_count("max_image_bytes", max_image_bytes, "it caps an inline image")
        self._media = MediaRules(f"OpenAIModel {model!r}", _API_MEDIA, input_media, limit)
        self._owned = client is None
        if client is None:
            key = api_key.strip() if api_key and api_key.strip() else None
            client = openai.AsyncOpenAI(
                api_key=key if key is not None or base_url is None else "none",
                base_url=base_url,
                timeout=60.0 if timeout is None else timeout,
                max_retries=2 if max_retries is None else max_retries,
            )
        elif timeout is not None or max_retries is not None:
            client = client.with_options(
                timeout=client.timeout if timeout is None else timeout,
                max_retries=client.max_retries if max_retries is None else max_retries,
            )
        self.client: openai.AsyncOpenAI = client
        self.model = model
        self.provider = provider
        self._native = supports_native_tools
        self._include_usage = include_usage
        self._extra = dict(extra_body or {})

    @property
    def supports_native_tools(self) -> bool:
        """As configured (`True` by default; set `False` for a model without tool calling)."""
        return self._native

    @property
    def base_url(self) -> str:
        """The API root the requests go to."""
        return str(self.client.base_url)

    def __repr__(self) -> str:
        # The key stays out: a repr ends up in logs.
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    def request_body(
        self, messages: Sequence[ChatMessage], tools: Sequence[Tool], *, stop: Sequence[str] = ()
    ) -> JsonObject:
        """The JSON body of a streaming request for `messages` offering `tools`."""
        body: JsonObject = {
            "model": self.model,
            "messages": _wire_messages(messages, self._media),
            "stream": True,
        }
        if self._include_usage:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = [_wire_tool(tool) for tool in tools]
        if stop:
            body["stop"] = list(stop)
        body.update(self._extra)
        return body

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] = (),
    ) -> AsyncIterator[ChatDelta]:
        """Send the conversation and stream the response's deltas.

        Raises an `agui.errors.ModelError` (by kind) when the request fails or the stream breaks.
        """
        import openai  # noqa: PLC0415 - optional; _sdk() in __init__ gave the friendly error

        body = self.request_body(messages, tools, stop=stop)
        # A client made here is made per request and closed after it, so that no connection
        # outlives the stream; a client given to the model is the caller's to close.
        fresh = openai.DefaultAsyncHttpxClient() if self._owned else None
        client = self.client.copy(http_client=fresh) if fresh is not None else self.client
        begun = False
        try:
            response = await client.chat.completions.create(
                model=self.model,
                messages=cast("list[ChatCompletionMessageParam]", body["messages"]),
                tools=cast("list[ChatCompletionToolParam]", body.get("tools", openai.omit)),
                stop=list(stop) if stop else openai.omit,
                stream=True,
                stream_options={"include_usage": True} if self._include_usage else openai.omit,
                extra_body=self._extra or None,
            )
            begun = True
            self._check(response.response.headers.get("content-type", ""))
            async with response:
                async for chunk in response:
                    for delta in self._deltas(chunk):
                        yield delta
        except openai.OpenAIError as error:
            raise _model_error(error, self.base_url, begun=begun) from None
        except ValueError as error:
            # The SDK hands a data line that is not JSON to json.loads, and lets it raise.
            text = str(error)[:SHOWN]
            message = f"the model API at {self.base_url} sent a chunk that is not JSON: {text}"
            raise ModelError(message) from None
        finally:
            if self._owned:
                await client.close()

    def _check(self, content_type: str) -> None:
        if content_type.startswith("application/json"):
            # A server that ignores `stream: true` would otherwise look like an empty answer.
            message = f"the model API at {self.base_url} answered with JSON, not an event stream"
            raise ModelError(message)

    def _deltas(self, sdk_chunk: object) -> list[ChatDelta]:
        try:
            chunk = _Chunk.model_validate(sdk_chunk, from_attributes=True)
        except ValidationError as error:
            detail = shown(str(error).replace("\n", " "))
            message = f"the model API at {self.base_url} sent a malformed chunk: {detail}"
            raise ModelError(message) from None
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


# -- the chunk, as read back -------------------------------------------------------------------


class _Function(BaseModel, from_attributes=True):
    name: str | None = None
    arguments: str | None = None

    @field_validator("arguments", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> object:
        # Some OpenAI-compatible servers send the arguments as the object itself, not its text.
        if isinstance(value, dict):
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return value


class _Fragment(BaseModel, from_attributes=True):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Delta(BaseModel, from_attributes=True):
    content: str | None = None
    reasoning_content: JsonValue = None
    reasoning: JsonValue = None
    tool_calls: list[_Fragment] | None = None


class _Choice(BaseModel, from_attributes=True):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _Details(BaseModel, from_attributes=True):
    reasoning_tokens: JsonValue = None
    cached_tokens: JsonValue = None


class _Usage(BaseModel, from_attributes=True):
    prompt_tokens: JsonValue = None
    completion_tokens: JsonValue = None
    total_tokens: JsonValue = None
    completion_tokens_details: _Details | None = None
    prompt_tokens_details: _Details | None = None


class _Chunk(BaseModel, from_attributes=True):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    model: str | None = None


def _model_error(error: openai.OpenAIError, base_url: str, *, begun: bool) -> ModelError:  # noqa: PLR0911 - one return per kind
    import openai  # noqa: PLC0415 - optional, as above

    where = f"the model API at {base_url}"
    if begun and isinstance(error, openai.APIConnectionError):
        timed_out = isinstance(error, openai.APITimeoutError)
        return stream_failure(where, error, timed_out=timed_out)
    if isinstance(error, openai.APITimeoutError):
        return ModelTimeout(f"{where} did not answer in time: raise timeout= if it is slow")
    if isinstance(error, openai.APIConnectionError):
        return ModelUnavailable(f"{where} could not be reached: {error}")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        detail = _body_text(error.body)
        text = f"{where} answered HTTP {status}" + (f": {shown(detail)}" if detail else "")
        if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return ModelAuthenticationError(text)
        if isinstance(error, openai.RateLimitError):
            return ModelRateLimited(text)
        if status >= _SERVER_ERROR:
            return ModelUnavailable(text)
        return ModelError(text)
    return ModelError(f"{where} failed mid-stream: {shown(str(error))}")


def _choice_deltas(choice: _Choice) -> list[ChatDelta]:
    delta = choice.delta or _Delta()
    # A server moving from one field to the other may fill both with the same text (vLLM
    # does): the first that holds text is the chunk's reasoning, never both.
    texts = [t for t in (delta.reasoning_content, delta.reasoning) if isinstance(t, str) and t]
    deltas: list[ChatDelta] = [ReasoningDelta(texts[0])] if texts else []
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


def _body_text(body: object) -> str:
    # The SDK gives the parsed error body: `{"message": ...}`, a bare string, or anything else.
    if isinstance(body, dict):
        message = cast("dict[str, object]", body).get("message")
        return message if isinstance(message, str) else json.dumps(body)
    return body if isinstance(body, str) else ""


def _wire_messages(messages: Sequence[ChatMessage], media: MediaRules) -> list[JsonValue]:
    out: list[JsonValue] = []
    users = 0
    for message in messages:
        users += message.role == "user"
        if message.role == "user" and message.parts:
            parts: list[JsonValue] = [_wire_part(part, media, users) for part in message.parts]
            out.append({"role": "user", "content": parts})
        else:
            out.append(_wire_message(message))
    return out


def _wire_part(part: ContentPart, media: MediaRules, number: int) -> JsonObject:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    media.check(part, number)
    source = part.source
    if isinstance(part, ImagePart) and source.type != "file":
        url = data_url(source) if isinstance(source, DataSource) else source.value
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(part, AudioPart) and isinstance(source, DataSource):
        audio_format = _AUDIO_FORMATS.get(source.mime_type.lower())
        if audio_format is not None:
            return {
                "type": "input_audio",
                "input_audio": {"data": source.value, "format": audio_format},
            }
    raise media.refusal(part, number, _HOW[part.type])


_HOW: dict[str, str] = {
    "image": "the API takes an image as inline data or a URL",
    "audio": "the API takes audio as inline wav or mp3 data",
}


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
