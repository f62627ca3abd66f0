"""The AG-UI 1.0 protobuf schema, declared as a table and built into message classes at import.

No `.proto` file is compiled and no generated module is shipped: each message below is one line
listing its fields in field-number order (the first field is number 1, the next 2, and so on,
which is how every 1.0 message is numbered). A field is written `name` (a `string`),
`name:type`, `name?` (a scalar with explicit presence: `optional` in proto3) or `name*`
(`repeated`). The types are `string`, `int64`, `bool`, `double`, `bytes`, the two enums, the
messages of the table, and `Value`/`Struct`, the `google/protobuf/struct.proto` messages that
carry the JSON AG-UI leaves open (state, metadata, payloads). Every field of `Event`,
`InputContent`, `InputContentSource` and `JsonValue` belongs to the message's one oneof.

A `Value` or `Struct` field is declared here as `optional bytes`, which has the same wire form
as an embedded message, and `agui.proto._values` writes and reads the JSON in it: protobuf's
own readers stop at 100 nested messages, and JSON in a `Value` nests two or three messages per
level, so they would refuse state that the SSE binding and the official package carry. The
`Json*` messages are `Value`, `Struct` and `ListValue` with their own nested values as bytes,
so that each level is parsed on its own.

The table becomes a `FileDescriptorProto` in a private `DescriptorPool`, never the default one,
so a program that also loads the official `ag_ui` protos (or its own) sees no clash. Each
field's `json_name` is its AG-UI wire name, so `json_format` maps our camelCase JSON directly.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

__all__ = [
    "ARMS",
    "EVENT",
    "EVENT_DESCRIPTOR",
    "EVENT_TYPES",
    "JSON_ARRAY",
    "JSON_OBJECT",
    "JSON_VALUE",
    "STRUCTS",
    "arm_name",
    "json_name",
]

EVENT_TYPES = (
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
    "TOOL_CALL_START",
    "TOOL_CALL_ARGS",
    "TOOL_CALL_END",
    "STATE_SNAPSHOT",
    "STATE_DELTA",
    "MESSAGES_SNAPSHOT",
    "RAW",
    "CUSTOM",
    "RUN_STARTED",
    "RUN_FINISHED",
    "RUN_ERROR",
    "STEP_STARTED",
    "STEP_FINISHED",
    "SUBAGENT_STARTED",
    "SUBAGENT_FINISHED",
    "SUBAGENT_ERROR",
    "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_CHUNK",
    "TOOL_CALL_RESULT",
    "ACTIVITY_SNAPSHOT",
    "ACTIVITY_DELTA",
    "REASONING_START",
    "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END",
    "REASONING_MESSAGE_CHUNK",
    "REASONING_END",
    "REASONING_ENCRYPTED_VALUE",
)
"""The `EventType` enum, in value order (0, 1, ...)."""

# The oneof has the two chunk events before the subagent events; the enum has them after.
ARMS = (*EVENT_TYPES[:16], *EVENT_TYPES[19:21], *EVENT_TYPES[16:19], *EVENT_TYPES[21:])
"""The event types in the order of the `Event` oneof's field numbers (1, 2, ...)."""

_ENUMS = {
    "EventType": EVENT_TYPES,
    "JsonPatchOperationType": ("ADD", "REMOVE", "REPLACE", "MOVE", "COPY", "TEST"),
}

