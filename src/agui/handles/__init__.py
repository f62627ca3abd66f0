"""Handles: each bracketed AG-UI construct as a context manager that cannot be left open.

A handle emits its opening event when it is created and its closing event when its `with` block
is left by any path, an exception included (which then propagates). A message, a reasoning block
and a tool call are exclusive: opening one while another is open raises `UsageError` naming the
open one, which is the Rust SDK's borrow-check error at runtime. Steps nest, and close innermost
first. Unordered events (state, custom, raw, activity) go out through any open handle.

A closed handle refuses every further call with `UsageError`, so a result can never follow a
finished call by accident. A handle still open when its run ends is closed by the run driver,
which reports it (`agui.errors.UnclosedHandleWarning`) at the line that opened it. Text that is
not valid Unicode (a lone surrogate, which UTF-8 cannot encode) is refused where it is written,
with a `UsageError` naming the handle, and nothing is sent.

A handle talks to its run through two small seams: the run's pipeline (`agui._emit.pipeline`), the
one way its events leave and where it is held open, and an `Owner`, the run's state and its
publishing (a `RunContext` is one). The context hands each handle its ids when it opens it.
A subagent's invocation is a handle too (`SubagentHandle`): a block of its parent's that
speaks through a run context of its own, whose events carry the invocation's id.
An `Activity` (`ctx.activity(...)`) is no block, since activity events are unordered: it keeps
one activity message's content and sends its snapshot, then patches, through the same pipeline.
Each handle lives in a module of its own; this package is where they are imported from.
"""

from __future__ import annotations

from agui.handles._activity import Activity, ActivityOpener
from agui.handles._handle import Handle, Owner, whole_text
from agui.handles._message import MessageHandle
from agui.handles._message import TextRole as TextRole  # for type hints: the roles a message takes
from agui.handles._reasoning import ReasoningHandle
from agui.handles._step import StepHandle
from agui.handles._subagent import (
    Delegation,
    RunsIn,
    SubagentHandle,
    SubagentOptions,
    invocation_input,
)
from agui.handles._tool_call import ToolCallHandle, result_event

__all__ = [
    "Activity",
    "ActivityOpener",
    "Delegation",
    "Handle",
    "MessageHandle",
    "Owner",
    "ReasoningHandle",
    "RunsIn",
    "StepHandle",
    "SubagentHandle",
    "SubagentOptions",
    "ToolCallHandle",
    "invocation_input",
    "result_event",
    "whole_text",
]
