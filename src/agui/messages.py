"""The conversation as AG-UI carries it: seven message roles, content parts and tool calls.

Messages arrive in `RunAgentInput.messages` (the history the client holds) and leave in
`MESSAGES_SNAPSHOT`. They are discriminated by `role`; content parts by `type`, and the source of
a media part by its own `type`. Every model is frozen and omits optional fields it does not hold.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from agui._protocol.model import Opt, WireModel

__all__ = [
    "ActivityMessage",
    "AssistantMessage",
    "AudioPart",
    "ContentPart",
    "DataSource",
    "DeveloperMessage",
    "DocumentPart",
    "FileSource",
    "FunctionCall",
    "ImagePart",
    "Message",
    "ReasoningMessage",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolMessage",
    "UrlSource",
    "UserMessage",
    "VideoPart",
]

JsonObject = dict[str, JsonValue]


class DataSource(WireModel, frozen=True):
    """Inline media: base64 `value` with its `mime_type`.

    Examples:
        >>> DataSource(value="aGk=", mime_type="text/plain").model_dump_json()
        '{"type":"data","value":"aGk=","mimeType":"text/plain"}'
    """

    type: Literal["data"] = "data"
    value: str
    mime_type: str


class UrlSource(WireModel, frozen=True):
    """Media the model fetches from a URL.

    Examples:
        >>> UrlSource(value="https://example.com/a.png").model_dump_json()
        '{"type":"url","value":"https://example.com/a.png"}'
    """

    type: Literal["url"] = "url"
    value: str
    mime_type: Opt[str] = None


class FileSource(WireModel, frozen=True):
    """Media held by a provider, named by an opaque handle (AG-UI 1.0).

    Examples:
        >>> FileSource(value="file-123", provider="openai").model_dump_json()
        '{"type":"file","value":"file-123","provider":"openai"}'
    """

    type: Literal["file"] = "file"
    value: str
    provider: Opt[str] = None
    mime_type: Opt[str] = None


PartSource = Annotated[DataSource | UrlSource | FileSource, Field(discriminator="type")]


class TextPart(WireModel, frozen=True):
    """A piece of text inside a multi-part message or tool result.

    Examples:
        >>> TextPart(text="hello").model_dump_json()
        '{"type":"text","text":"hello"}'
    """

    type: Literal["text"] = "text"
    id: Opt[str] = None
    text: str
    metadata: Opt[JsonValue] = None


class ImagePart(WireModel, frozen=True):
    """An image, from a data, url or file source.

    Examples:
        >>> ImagePart(source=UrlSource(value="https://example.com/a.png")).type
        'image'
    """

    type: Literal["image"] = "image"
    id: Opt[str] = None
    source: PartSource
    metadata: Opt[JsonValue] = None


class AudioPart(WireModel, frozen=True):
    """A piece of audio, from a data, url or file source.

    Examples:
        >>> AudioPart(source=FileSource(value="f1")).type
        'audio'
    """

    type: Literal["audio"] = "audio"
    id: Opt[str] = None
    source: PartSource
    metadata: Opt[JsonValue] = None


class VideoPart(WireModel, frozen=True):
    """A video, from a data, url or file source.

    Examples:
        >>> VideoPart(source=FileSource(value="f1")).type
        'video'
    """

    type: Literal["video"] = "video"
    id: Opt[str] = None
    source: PartSource
    metadata: Opt[JsonValue] = None


class DocumentPart(WireModel, frozen=True):
    """A document (a PDF, say), from a data, url or file source.

    Examples:
        >>> DocumentPart(source=FileSource(value="f1")).type
        'document'
    """

    type: Literal["document"] = "document"
    id: Opt[str] = None
    source: PartSource
    metadata: Opt[JsonValue] = None


ContentPart = Annotated[
    TextPart | ImagePart | AudioPart | VideoPart | DocumentPart, Field(discriminator="type")
]
"""One part of a multi-part message or tool result, discriminated by `type`."""


class FunctionCall(WireModel, frozen=True):
    """The name and argument text of a tool call, exactly as the model wrote it.

    Examples:
        >>> FunctionCall(name="get_weather", arguments='{"city":"Paris"}').arguments
        '{"city":"Paris"}'
    """

    name: str
    arguments: str


class ToolCall(WireModel, frozen=True):
    """A tool call carried by an assistant message.

    Examples:
        >>> call = ToolCall(id="c1", function=FunctionCall(name="f", arguments="{}"))
        >>> call.model_dump_json()
        '{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}'
    """

    id: str
    type: Literal["function"] = "function"
    function: FunctionCall
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None


class DeveloperMessage(WireModel, frozen=True):
    """Instructions from the application's developer.

    Examples:
        >>> DeveloperMessage(id="d1", content="Answer briefly.").role
        'developer'
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["developer"] = "developer"
    name: Opt[str] = None
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None
    content: str


class SystemMessage(WireModel, frozen=True):
    """A system prompt.

    Examples:
        >>> SystemMessage(id="s1", content="You are helpful.").role
        'system'
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["system"] = "system"
    name: Opt[str] = None
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None
    content: str


class AssistantMessage(WireModel, frozen=True):
    """A reply of the agent; it may carry tool calls and no text.

    Examples:
        >>> AssistantMessage(id="a1", content="Hi!").model_dump_json()
        '{"id":"a1","role":"assistant","content":"Hi!"}'
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["assistant"] = "assistant"
    name: Opt[str] = None
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None
    content: Opt[str] = None
    tool_calls: Opt[list[ToolCall]] = None


class UserMessage(WireModel, frozen=True):
    """What the user said: text, or a list of content parts.

    Examples:
        >>> UserMessage(id="u1", content="What's the weather?").content
        "What's the weather?"
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["user"] = "user"
    name: Opt[str] = None
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None
    content: str | list[ContentPart]


class ToolMessage(WireModel, frozen=True):
    """The result of a tool call, answering `tool_call_id`; `error` gives a failure reason.

    Examples:
        >>> ToolMessage(id="t1", tool_call_id="c1", content='{"tempC":21}').role
        'tool'
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["tool"] = "tool"
    content: str | list[ContentPart]
    tool_call_id: str
    error: Opt[str] = None
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None


class ActivityMessage(WireModel, frozen=True):
    """A structured progress message (a plan, a search) shown by the UI; never sent back.

    Examples:
        >>> ActivityMessage(id="p1", activity_type="PLAN", content={"steps": []}).role
        'activity'
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["activity"] = "activity"
    activity_type: str
    content: JsonObject
    metadata: Opt[JsonObject] = None


class ReasoningMessage(WireModel, frozen=True):
    """The model's visible reasoning, kept in the history.

    Examples:
        >>> ReasoningMessage(id="r1", content="Paris is in France.").role
        'reasoning'
    """

    subagent_run_id: Opt[str] = None
    id: str
    role: Literal["reasoning"] = "reasoning"
    content: str
    encrypted_value: Opt[str] = None
    metadata: Opt[JsonObject] = None


Message = Annotated[
    DeveloperMessage
    | SystemMessage
    | AssistantMessage
    | UserMessage
    | ToolMessage
    | ActivityMessage
    | ReasoningMessage,
    Field(discriminator="role"),
]
"""A message of any of the seven roles, discriminated by `role`."""
