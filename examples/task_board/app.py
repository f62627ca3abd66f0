"""A task board the agent and the app share: typed state, board tools, and an approval.

The agent is written with handles directly, without a model: it reads a command from the
user's last message and answers deterministically, so every stream it sends can be predicted.
What it demonstrates:

- **Shared, typed state.** The board is `Board`, a pydantic model, and the agent is a
  `RunContext[Board]` agent (`agui serve` reads the state type from that annotation). The app
  sends its copy of the board as the request's `state`; the agent changes it and publishes it;
  the app mirrors what it receives. The server keeps nothing between requests.
- **State inside a tool call.** Each change is a tool call that publishes the board while it is
  open: `TOOL_CALL_START`, `TOOL_CALL_ARGS`, `STATE_SNAPSHOT` (or a `STATE_DELTA`, when that is
  smaller), `TOOL_CALL_END`, `TOOL_CALL_RESULT`, so the app shows each change with its call.
- **Tools the app must offer.** `add_task`, `complete_task`, `rename_task` and `delete_task` are
  the app's tools: offering one says the app can render its calls (a card, a checkbox). The agent
  answers them itself, and only when the app offered them (`ctx.tool(name)`); otherwise the run
  fails with an `agui.AgentError` saying which tool to offer. That is this example's own rule:
  for AG-UI and for agui the offered tools are a capability list, never an allow-list.
- **A tool nobody offered.** After each change the agent sends a `render_a2ui` call that it
  answers itself, without checking the offer: its result is the board as an A2UI v0.9
  `a2ui_operations` envelope (`createSurface` the first time in a conversation, then the
  components, a checkbox per task bound to the data model, and the data model), for apps that
  draw A2UI surfaces, such as CopilotKit's A2UI middleware.
- **An approval.** Deleting needs the user's yes. The first request streams the `delete_task`
  call, ends it without a result, and finishes the run with an interrupt (`approve-<call id>`,
  as `agui.agents.ToolLoopAgent` names them). The next request carries the history and the
  answer: a `resume` entry, a tool message answering the call, or both (the entry decides).
  Approved (`{"approved": true}`), the task goes and the result answers the original call;
  declined, or an answer the agent cannot read, it stays. The result's message id marks the call
  settled, so it is never asked or acted on again. Without an answer, nothing happens and the
  question is asked again.
- **Steps and reasoning.** Each change runs in a step, after a short reasoning block.

The commands, read from the last user message (case does not matter):

    add <title>[, <title>...]       also: todo
    complete <task>                 also: done, finish
    rename <task> to <title>
    delete <task>                   also: remove; asks for approval first
    list                            also: show, board

`<task>` is a task's number (`2` or `#2`) or part of its title; anything else gets the help.

Run it (from the repository root), then ask it something, offering the tools:

    agui serve examples/task_board/app.py:agent
    agui watch http://127.0.0.1:8000/ -m "add buy milk, call mum" --tool add_task
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Literal, cast

from pydantic import BaseModel, Field, JsonValue

import agui
from agui.agents import a2ui
from agui.agents.a2ui import A2UIOperations
from agui.agents.loop import (
    approval_answer,
    approval_interrupt_id,
    approval_result_id,
    approval_settled,
)
from agui.messages import AssistantMessage, Message, ToolCall, UserMessage

BOARD_TOOLS = ("add_task", "complete_task", "rename_task", "delete_task")
"""The tools the app must offer for the board to change."""
SURFACE_ID = "task-board"
"""The A2UI surface the board is drawn on."""


class Task(BaseModel):
    """One task on the board."""

    id: int
    title: str
    done: bool = False


class Board(BaseModel):
    """The shared state: the tasks, in the order they were added."""

    tasks: list[Task] = Field(default_factory=list[Task])

    def find(self, ref: str) -> Task | None:
        """The task a reference names: its number (`2`, `#2`) or part of its title."""
        number = ref.strip().removeprefix("#")
        if number.isdigit():
            return next((task for task in self.tasks if task.id == int(number)), None)
        words = ref.strip().lower()
        return next((task for task in self.tasks if words and words in task.title.lower()), None)

    def next_id(self) -> int:
        """The number the next task gets."""
        return max((task.id for task in self.tasks), default=0) + 1

    def describe(self) -> str:
        """The board in one sentence."""
        if not self.tasks:
            return "The board is empty."
        listed = [f"#{t.id} {t.title}" + (" (done)" if t.done else "") for t in self.tasks]
        return "The board: " + ", ".join(listed) + "."


# -- commands ----------------------------------------------------------------------------------

Verb = Literal["add", "complete", "rename", "delete", "list", "help"]

_VERBS: dict[str, Verb] = {
    "add": "add",
    "todo": "add",
    "complete": "complete",
    "done": "complete",
    "finish": "complete",
    "rename": "rename",
    "delete": "delete",
    "remove": "delete",
    "list": "list",
    "show": "list",
    "board": "list",
}
_TOOL_OF: dict[Verb, str] = {
    "add": "add_task",
    "complete": "complete_task",
    "rename": "rename_task",
    "delete": "delete_task",
}
HELP = (
    "I keep the task board. Try: add buy milk, call mum; complete 1; rename 2 to call dad; "
    "delete 1; or list."
)


@dataclasses.dataclass(frozen=True)
class Command:
    """A parsed command: its verb, the titles to add, the task it names, a new title."""

    verb: Verb
    titles: tuple[str, ...] = ()
    ref: str = ""
    title: str = ""


def parse_command(text: str | None) -> Command:
    """Read a command from the user's text; anything unknown is `help`.

    Examples:
        >>> parse_command("Add buy milk, call mum")
        Command(verb='add', titles=('buy milk', 'call mum'), ref='', title='')
        >>> parse_command("rename #2 to call dad").title
        'call dad'
    """
    head, _, rest = (text or "").strip().partition(" ")
    verb = _VERBS.get(head.lower().strip(":,."), "help")
    rest = rest.strip().rstrip(".!")
    if verb == "add":
        titles = tuple(title.strip() for title in rest.split(",") if title.strip())
        return Command("add", titles=titles) if titles else Command("help")
    if verb == "rename":
        ref, to, title = rest.partition(" to ")
        return Command("rename", ref=ref, title=title.strip()) if to and title else Command("help")
    if verb in ("complete", "delete"):
        return Command(verb, ref=rest) if rest else Command("help")
    return Command(verb)


# -- the agent ---------------------------------------------------------------------------------


async def agent(ctx: agui.RunContext[Board]) -> agui.RunOutcome | None:
    """Answer one request: settle a pending delete, or carry out the user's command."""
    pending = pending_delete(ctx.messages)
    if pending is not None:
        return _settle_delete(ctx, pending)
    command = parse_command(ctx.last_user_text)
    if command.verb in _TOOL_OF:
        _require(ctx, _TOOL_OF[command.verb])
    if command.verb == "add":
        _add(ctx, command.titles)
    elif command.verb == "list":
        _reply(ctx, ctx.state.describe())
        _render(ctx)
    elif command.verb == "help":
        _reply(ctx, HELP)
    else:
        return _on_task(ctx, command)
    return None


