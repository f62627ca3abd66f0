# pyright: reportPrivateUsage=false
# (the tests compare the verifier's private state across refusals, as ruff's SLF001 waiver says)
from __future__ import annotations

import ast
import copy
import importlib
import inspect
import re
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from agui import events as ev
from agui import verify
from agui._emit import verifier as run_verifier
from agui._emit.record import Kind, Record, materialize
from agui._emit.verifier import RunVerifier
from agui._protocol import rules as _rules
from agui.errors import ProtocolViolation
from agui.events import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
    EventType,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import (
    ActivityMessage,
    AssistantMessage,
    FunctionCall,
    Message,
    ReasoningMessage,
    ToolCall,
)
from agui.types import (
    CancelledOutcome,
    Interrupt,
    InterruptOutcome,
    RunAgentInput,
    SuccessOutcome,
)
from agui.verify import Rule, Verifier
from agui.verify._blocks import SUBAGENT_ENDED_BY_RUN
from agui.verify._lifecycle import ANY, REFUSALS, ROWS, TRANSITIONS, Phase


def started(run: str = "r1", thread: str = "t1", *, history: list[Message] | None = None) -> Event:
    body = RunAgentInput(thread_id=thread, run_id=run, messages=history) if history else None
    return RunStartedEvent(thread_id=thread, run_id=run, input=body)


def finished(run: str = "r1", thread: str = "t1", *, interrupts: Sequence[str] = ()) -> Event:
    asked = [Interrupt(id=i, reason="confirmation") for i in interrupts]
    outcome = InterruptOutcome(interrupts=asked) if asked else None
    return RunFinishedEvent(thread_id=thread, run_id=run, outcome=outcome)


def pending(*calls: str, run: str = "r1") -> Event:
    outcome = SuccessOutcome(pending_tool_call_ids=list(calls))
    return RunFinishedEvent(thread_id="t1", run_id=run, outcome=outcome)


def assistant_with_call(call: str, owner: str | None = None) -> Message:
    function = FunctionCall(name="f", arguments="{}")
    return AssistantMessage(
        id=f"{call}-msg", tool_calls=[ToolCall(id=call, function=function)], subagent_run_id=owner
    )


def text(mid: str, sub: str | None = None) -> list[Event]:
    return [
        TextMessageStartEvent(message_id=mid, subagent_run_id=sub),
        TextMessageContentEvent(message_id=mid, delta="Hi", subagent_run_id=sub),
        TextMessageEndEvent(message_id=mid, subagent_run_id=sub),
    ]


def call(cid: str, sub: str | None = None, parent: str | None = None) -> list[Event]:
    return [
        ToolCallStartEvent(
            tool_call_id=cid, tool_call_name="f", parent_message_id=parent, subagent_run_id=sub
        ),
        ToolCallArgsEvent(tool_call_id=cid, delta="{}", subagent_run_id=sub),
        ToolCallEndEvent(tool_call_id=cid, subagent_run_id=sub),
    ]


def result(cid: str, mid: str = "res", sub: str | None = None) -> Event:
    return ToolCallResultEvent(message_id=mid, tool_call_id=cid, content="ok", subagent_run_id=sub)


def chunk(
    mid: str | None = None,
    delta: str | None = "x",
    *,
    sub: str | None = None,
    role: Literal["developer", "system", "assistant", "user"] | None = None,
    name: str | None = None,
) -> Event:
    return TextMessageChunkEvent(
        message_id=mid, delta=delta, subagent_run_id=sub, role=role, name=name
    )


def tool_chunk(
    cid: str | None = None,
    name: str | None = "f",
    *,
    sub: str | None = None,
    parent: str | None = None,
    delta: str | None = "{}",
) -> Event:
    return ToolCallChunkEvent(
        tool_call_id=cid,
        tool_call_name=name,
        parent_message_id=parent,
        delta=delta,
        subagent_run_id=sub,
    )


def replay(events: Sequence[Event], verifier: Verifier | None = None) -> Verifier:
    verifier = verifier or Verifier()
    for event in events:
        verifier.observe(event)
    return verifier


def views(verifier: Verifier) -> tuple[object, ...]:
    return (
        verifier.running,
        verifier.open_messages,
        verifier.open_tool_calls,
        verifier.open_reasoning,
        verifier.open_reasoning_messages,
        verifier.open_steps,
        verifier.active_subagents,
        verifier.open_chunks,
    )


S1, S2 = "s1", "s2"
BEGIN = started()