_B = "base_event:BaseEvent "
_MEDIA = "source:InputContentSource metadata:Value id?"
_MESSAGES = {
    "BaseEvent": "type:EventType timestamp:int64? raw_event:Value metadata:Struct",
    "Usage": "provider? model? input_tokens:int64? output_tokens:int64? total_tokens:int64? "
    "reasoning_tokens:int64? cached_input_tokens:int64? cache_write_input_tokens:int64?",
    "JsonPatchOperation": "op:JsonPatchOperationType path from? value:Value",
    "TextInputPart": "text id? metadata:Value",
    "ImageInputPart": _MEDIA,
    "AudioInputPart": _MEDIA,
    "VideoInputPart": _MEDIA,
    "DocumentInputPart": _MEDIA,
    "InputContentDataSource": "value mime_type",
    "InputContentUrlSource": "value mime_type?",
    "InputContentFileSource": "value provider? mime_type?",
    "InputContentSource": "data:InputContentDataSource url:InputContentUrlSource "
    "file:InputContentFileSource",
    "InputContent": "text:TextInputPart image:ImageInputPart audio:AudioInputPart "
    "video:VideoInputPart document:DocumentInputPart",
    "FunctionCall": "name arguments",
    "ToolCall": "id type function:FunctionCall metadata:Struct encrypted_value?",
    "Message": "id role content? name? tool_calls:ToolCall* tool_call_id? error? "
    "content_parts:InputContent* metadata:Struct subagent_run_id? encrypted_value? "
    "activity_type? activity_content:Struct",
    "Tool": "name description parameters:Value metadata:Struct",
    "Context": "description value",
    "ResumeEntry": "interrupt_id status payload:Value metadata:Struct",
    "RunAgentInput": "thread_id run_id parent_run_id? state:Value messages:Message* tools:Tool* "
    "context:Context* forwarded_props:Value resume:ResumeEntry* protocol_version?",
    "Interrupt": "id reason message? tool_call_id? response_schema:Value expires_at? "
    "metadata:Value subagent_run_id?",
    "TextMessageStartEvent": _B + "message_id role? name? subagent_run_id?",
    "TextMessageContentEvent": _B + "message_id delta subagent_run_id?",
    "TextMessageEndEvent": _B + "message_id subagent_run_id?",
    "TextMessageChunkEvent": _B + "message_id? role? delta? name? subagent_run_id?",
    "ToolCallStartEvent": _B + "tool_call_id tool_call_name parent_message_id? subagent_run_id?",
    "ToolCallArgsEvent": _B + "tool_call_id delta subagent_run_id?",
    "ToolCallEndEvent": _B + "tool_call_id subagent_run_id?",
    "ToolCallChunkEvent": _B
    + "tool_call_id? tool_call_name? parent_message_id? delta? subagent_run_id?",
    "ToolCallResultEvent": _B
    + "subagent_run_id? message_id tool_call_id content? role? content_parts:InputContent*",
    "StateSnapshotEvent": _B + "snapshot:Value subagent_run_id?",
    "StateDeltaEvent": _B + "delta:JsonPatchOperation* subagent_run_id?",
    "MessagesSnapshotEvent": _B + "messages:Message*",
    "ActivitySnapshotEvent": _B
    + "subagent_run_id? message_id activity_type content:Struct replace:bool?",
    "ActivityDeltaEvent": _B
    + "subagent_run_id? message_id activity_type patch:JsonPatchOperation*",
    "RawEvent": _B + "event:Value source? subagent_run_id?",
    "CustomEvent": _B + "name value:Value subagent_run_id?",
    "RunStartedEvent": _B + "thread_id run_id parent_run_id? input:RunAgentInput protocol_version?",
    "RunFinishedEvent": _B + "thread_id run_id result:Value outcome interrupts:Interrupt* "
    "usage:Usage* pending_tool_call_ids*",
    "RunErrorEvent": _B + "code? message usage:Usage*",
    "StepStartedEvent": _B + "step_name subagent_run_id?",
    "StepFinishedEvent": _B + "step_name subagent_run_id?",
    "ReasoningStartEvent": _B + "subagent_run_id? message_id",
    "ReasoningMessageStartEvent": _B + "subagent_run_id? message_id role",
    "ReasoningMessageContentEvent": _B + "subagent_run_id? message_id delta",
    "ReasoningMessageEndEvent": _B + "subagent_run_id? message_id",
    "ReasoningMessageChunkEvent": _B + "subagent_run_id? message_id? delta?",
    "ReasoningEndEvent": _B + "subagent_run_id? message_id",
    "ReasoningEncryptedValueEvent": _B + "subagent_run_id? subtype entity_id encrypted_value",
    "SubagentStartedEvent": _B + "subagent_run_id name description? parent_subagent_run_id? "
    "parent_tool_call_id? parent_message_id?",
    "SubagentFinishedEvent": _B + "subagent_run_id result:Value outcome interrupt_ids*",
    "SubagentErrorEvent": _B + "subagent_run_id message code?",
}
_JSON_MESSAGES = {
    "JsonValue": "null_value:int64 number_value:double string_value bool_value:bool "
    "struct_value:bytes list_value:bytes",
    "JsonMember": "key value:bytes",
    "JsonObject": "fields:JsonMember*",
    "JsonArray": "values:bytes*",
}
_ONEOFS = {
    "Event": "event",
    "InputContent": "part",
    "InputContentSource": "kind",
    "JsonValue": "kind",
}

