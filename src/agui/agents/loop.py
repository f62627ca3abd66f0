"""The tool-loop agent: model, then tools, then model again, until the model answers.

`ToolLoopAgent` is an ordinary agui agent (`async def run(self, ctx)`). Each run it turns the
AG-UI history into a provider conversation, streams the model's reasoning and text to the client,
and handles the turn's tool calls one at a time:

- a backend tool runs inside its own tool-call block (START, ARGS, any state it publishes, END,
  RESULT), and its result goes back to the model;
- a tool only the client offers is left to the client (START, ARGS, END): the run finishes as
  success with `pendingToolCallIds`, and the client's result arrives with the next request;
- a tool marked `requires_approval` is not run: its call is ended and the run finishes with an
  `Interrupt` (id `"approve-" + call id`, so a stateless server recognises it next time);
- any other name gets an error result the model can read, and so does a client tool's call
  whose arguments are not a JSON object, or any call the token limit cut off (finish reason
  `length`) inside its arguments.

The system prompt is the agent's instructions, the dispatcher's tool text and the client's context
entries. Instructions given as a function of the run context are called again before every model
call, so the prompt can carry the current state (a shared-state app's document, as the user and the
tools last left it).

It loops until the model stops calling tools, or fails the run after `max_turns` model calls.
A reply the provider cut short (`length`, `content_filter`, `refusal`) is reported as an
`agui.warning` CUSTOM event.
After each model chunk it writes, and before each tool call, it awaits `ctx.writable()`: a
client that stops reading stops the loop, and the model's stream with it, at the high-water
mark of `asgi_app(max_buffered_bytes=...)`.

Human in the loop, the second request: the client sends the history (which holds the assistant's
call) and a `ResumeEntry` for the interrupt, or a tool message answering the call, or both (the
entry decides). An approval runs the tool (with `editedArgs` when given); a decline, a cancel or
an answer the agent cannot read gives an error result; either is sent as `TOOL_CALL_RESULT`
against the original call id, without a new START, with the message id `approval_result_id`
gives, which marks the call settled for every later request; then the model loop continues. An
approval call after the last user message with no answer is still open, and the run ends with
the same interrupt again without acting; one the user moved past is abandoned. The
human-in-the-loop guide states the whole contract.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Iterable, Sequence
from typing import TypeVar, cast

from agui._emit.numbering import numbered_past, tool_call_ids
from agui._protocol.text import read_json
from agui._util.numbers import whole
from agui.agents._approval import (
    APPROVAL_PREFIX,
    ApprovalAnswer,
    approval_answer,
    approval_interrupt_id,
    approval_result_id,
    approval_settled,
    fits,
    interrupt,
    settle_approvals,
)
from agui.agents._signature import parse_arguments
from agui.agents.dispatch import (
    AssistantTurn,
    CallResult,
    DispatcherChoice,
    ParsedCall,
    ToolDispatcher,
    select_dispatcher,
)
from agui.agents.models.base import ChatMessage, ChatModel
from agui.agents.tools import BackendTool, Toolbox, ToolResult
from agui.agents.turn import TurnWriter, emit_warning, own_call_id
from agui.context import RunContext
from agui.errors import AgentError, InvalidArguments, UsageError
from agui.types import (
    Context,
    Interrupt,
    InterruptOutcome,
    RunOutcome,
    TokenUsage,
    Tool,
)

__all__ = [
    "APPROVAL_PREFIX",
    "ApprovalAnswer",
    "ToolLoopAgent",
    "approval_answer",
    "approval_interrupt_id",
    "approval_result_id",
    "approval_settled",
]

S = TypeVar("S")
T = TypeVar("T")


class ToolLoopAgent:
    """An agent that lets a chat model call tools: backend, client-side and approved ones.

    `tools` are backend tools (`@tool` functions, or plain functions); `instructions` is the
    system prompt: a string, or a function of the run context returning one, called before each
    model call (so the prompt can hold the current state); `dispatcher` is `"native"`, `"xml"`,
    `"auto"` or a `ToolDispatcher`.

    Examples:
        >>> import asyncio
        >>> from agui import RunAgentInput
        >>> from agui.agents import tool
        >>> from agui.messages import UserMessage
        >>> from agui.agents.models import Call, ScriptedModel, Turn
        >>> from agui.testing import collect
        >>> @tool
        ... def get_weather(location: str) -> str:
        ...     '''Get the weather for a city.'''
        ...     return f"sunny in {location}"
        >>> model = ScriptedModel([
        ...     Turn.tool_calls(Call("get_weather", {"location": "Paris"})),
        ...     Turn.text("It is sunny in Paris."),
        ... ])
        >>> agent = ToolLoopAgent(model, tools=[get_weather])
        >>> question = UserMessage(id="u1", content="Weather in Paris?")
        >>> input = RunAgentInput(thread_id="t", run_id="r", messages=[question])
        >>> [event.type for event in asyncio.run(collect(agent, input))]
        ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT',
         'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT',
         'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT',
         'TEXT_MESSAGE_END', 'RUN_FINISHED']
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        tools: Iterable[Callable[..., object]] = (),
        instructions: str | Callable[..., str] = "",
        dispatcher: ToolDispatcher | DispatcherChoice = "auto",
        max_turns: int = 10,
    ) -> None:
        turns = whole(max_turns)
        if turns is None or turns < 1:
            message = f"max_turns must be a whole number of turns, at least 1, not {max_turns!r}"
            raise UsageError(message)
        if not isinstance(cast("object", instructions), str) and not callable(instructions):
            message = (
                "ToolLoopAgent(instructions=...) takes a string or a function of the run context "
                f"returning one, got {type(instructions).__qualname__}"
            )
            raise UsageError(message)
        self.model = _chat_model(model)
        self.toolbox: Toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools)
        self.instructions = instructions
        self.dispatcher: ToolDispatcher = select_dispatcher(dispatcher, model)
        self.max_turns = max_turns

    async def run(self, ctx: RunContext[S]) -> RunOutcome | None:
        """Do one run: settle answered approvals, then loop model -> tools -> model."""
        history = await settle_approvals(ctx, self.toolbox)
        if isinstance(history, InterruptOutcome):
            return history
        specs = self._specs(ctx)
        messages = self.dispatcher.to_provider_messages(history)
        # Numbered past the turns the history has of this run id (a resume may keep it).
        past = numbered_past(ctx.input, tool_call_ids(ctx.messages)).turn
        for turn_number in range(past + 1, past + self.max_turns + 1):
            prompt = self._system(ctx, specs) + messages
            turn = await ctx.until_cancelled(self._ask_model(ctx, prompt, specs, turn_number))
            _add_usage(ctx, turn.usage)
            _warn_cut_short(ctx, turn.finish_reason)
            if not turn.calls and not turn.malformed:
                return None
            outcome, results = await self._handle_calls(ctx, turn)
            if outcome is not None:
                return outcome
            messages += self.dispatcher.format_results(turn, results)
        message = (
            f"the model was still calling tools after {self.max_turns} turns; "
            "stopped (raise max_turns to allow more)"
        )
        raise AgentError(message)

    # -- the model -------------------------------------------------------------------------

    def _specs(self, ctx: RunContext[S]) -> list[Tool]:
        offered = [tool for tool in ctx.tools if tool.name not in self.toolbox]
        for name in sorted({tool.name for tool in ctx.tools} - {tool.name for tool in offered}):
            # A model can call one tool by a name: the agent's own runs, the client's is not sent.
            message = (
                f"the client offers a tool named {name!r}, and the agent has a backend tool of "
                "that name: the backend tool is the one the model sees and calls; rename one of "
                "them for the model to have both"
            )
            emit_warning(ctx, message, tool=name)
        return self.toolbox.specs() + offered

    def _system(self, ctx: RunContext[S], specs: Sequence[Tool]) -> list[ChatMessage]:
        parts = [self._instructions(ctx), self.dispatcher.prompt_instructions(specs)]
        parts.append(_context_text(ctx.context))
        system = "\n\n".join(part for part in parts if part)
        return [ChatMessage.system(system)] if system else []

    def _instructions(self, ctx: RunContext[S]) -> str:
        if isinstance(self.instructions, str):
            return self.instructions
        text = cast("object", self.instructions(ctx))
        if not isinstance(text, str):
            if inspect.iscoroutine(text):
                text.close()
            name = getattr(self.instructions, "__qualname__", type(self.instructions).__qualname__)
            message = (
                f"the instructions function {name} returned {type(text).__qualname__}, not a "
                "string; ToolLoopAgent calls it with the run context before each model call and "
                "sends the string it returns as the system prompt (a plain def, not async def)"
            )
            raise UsageError(message)
        return text

    async def _ask_model(
        self, ctx: RunContext[S], messages: Sequence[ChatMessage], specs: Sequence[Tool], turn: int
    ) -> AssistantTurn:
        tools = specs if self.dispatcher.should_send_tool_specs else ()
        stop = self.dispatcher.stop_sequences
        stream = self.model.stream(tuple(messages), tools=tools, stop=stop)
        paced = _paced(ctx, stream)
        try:
            return await self.dispatcher.parse_response(paced, TurnWriter(ctx, turn=turn))
        finally:
            await paced.aclose()
            if isinstance(stream, AsyncGenerator):
                await stream.aclose()

    # -- the calls of a turn ---------------------------------------------------------------

    async def _handle_calls(
        self, ctx: RunContext[S], turn: AssistantTurn
    ) -> tuple[RunOutcome | None, list[CallResult]]:
        results: list[CallResult] = []
        interrupts: list[Interrupt] = []
        left_to_client = False
        for call in turn.calls:
            await ctx.writable()
            backend = self.toolbox.get(call.name)
            client = backend is None and ctx.tool(call.name) is not None
            refused = _refused(call, turn.finish_reason, client=client)
            if client and refused is None:
                self._open_and_end(ctx, call, turn.message_id)
                left_to_client = True
            elif (
                refused is None
                and backend is not None
                and backend.requires_approval
                and fits(backend, call.arguments)
            ):
                call_id = self._open_and_end(ctx, call, turn.message_id)
                interrupts.append(interrupt(call_id, call.arguments, backend))
            else:
                results.append(await self._execute(ctx, call, backend, turn.message_id, refused))
        if interrupts:
            return RunOutcome.interrupt(interrupts), results
        if left_to_client:
            return RunOutcome.success(pending_tool_call_ids=ctx.pending_tool_call_ids), results
        return None, results

    def _open_and_end(self, ctx: RunContext[S], call: ParsedCall, parent: str | None) -> str:
        if call.started and call.id is not None:
            return call.id
        with ctx.tool_call(
            call.name, call_id=own_call_id(ctx, call.id), parent_message_id=parent
        ) as handle:
            handle.args(call.arguments)
            handle.end()
        return handle.id

    async def _execute(
        self,
        ctx: RunContext[S],
        call: ParsedCall,
        backend: BackendTool[..., object] | None,
        parent: str | None,
        refused: ToolResult | None,
    ) -> CallResult:
        if call.started and call.id is not None:
            result = await ctx.until_cancelled(self._result(ctx, call, backend, call.id, refused))
            ctx.tool_result(call.id, result.content)
            return CallResult(call.id, call.name, call.arguments, result)
        with ctx.tool_call(
            call.name, call_id=own_call_id(ctx, call.id), parent_message_id=parent
        ) as handle:
            handle.args(call.arguments)
            result = await ctx.until_cancelled(self._result(ctx, call, backend, handle.id, refused))
            handle.result(result.content)
        return CallResult(handle.id, call.name, call.arguments, result)

    async def _result(
        self,
        ctx: RunContext[S],
        call: ParsedCall,
        backend: BackendTool[..., object] | None,
        call_id: str,
        refused: ToolResult | None,
    ) -> ToolResult:
        if refused is not None:
            return refused
        if backend is not None:
            return await backend.run(call.arguments, ctx=ctx, call_id=call_id)
        names = ", ".join(spec.name for spec in self._specs(ctx)) or "none"
        content = f"Error: there is no tool named {call.name!r}. Available tools: {names}."
        return ToolResult(content, ok=False)


