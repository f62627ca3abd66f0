"""The shared types: run input, tools, interrupts, outcomes, usage, JSON Patch, capabilities."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from agui.capabilities import (
    AgentCapabilities,
    ExecutionCapabilities,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    MultiAgentCapabilities,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    MultimodalOutputCapabilities,
    OutputCapabilities,
    ReasoningCapabilities,
    StateCapabilities,
    SubagentInfo,
    ToolsCapabilities,
    TransportCapabilities,
)
from agui.errors import UsageError
from agui.messages import UserMessage
from agui.types import (
    AddOperation,
    CancelledOutcome,
    Context,
    CopyOperation,
    Interrupt,
    InterruptOutcome,
    JsonPatchOperation,
    MoveOperation,
    RemoveOperation,
    ReplaceOperation,
    ResumeEntry,
    RunAgentInput,
    RunFinishedOutcome,
    RunOutcome,
    SubagentFinishedOutcome,
    SubagentSuccessOutcome,
    SubagentSuspendedOutcome,
    SuccessOutcome,
    TestOperation,
    TokenUsage,
    Tool,
)

PATCH_OP: TypeAdapter[JsonPatchOperation] = TypeAdapter(JsonPatchOperation)
OUTCOME: TypeAdapter[RunFinishedOutcome] = TypeAdapter(RunFinishedOutcome)
SUBAGENT_OUTCOME: TypeAdapter[SubagentFinishedOutcome] = TypeAdapter(SubagentFinishedOutcome)


def _wire(model: BaseModel) -> dict[str, JsonValue]:
    parsed: dict[str, JsonValue] = json.loads(model.model_dump_json())
    return parsed


# -- run outcomes -----------------------------------------------------------------------------


def test_run_outcome_success_is_a_bare_success_outcome() -> None:
    outcome = RunOutcome.success()

    assert isinstance(outcome, SuccessOutcome)
    assert _wire(outcome) == {"type": "success"}


def test_run_outcome_success_lists_pending_tool_calls_in_order() -> None:
    outcome = RunOutcome.success(pending_tool_call_ids=("r-call-2", "r-call-1"))

    assert outcome.pending_tool_call_ids == ["r-call-2", "r-call-1"]
    assert _wire(outcome) == {"type": "success", "pendingToolCallIds": ["r-call-2", "r-call-1"]}


def test_run_outcome_interrupt_carries_its_interrupts() -> None:
    interrupt = Interrupt(id="i1", reason="input_required", response_schema={"type": "object"})

    outcome = RunOutcome.interrupt((interrupt,))

    assert isinstance(outcome, InterruptOutcome)
    assert _wire(outcome) == {
        "type": "interrupt",
        "interrupts": [
            {"id": "i1", "reason": "input_required", "responseSchema": {"type": "object"}}
        ],
    }


def test_run_outcome_cancelled_has_no_fields() -> None:
    outcome = RunOutcome.cancelled()

    assert isinstance(outcome, CancelledOutcome)
    assert _wire(outcome) == {"type": "cancelled"}


def test_an_interrupt_outcome_with_zero_interrupts_is_refused() -> None:
    with pytest.raises(
        UsageError,
        match=r"RunOutcome.interrupt\(\) needs at least one Interrupt: an interrupted run stops "
        r"on a question; return RunOutcome.success\(\) when there is nothing to ask",
    ):
        RunOutcome.interrupt([])
    with pytest.raises(ValidationError, match="List should have at least 1 item"):
        OUTCOME.validate_python({"type": "interrupt", "interrupts": []})


def test_an_outcome_given_a_string_for_its_list_is_refused_rather_than_split_into_letters() -> None:
    with pytest.raises(
        UsageError,
        match=r"RunOutcome.interrupt\(\) takes a list of Interrupt, such as "
        r"\[Interrupt\(id=..., reason=...\)\], not str$",
    ):
        RunOutcome.interrupt("approve?")  # type: ignore[arg-type]
    with pytest.raises(
        UsageError, match=r"RunOutcome.success\(\) takes a list of tool call ids, .*, not str$"
    ):
        RunOutcome.success(pending_tool_call_ids="r-call-1")
    with pytest.raises(UsageError, match=r"takes a list of Interrupt, .*, not Interrupt$"):
        RunOutcome.interrupt(Interrupt(id="i1", reason="confirmation"))  # type: ignore[arg-type]


def test_an_outcome_whose_items_do_not_fit_is_refused_pointing_at_each_item() -> None:
    with pytest.raises(
        UsageError,
        match=r"RunOutcome.interrupt\(\) was given what does not fit: '/1/reason': Field required$",
    ):
        RunOutcome.interrupt([Interrupt(id="i1", reason="r"), {"id": "i2"}])  # type: ignore[list-item]
    with pytest.raises(UsageError, match=r"'/0': Input should be a valid string$"):
        RunOutcome.success(pending_tool_call_ids=[7])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"type": "success"}, SuccessOutcome),
        ({"type": "success", "pendingToolCallIds": []}, SuccessOutcome),
        ({"type": "interrupt", "interrupts": [{"id": "i", "reason": "r"}]}, InterruptOutcome),
        ({"type": "cancelled"}, CancelledOutcome),
    ],
    ids=["success", "success-empty-pending", "interrupt", "cancelled"],
)
def test_a_run_outcome_is_read_by_its_type_and_written_back_unchanged(
    data: dict[str, JsonValue], cls: type[BaseModel]
) -> None:
    outcome = OUTCOME.validate_python(data)

    assert type(outcome) is cls
    assert _wire(outcome) == data


def test_a_cancelled_outcome_refuses_extra_members() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        OUTCOME.validate_python({"type": "cancelled", "reason": "user"})


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"type": "success"}, SubagentSuccessOutcome),
        ({"type": "suspended"}, SubagentSuspendedOutcome),
        ({"type": "suspended", "interruptIds": ["i1"]}, SubagentSuspendedOutcome),
    ],
    ids=["success", "suspended", "suspended-with-ids"],
)
def test_a_subagent_outcome_is_read_by_its_type_and_written_back_unchanged(
    data: dict[str, JsonValue], cls: type[BaseModel]
) -> None:
    outcome = SUBAGENT_OUTCOME.validate_python(data)

    assert type(outcome) is cls
    assert _wire(outcome) == data


def test_a_run_outcome_type_is_not_a_subagent_outcome_type() -> None:
    with pytest.raises(ValidationError, match="'success', 'suspended'"):
        SUBAGENT_OUTCOME.validate_python({"type": "cancelled"})


# -- token usage ------------------------------------------------------------------------------


def test_token_usage_writes_only_what_was_reported() -> None:
    usage = TokenUsage(provider="openai", model="m", output_tokens=0, cache_write_input_tokens=7)

    assert _wire(usage) == {
        "provider": "openai",
        "model": "m",
        "outputTokens": 0,
        "cacheWriteInputTokens": 7,
    }
    assert _wire(TokenUsage()) == {}


@pytest.mark.parametrize(
    "field",
    [
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "reasoningTokens",
        "cachedInputTokens",
        "cacheWriteInputTokens",
    ],
)
@pytest.mark.parametrize(
    ("value", "match"),
    [
        (-1, "greater than or equal to 0"),
        (1.5, "valid integer"),
        (2.0, "valid integer"),
        ("3", "valid integer"),
        (True, "valid integer"),
        (2**53, "less than or equal to 9007199254740991"),
    ],
    ids=["negative", "fraction", "integral-float", "string", "bool", "beyond-2-53"],
)
def test_token_usage_refuses_counts_that_are_not_safe_non_negative_integers(
    field: str, value: JsonValue, match: str
) -> None:
    with pytest.raises(ValidationError, match=match):
        TokenUsage.model_validate({field: value})


def test_token_usage_accepts_the_largest_safe_count() -> None:
    assert TokenUsage(total_tokens=2**53 - 1).total_tokens == 2**53 - 1


# -- JSON Patch -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "cls"),
    [
        ({"op": "add", "path": "/a/-", "value": None}, AddOperation),
        ({"op": "remove", "path": "/a/0"}, RemoveOperation),
        ({"op": "replace", "path": "", "value": [1]}, ReplaceOperation),
        ({"op": "move", "from": "/a", "path": "/b"}, MoveOperation),
        ({"op": "copy", "from": "/a~0b", "path": "/c~1d"}, CopyOperation),
        ({"op": "test", "path": "/v", "value": None}, TestOperation),
    ],
    ids=["add", "remove", "replace", "move", "copy", "test"],
)
def test_each_patch_op_is_read_by_its_op_and_written_back_unchanged(
    data: dict[str, JsonValue], cls: type[BaseModel]
) -> None:
    op = PATCH_OP.validate_python(data)

    assert type(op) is cls
    assert _wire(op) == data


def test_patch_ops_are_open_objects_that_keep_extra_members() -> None:
    op = PATCH_OP.validate_python({"op": "add", "path": "/a", "value": 1, "note": None})

    assert _wire(op) == {"op": "add", "path": "/a", "value": 1, "note": None}


def test_move_and_copy_take_from_by_its_python_name_and_write_it_as_from() -> None:
    assert _wire(MoveOperation(from_="/a", path="/b")) == {"op": "move", "from": "/a", "path": "/b"}
    assert _wire(CopyOperation(from_="/a", path="/b")) == {"op": "copy", "from": "/a", "path": "/b"}


@pytest.mark.parametrize(
    "path", ["a", "/a~2", "/~", "a/b"], ids=["no-slash", "bad-escape", "bare-tilde", "relative"]
)
def test_a_path_that_is_not_a_json_pointer_is_refused(path: str) -> None:
    with pytest.raises(ValidationError, match="String should match pattern"):
        PATCH_OP.validate_python({"op": "remove", "path": path})


@pytest.mark.parametrize(
    ("data", "missing"),
    [
        ({"op": "add", "path": "/a"}, "value"),
        ({"op": "replace", "path": "/a"}, "value"),
        ({"op": "test", "path": "/a"}, "value"),
        ({"op": "move", "path": "/a"}, "from"),
        ({"op": "copy", "path": "/a"}, "from"),
    ],
    ids=["add", "replace", "test", "move", "copy"],
)
def test_a_patch_op_requires_its_value_or_from(data: dict[str, JsonValue], missing: str) -> None:
    with pytest.raises(ValidationError, match=f"{missing}\n  Field required"):
        PATCH_OP.validate_python(data)


def test_an_unknown_patch_op_is_refused_by_the_model() -> None:
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        PATCH_OP.validate_python({"op": "merge", "path": "/a", "value": {}})


# -- tools, context, interrupts, resume -------------------------------------------------------


def test_a_tool_without_parameters_takes_no_arguments_and_omits_them() -> None:
    assert _wire(Tool(name="now", description="The time")) == {
        "name": "now",
        "description": "The time",
    }


def test_a_tool_keeps_its_parameter_schema_verbatim() -> None:
    schema: dict[str, JsonValue] = {"type": "object", "properties": {"x": {"default": None}}}

    assert _wire(Tool(name="f", description="d", parameters=schema))["parameters"] == schema


def test_context_requires_a_description_and_a_string_value() -> None:
    assert _wire(Context(description="tz", value="UTC")) == {"description": "tz", "value": "UTC"}
    with pytest.raises(ValidationError, match="value\n  Input should be a valid string"):
        Context.model_validate({"description": "tz", "value": 1})


def test_an_interrupt_writes_every_field_it_holds() -> None:
    interrupt = Interrupt(
        id="i",
        reason="tool_call",
        message="Approve?",
        tool_call_id="c",
        response_schema={"type": "object"},
        expires_at="2030-01-01T00:00:00Z",
        metadata={"k": None},
        subagent_run_id="s",
    )

    assert _wire(interrupt) == {
        "id": "i",
        "reason": "tool_call",
        "message": "Approve?",
        "toolCallId": "c",
        "responseSchema": {"type": "object"},
        "expiresAt": "2030-01-01T00:00:00Z",
        "metadata": {"k": None},
        "subagentRunId": "s",
    }


@pytest.mark.parametrize("status", ["resolved", "cancelled"])
def test_a_resume_entry_is_resolved_or_cancelled(status: str) -> None:
    entry = ResumeEntry.model_validate({"interruptId": "i", "status": status})

    assert _wire(entry) == {"interruptId": "i", "status": status}


def test_a_resume_entry_refuses_another_status() -> None:
    with pytest.raises(ValidationError, match="'resolved' or 'cancelled'"):
        ResumeEntry.model_validate({"interruptId": "i", "status": "approved"})


# -- the run input ----------------------------------------------------------------------------


def test_a_run_input_built_from_its_ids_writes_an_empty_message_list() -> None:
    run_input = RunAgentInput(thread_id="t", run_id="r")

    assert run_input.messages == []
    assert _wire(run_input) == {"threadId": "t", "runId": "r", "messages": []}


def test_a_run_input_keeps_nulls_inside_state_and_forwarded_props() -> None:
    run_input = RunAgentInput(
        thread_id="t",
        run_id="r",
        state={"owner": None},
        forwarded_props=[None],
        messages=[UserMessage(id="u", content="hi")],
    )

    assert _wire(run_input) == {
        "threadId": "t",
        "runId": "r",
        "state": {"owner": None},
        "messages": [{"role": "user", "id": "u", "content": "hi"}],
        "forwardedProps": [None],
    }


def test_a_run_input_reads_legacy_null_optionals_as_absent() -> None:
    run_input = RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": [],
            "state": None,
            "forwardedProps": None,
            "tools": None,
            "context": None,
            "resume": None,
        }
    )

    assert _wire(run_input) == {"threadId": "t", "runId": "r", "messages": []}


def test_a_run_input_is_frozen() -> None:
    run_input = RunAgentInput(thread_id="t", run_id="r")

    with pytest.raises(ValidationError, match="Instance is frozen"):
        run_input.run_id = "other"  # type: ignore[misc]


# -- capabilities -----------------------------------------------------------------------------


def test_capabilities_declare_nothing_by_default() -> None:
    assert _wire(AgentCapabilities()) == {}


def test_fully_declared_capabilities_are_written_in_the_1_0_shape() -> None:
    caps = AgentCapabilities(
        identity=IdentityCapabilities(
            name="travel",
            type="assistant",
            description="Plans trips",
            version="1.2.0",
            provider="acme",
            documentation_url="https://docs.example.com",
            metadata={"k": None},
        ),
        transport=TransportCapabilities(
            streaming=True,
            websocket=False,
            http_binary=False,
            push_notifications=False,
            resumable=False,
        ),
        tools=ToolsCapabilities(
            supported=True,
            items=[Tool(name="search", description="Search")],
            parallel_calls=True,
            client_provided=True,
        ),
        output=OutputCapabilities(structured_output=True, supported_mime_types=["text/plain"]),
        state=StateCapabilities(snapshots=True, deltas=True, memory=False, persistent_state=False),
        multi_agent=MultiAgentCapabilities(
            supported=True,
            delegation=True,
            handoffs=False,
            subagents=[SubagentInfo(name="researcher", description="Finds sources")],
        ),
        reasoning=ReasoningCapabilities(supported=True, streaming=True, encrypted=False),
        multimodal=MultimodalCapabilities(
            input=MultimodalInputCapabilities(
                image=True, audio=False, video=False, pdf=True, file=True
            ),
            output=MultimodalOutputCapabilities(image=False, audio=False),
        ),
        execution=ExecutionCapabilities(
            code_execution=False, sandboxed=True, max_iterations=8, max_execution_time=60_000
        ),
        human_in_the_loop=HumanInTheLoopCapabilities(
            supported=True,
            approvals=True,
            interventions=False,
            feedback=True,
            interrupts=True,
            approve_with_edits=True,
        ),
        custom={"x": None},
    )

    written = _wire(caps)

    assert written == {
        "identity": {
            "name": "travel",
            "type": "assistant",
            "description": "Plans trips",
            "version": "1.2.0",
            "provider": "acme",
            "documentationUrl": "https://docs.example.com",
            "metadata": {"k": None},
        },
        "transport": {
            "streaming": True,
            "websocket": False,
            "httpBinary": False,
            "pushNotifications": False,
            "resumable": False,
        },
        "tools": {
            "supported": True,
            "items": [{"name": "search", "description": "Search"}],
            "parallelCalls": True,
            "clientProvided": True,
        },
        "output": {"structuredOutput": True, "supportedMimeTypes": ["text/plain"]},
        "state": {"snapshots": True, "deltas": True, "memory": False, "persistentState": False},
        "multiAgent": {
            "supported": True,
            "delegation": True,
            "handoffs": False,
            "subagents": [{"name": "researcher", "description": "Finds sources"}],
        },
        "reasoning": {"supported": True, "streaming": True, "encrypted": False},
        "multimodal": {
            "input": {"image": True, "audio": False, "video": False, "pdf": True, "file": True},
            "output": {"image": False, "audio": False},
        },
        "execution": {
            "codeExecution": False,
            "sandboxed": True,
            "maxIterations": 8,
            "maxExecutionTime": 60000,
        },
        "humanInTheLoop": {
            "supported": True,
            "approvals": True,
            "interventions": False,
            "feedback": True,
            "interrupts": True,
            "approveWithEdits": True,
        },
        "custom": {"x": None},
    }
    assert AgentCapabilities.model_validate_json(json.dumps(written)) == caps


def test_the_0x_sub_agents_spelling_is_refused_not_kept_as_an_extra() -> None:
    with pytest.raises(ValidationError, match="subAgents\n  Extra inputs are not permitted"):
        MultiAgentCapabilities.model_validate({"subAgents": [{"name": "r"}]})


@pytest.mark.parametrize("field", ["max_iterations", "max_execution_time"])
@pytest.mark.parametrize("value", [-1, 2**53, True, "8", 8.0])
def test_an_execution_limit_is_a_safe_non_negative_integer_as_the_1_0_schema_asks(
    field: str, value: object
) -> None:
    with pytest.raises(ValidationError, match=field):
        ExecutionCapabilities.model_validate({field: value})


@pytest.mark.parametrize("value", [0, 2**53 - 1])
def test_an_execution_limit_may_be_zero_or_the_largest_safe_integer(value: int) -> None:
    limits = ExecutionCapabilities(max_iterations=value, max_execution_time=value)

    assert _wire(limits) == {"maxIterations": value, "maxExecutionTime": value}


@pytest.mark.parametrize("value", ["yes", "true", 1, 0, 1.0])
def test_a_capability_flag_is_a_json_boolean_and_nothing_else(value: JsonValue) -> None:
    text = json.dumps({"transport": {"streaming": value}, "tools": {"supported": True}})

    with pytest.raises(ValidationError, match=r"transport\.streaming\n  Input should be a valid "):
        AgentCapabilities.model_validate_json(text)