VIOLATIONS = [
    # The run lifecycle.
    pytest.param(
        [TextMessageStartEvent(message_id="m1")],
        Rule.FIRST_EVENT_NOT_RUN_STARTED,
        "First event must be 'RUN_STARTED' (or 'RUN_ERROR'), not 'TEXT_MESSAGE_START'.",
        id="an-event-before-any-run",
    ),
    pytest.param(
        [finished()],
        Rule.FIRST_EVENT_NOT_RUN_STARTED,
        "First event must be 'RUN_STARTED'",
        id="run-finished-before-any-run",
    ),
    pytest.param(
        [BEGIN, started("r2")],
        Rule.NESTED_RUN_STARTED,
        "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished "
        "with 'RUN_FINISHED' before starting a new run (run 'r1' is active).",
        id="run-started-inside-a-run",
    ),
    pytest.param(
        [BEGIN, finished(), CustomEvent(name="late", value=None)],
        Rule.EVENT_AFTER_RUN_FINISHED,
        "Cannot send event type 'CUSTOM': The run has already finished with 'RUN_FINISHED'. Start "
        "a new run with 'RUN_STARTED'.",
        id="event-after-run-finished",
    ),
    pytest.param(
        [BEGIN, finished(), finished()],
        Rule.EVENT_AFTER_RUN_FINISHED,
        "Cannot send event type 'RUN_FINISHED': The run has already finished",
        id="run-finished-twice",
    ),
    pytest.param(
        [BEGIN, RunErrorEvent(message="boom"), finished()],
        Rule.EVENT_AFTER_RUN_ERROR,
        "Cannot send event type 'RUN_FINISHED': The run has already errored with 'RUN_ERROR'. No "
        "further events can be sent.",
        id="run-finished-after-run-error",
    ),
    pytest.param(
        [RunErrorEvent(message="boom"), RunErrorEvent(message="again")],
        Rule.EVENT_AFTER_RUN_ERROR,
        "Cannot send event type 'RUN_ERROR': The run has already errored",
        id="run-error-twice",
    ),
    pytest.param(
        [BEGIN, finished(), RunErrorEvent(message="late"), chunk("m1")],
        Rule.EVENT_AFTER_RUN_ERROR,
        "Cannot send event type 'TEXT_MESSAGE_CHUNK': The run has already errored",
        id="chunk-after-a-late-run-error",
    ),
    pytest.param(
        [BEGIN, finished("r2")],
        Rule.RUN_ID_MISMATCH,
        "Cannot send 'RUN_FINISHED' for run 'r2': the run that is open is 'r1'. A run's "
        "'RUN_STARTED' and 'RUN_FINISHED' must agree on their runId.",
        id="run-finished-names-another-run",
    ),
    pytest.param(
        [BEGIN, finished(thread="t2")],
        Rule.THREAD_ID_MISMATCH,
        "Cannot send 'RUN_FINISHED' for thread 't2': run 'r1' was started on thread 't1'. A run's "
        "'RUN_STARTED' and 'RUN_FINISHED' must agree on their threadId.",
        id="run-finished-names-another-thread",
    ),
    pytest.param(
        [BEGIN, finished(), started("r2", thread="t2")],
        Rule.THREAD_ID_MISMATCH,
        "Cannot send 'RUN_STARTED' for thread 't2': this stream belongs to thread 't1'. Every run "
        "on a stream carries the input's threadId.",
        id="second-run-on-another-thread",
    ),
    pytest.param(
        [BEGIN, finished(), started("r1")],
        Rule.RUN_ID_REUSED,
        "Cannot send 'RUN_STARTED' for run 'r1': this stream has already run it. Each run on a "
        "thread has a runId of its own; give the new run a new one.",
        id="second-run-reuses-the-first-runs-id",
    ),
    pytest.param(
        [BEGIN, RunErrorEvent(message="boom"), started("r1")],
        Rule.RUN_ID_REUSED,
        "Cannot send 'RUN_STARTED' for run 'r1': this stream has already run it.",
        id="run-after-an-error-reuses-its-id",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="plan"),
            StepStartedEvent(step_name="act", subagent_run_id=S1),
            finished(),
        ],
        Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
        "Cannot send 'RUN_FINISHED' while steps are still active: plan, act (subagent 's1')",
        id="run-finished-over-open-steps",
    ),
    pytest.param(
        [
            BEGIN,
            TextMessageStartEvent(message_id="m1"),
            TextMessageStartEvent(message_id="m2"),
            finished(),
        ],
        Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
        "Cannot send 'RUN_FINISHED' while text messages are still active: m1, m2",
        id="run-finished-over-open-text-messages",
    ),
    pytest.param(
        [
            BEGIN,
            ReasoningStartEvent(message_id="r1"),
            ReasoningMessageStartEvent(message_id="r1"),
            finished(),
        ],
        Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
        "Cannot send 'RUN_FINISHED' while reasoning messages are still active: r1",
        id="run-finished-over-an-open-reasoning-message",
    ),
    pytest.param(
        [BEGIN, ReasoningStartEvent(message_id="r1"), finished()],
        Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
        "Cannot send 'RUN_FINISHED' while reasoning spans are still active: r1",
        id="run-finished-over-an-open-reasoning-span",
    ),
    pytest.param(
        [BEGIN, chunk("m9"), ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"), finished()],
        Rule.OPEN_BLOCKS_AT_RUN_FINISHED,
        "Cannot send 'RUN_FINISHED' while tool calls are still active: c1",
        id="run-finished-over-an-open-tool-call",
    ),
    pytest.param(
        [BEGIN, finished(interrupts=["i1", "i2", "i1"])],
        Rule.DUPLICATE_INTERRUPT_ID,
        "Cannot send 'RUN_FINISHED' with two interrupts carrying the id 'i1'.",
        id="two-interrupts-share-an-id",
    ),
    # Text messages.
    pytest.param(
        [BEGIN, TextMessageStartEvent(message_id="m1"), TextMessageStartEvent(message_id="m1")],
        Rule.MESSAGE_ALREADY_OPEN,
        "Cannot send 'TEXT_MESSAGE_START' event: A text message with ID 'm1' is already in "
        "progress. Complete it with 'TEXT_MESSAGE_END' first.",
        id="text-message-started-twice",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1"),
            ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f"),
            chunk("m1"),
            TextMessageStartEvent(message_id="m1", subagent_run_id=S1),
        ],
        Rule.MESSAGE_ALREADY_OPEN,
        "A text message with ID 'm1' is already in progress",
        id="text-message-start-over-a-chunk-message-of-another-lane",
    ),
    pytest.param(
        [BEGIN, TextMessageContentEvent(message_id="m1", delta="Hi")],
        Rule.MESSAGE_NOT_OPEN,
        "Cannot send 'TEXT_MESSAGE_CONTENT' event: No active text message found with ID 'm1'. "
        "Start a text message with 'TEXT_MESSAGE_START' first.",
        id="text-content-without-start",
    ),
    pytest.param(
        [BEGIN, *text("m1"), TextMessageEndEvent(message_id="m1")],
        Rule.MESSAGE_NOT_OPEN,
        "Cannot send 'TEXT_MESSAGE_END' event: No active text message found with ID 'm1'. A "
        "'TEXT_MESSAGE_START' event must be sent first.",
        id="text-end-twice",
    ),
    pytest.param(
        [BEGIN, chunk("m1"), TextMessageContentEvent(message_id="m1", delta="Hi")],
        Rule.MESSAGE_NOT_OPEN,
        "No active text message found with ID 'm1'",
        id="text-content-after-its-chunk-stream-closed",
    ),
    pytest.param(
        [BEGIN, chunk("m1", sub=S1), TextMessageEndEvent(message_id="m1"), chunk(sub=S1)],
        Rule.MESSAGE_NOT_OPEN,
        "Cannot send 'TEXT_MESSAGE_CONTENT' event: No active text message found with ID 'm1'. "
        "Start a text message with 'TEXT_MESSAGE_START' first. A client synthesizes this",
        id="chunk-continues-a-message-another-lane-ended",
    ),
    pytest.param(
        [BEGIN, chunk("m1", sub=S1), TextMessageEndEvent(message_id="m1"), finished()],
        Rule.MESSAGE_NOT_OPEN,
        "Cannot send 'TEXT_MESSAGE_END' event: No active text message found with ID 'm1'. A "
        "'TEXT_MESSAGE_START' event must be sent first. A client synthesizes this",
        id="run-finished-closes-a-chunk-stream-another-lane-ended",
    ),
    # Tool calls.
    pytest.param(
        [BEGIN, *call("c1")[:1], *call("c1")[:1]],
        Rule.TOOL_CALL_ALREADY_OPEN,
        "Cannot send 'TOOL_CALL_START' event: A tool call with ID 'c1' is already in progress. "
        "Complete it with 'TOOL_CALL_END' first.",
        id="tool-call-started-twice",
    ),
    pytest.param(
        [BEGIN, ToolCallArgsEvent(tool_call_id="c1", delta="{}")],
        Rule.TOOL_CALL_NOT_OPEN,
        "Cannot send 'TOOL_CALL_ARGS' event: No active tool call found with ID 'c1'. Start a tool "
        "call with 'TOOL_CALL_START' first.",
        id="tool-args-without-start",
    ),
    pytest.param(
        [BEGIN, ToolCallEndEvent(tool_call_id="c1")],
        Rule.TOOL_CALL_NOT_OPEN,
        "Cannot send 'TOOL_CALL_END' event: No active tool call found with ID 'c1'. A "
        "'TOOL_CALL_START' event must be sent first.",
        id="tool-end-without-start",
    ),
    pytest.param(
        [BEGIN, *call("c1")[:2], result("c1")],
        Rule.TOOL_RESULT_BEFORE_END,
        "Cannot send 'TOOL_CALL_RESULT' for tool call 'c1': the call is still in progress. Send "
        "its 'TOOL_CALL_END' before its result.",
        id="tool-result-before-its-end",
    ),
    pytest.param(
        [BEGIN, tool_chunk("c1", sub=S1), result("c1")],
        Rule.TOOL_RESULT_BEFORE_END,
        "the call is still in progress",
        id="tool-result-in-another-lane-than-its-chunk-stream",
    ),
    pytest.param(
        [BEGIN, result("c9")],
        Rule.TOOL_RESULT_UNKNOWN_CALL,
        "Cannot send 'TOOL_CALL_RESULT' for tool call 'c9': no such call was started in this "
        "stream, sent in the run input, or declared known.",
        id="tool-result-for-a-call-nobody-made",
    ),
    # Steps.
    pytest.param(
        [BEGIN, StepStartedEvent(step_name="plan"), StepStartedEvent(step_name="plan")],
        Rule.STEP_ALREADY_OPEN,
        "Step \"plan\" is already active for 'STEP_STARTED'",
        id="step-started-twice",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="plan", subagent_run_id=S1),
            StepStartedEvent(step_name="plan", subagent_run_id=S1),
        ],
        Rule.STEP_ALREADY_OPEN,
        "Step \"plan\" is already active for 'STEP_STARTED' in subagent 's1'",
        id="subagent-step-started-twice",
    ),
    pytest.param(
        [BEGIN, StepFinishedEvent(step_name="plan")],
        Rule.STEP_NOT_OPEN,
        "Cannot send 'STEP_FINISHED' for step \"plan\" that was not started",
        id="step-finished-without-start",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="plan"),
            StepFinishedEvent(step_name="plan", subagent_run_id=S1),
        ],
        Rule.STEP_OWNER_MISMATCH,
        "Cannot send 'STEP_FINISHED' for step \"plan\" attributed to subagent 's1': that step is "
        "open under the parent agent. A step must be finished by whoever started it.",
        id="subagent-finishes-the-parents-step",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="plan", subagent_run_id=S1),
            StepFinishedEvent(step_name="plan"),
        ],
        Rule.STEP_OWNER_MISMATCH,
        "attributed to the parent agent: that step is open under subagent 's1'",
        id="parent-finishes-a-subagents-step",
    ),
    # Reasoning.
    pytest.param(
        [BEGIN, ReasoningStartEvent(message_id="r1"), ReasoningStartEvent(message_id="r1")],
        Rule.REASONING_ALREADY_OPEN,
        "Cannot send 'REASONING_START' event: A reasoning span with ID 'r1' is already in "
        "progress. Complete it with 'REASONING_END' first.",
        id="reasoning-span-started-twice",
    ),
    pytest.param(
        [BEGIN, ReasoningEndEvent(message_id="r1")],
        Rule.REASONING_NOT_OPEN,
        "Cannot send 'REASONING_END' event: No active reasoning span found with ID 'r1'. A "
        "'REASONING_START' event must be sent first.",
        id="reasoning-span-ended-without-start",
    ),
    pytest.param(
        [
            BEGIN,
            ReasoningMessageStartEvent(message_id="r1"),
            ReasoningMessageStartEvent(message_id="r1"),
        ],
        Rule.REASONING_MESSAGE_ALREADY_OPEN,
        "Cannot send 'REASONING_MESSAGE_START' event: A reasoning message with ID 'r1' is already "
        "in progress. Complete it with 'REASONING_MESSAGE_END' first.",
        id="reasoning-message-started-twice",
    ),
    pytest.param(
        [BEGIN, ReasoningMessageContentEvent(message_id="r1", delta="Hmm")],
        Rule.REASONING_MESSAGE_NOT_OPEN,
        "Cannot send 'REASONING_MESSAGE_CONTENT' event: No active reasoning message found with ID "
        "'r1'. Start a reasoning message with 'REASONING_MESSAGE_START' first.",
        id="reasoning-content-without-start",
    ),
    pytest.param(
        [BEGIN, ReasoningMessageEndEvent(message_id="r1")],
        Rule.REASONING_MESSAGE_NOT_OPEN,
        "Cannot send 'REASONING_MESSAGE_END' event: No active reasoning message found with ID "
        "'r1'. Start a reasoning message with 'REASONING_MESSAGE_START' first.",
        id="reasoning-message-ended-without-start",
    ),
    # Chunks.
    pytest.param(
        [BEGIN, chunk()],
        Rule.CHUNK_MISSING_ID,
        "First TEXT_MESSAGE_CHUNK must have a messageId",
        id="first-text-chunk-without-id",
    ),
    pytest.param(
        [BEGIN, chunk("m1"), CustomEvent(name="note", value=1), chunk()],
        Rule.CHUNK_MISSING_ID,
        "First TEXT_MESSAGE_CHUNK must have a messageId",
        id="custom-closes-the-chunk-stream",
    ),
    pytest.param(
        [BEGIN, tool_chunk()],
        Rule.CHUNK_MISSING_ID,
        "First TOOL_CALL_CHUNK must have a toolCallId",
        id="first-tool-chunk-without-id",
    ),
    pytest.param(
        [BEGIN, ReasoningMessageChunkEvent(delta="Hmm")],
        Rule.CHUNK_MISSING_ID,
        "First REASONING_MESSAGE_CHUNK must have a messageId",
        id="first-reasoning-chunk-without-id",
    ),
    pytest.param(
        [BEGIN, tool_chunk("c1", None)],
        Rule.CHUNK_MISSING_NAME,
        "First TOOL_CALL_CHUNK must have a toolCallName",
        id="first-tool-chunk-without-name",
    ),
    pytest.param(
        [BEGIN, chunk("m1", role="user"), chunk("m1", role="assistant")],
        Rule.CHUNK_CONFLICT,
        "Cannot continue text message 'm1': chunk role 'assistant' does not match the open "
        "stream's role 'user'.",
        id="chunk-changes-the-role",
    ),
    pytest.param(
        [BEGIN, chunk("m1"), chunk(role="user")],
        Rule.CHUNK_CONFLICT,
        "chunk role 'user' does not match the open stream's role 'assistant'.",
        id="chunk-contradicts-the-default-role",
    ),
    pytest.param(
        [BEGIN, chunk("m1"), chunk(name="bot")],
        Rule.CHUNK_CONFLICT,
        "chunk name 'bot' does not match the open stream's name (absent).",
        id="chunk-adds-a-name",
    ),
    pytest.param(
        [BEGIN, tool_chunk("c1", "search"), tool_chunk("c1", "delete")],
        Rule.CHUNK_CONFLICT,
        "Cannot continue tool call 'c1': chunk toolCallName 'delete' does not match the open "
        "stream's toolCallName 'search'.",
        id="chunk-renames-the-tool",
    ),
    pytest.param(
        [BEGIN, tool_chunk("c1", parent="m1"), tool_chunk(None, None, parent="m2")],
        Rule.CHUNK_CONFLICT,
        "chunk parentMessageId 'm2' does not match the open stream's parentMessageId 'm1'.",
        id="chunk-moves-the-call",
    ),
    pytest.param(
        [BEGIN, chunk("m1", sub=S1), chunk("m2", sub=S2), chunk()],
        Rule.CHUNK_AMBIGUOUS,
        "Ambiguous TEXT_MESSAGE_CHUNK: it carries neither a messageId nor a subagentRunId, but 2 "
        "lanes have an open text message. Attribute the chunk to the subagent it belongs to.",
        id="untagged-chunk-between-two-subagents",
    ),
    # Subagents.
    pytest.param(
        [
            BEGIN,
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
        ],
        Rule.SUBAGENT_ALREADY_ACTIVE,
        "Cannot send 'SUBAGENT_STARTED': subagent 's1' is already active. Finish it with "
        "'SUBAGENT_FINISHED' first.",
        id="subagent-started-twice",
    ),
    pytest.param(
        [
            BEGIN,
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            SubagentFinishedEvent(subagent_run_id=S1),
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
        ],
        Rule.SUBAGENT_ID_REUSED,
        "Cannot send 'SUBAGENT_STARTED': subagent 's1' has already finished in this run. Subagent "
        "IDs are per-invocation and cannot be reused.",
        id="subagent-id-reused",
    ),
    pytest.param(
        [BEGIN, SubagentStartedEvent(subagent_run_id=S2, name="b", parent_subagent_run_id=S1)],
        Rule.SUBAGENT_PARENT_NOT_STARTED,
        "Cannot send 'SUBAGENT_STARTED': parentSubagentRunId 's1' has not been started in this "
        "run.",
        id="subagent-parent-never-started",
    ),
    pytest.param(
        [BEGIN, SubagentFinishedEvent(subagent_run_id=S1)],
        Rule.SUBAGENT_NOT_ACTIVE,
        "Cannot send 'SUBAGENT_FINISHED': no active subagent found with ID 's1'. A "
        "'SUBAGENT_STARTED' event must be sent first.",
        id="subagent-finished-never-started",
    ),
    pytest.param(
        [
            BEGIN,
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            SubagentErrorEvent(subagent_run_id=S1, message="x"),
            SubagentErrorEvent(subagent_run_id=S1, message="x"),
        ],
        Rule.SUBAGENT_NOT_ACTIVE,
        "Cannot send 'SUBAGENT_ERROR': no active subagent found with ID 's1'.",
        id="subagent-errored-twice",
    ),
    pytest.param(
        [BEGIN, SubagentStartedEvent(subagent_run_id=S1, name="a"), finished()],
        Rule.SUBAGENT_ACTIVE_AT_RUN_FINISHED,
        "Cannot send 'RUN_FINISHED' while subagents are still active: s1",
        id="run-finished-over-an-active-subagent",
    ),
    # Attribution.
    pytest.param(
        [
            BEGIN,
            *text("m1", S1)[:1],
            TextMessageContentEvent(message_id="m1", delta="x", subagent_run_id=S2),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot send 'TEXT_MESSAGE_CONTENT': subagentRunId 's2' does not match the message 'm1' "
        "opener's subagent 's1'.",
        id="text-content-from-another-subagent",
    ),
    pytest.param(
        [BEGIN, *text("m1"), TextMessageStartEvent(message_id="m1", subagent_run_id=S1)],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "subagentRunId 's1' does not match the message 'm1' opener's subagent '(the parent "
        "agent)'.",
        id="subagent-reopens-a-parent-message",
    ),
    pytest.param(
        [BEGIN, *call("c1", S1)[:2], ToolCallEndEvent(tool_call_id="c1", subagent_run_id=S2)],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot send 'TOOL_CALL_END': subagentRunId 's2' does not match the tool call 'c1'",
        id="tool-end-from-another-subagent",
    ),
    pytest.param(
        [
            BEGIN,
            ReasoningStartEvent(message_id="r1", subagent_run_id=S1),
            ReasoningMessageStartEvent(message_id="r1", subagent_run_id=S2),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "does not match the reasoning message 'r1' opener's subagent 's1'.",
        id="reasoning-span-and-message-of-two-subagents",
    ),
    pytest.param(
        [BEGIN, *text("m1", S1), *call("c1", S2, parent="m1")[:1]],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot send 'TOOL_CALL_START': subagentRunId 's2' does not match its parent message 'm1' "
        "owner 's1'. A tool call belongs to the message that carries it.",
        id="tool-call-tagged-against-its-parent-message",
    ),
    pytest.param(
        [
            BEGIN,
            *text("m1", S1),
            *text("m2"),
            *call("c1", parent="m1"),
            *call("c1", parent="m2")[:1],
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot send 'TOOL_CALL_START': tool call 'c1' is owned by 's1' but its parent message "
        "'m2' is owned by '(the parent agent)'.",
        id="untagged-reopen-under-another-owners-message",
    ),
    pytest.param(
        [
            BEGIN,
            ActivitySnapshotEvent(
                message_id="p1", activity_type="PLAN", content={}, subagent_run_id=S1
            ),
            ActivityDeltaEvent(message_id="p1", activity_type="PLAN", patch=[], subagent_run_id=S2),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot send 'ACTIVITY_DELTA': subagentRunId 's2' does not match the activity 'p1' "
        "opener's "
        "subagent 's1'.",
        id="activity-delta-from-another-subagent",
    ),
    pytest.param(
        [
            BEGIN,
            *call("c1", S1),
            ReasoningEncryptedValueEvent(
                subtype="tool-call", entity_id="c1", encrypted_value="x", subagent_run_id=S2
            ),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot send 'REASONING_ENCRYPTED_VALUE': subagentRunId 's2' does not match the tool "
        "call 'c1'",
        id="encrypted-value-on-another-subagents-call",
    ),
    pytest.param(
        [
            BEGIN,
            ReasoningMessageStartEvent(message_id="r1", subagent_run_id=S1),
            ReasoningEncryptedValueEvent(
                subtype="message", entity_id="r1", encrypted_value="x", subagent_run_id=S2
            ),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "does not match the message 'r1' opener's subagent 's1'.",
        id="encrypted-value-on-another-subagents-reasoning",
    ),
    pytest.param(
        [BEGIN, chunk("m1", sub=S1), chunk("m1", sub=S2)],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "Cannot continue text message 'm1': chunk subagentRunId 's2' does not match the open "
        "stream's subagent 's1'.",
        id="chunk-continues-another-lanes-stream",
    ),
    pytest.param(
        [
            started(history=[AssistantMessage(id="m1", content="old", subagent_run_id=S1)]),
            TextMessageStartEvent(message_id="m1", subagent_run_id=S2),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "does not match the message 'm1' opener's subagent 's1'.",
        id="run-input-history-owns-its-messages",
    ),
    pytest.param(
        [
            BEGIN,
            *text("m1", S1),
            MessagesSnapshotEvent(
                messages=[AssistantMessage(id="m1", content="x", subagent_run_id=S2)]
            ),
            TextMessageStartEvent(message_id="m1", subagent_run_id=S1),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "opener's subagent 's2'.",
        id="messages-snapshot-re-owns-its-messages",
    ),
    pytest.param(
        [
            BEGIN,
            *call("c1"),
            result("c1", "t1", S1),
            TextMessageStartEvent(message_id="t1", subagent_run_id=S2),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "does not match the message 't1' opener's subagent 's1'.",
        id="tool-result-owns-the-message-it-mints",
    ),
    pytest.param(
        [
            started(history=[assistant_with_call("c0"), assistant_with_call("c0", S1)]),
            ReasoningEncryptedValueEvent(
                subtype="tool-call", entity_id="c0", encrypted_value="x", subagent_run_id=S1
            ),
        ],
        Rule.SUBAGENT_ATTRIBUTION_MISMATCH,
        "tool call 'c0'",
        id="history-gives-a-call-to-its-first-writer",
    ),
    pytest.param(
        [started(history=[assistant_with_call("c0")]), *call("c0")[:1]],
        Rule.TOOL_CALL_ID_REUSED,
        "Cannot send 'TOOL_CALL_START': tool call 'c0' already exists",
        id="a-call-of-the-input-history-started-again",
    ),
    pytest.param(
        [BEGIN, *call("c1"), *call("c1")[:1]],
        Rule.TOOL_CALL_ID_REUSED,
        "tool call 'c1' already exists (it was started earlier in this stream or is in the run "
        "input's history), and a client would overwrite that call with this one. Give each tool "
        "call an id of its own in the thread.",
        id="a-closed-call-started-again",
    ),
    pytest.param(
        [BEGIN, *call("c1"), finished(), started("r2"), *call("c1")[:1]],
        Rule.TOOL_CALL_ID_REUSED,
        "tool call 'c1' already exists",
        id="an-earlier-runs-call-started-again",
    ),
    pytest.param(
        [BEGIN, *call("c1"), ToolCallChunkEvent(tool_call_id="c1", tool_call_name="f")],
        Rule.TOOL_CALL_ID_REUSED,
        "tool call 'c1' already exists",
        id="a-chunk-starts-a-closed-call-again",
    ),
    pytest.param(
        [BEGIN, MessagesSnapshotEvent(messages=[assistant_with_call("c5")]), *call("c5")[:1]],
        Rule.TOOL_CALL_ID_REUSED,
        "tool call 'c5' already exists",
        id="a-call-of-a-messages-snapshot-started-again",
    ),
    # The pending calls a success names.
    pytest.param(
        [started(history=[assistant_with_call("c0")]), *call("c1"), pending("c1", "c0")],
        Rule.PENDING_CALL_UNKNOWN,
        "Cannot send 'RUN_FINISHED' with 'c0' in pendingToolCallIds: this run started no tool "
        "call of that id.",
        id="a-pending-call-from-the-history",
    ),
    pytest.param(
        [BEGIN, *call("c1"), finished(), started("r2"), pending("c1", run="r2")],
        Rule.PENDING_CALL_UNKNOWN,
        "'c1' in pendingToolCallIds: this run started no tool call of that id",
        id="a-pending-call-of-the-previous-run",
    ),
    pytest.param(
        [BEGIN, *call("c1"), *call("c2"), result("c2"), pending("c1", "c2")],
        Rule.PENDING_CALL_ANSWERED,
        "Cannot send 'RUN_FINISHED' with 'c2' in pendingToolCallIds: this run already sent that "
        "call's TOOL_CALL_RESULT.",
        id="a-pending-call-already-answered",
    ),
]


@pytest.mark.parametrize(("events", "rule", "message"), VIOLATIONS)
def test_the_event_that_breaks_a_rule_is_refused_and_changes_nothing(
    events: list[Event], rule: Rule, message: str
) -> None:
    verifier = replay(events[:-1])
    before = (verifier._snapshot(), views(verifier))
    with pytest.raises(ProtocolViolation, match=re.escape(message)) as caught:
        verifier.observe(events[-1])
    assert caught.value.rule is rule
    assert caught.value.event is events[-1]
    assert caught.value.code == "PROTOCOL_VIOLATION"
    assert (verifier._snapshot(), views(verifier)) == before


def test_every_rule_but_truncation_has_a_violation_case() -> None:
    covered = {param.values[1] for param in VIOLATIONS}
    assert covered | {Rule.TRUNCATED} == set(Rule)


ACCEPTED = [
    pytest.param(
        [
            BEGIN,
            TextMessageStartEvent(message_id="m1"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
            TextMessageStartEvent(message_id="m2"),
            ToolCallStartEvent(tool_call_id="c2", tool_call_name="g", parent_message_id="m1"),
            ToolCallArgsEvent(tool_call_id="c2", delta="{}"),
            TextMessageContentEvent(message_id="m1", delta="a"),
            ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
            ToolCallEndEvent(tool_call_id="c2"),
            TextMessageEndEvent(message_id="m2"),
            result("c2"),
            ToolCallEndEvent(tool_call_id="c1"),
            TextMessageEndEvent(message_id="m1"),
            result("c1", "res-2"),
            finished(),
        ],
        id="interleaved-messages-and-parallel-tool-calls",
    ),
    pytest.param(
        [BEGIN, *call("c1"), *call("c2"), result("c2"), *call("c3"), pending("c1", "c3")],
        id="pending-calls-left-without-a-result",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="plan"),
            TextMessageStartEvent(message_id="m1"),
            StateSnapshotEvent(snapshot={"n": 1}),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
            StateDeltaEvent(delta=[]),
            ReasoningStartEvent(message_id="r1"),
            ActivitySnapshotEvent(message_id="p1", activity_type="PLAN", content={}),
            ActivityDeltaEvent(message_id="p1", activity_type="PLAN", patch=[]),
            RawEvent(event=None),
            CustomEvent(name="ping", value=None),
            MessagesSnapshotEvent(messages=[]),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="m1", encrypted_value="x"),
            ReasoningEndEvent(message_id="r1"),
            ToolCallEndEvent(tool_call_id="c1"),
            TextMessageEndEvent(message_id="m1"),
            StepFinishedEvent(step_name="plan"),
            finished(),
        ],
        id="unordered-events-anywhere-inside-open-blocks",
    ),
    pytest.param(
        [
            BEGIN,
            *text("m1"),
            finished(),
            started("r2"),
            *text("m1"),
            RunErrorEvent(message="x"),
            started("r3"),
            finished("r3"),
        ],
        id="sequential-runs-in-one-stream",
    ),
    pytest.param(
        [RunErrorEvent(message="unreachable"), started(), finished()],
        id="a-stream-that-opens-with-run-error-then-runs",
    ),
    pytest.param(
        [BEGIN, *text("m1"), finished(), RunErrorEvent(message="flush failed")],
        id="a-late-run-error-after-run-finished",
    ),
    pytest.param(
        [BEGIN, finished(interrupts=["i1", "i2"])],
        id="interrupts-with-distinct-ids",
    ),
    pytest.param(
        [
            BEGIN,
            TextMessageStartEvent(message_id="m1"),
            chunk("m2"),
            TextMessageContentEvent(message_id="m1", delta="closes the chunk stream of m2"),
            chunk("m2"),
            TextMessageEndEvent(message_id="m1"),
            finished(),
        ],
        id="an-explicit-event-closes-its-lanes-chunk-stream-first",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="plan"),
            TextMessageStartEvent(message_id="m1"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
            ReasoningStartEvent(message_id="r1"),
            ReasoningMessageStartEvent(message_id="r2"),
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            chunk("m2", sub=S1),
            RunErrorEvent(message="boom"),
            started("r2"),
            finished("r2"),
        ],
        id="run-error-closes-over-everything-open",
    ),
    pytest.param(
        [
            BEGIN,
            *text("m1"),
            TextMessageStartEvent(message_id="m1"),
            TextMessageEndEvent(message_id="m1"),
            finished(),
        ],
        id="a-closed-message-reopens",
    ),
    pytest.param(
        [started(history=[assistant_with_call("c0")]), result("c0"), finished()],
        id="a-resumed-run-answers-a-call-from-its-input",
    ),
    pytest.param(
        [BEGIN, *call("c1"), finished(), started("r2"), result("c1"), finished("r2")],
        id="a-later-run-answers-an-earlier-runs-call",
    ),
    pytest.param(
        [
            BEGIN,
            MessagesSnapshotEvent(messages=[assistant_with_call("c0", S1)]),
            result("c0"),
            finished(),
        ],
        id="a-messages-snapshot-makes-its-calls-known",
    ),
    pytest.param(
        [BEGIN, *call("c1"), result("c1"), result("c1", "res-2"), finished()],
        id="a-call-may-be-answered-twice",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1", role="user"),
            chunk(),
            chunk("m1", role="user", delta=None),
            finished(),
        ],
        id="text-chunks-continue-by-omitting-the-id-or-repeating-it",
    ),
    pytest.param(
        [
            BEGIN,
            tool_chunk("c1", parent="m0"),
            tool_chunk(None, None),
            tool_chunk("c1", "f", parent="m0"),
            result("c1"),
            finished(),
        ],
        id="a-tool-result-closes-the-chunk-stream-of-its-call",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1"),
            chunk("m2"),
            tool_chunk("c1"),
            ReasoningMessageChunkEvent(message_id="r1"),
            ReasoningMessageChunkEvent(delta="more"),
            finished(),
        ],
        id="a-new-id-or-kind-closes-the-open-chunk-stream",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1"),
            RawEvent(event=1),
            ActivitySnapshotEvent(message_id="p", activity_type="A", content={}),
            ReasoningEncryptedValueEvent(subtype="message", entity_id="m1", encrypted_value="x"),
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            chunk(),
            SubagentFinishedEvent(subagent_run_id=S1),
            finished(),
        ],
        id="pass-through-events-leave-the-chunk-stream-open",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1"),
            CustomEvent(name="note", value=1),
            chunk("m1"),
            StepStartedEvent(step_name="s"),
            chunk("m1"),
            StepFinishedEvent(step_name="s"),
            chunk("m1"),
            StateSnapshotEvent(snapshot=None),
            finished(),
        ],
        id="a-chunk-with-its-id-reopens-what-an-explicit-event-closed",
    ),
    pytest.param(
        [
            BEGIN,
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            SubagentStartedEvent(subagent_run_id=S2, name="b", parent_subagent_run_id=S1),
            chunk("m1", sub=S1),
            chunk("m2", sub=S2),
            chunk(sub=S1),
            chunk("m2"),
            chunk(sub=S2, delta=None),
            SubagentErrorEvent(subagent_run_id=S2, message="x"),
            chunk(),
            SubagentFinishedEvent(subagent_run_id=S1),
            finished(),
        ],
        id="two-subagents-stream-chunks-in-their-own-lanes",
    ),
    pytest.param(
        [BEGIN, chunk("m1"), chunk("m2", sub=S1), tool_chunk("c1", sub=S2), chunk(), finished()],
        id="an-untagged-chunk-prefers-the-parent-lane",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1", sub=S1),
            TextMessageStartEvent(message_id="m2"),
            chunk(),
            TextMessageEndEvent(message_id="m2"),
            finished(),
        ],
        id="an-untagged-chunk-continues-the-sole-open-stream",
    ),
    pytest.param(
        [
            BEGIN,
            chunk("m1", sub=S1),
            MessagesSnapshotEvent(messages=[]),
            chunk("m1", sub=S1),
            finished(),
        ],
        id="messages-snapshot-closes-every-lane",
    ),
    pytest.param(
        [
            BEGIN,
            SubagentStartedEvent(subagent_run_id=S1, name="a"),
            SubagentFinishedEvent(subagent_run_id=S1),
            SubagentStartedEvent(subagent_run_id=S2, name="b", parent_subagent_run_id=S1),
            SubagentFinishedEvent(subagent_run_id=S2),
            finished(),
        ],
        id="a-subagent-may-start-after-its-parent-finished",
    ),
    pytest.param(
        [
            BEGIN,
            *text("m1", S1),
            TextMessageStartEvent(message_id="m2", subagent_run_id=S1),
            TextMessageContentEvent(message_id="m2", delta="untagged"),
            TextMessageEndEvent(message_id="m2", subagent_run_id=S1),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f", parent_message_id="m1"),
            ToolCallArgsEvent(tool_call_id="c1", delta="{}"),
            ToolCallEndEvent(tool_call_id="c1", subagent_run_id=S1),
            ReasoningEncryptedValueEvent(
                subtype="tool-call", entity_id="c1", encrypted_value="x", subagent_run_id=S1
            ),
            ReasoningEncryptedValueEvent(
                subtype="message", entity_id="m1", encrypted_value="x", subagent_run_id=S1
            ),
            ReasoningEncryptedValueEvent(
                subtype="message", entity_id="nobody", encrypted_value="x", subagent_run_id=S2
            ),
            finished(),
        ],
        id="attribution-without-lifecycle-and-untagged-continuations",
    ),
    pytest.param(
        [
            BEGIN,
            StepStartedEvent(step_name="tools"),
            StepStartedEvent(step_name="tools", subagent_run_id=S1),
            StepFinishedEvent(step_name="tools", subagent_run_id=S1),
            StepFinishedEvent(step_name="tools"),
            finished(),
        ],
        id="parent-and-subagent-steps-share-a-name",
    ),
    pytest.param(
        [
            BEGIN,
            ActivitySnapshotEvent(
                message_id="p1", activity_type="A", content={}, subagent_run_id=S1
            ),
            ActivitySnapshotEvent(
                message_id="p1", activity_type="B", content={}, subagent_run_id=S2, replace=False
            ),
            ActivityDeltaEvent(message_id="p1", activity_type="A", patch=[], subagent_run_id=S1),
            ActivitySnapshotEvent(
                message_id="p1", activity_type="B", content={}, subagent_run_id=S2
            ),
            ActivityDeltaEvent(message_id="p1", activity_type="B", patch=[], subagent_run_id=S2),
            ActivityDeltaEvent(
                message_id="never-created", activity_type="B", patch=[], subagent_run_id=S2
            ),
            finished(),
        ],
        id="only-a-replacing-activity-snapshot-re-owns-it",
    ),
    pytest.param(
        [
            started(
                history=[
                    ReasoningMessage(id="r1", content="x", subagent_run_id=S1),
                    ActivityMessage(id="p1", activity_type="A", content={}, subagent_run_id=S1),
                    AssistantMessage(id="m1", content="x"),
                    AssistantMessage(id="m1", content="x", subagent_run_id=S2),
                    assistant_with_call("c0"),
                    assistant_with_call("c0", S1),
                ]
            ),
            ReasoningMessageStartEvent(message_id="r1", subagent_run_id=S1),
            ReasoningMessageEndEvent(message_id="r1"),
            ActivityDeltaEvent(message_id="p1", activity_type="A", patch=[], subagent_run_id=S1),
            TextMessageStartEvent(message_id="m1"),
            TextMessageEndEvent(message_id="m1"),
            ReasoningEncryptedValueEvent(subtype="tool-call", entity_id="c0", encrypted_value="x"),
            result("c0"),
            finished(),
        ],
        id="history-seeds-owners-by-role-and-first-writer",
    ),
]