async def _paced(ctx: RunContext[S], stream: AsyncIterable[T]) -> AsyncGenerator[T, None]:
    """The model's chunks, each asked for once the client has caught up with the last one's."""
    async for chunk in stream:
        yield chunk
        await ctx.writable()


def _refused(call: ParsedCall, finish_reason: str | None, *, client: bool) -> ToolResult | None:
    """The error result of a call that must neither run nor reach the client, if it is one."""
    if finish_reason == "length":
        try:
            read_json(call.arguments or "{}")
        except ValueError:
            content = (
                "Error: the reply was cut off at the output token limit inside the arguments "
                f"of tool {call.name!r}; call it again with shorter arguments"
            )
            return ToolResult(content, ok=False)
    if client:
        # A client parses the arguments it is handed; text that is no object is the model's
        # mistake, for the model to fix.
        try:
            parse_arguments(call.name, call.arguments)
        except InvalidArguments as error:
            return ToolResult(f"Error: {error}", ok=False)
    return None


_CUT_SHORT = {
    "length": (
        "the model's reply was cut off at its output token limit (finish reason 'length'); "
        "raise the model's max_tokens to let it finish"
    ),
    "content_filter": (
        "the provider's content filter stopped the model's reply (finish reason 'content_filter')"
    ),
    "refusal": "the model refused to answer (finish reason 'refusal')",
}