_FIELD = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _FIELD.TYPE_STRING,
    "int64": _FIELD.TYPE_INT64,
    "bool": _FIELD.TYPE_BOOL,
    "double": _FIELD.TYPE_DOUBLE,
    "bytes": _FIELD.TYPE_BYTES,
}
_OPEN = frozenset({"Value", "Struct"})
_PACKAGE = "ag_ui"


def json_name(name: str) -> str:
    """A proto field name as its AG-UI wire name: `base_event` is `baseEvent`."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def arm_name(kind: str) -> str:
    """The `Event` oneof arm that carries an event type, as its JSON name."""
    return json_name(kind.lower())


def _message_name(kind: str) -> str:
    return "".join(part.title() for part in kind.split("_")) + "Event"


def _add_field(message: descriptor_pb2.DescriptorProto, spec: str, oneof: str | None) -> None:
    name, _, kind = spec.partition(":")
    suffix = (name + kind)[-1]
    name, kind = name.rstrip("?*"), kind.rstrip("?*") or "string"
    if kind in _OPEN:
        # Presence tells an absent value from a present one; `bytes` alone could not.
        suffix, kind = "?", "bytes"
    field = message.field.add(name=name, number=len(message.field) + 1, json_name=json_name(name))
    field.label = _FIELD.LABEL_REPEATED if suffix == "*" else _FIELD.LABEL_OPTIONAL
    if kind in _SCALARS:
        field.type = _SCALARS[kind]
    else:
        field.type = _FIELD.TYPE_ENUM if kind in _ENUMS else _FIELD.TYPE_MESSAGE
        field.type_name = f".{_PACKAGE}.{kind}"
    if oneof is not None:
        field.oneof_index = 0
    elif suffix == "?":
        # proto3 `optional`: presence is kept by a synthetic oneof of its own.
        field.proto3_optional = True
        field.oneof_index = len(message.oneof_decl)
        message.oneof_decl.add(name=f"_{name}")


def _file() -> descriptor_pb2.FileDescriptorProto:
    """The 1.0 schema as one proto3 file of package `ag_ui`."""
    file = descriptor_pb2.FileDescriptorProto(
        name="agui/ag_ui.proto",
        package=_PACKAGE,
        syntax="proto3",
    )
    for enum_name, members in _ENUMS.items():
        enum = file.enum_type.add(name=enum_name)
        for number, member in enumerate(members):
            enum.value.add(name=member, number=number)
    arms = " ".join(f"{kind.lower()}:{_message_name(kind)}" for kind in ARMS)
    for name, fields in {**_MESSAGES, **_JSON_MESSAGES, "Event": arms}.items():
        message = file.message_type.add(name=name)
        oneof = _ONEOFS.get(name)
        if oneof is not None:
            message.oneof_decl.add(name=oneof)
        for spec in fields.split():
            _add_field(message, spec, oneof)
    return file


def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    return pool


def _class(name: str) -> type[Message]:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


_POOL = _pool()
EVENT = _class("Event")
"""The `ag_ui.Event` message class: one oneof arm per event type."""
EVENT_DESCRIPTOR = _POOL.FindMessageTypeByName(f"{_PACKAGE}.Event")
"""The descriptor of `EVENT`, typed as a descriptor (a message class's may be protobuf's own)."""
JSON_VALUE, JSON_OBJECT, JSON_ARRAY = (
    _class(f"Json{kind}") for kind in ("Value", "Object", "Array")
)
"""`Value`, `Struct` and `ListValue`, with the values they hold left as bytes."""
STRUCTS = frozenset(
    f"{_PACKAGE}.{message}.{spec.partition(':')[0]}"
    for message, fields in _MESSAGES.items()
    for spec in fields.split()
    if spec.endswith(":Struct")
)
"""The full names of the fields that hold a `Struct` (a JSON object) rather than a `Value`."""