@pytest.mark.parametrize("events", ACCEPTED)
def test_a_valid_stream_is_accepted_to_the_end(events: list[Event]) -> None:
    verifier = replay(events)
    verifier.finish()
    assert not verifier.running


def test_a_verifier_told_a_run_started_checks_its_events_without_run_started() -> None:
    verifier = replay([*call("c1"), result("c1")], Verifier(started=("t1", "r1")))
    assert verifier.running
    with pytest.raises(ProtocolViolation, match="while a run is still active") as caught:
        verifier.observe(started())
    assert caught.value.rule is Rule.NESTED_RUN_STARTED
    verifier.observe(finished())


def test_known_tool_call_ids_may_be_answered_without_being_started() -> None:
    verifier = Verifier(started=("t1", "r1"), known_tool_call_ids=["c0"])
    verifier.observe(result("c0"))
    with pytest.raises(ProtocolViolation, match="tool call 'c1': no such call") as caught:
        verifier.observe(result("c1"))
    assert caught.value.rule is Rule.TOOL_RESULT_UNKNOWN_CALL


def test_the_views_show_what_is_open_and_chunk_streams_apart() -> None:
    verifier = replay(
        [
            BEGIN,
            TextMessageStartEvent(message_id="m1"),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
            ReasoningStartEvent(message_id="r1"),
            ReasoningMessageStartEvent(message_id="r2"),
            StepStartedEvent(step_name="plan", subagent_run_id=S1),
            SubagentStartedEvent(subagent_run_id=S2, name="b"),
            chunk("m2", sub=S1),
            tool_chunk("c2"),
        ]
    )
    assert views(verifier) == (
        True,
        ("m1",),
        ("c1",),
        ("r1",),
        ("r2",),
        (("plan", S1),),
        (S2,),
        ((S1, "TEXT_MESSAGE_CHUNK", "m2"), (None, "TOOL_CALL_CHUNK", "c2")),
    )