def _on_task(ctx: agui.RunContext[Board], command: Command) -> agui.RunOutcome | None:
    task = ctx.state.find(command.ref)
    if task is None:
        _reply(ctx, f"No task matches {command.ref!r}. {ctx.state.describe()}")
        return None
    if command.verb == "delete":
        return _ask_to_delete(ctx, task)
    _change(ctx, command, task)
    return None


def _require(ctx: agui.RunContext[Board], name: str) -> None:
    """This example's rule: a board tool runs only when the app offered it (it renders it)."""
    if ctx.tool(name) is None:
        message = (
            f"the app offered no {name!r} tool: the board changes only through the board tools "
            f"the app renders; offer {name!r} in the request's tools "
            f"(with agui watch: --tool {name})"
        )
        raise agui.AgentError(message)


def _add(ctx: agui.RunContext[Board], titles: Sequence[str]) -> None:
    with ctx.step("update the board"):
        ctx.think(f"The user wants {len(titles)} new task(s) on the board; one call each.")
        added: list[Task] = []
        for title in titles:
            with ctx.tool_call("add_task") as call:
                call.args_json({"title": title})
                task = Task(id=ctx.state.next_id(), title=title)
                ctx.state.tasks.append(task)
                call.publish_state()  # the app sees the new task while the call is open
                call.result_json({"added": task.model_dump()})
            added.append(task)
        _reply(ctx, "Added " + ", ".join(f"#{t.id} {t.title}" for t in added) + ".")
        _render(ctx)


def _change(ctx: agui.RunContext[Board], command: Command, task: Task) -> None:
    with ctx.step("update the board"):
        if command.verb == "complete":
            ctx.think(f"Task #{task.id} is done; mark it so.")
            with ctx.tool_call("complete_task") as call:
                call.args_json({"id": task.id})
                task.done = True
                call.publish_state()
                call.result_json({"completed": task.model_dump()})
            _reply(ctx, f"Marked #{task.id} {task.title} as done.")
        else:
            ctx.think(f"Task #{task.id} gets a new title.")
            old = task.title
            with ctx.tool_call("rename_task") as call:
                call.args_json({"id": task.id, "title": command.title})
                task.title = command.title
                call.publish_state()
                call.result_json({"renamed": task.model_dump(), "from": old})
            _reply(ctx, f"Renamed #{task.id} from {old!r} to {task.title!r}.")
        _render(ctx)


# -- deleting, with approval -------------------------------------------------------------------


