"""How `agui watch` shows each kind of event."""

from __future__ import annotations

import io
from typing import Any

import agui
from agui.cli._render import Renderer

# -- the rendering -------------------------------------------------------------------------------


def render(*raw: dict[str, Any], state: Any = None) -> list[str]:
    out = io.StringIO()
    renderer = Renderer(out, state=state)
    for item in raw:
        renderer.event(agui.parse_event(item))
    renderer.close()
    return out.getvalue().splitlines()


def test_a_subagent_is_named_by_its_start_or_by_its_id_when_its_start_was_not_seen() -> None:
    lines = render(
        {"type": "SUBAGENT_STARTED", "subagentRunId": "r-sub-1", "name": "researcher"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "r-sub-1"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "r-sub-9"},
    )

    assert lines == [
        "[Subagent Started: researcher]",
        "[Subagent Finished: researcher]",
        "[Subagent Finished: r-sub-9]",
    ]


def test_every_kind_of_event_is_shown() -> None:
    lines = render(
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "REASONING_START", "messageId": "s1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "s2", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "s2", "delta": "Hmm."},
        {"type": "REASONING_MESSAGE_END", "messageId": "s2"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "s3", "delta": "Chunked "},
        {"type": "REASONING_MESSAGE_CHUNK", "delta": "thought."},
        {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "message", "entityId": "s3",
         "encryptedValue": "xyz"},
        {"type": "REASONING_END", "messageId": "s1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "A user line"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m2"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m2"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m3", "role": "developer", "delta": "Dev "},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "note."},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m4", "delta": "Plain."},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m4"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "k1", "toolCallName": "lookup", "delta": '{"q":'},
        {"type": "TOOL_CALL_CHUNK", "delta": '"x"}'},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "k2", "toolCallName": "other", "delta": "{}"},
        {"type": "TOOL_CALL_CHUNK", "delta": ""},
        {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "k1",
         "content": [{"type": "text", "text": "found"}]},
        {"type": "TOOL_CALL_RESULT", "messageId": "r2", "toolCallId": "nobody", "content": "?"},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": None}]},
        {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}]},
        {"type": "MESSAGES_SNAPSHOT", "messages": []},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "plan",
         "content": {"steps": 2}},
        {"type": "ACTIVITY_DELTA", "messageId": "a1", "activityType": "plan",
         "patch": [{"op": "replace", "path": "/steps", "value": 3}]},
        {"type": "CUSTOM", "name": "ping", "value": None},
        {"type": "RAW", "event": {"x": "y" * 400}},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa", "name": "researcher"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa"},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sb", "name": "writer"},
        {"type": "SUBAGENT_ERROR", "subagentRunId": "sb", "message": "gave up"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "cancelled"}},
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2",
         "outcome": {"type": "success", "pendingToolCallIds": ["c9"]}},
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r3"},
        {"type": "RUN_ERROR", "message": "boom"},
        state={"n": 1},
    )  # fmt: skip

    assert lines == [
        "[Run Started]",
        "[Step Started: plan]",
        "[Reasoning] Hmm.",
        "[Reasoning] Chunked thought.",
        "[Reasoning Encrypted Value]",
        "[User] A user line",
        "[Developer] Dev note.",
        "Plain.",
        '[Tool Call: lookup] {"q":"x"}',
        "[Tool Call: other] {}",
        '[Tool Result: lookup] [{"type":"text","text":"found"}]',
        "[Tool Result: nobody] ?",
        '[State Delta] [{"op":"add","path":"/n","value":null}]',
        '[State Delta] [{"op":"remove","path":"/missing"}]',
        (
            "[Note] the state delta does not apply to the state shown: operation 0 (remove): "
            "path '/missing' does not exist: the object at '' has no member 'missing'"
        ),
        "[Messages Snapshot] 0 message(s)",
        '[Activity: plan] {"steps":2}',
        '[Activity Delta: plan] [{"op":"replace","path":"/steps","value":3}]',
        "[Custom: ping] null",
        '[Raw] {"x":"' + "y" * 293 + "…",
        "[Subagent Started: researcher]",
        "[Subagent Finished: researcher]",
        "[Subagent Started: writer]",
        "[Subagent Error: writer] gave up",
        "[Step Finished: plan]",
        "[Run Finished: cancelled]",
        '[Final State] {"n":null}',
        "[Run Started]",
        "[Run Finished] waiting for the app to answer tool calls: c9",
        "[Run Started]",
        "[Run Error] boom",
    ]


def test_a_call_is_shown_before_the_state_published_inside_it() -> None:
    lines = render(
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "add"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"a":'},
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "1}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "again"},
        {"type": "CUSTOM", "name": "inside", "value": 1},
        {"type": "CUSTOM", "name": "inside", "value": 2},
        {"type": "TOOL_CALL_END", "toolCallId": "c2"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "gone", "delta": "x"},
        {"type": "TOOL_CALL_END", "toolCallId": "gone"},
    )

    assert lines == [
        "[Run Started]",
        '[Tool Call: add] {"a":',
        '[State Snapshot] {"a":1}',
        "[Tool Call: add] (more arguments) 1}",
        "[Tool Call: again]",
        "[Custom: inside] 1",
        "[Custom: inside] 2",
        "[Tool Call: ?]",
    ]


def test_interleaved_text_messages_each_keep_their_prefix() -> None:
    lines = render(
        {"type": "TEXT_MESSAGE_START", "messageId": "a", "role": "system"},
        {"type": "TEXT_MESSAGE_START", "messageId": "b"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "one"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "two"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": " more\nlines"},
        {"type": "TEXT_MESSAGE_END", "messageId": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a"},
        {"type": "TOOL_CALL_CHUNK", "delta": "ignored: no call to continue"},
    )

    assert lines == ["[System] one", "two", "[System]  more", "lines"]