def test_the_open_blocks_list_every_kind_in_opening_order_with_its_closing_event() -> None:
    verifier = replay(
        [
            BEGIN,
            SubagentStartedEvent(subagent_run_id=S2, name="b"),
            StepStartedEvent(step_name="plan", subagent_run_id=S2),
            ToolCallStartEvent(tool_call_id="c1", tool_call_name="f"),
            ReasoningStartEvent(message_id="r1"),
            TextMessageStartEvent(message_id="m1", subagent_run_id=S2),
            ReasoningMessageStartEvent(message_id="r2"),
            chunk("m2", sub=S1),
        ]
    )
    assert [(b.opened_by, b.id) for b in verifier.open_blocks] == [
        ("SUBAGENT_STARTED", S2),
        ("STEP_STARTED", "plan"),
        ("TOOL_CALL_START", "c1"),
        ("REASONING_START", "r1"),
        ("TEXT_MESSAGE_START", "m1"),
        ("REASONING_MESSAGE_START", "r2"),
        ("TEXT_MESSAGE_CHUNK", "m2"),
    ]
    assert [block.closing for block in verifier.open_blocks] == [
        SubagentErrorEvent(subagent_run_id=S2, message=SUBAGENT_ENDED_BY_RUN),
        StepFinishedEvent(step_name="plan", subagent_run_id=S2),
        ToolCallEndEvent(tool_call_id="c1"),
        ReasoningEndEvent(message_id="r1"),
        TextMessageEndEvent(message_id="m1", subagent_run_id=S2),
        ReasoningMessageEndEvent(message_id="r2"),
        None,  # a chunk stream: the end of its lane closes it
    ]