def _warn_cut_short(ctx: RunContext[S], finish_reason: str | None) -> None:
    # Otherwise a cut-off or empty reply finishes the run as if the model had said all it meant.
    message = _CUT_SHORT.get(finish_reason or "")
    if message is not None:
        emit_warning(ctx, message, reason=finish_reason)


def _context_text(context: Sequence[Context]) -> str:
    if not context:
        return ""
    lines = ["Context from the application:"]
    lines += [f"- {item.description}: {item.value}" for item in context]
    return "\n".join(lines)


def _add_usage(ctx: RunContext[S], usage: TokenUsage | None) -> None:
    if usage is None:
        return
    for index, held in enumerate(ctx.usage):
        if (held.provider, held.model) == (usage.provider, usage.model):
            ctx.usage[index] = _sum(held, usage)
            return
    ctx.usage.append(usage)


def _sum(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    counts: dict[str, int] = {}
    for name in TokenUsage.model_fields:
        if name in ("provider", "model"):
            continue
        left, right = getattr(a, name), getattr(b, name)
        if left is not None or right is not None:
            counts[name] = (left or 0) + (right or 0)
    return a.model_copy(update=counts)


def _chat_model(model: object) -> ChatModel:
    """`model`, refused unless it is a `ChatModel`, with the wrapper a provider's client needs."""
    if isinstance(model, ChatModel):
        return model
    provider = type(model).__module__.partition(".")[0]
    if isinstance(model, str):
        hint = f"name the model in one: OpenAIModel({model!r}) or AnthropicModel({model!r})"
    elif provider in ("openai", "anthropic"):
        wrapper = "OpenAIModel" if provider == "openai" else "AnthropicModel"
        hint = f"wrap the {provider} client in one: {wrapper}('<model>', client=client)"
    else:
        hint = "pass one, or an object with supports_native_tools and stream(messages, ...)"
    message = (
        f"ToolLoopAgent(model=...) takes a chat model from agui.agents.models, got "
        f"{type(model).__qualname__}; {hint}"
    )
    raise UsageError(message)
