"""`AnthropicModel`: Anthropic's streaming Messages API through the official `anthropic` SDK.

The Messages API is the other native tool-calling API besides Chat Completions, and it differs
in ways a mapping must respect: the system prompt is a field of its own; a reply is a list of
content blocks (`text`, `tool_use`, `thinking`, `redacted_thinking`) that stream as
`content_block_start`, `content_block_delta` and `content_block_stop` events; tool results are
`tool_result` blocks in the next *user* message; and `max_tokens` is required. The SDK reads
the Server-Sent Events, retries, times out and types the errors; this module only maps.

Extended thinking with tools needs a turn's thinking blocks sent back with it, signature and
all, or the API refuses the next request. So each `signature` (and each `redacted_thinking`
block's data) ends its reasoning block as an encrypted value, which the client keeps on the
reasoning message (`REASONING_ENCRYPTED_VALUE`) and returns with the history; and the model
also remembers, for a while, the blocks that preceded each `tool_use` it streamed, because the
tool loop's next request is built before any history comes back.

A user message's images (JPEG, PNG, GIF, WebP) and documents (PDF, plain text) go as `image` and
`document` blocks. `input_media` says which of the two the model reads (both by default), and a
part outside it, or one the API cannot carry (audio, video, a provider's file id), fails the run
with `UNSUPPORTED_CONTENT` before the request is sent; an inline image over `max_image_bytes`
(5 MiB by default, the API's own limit) fails it with `CONTENT_TOO_LARGE`.

Failures end as `agui.errors.ModelError`s by kind, the same codes `OpenAIModel` uses
(`MODEL_AUTHENTICATION`, `MODEL_RATE_LIMITED`, `MODEL_TIMEOUT`, `MODEL_UNAVAILABLE` for 5xx and
529 overloaded, `MODEL_ERROR`), including an `error` event in the middle of a stream. The SDK
is imported when a model is built: install it with the `agui-server[anthropic]` extra.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from pydantic import JsonValue, ValidationError

from agui.agents.models._anthropic_wire import (
    API_MEDIA,
    StreamReader,
    ThinkingMemory,
    request_messages,
    system_prompt,
    wire_tool,
)
from agui.agents.models._failure import shown, stream_failure
from agui.agents.models._media import MediaRules
from agui.agents.models._options import checked_count, checked_name
from agui.agents.models.base import ChatDelta, ChatMessage
from agui.errors import (
    ModelAuthenticationError,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
)
from agui.messages import JsonObject
from agui.types import Tool

if TYPE_CHECKING:
    import anthropic
    from anthropic.lib.bedrock import AsyncAnthropicBedrock
    from anthropic.lib.vertex import AsyncAnthropicVertex
    from anthropic.types import MessageParam, ThinkingConfigParam, ToolParam

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicModel"]

DEFAULT_MAX_TOKENS = 4096
"""What every Claude model can write in one reply; raise it for long answers or thinking."""

_SERVER_ERROR = 500
_CLIENT_ERROR = 400
_KINDS: dict[str, type[ModelError]] = {
    "authentication_error": ModelAuthenticationError,
    "permission_error": ModelAuthenticationError,
    "rate_limit_error": ModelRateLimited,
    "overloaded_error": ModelUnavailable,
    "api_error": ModelUnavailable,
    "timeout_error": ModelTimeout,
}


def _sdk() -> None:
    # An optional dependency, imported where it is first needed; here only looked for.
    if importlib.util.find_spec("anthropic") is None:  # pragma: no cover - tests have the SDK
        message = (
            "AnthropicModel needs the anthropic SDK; "
            "install it with: pip install 'agui-server[anthropic]'"
        )
        raise ImportError(message)


class AnthropicModel:
    """A `ChatModel` on the Anthropic SDK's streaming Messages API.

    Pass `client` to use an `anthropic.AsyncAnthropic` made your way (a proxy, headers, a
    gateway's `base_url`), or a Bedrock or Vertex client, whose Messages API is the same;
    otherwise one is made from `base_url` and `api_key` (the SDK reads `ANTHROPIC_API_KEY` and
    `ANTHROPIC_BASE_URL` when they are not given). `timeout` (seconds) and `max_retries` go to
    the SDK; left unset, a given client keeps its own. `max_tokens` caps each reply (the API
    requires it); `thinking` turns on extended thinking (say,
    `{"type": "enabled", "budget_tokens": 2048}`, below `max_tokens`); `extra_body` is merged
    into every request (say, `{"temperature": 0}`). `input_media` lists the media a user message
    may carry to this model (`"image"`, `"document"`), and `max_image_bytes` caps an inline image.

    Examples:
        >>> model = AnthropicModel("claude-sonnet-4-5", base_url="http://127.0.0.1:9", api_key="k")
        >>> model
        AnthropicModel(model='claude-sonnet-4-5', base_url='http://127.0.0.1:9')
        >>> body = model.request_body([ChatMessage.system("Be brief."), ChatMessage.user("Hi")], [])
        >>> body["system"], body["messages"], body["max_tokens"]
        ('Be brief.', [{'role': 'user', 'content': [{'type': 'text', 'text': 'Hi'}]}], 4096)
    """

    def __init__(  # noqa: PLR0913 - each option is a keyword a deployment may need
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic
        | AsyncAnthropicBedrock
        | AsyncAnthropicVertex
        | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        provider: str | None = "anthropic",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        thinking: Mapping[str, JsonValue] | None = None,
        extra_body: Mapping[str, JsonValue] | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        input_media: Iterable[str] = API_MEDIA,
        max_image_bytes: int = 5 * 2**20,
    ) -> None:
        _sdk()
        import anthropic  # noqa: PLC0415 - optional; _sdk() gave the friendly error

        model = checked_name(model, "AnthropicModel", "claude-sonnet-4-5")
        max_tokens = checked_count("max_tokens", max_tokens, "the API requires a cap")
        limit = checked_count("max_image_bytes", max_image_bytes, "it caps an inline image")
        self._media = MediaRules(f"AnthropicModel {model!r}", API_MEDIA, input_media, limit)
        self._owned = client is None
        # Bedrock's and Vertex's clients share the Messages API and these options; one type
        # is named for all three, so the SDK's overloads resolve.
        client = cast("anthropic.AsyncAnthropic | None", client)
        if client is None:
            key = api_key.strip() if api_key and api_key.strip() else None
            client = anthropic.AsyncAnthropic(
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
        self.client: anthropic.AsyncAnthropic = client
        self.model = model
        self.provider = provider
        self.max_tokens = max_tokens
        self._thinking = dict(thinking) if thinking is not None else None
        self._extra = dict(extra_body or {})
        self._memory = ThinkingMemory()

    @property
    def supports_native_tools(self) -> bool:
        """Always: the Messages API takes tool specs and answers with `tool_use` blocks."""
        return True

    @property
    def base_url(self) -> str:
        """The API root the requests go to."""
        return str(self.client.base_url)

    def __repr__(self) -> str:
        # The key stays out: a repr ends up in logs.
        return f"AnthropicModel(model={self.model!r}, base_url={self.base_url!r})"

    def request_body(
        self, messages: Sequence[ChatMessage], tools: Sequence[Tool], *, stop: Sequence[str] = ()
    ) -> JsonObject:
        """The JSON body of a streaming request for `messages` offering `tools`."""
        body: JsonObject = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": request_messages(messages, self._memory, self._media),
            "stream": True,
        }
        system = system_prompt(messages)
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [wire_tool(tool) for tool in tools]
        if stop:
            body["stop_sequences"] = list(stop)
        if self._thinking is not None:
            body["thinking"] = self._thinking
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
        import anthropic  # noqa: PLC0415 - optional; _sdk() in __init__ gave the friendly error

        body = self.request_body(messages, tools, stop=stop)
        self._check_credentials()
        # A client made here is made per request and closed after it, so that no connection
        # outlives the stream; a client given to the model is the caller's to close.
        fresh = anthropic.DefaultAsyncHttpxClient() if self._owned else None
        client = self.client.copy(http_client=fresh) if fresh is not None else self.client
        reader = StreamReader(self._memory, self.provider, self.model)
        begun = False
        try:
            response = await client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                messages=cast("list[MessageParam]", body["messages"]),
                system=cast("str", body.get("system", anthropic.omit)),
                tools=cast("list[ToolParam]", body.get("tools", anthropic.omit)),
                stop_sequences=list(stop) if stop else anthropic.omit,
                thinking=cast("ThinkingConfigParam", body.get("thinking", anthropic.omit)),
                stream=True,
                extra_body=self._extra or None,
            )
            begun = True
            self._check(response.response.headers.get("content-type", ""))
            async with response:
                async for event in response:
                    for delta in reader.read(event):
                        yield delta
            if not reader.finished:
                message = f"the model API at {self.base_url} ended the stream before message_stop"
                raise ModelUnavailable(message)
        except anthropic.AnthropicError as error:
            raise _model_error(error, self.base_url, begun=begun) from None
        except ValidationError as error:
            detail = shown(str(error).replace("\n", " "))
            message = f"the model API at {self.base_url} sent a malformed event: {detail}"
            raise ModelError(message) from None
        except ValueError as error:
            # The SDK hands a data line that is not JSON to json.loads, and lets it raise.
            message = f"the model API at {self.base_url} sent an event that is not JSON: "
            raise ModelError(message + shown(str(error))) from None
        finally:
            if self._owned:
                await client.close()

    def _check_credentials(self) -> None:
        # Without a key the SDK raises a TypeError at the request, which reads as agent code's.
        if self._owned and self.client.api_key is None and self.client.auth_token is None:
            message = (
                f"no API key for the model API at {self.base_url}: set ANTHROPIC_API_KEY, or "
                "pass api_key= (or a client of your own) to AnthropicModel"
            )
            raise ModelAuthenticationError(message)

    def _check(self, content_type: str) -> None:
        if content_type.startswith("application/json"):
            # A server that ignores `stream: true` would otherwise look like an empty answer.
            message = f"the model API at {self.base_url} answered with JSON, not an event stream"
            raise ModelError(message)


def _model_error(error: anthropic.AnthropicError, base_url: str, *, begun: bool) -> ModelError:
    import anthropic  # noqa: PLC0415 - optional, as above

    where = f"the model API at {base_url}"
    if begun and isinstance(error, anthropic.APIConnectionError):
        timed_out = isinstance(error, anthropic.APITimeoutError)
        return stream_failure(where, error, timed_out=timed_out)
    if isinstance(error, anthropic.APITimeoutError):
        return ModelTimeout(f"{where} did not answer in time: raise timeout= if it is slow")
    if isinstance(error, anthropic.APIConnectionError):
        return ModelUnavailable(f"{where} could not be reached: {error}")
    if isinstance(error, anthropic.APIStatusError):
        return _status_error(error, where)
    return ModelError(f"{where} failed: {shown(str(error))}")


def _status_error(error: anthropic.APIStatusError, where: str) -> ModelError:
    status = error.status_code
    detail = error.api_message or _body_text(error.body)
    if status < _CLIENT_ERROR:
        # An `error` event in a stream that began well: its `type` says what went wrong.
        kind = error.type or "error"
        text = f"{where} failed mid-stream: {kind}" + (f": {shown(detail)}" if detail else "")
        return _KINDS.get(kind, ModelError)(text)
    text = f"{where} answered HTTP {status}" + (f": {shown(detail)}" if detail else "")
    if status in (401, 403):
        return ModelAuthenticationError(text)
    if status == 429:  # noqa: PLR2004 - the HTTP status, named in the line
        return ModelRateLimited(text)
    if status >= _SERVER_ERROR:
        return ModelUnavailable(text)
    return ModelError(text)


def _body_text(body: object) -> str:
    # The SDK gives the parsed error body: `{"error": {...}}`, a bare string, or anything else.
    if isinstance(body, str):
        return body
    return json.dumps(body) if isinstance(body, dict) else ""