def test_a_block_closed_and_opened_again_moves_to_the_end_of_the_open_blocks() -> None:
    verifier = replay([BEGIN, *text("m1")[:1], StepStartedEvent(step_name="plan")])
    replay([TextMessageEndEvent(message_id="m1"), TextMessageStartEvent(message_id="m1")], verifier)
    assert [block.id for block in verifier.open_blocks] == ["plan", "m1"]


def test_no_block_is_open_before_a_run_starts_or_after_its_run_error() -> None:
    assert Verifier().open_blocks == ()
    verifier = replay([BEGIN, *text("m1")[:1]])
    assert [block.id for block in verifier.open_blocks] == ["m1"]
    verifier.observe(RunErrorEvent(message="failed"))
    assert verifier.open_blocks == ()


def test_finish_refuses_a_stream_whose_run_is_still_active() -> None:
    verifier = replay([BEGIN, *text("m1")])
    with pytest.raises(
        ProtocolViolation, match="ended without a terminal event: run 'r1' is still active"
    ) as caught:
        verifier.finish()
    assert caught.value.rule is Rule.TRUNCATED


def test_finish_refuses_a_stream_that_never_started_a_run() -> None:
    with pytest.raises(
        ProtocolViolation, match="ended without a terminal event: no run was started"
    ) as caught:
        Verifier().finish()
    assert caught.value.rule is Rule.TRUNCATED


