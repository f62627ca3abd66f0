"""Messages of the seven roles, content parts, media sources and tool calls."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from agui.messages import (
    ActivityMessage,
    AssistantMessage,
    AudioPart,
    ContentPart,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    FileSource,
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
    VideoPart,
)

MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
PART: TypeAdapter[ContentPart] = TypeAdapter(ContentPart)


def _wire(model: BaseModel) -> dict[str, JsonValue]:
    parsed: dict[str, JsonValue] = json.loads(model.model_dump_json())
    return parsed


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"role": "developer", "id": "d", "content": "x"}, DeveloperMessage),
        ({"role": "system", "id": "s", "content": "x"}, SystemMessage),
        ({"role": "assistant", "id": "a"}, AssistantMessage),
        ({"role": "user", "id": "u", "content": "x"}, UserMessage),
        ({"role": "tool", "id": "t", "toolCallId": "c", "content": "x"}, ToolMessage),
        ({"role": "activity", "id": "p", "activityType": "PLAN", "content": {}}, ActivityMessage),
        ({"role": "reasoning", "id": "r", "content": "x"}, ReasoningMessage),
    ],
    ids=["developer", "system", "assistant", "user", "tool", "activity", "reasoning"],
)
def test_a_message_is_read_by_its_role_and_written_back_unchanged(
    data: dict[str, JsonValue], cls: type[BaseModel]
) -> None:
    message = MESSAGE.validate_python(data)

    assert type(message) is cls
    assert _wire(message) == data


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        MESSAGE.validate_python({"role": "narrator", "id": "n", "content": "x"})


def test_a_message_without_a_role_is_refused() -> None:
    with pytest.raises(ValidationError, match="Unable to extract tag using discriminator 'role'"):
        MESSAGE.validate_python({"id": "n", "content": "x"})


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (AssistantMessage(id="a"), {"role": "assistant", "id": "a"}),
        (UserMessage(id="u", content="hi"), {"role": "user", "id": "u", "content": "hi"}),
        (
            ToolMessage(id="t", tool_call_id="c", content="ok"),
            {"role": "tool", "id": "t", "toolCallId": "c", "content": "ok"},
        ),
        (
            ActivityMessage(id="p", activity_type="PLAN", content={"step": None}),
            {"role": "activity", "id": "p", "activityType": "PLAN", "content": {"step": None}},
        ),
    ],
    ids=["assistant", "user", "tool", "activity-keeps-null-content"],
)
def test_a_message_omits_the_optional_fields_it_does_not_hold(
    message: BaseModel, expected: dict[str, JsonValue]
) -> None:
    assert _wire(message) == expected


def test_an_assistant_message_may_carry_only_tool_calls() -> None:
    call = ToolCall(id="c1", function=FunctionCall(name="f", arguments='{"a":'))
    message = AssistantMessage(id="a", tool_calls=[call])

    assert _wire(message) == {
        "role": "assistant",
        "id": "a",
        "toolCalls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":'}}
        ],
    }


def test_a_tool_call_always_writes_its_function_type() -> None:
    call = ToolCall(id="c", function=FunctionCall(name="f", arguments=""), metadata={"k": None})

    assert _wire(call) == {
        "id": "c",
        "type": "function",
        "function": {"name": "f", "arguments": ""},
        "metadata": {"k": None},
    }


def test_tool_call_arguments_are_text_even_when_they_are_not_json() -> None:
    with pytest.raises(ValidationError, match="arguments\n  Input should be a valid string"):
        FunctionCall.model_validate({"name": "f", "arguments": {"city": "Paris"}})


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"type": "text", "text": "hi"}, TextPart),
        ({"type": "image", "source": {"type": "url", "value": "u"}}, ImagePart),
        ({"type": "audio", "source": {"type": "file", "value": "f"}}, AudioPart),
        (
            {"type": "video", "source": {"type": "data", "value": "AA==", "mimeType": "v/m"}},
            VideoPart,
        ),
        (
            {"type": "document", "source": {"type": "url", "value": "u", "mimeType": "a/p"}},
            DocumentPart,
        ),
    ],
    ids=["text", "image", "audio", "video", "document"],
)
def test_a_content_part_is_read_by_its_type_and_written_back_unchanged(
    data: dict[str, JsonValue], cls: type[BaseModel]
) -> None:
    part = PART.validate_python(data)

    assert type(part) is cls
    assert _wire(part) == data


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            DataSource(value="aGk=", mime_type="text/plain"),
            {"type": "data", "value": "aGk=", "mimeType": "text/plain"},
        ),
        (UrlSource(value="https://x/a.png"), {"type": "url", "value": "https://x/a.png"}),
        (
            FileSource(value="file-1", provider="openai", mime_type="application/pdf"),
            {
                "type": "file",
                "value": "file-1",
                "provider": "openai",
                "mimeType": "application/pdf",
            },
        ),
    ],
    ids=["data", "url", "file"],
)
def test_each_source_kind_writes_its_type_and_fields(
    source: DataSource | UrlSource | FileSource, expected: dict[str, JsonValue]
) -> None:
    assert _wire(ImagePart(source=source))["source"] == expected


def test_a_data_source_requires_its_mime_type() -> None:
    with pytest.raises(ValidationError, match="mimeType\n  Field required"):
        PART.validate_python({"type": "image", "source": {"type": "data", "value": "AA=="}})


def test_an_unknown_source_kind_is_refused() -> None:
    with pytest.raises(ValidationError, match="'data', 'url', 'file'"):
        PART.validate_python({"type": "image", "source": {"type": "ftp", "value": "x"}})


def test_the_0x_binary_part_is_not_a_content_part() -> None:
    with pytest.raises(ValidationError, match="'text', 'image', 'audio', 'video', 'document'"):
        PART.validate_python({"type": "binary", "mimeType": "image/png", "data": "AA=="})


def test_part_metadata_may_be_any_json_value_and_keeps_its_nulls() -> None:
    part = TextPart(text="hi", id="p1", metadata=[None, {"k": None}])

    assert _wire(part) == {
        "type": "text",
        "id": "p1",
        "text": "hi",
        "metadata": [None, {"k": None}],
    }


def test_user_and_tool_content_may_be_text_or_parts() -> None:
    parts: list[ContentPart] = [TextPart(text="see"), ImagePart(source=UrlSource(value="u"))]

    user = UserMessage(id="u", content=parts)
    tool = ToolMessage(id="t", tool_call_id="c", content=parts, error="partial")

    assert _wire(user)["content"] == _wire(tool)["content"]
    assert _wire(tool)["error"] == "partial"


@pytest.mark.parametrize(
    "cls",
    [DeveloperMessage, SystemMessage, ReasoningMessage],
    ids=["developer", "system", "reasoning"],
)
def test_text_only_roles_require_string_content(cls: type[BaseModel]) -> None:
    with pytest.raises(ValidationError, match="content\n  Input should be a valid string"):
        cls.model_validate({"id": "x", "content": [{"type": "text", "text": "hi"}]})


def test_messages_are_frozen_and_refuse_unknown_keywords() -> None:
    message = UserMessage(id="u", content="hi")

    with pytest.raises(ValidationError, match="Instance is frozen"):
        message.content = "bye"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        UserMessage(id="u", content="hi", nmae="typo")  # type: ignore[call-arg]


def test_a_tool_message_has_no_name_but_a_user_message_does() -> None:
    assert "name" in UserMessage.model_fields
    assert "name" not in ToolMessage.model_fields
    assert "encrypted_value" not in ActivityMessage.model_fields


def test_every_role_carries_optional_metadata_and_subagent_run_id() -> None:
    for cls in (
        DeveloperMessage,
        SystemMessage,
        AssistantMessage,
        UserMessage,
        ToolMessage,
        ActivityMessage,
        ReasoningMessage,
    ):
        assert not cls.model_fields["metadata"].is_required()
        assert not cls.model_fields["subagent_run_id"].is_required()