def _ask_to_delete(ctx: agui.RunContext[Board], task: Task) -> agui.RunOutcome:
    with ctx.step("confirm"):
        ctx.think("Deleting cannot be undone; ask the user first.")
        with ctx.tool_call("delete_task") as call:
            call.args_json({"id": task.id})
            call.end()  # no result yet: the user decides
        _reply(ctx, f"Delete #{task.id} {task.title}? Waiting for your approval.")
    return agui.RunOutcome.interrupt([_approval(call.id, task.id, task.title)])


def _approval(call_id: str, task_id: int, title: str) -> agui.Interrupt:
    return agui.Interrupt(
        id=approval_interrupt_id(call_id),
        reason="tool_call",
        tool_call_id=call_id,
        message=f"Delete task #{task_id} {title!r}?",
        response_schema={
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"],
        },
    )


def pending_delete(history: Sequence[Message]) -> ToolCall | None:
    """The `delete_task` call since the last user message that is not settled yet, if any.

    Examples:
        >>> pending_delete([UserMessage(id="u1", content="delete 1")]) is None
        True
    """
    last_user = max(
        (n for n, message in enumerate(history) if isinstance(message, UserMessage)), default=-1
    )
    for message in history[last_user + 1 :]:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                if call.function.name == "delete_task" and not approval_settled(history, call.id):
                    return call
    return None


def _settle_delete(ctx: agui.RunContext[Board], call: ToolCall) -> agui.RunOutcome | None:
    task_id = _task_id(call.function.arguments)
    task = next((task for task in ctx.state.tasks if task.id == task_id), None)
    answer = approval_answer(ctx, call.id)  # the resume entry, else the app's tool message
    if answer is None:  # an open question is never acted on without its answer: ask again
        return agui.RunOutcome.interrupt([_approval(call.id, task_id, task.title if task else "")])
    _require(ctx, "delete_task")
    settled = approval_result_id(call.id)  # marks the call settled for every later request
    if not answer.approved or task is None:
        why = _WHY[answer.verdict] if not answer.approved else "there is no such task"
        ctx.tool_result(call.id, json.dumps({"deleted": None, "reason": why}), message_id=settled)
        kept = f"Kept task #{task_id}" + (f": {why}." if answer.verdict == "unreadable" else ".")
        _reply(ctx, kept if not answer.approved else f"Task #{task_id} is gone.")
        return None
    with ctx.step("update the board"):
        ctx.state.tasks.remove(task)
        ctx.publish_state()  # before the result, so the app sees the board without the task
        ctx.tool_result(call.id, json.dumps({"deleted": task.model_dump()}), message_id=settled)
        _reply(ctx, f"Deleted #{task.id} {task.title}.")
        _render(ctx)
    return None


_WHY = {
    "declined": "the user declined",
    "cancelled": "the user cancelled the approval",  # the task stays, as on a decline
    "unreadable": "the answer could not be read as an approval",
}


def _task_id(arguments: str) -> int:
    try:
        value: JsonValue = json.loads(arguments or "{}")
    except ValueError:
        return 0
    task_id = value.get("id") if isinstance(value, dict) else None
    return task_id if isinstance(task_id, int) else 0


# -- replying and rendering --------------------------------------------------------------------


def _reply(ctx: agui.RunContext[Board], text: str) -> None:
    """Stream `text` a word at a time, as a model would."""
    with ctx.message() as message:
        for word in re.findall(r"\S+\s*", text):
            message.delta(word)


def _render(ctx: agui.RunContext[Board]) -> None:
    first = not any(
        call.function.name == "render_a2ui"
        for message in ctx.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    )
    with ctx.tool_call("render_a2ui") as call:  # not offered by the app, and not checked
        call.args_json({"surfaceId": SURFACE_ID})
        call.result(surface(ctx.state, first=first).model_dump_json())


def surface(board: Board, *, first: bool) -> A2UIOperations:
    """The board as an A2UI v0.9 surface: a column of checkboxes bound to the board's data.

    Examples:
        >>> envelope = surface(Board(tasks=[Task(id=1, title="buy milk")]), first=True)
        >>> [next(k for k in op if k != "version") for op in envelope.a2ui_operations]
        ['createSurface', 'updateComponents', 'updateDataModel']
    """
    children: list[JsonValue] = [f"task-{task.id}" for task in board.tasks] or ["empty"]
    components: list[dict[str, JsonValue]] = [
        {"id": "root", "component": "Column", "children": children}
    ]
    components += [_checkbox(index, task) for index, task in enumerate(board.tasks)]
    if not board.tasks:
        components.append({"id": "empty", "component": "Text", "text": "The board is empty."})
    data = cast("JsonValue", board.model_dump(mode="json"))
    return a2ui.render(SURFACE_ID, components, data=data, create=first)


def _checkbox(index: int, task: Task) -> dict[str, JsonValue]:
    return {
        "id": f"task-{task.id}",
        "component": "CheckBox",
        "label": f"#{task.id} {task.title}",
        "value": {"path": f"/tasks/{index}/done"},
    }


app = agui.asgi_app(agent, state=Board)
"""The same agent as an ASGI application: `uvicorn examples.task_board.app:app`."""