@pytest.mark.parametrize(
    "end", [finished(), RunErrorEvent(message="boom")], ids=["run-finished", "run-error"]
)
def test_finish_accepts_a_stream_that_ends_with_a_terminal_event(end: Event) -> None:
    replay([BEGIN, end]).finish()


def test_the_module_docstring_table_lists_every_rule_with_its_description() -> None:
    rows = [
        line.split("|")[1:3]
        for line in (verify.__doc__ or "").splitlines()
        if line.startswith("| ")
    ]
    assert rows[0] == [" rule ", " description "]
    assert [(name.strip(), text.strip()) for name, text in rows[2:]] == [
        (r.value, r.description) for r in Rule
    ]


def test_every_event_type_has_a_handler() -> None:
    assert set(Verifier()._handlers) == {member.value for member in EventType}


def test_every_verifier_shares_its_phases_dispatch_tables() -> None:
    first, second = Verifier(), Verifier(started=("t", "r"))
    second.observe(RunFinishedEvent(thread_id="t", run_id="r"))
    first.observe(RunStartedEvent(thread_id="t", run_id="r"))
    first.observe(RunFinishedEvent(thread_id="t", run_id="r"))

    assert first._handlers is second._handlers


def test_a_copied_verifier_checks_its_own_run_and_leaves_the_original_as_it_was() -> None:
    original = Verifier(started=("t", "r"))
    copied = copy.deepcopy(original)
    copied.observe(RunFinishedEvent(thread_id="t", run_id="r"))

    assert (copied.running, original.running) == (False, True)


# The run lifecycle, in the test's own words: each phase, each run boundary and an ordinary
# event, and then the phase the event moves the stream to, or the rule it breaks there.
IDLE, RUNNING, FINISHED, ERRORED = Phase
INTO: dict[Phase, list[Event]] = {
    IDLE: [],
    RUNNING: [BEGIN],
    FINISHED: [BEGIN, finished()],
    ERRORED: [BEGIN, RunErrorEvent(message="boom")],
}
BOUNDARY: dict[str, Event] = {
    "RUN_STARTED": started("r2"),
    "RUN_FINISHED": finished(),
    "RUN_ERROR": RunErrorEvent(message="boom"),
    "CUSTOM": CustomEvent(name="note", value=None),
}
LIFECYCLE: list[tuple[Phase, str, Phase | Rule]] = [
    (IDLE, "RUN_STARTED", RUNNING),
    (IDLE, "RUN_FINISHED", Rule.FIRST_EVENT_NOT_RUN_STARTED),
    (IDLE, "RUN_ERROR", ERRORED),
    (IDLE, "CUSTOM", Rule.FIRST_EVENT_NOT_RUN_STARTED),
    (RUNNING, "RUN_STARTED", Rule.NESTED_RUN_STARTED),
    (RUNNING, "RUN_FINISHED", FINISHED),
    (RUNNING, "RUN_ERROR", ERRORED),
    (RUNNING, "CUSTOM", RUNNING),
    (FINISHED, "RUN_STARTED", RUNNING),
    (FINISHED, "RUN_FINISHED", Rule.EVENT_AFTER_RUN_FINISHED),
    (FINISHED, "RUN_ERROR", ERRORED),
    (FINISHED, "CUSTOM", Rule.EVENT_AFTER_RUN_FINISHED),
    (ERRORED, "RUN_STARTED", RUNNING),
    (ERRORED, "RUN_FINISHED", Rule.EVENT_AFTER_RUN_ERROR),
    (ERRORED, "RUN_ERROR", Rule.EVENT_AFTER_RUN_ERROR),
    (ERRORED, "CUSTOM", Rule.EVENT_AFTER_RUN_ERROR),
]


@pytest.mark.parametrize(
    ("phase", "type_", "then"), LIFECYCLE, ids=[f"{p.value}-{t}" for p, t, _ in LIFECYCLE]
)
def test_each_phase_moves_or_refuses_each_event_as_the_lifecycle_says(
    phase: Phase, type_: str, then: Phase | Rule
) -> None:
    verifier = replay(INTO[phase])
    assert verifier._phase is phase
    if isinstance(then, Rule):
        with pytest.raises(ProtocolViolation, match=re.escape(type_) + "|'r1' is active") as caught:
            verifier.observe(BOUNDARY[type_])
        assert caught.value.rule is then
        assert verifier._phase is phase
    else:
        verifier.observe(BOUNDARY[type_])
        assert verifier._phase is then
        assert verifier.running is (then is RUNNING)


def test_every_event_type_but_the_run_boundaries_moves_as_any_other_event() -> None:
    boundaries = {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"}
    for phase in Phase:
        assert set(ROWS[phase]) == {member.value for member in EventType}
        for member in EventType:
            if member.value not in boundaries:
                assert ROWS[phase][member.value] is TRANSITIONS[phase].get(ANY)


def test_a_refused_move_names_the_rule_of_its_phase() -> None:
    for phase, type_, then in LIFECYCLE:
        if isinstance(then, Rule):
            assert REFUSALS[phase][0] is then, (phase, type_)


def test_the_reference_page_draws_the_lifecycle_table_the_verifier_consults() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "verify.md").read_text()
    lines = page.splitlines()
    header = lines.index(
        "| phase | `RUN_STARTED` | `RUN_FINISHED` | `RUN_ERROR` | any other event |"
    )
    drawn: dict[tuple[Phase, str], Phase | Rule] = {}
    for line in lines[header + 2 : header + 6]:
        phase, *cells = (cell.strip() for cell in line.strip("|").split("|"))
        for type_, cell in zip(BOUNDARY, cells, strict=True):
            then = Rule(cell.strip("`")) if cell.startswith("`") else Phase(cell)
            drawn[Phase(phase), type_] = then
    assert drawn == {(phase, type_): then for phase, type_, then in LIFECYCLE}


def test_the_rule_enum_sits_below_the_errors_that_carry_it() -> None:
    def agui_imports(module: str) -> set[str]:
        tree = ast.parse(Path(inspect.getfile(importlib.import_module(module))).read_text())
        found = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        found |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        return {name for name in found if name.split(".")[0] == "agui"}

    assert agui_imports("agui._protocol.rules") == set()
    assert agui_imports("agui.errors") == {"agui._protocol.rules"}
    assert Rule is _rules.Rule
    assert typing.get_type_hints(ProtocolViolation.__init__)["rule"] is Rule


# A small world for random streams: a few ids and owners, every kind of event that has a rule.
IDS = st.sampled_from(["a", "b"])
TAGS = st.sampled_from([None, S1, S2])
MAYBE_IDS = st.sampled_from([None, "a", "b"])
SUBAGENTS = st.sampled_from([S1, S2])
TEXT = st.just("x")
EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def kind(type_: str, **fields: st.SearchStrategy[object]) -> st.SearchStrategy[Event]:
    return st.fixed_dictionaries({"type": st.just(type_), **fields}).map(EVENT.validate_python)


EVENTS = st.one_of(
    kind(
        "RUN_STARTED", thread_id=st.sampled_from(["t1", "t2"]), run_id=st.sampled_from(["r1", "r2"])
    ),
    kind("RUN_FINISHED", thread_id=st.just("t1"), run_id=st.sampled_from(["r1", "r2"])),
    kind("RUN_ERROR", message=TEXT),
    kind("TEXT_MESSAGE_START", message_id=IDS, subagent_run_id=TAGS),
    kind("TEXT_MESSAGE_CONTENT", message_id=IDS, delta=TEXT, subagent_run_id=TAGS),
    kind("TEXT_MESSAGE_END", message_id=IDS, subagent_run_id=TAGS),
    kind("TEXT_MESSAGE_CHUNK", message_id=MAYBE_IDS, delta=TEXT, subagent_run_id=TAGS),
    kind(
        "TOOL_CALL_START",
        tool_call_id=IDS,
        tool_call_name=TEXT,
        parent_message_id=MAYBE_IDS,
        subagent_run_id=TAGS,
    ),
    kind("TOOL_CALL_ARGS", tool_call_id=IDS, delta=TEXT, subagent_run_id=TAGS),
    kind("TOOL_CALL_END", tool_call_id=IDS, subagent_run_id=TAGS),
    kind(
        "TOOL_CALL_CHUNK",
        tool_call_id=MAYBE_IDS,
        tool_call_name=st.sampled_from([None, "f", "g"]),
        subagent_run_id=TAGS,
    ),
    kind("TOOL_CALL_RESULT", message_id=IDS, tool_call_id=IDS, content=TEXT, subagent_run_id=TAGS),
    kind("REASONING_START", message_id=IDS, subagent_run_id=TAGS),
    kind("REASONING_MESSAGE_START", message_id=IDS, subagent_run_id=TAGS),
    kind("REASONING_MESSAGE_END", message_id=IDS, subagent_run_id=TAGS),
    kind("REASONING_MESSAGE_CHUNK", message_id=MAYBE_IDS, delta=TEXT, subagent_run_id=TAGS),
    kind("REASONING_END", message_id=IDS, subagent_run_id=TAGS),
    kind(
        "ACTIVITY_SNAPSHOT",
        message_id=IDS,
        activity_type=TEXT,
        content=st.just({}),
        subagent_run_id=TAGS,
    ),
    kind(
        "ACTIVITY_DELTA",
        message_id=IDS,
        activity_type=TEXT,
        patch=st.just([]),
        subagent_run_id=TAGS,
    ),
    kind("STEP_STARTED", step_name=IDS, subagent_run_id=TAGS),
    kind("STEP_FINISHED", step_name=IDS, subagent_run_id=TAGS),
    kind("SUBAGENT_STARTED", subagent_run_id=SUBAGENTS, name=TEXT, parent_subagent_run_id=TAGS),
    kind("SUBAGENT_FINISHED", subagent_run_id=SUBAGENTS),
    kind("CUSTOM", name=TEXT, value=st.none(), subagent_run_id=TAGS),
    kind("MESSAGES_SNAPSHOT", messages=st.just([])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=40))
def test_a_refused_event_never_changes_the_verifier(events: list[Event]) -> None:
    verifier = Verifier()
    for event in [started(), *events]:
        before = (verifier._snapshot(), views(verifier))
        refused = refusal(verifier, event)
        if refused is not None:
            assert isinstance(refused.rule, Rule)
            assert (verifier._snapshot(), views(verifier)) == before


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=40))
def test_sending_the_open_blocks_closing_events_in_reverse_leaves_the_terminal_to_end_it(
    events: list[Event],
) -> None:
    verifier = Verifier()
    for event in [started(), *events]:
        refusal(verifier, event)
    if not verifier.running:
        return  # the run already ended: it has nothing open
    broken = False
    for block in reversed(verifier.open_blocks):
        if block.closing is not None and (refused := refusal(verifier, block.closing)) is not None:
            # A chunk stream whose item another lane already ended (or re-owned, as a result
            # minting a tool message under that id does) makes every event its lane's END would
            # be synthesized before refused: only RUN_ERROR may end that run (below).
            assert broken_by_another_lane(refused)
            broken = True
    if not broken:
        assert all(block.closing is None for block in verifier.open_blocks)  # chunk streams only
    # They are the terminal's to close: a cancelled RUN_FINISHED, unless a chunk stream was
    # already broken (its item ended by another lane), which only RUN_ERROR may end.
    run = verifier._run_id
    assert run is not None
    cancelled = RunFinishedEvent(thread_id="t1", run_id=run, outcome=CancelledOutcome())
    if (refused := refusal(verifier, cancelled)) is not None:
        assert broken_by_another_lane(refused)
        verifier.observe(RunErrorEvent(message="failed"))
    assert verifier.open_blocks == ()


def broken_by_another_lane(refused: ProtocolViolation) -> bool:
    """Whether the END synthesized for a chunk stream was refused: its item ended or re-owned."""
    reowned = refused.rule is Rule.SUBAGENT_ATTRIBUTION_MISMATCH and "opener's subagent" in str(
        refused
    )
    return "synthesizes" in str(refused) or reowned


def refusal(verifier: Verifier, event: Event) -> ProtocolViolation | None:
    try:
        verifier.observe(event)
    except ProtocolViolation as violation:
        return violation
    return None


# A handle's records (`agui._emit.record`) are observed by the run's verifier
# (`agui._emit.verifier`) as they are: on a fast path in the common case, as their event
# otherwise. Either way, observing a record must do exactly what observing its event does.


def _record_text(kind: Kind) -> str:
    if kind is Kind.TEXT_START:
        return "assistant"
    return "x" if kind <= Kind.LAST_DELTA else ""


RECORDS: list[Record] = [
    (kind, entity_id, _record_text(kind)) for kind in Kind for entity_id in ("a", "b")
]


def observe_item(verifier: RunVerifier, item: Event | Record) -> None:
    if isinstance(item, tuple):
        verifier.observe_record(item)
    else:
        verifier.observe(item)


def outcome(verifier: RunVerifier, item: Event | Record) -> tuple[object, ...]:
    """What observing `item` did: the rule it broke (or None), and the verifier after it."""
    try:
        observe_item(verifier, item)
    except ProtocolViolation as violation:
        return (violation.rule, verifier._snapshot(), views(verifier))
    return (None, verifier._snapshot(), views(verifier))


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS, max_size=40))
def test_observing_a_record_does_what_observing_its_event_does(events: list[Event]) -> None:
    for record in RECORDS:
        fast, full = RunVerifier(), RunVerifier()
        for event in [started(), *events]:
            refusal(fast, event)
            refusal(full, event)
        before = (fast._snapshot(), views(fast))
        found = outcome(fast, record)
        assert found == outcome(full, materialize(record))
        if found[0] is not None:
            assert found[1:] == before


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENTS | st.sampled_from(RECORDS), max_size=40))
def test_the_revision_stays_put_only_across_an_item_accepted_changing_nothing(
    items: list[Event | Record],
) -> None:
    verifier = RunVerifier()
    for item in [started(), *items]:
        revision, before = verifier.revision, (verifier._snapshot(), views(verifier))
        rule = outcome(verifier, item)[0]
        if verifier.revision != revision:
            assert rule is None
            assert verifier.revision == revision + 1
            continue
        assert (verifier._snapshot(), views(verifier)) == before
        if rule is None:  # accepted changing nothing: accepted again, the same way
            assert outcome(verifier, item)[0] is None
            assert verifier.revision == revision


def test_only_a_delta_into_its_open_block_leaves_the_revision_where_it_was() -> None:
    verifier = RunVerifier()
    replay([started(), *text("m1")[:1]], verifier)
    revision = verifier.revision
    verifier.observe_record((Kind.TEXT_CONTENT, "m1", "x"))
    verifier.observe(ev.TextMessageContentEvent(message_id="m1", delta="x"))
    assert verifier.revision == revision + 1  # an event is checked the full way
    verifier.observe(ev.TextMessageChunkEvent(message_id="m2", delta="x"))
    revision = verifier.revision
    verifier.observe_record((Kind.TEXT_CONTENT, "m1", "x"))
    assert verifier.revision == revision + 1  # a chunk stream is open: the full check decides
    with pytest.raises(ProtocolViolation, match="m3"):
        verifier.observe_record((Kind.TEXT_CONTENT, "m3", "x"))
    assert verifier.revision == revision + 1  # a refusal changes nothing


def test_a_record_is_checked_as_its_event_unless_its_block_is_simply_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[Event] = []

    def building(record: Record) -> Event:
        built.append(materialize(record))
        return built[-1]

    monkeypatch.setattr(run_verifier, "materialize", building)
    verifier = RunVerifier()
    with pytest.raises(ProtocolViolation):
        verifier.observe_record((Kind.TEXT_CONTENT, "m1", "x"))  # no run
    assert len(built) == 1
    replay([started(), *text("m1")[:1]], verifier)
    verifier.observe_record((Kind.TEXT_CONTENT, "m1", "x"))
    assert len(built) == 1  # the fast path: the message is open
    with pytest.raises(ProtocolViolation, match="m1"):
        verifier.observe_record((Kind.TOOL_ARGS, "m1", "x"))  # a tool call of that id is not open
    assert len(built) == 2
    verifier.observe(ev.TextMessageChunkEvent(message_id="m2", delta="x"))
    verifier.observe_record((Kind.TEXT_CONTENT, "m1", "x"))
    assert len(built) == 3  # a chunk stream is open: the full check decides
    assert built[-1] == ev.TextMessageContentEvent(message_id="m1", delta="x")
