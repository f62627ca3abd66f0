"""`ScriptedModel`: a deterministic chat model for tests, examples and demos.

It replays scripted turns the way a real provider streams them: reasoning and text a word at a
time, tool calls as fragments (id and name first, then the argument text in small pieces), and
parallel calls interleaved by index. Nothing touches the network, so every example and test runs
without a key.

Which turn answers a request is read from the conversation, not from a counter: turn N answers a
conversation that already holds N assistant messages. The model is therefore stateless, serves
concurrent runs, and continues correctly on a second request (say, after a human approved a
tool call), because that request's history carries the earlier turns. A script entry may also be
a function of the conversation, to answer differently depending on what came back.

With `supports_native_tools=False` it plays a local model without tool calling: reasoning is
written as `<think>...</think>` and calls as `<tool_call>` tags inside the text.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence

from agui.agents._xml import THINK_CLOSE, THINK_OPEN, render_call
from agui.agents.models.base import (
    ChatDelta,
    ChatMessage,
    FinishDelta,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
from agui.errors import AgentError, UsageError
from agui.messages import JsonObject
from agui.types import TokenUsage, Tool

__all__ = ["DEFAULT_HISTORY", "Call", "ScriptedModel", "ScriptedRequest", "Turn", "TurnFunction"]

DEFAULT_HISTORY = 32
"""How many requests a `ScriptedModel` remembers unless told otherwise."""

_WORDS = re.compile(r"\S+\s*|\s+")
_FRAGMENT = 8


def _no_arguments() -> JsonObject:
    return {}


@dataclasses.dataclass(frozen=True)
class Call:
    """A scripted tool call: a name, arguments (an object, or raw text), and an optional id.

    Raw text lets a script send arguments a tool must reject. Without an id the agent picks one.

    Examples:
        >>> Call("get_weather", {"location": "Paris"}).argument_text
        '{"location":"Paris"}'
    """

    name: str
    arguments: JsonObject | str = dataclasses.field(default_factory=_no_arguments)
    id: str | None = None

    @property
    def argument_text(self) -> str:
        """The arguments as the model sends them: compact JSON text."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


@dataclasses.dataclass(frozen=True)
class Turn:
    """One scripted model response; build it with `Turn.text` or `Turn.tool_calls`.

    Examples:
        >>> Turn.text("It is sunny.", reasoning="The tool said so.").content
        'It is sunny.'
        >>> [call.name for call in Turn.tool_calls(Call("a"), Call("b")).calls]
        ['a', 'b']
    """

    content: str = ""
    reasoning: str = ""
    calls: tuple[Call, ...] = ()
    usage: TokenUsage | None = None

    @classmethod
    def text(cls, content: str, *, reasoning: str = "", usage: TokenUsage | None = None) -> Turn:
        """A turn that answers with text (after optional reasoning)."""
        return cls(content, reasoning, (), usage)

    @classmethod
    def tool_calls(
        cls, *calls: Call, text: str = "", reasoning: str = "", usage: TokenUsage | None = None
    ) -> Turn:
        """A turn that calls tools (in parallel when there are several), maybe saying something."""
        return cls(text, reasoning, calls, usage)


TurnFunction = Callable[[Sequence[ChatMessage]], Turn]
"""A script entry that picks its turn from the conversation so far."""


@dataclasses.dataclass(frozen=True)
class ScriptedRequest:
    """What the scripted model was asked: the conversation, the tools offered, where to stop.

    Examples:
        >>> ScriptedRequest((ChatMessage.user("Hi"),), ()).messages[0].content
        'Hi'
    """

    messages: tuple[ChatMessage, ...]
    tools: tuple[Tool, ...]
    stop: tuple[str, ...] = ()


class ScriptedModel:
    """A `ChatModel` that replays a script; `requests` records what it was asked.

    `script` is a list of turns (or functions of the conversation giving a turn), or one such
    function for every request. `delay` waits that many seconds before each delta. `requests`
    holds the last `history` requests, oldest first (`history=0` keeps none), so a model that
    serves a demo or a load test for hours does not grow with every run.

    Examples:
        >>> import asyncio
        >>> model = ScriptedModel([Turn.tool_calls(Call("get_weather", {"location": "Paris"}))])
        >>> async def main():
        ...     return [delta async for delta in model.stream([ChatMessage.user("Weather?")])]
        >>> for delta in asyncio.run(main()):
        ...     print(delta)
        ToolCallDelta(index=0, id=None, name='get_weather', arguments='')
        ToolCallDelta(index=0, id=None, name=None, arguments='{"locati')
        ToolCallDelta(index=0, id=None, name=None, arguments='on":"Par')
        ToolCallDelta(index=0, id=None, name=None, arguments='is"}')
        FinishDelta(reason='tool_calls')
    """

    def __init__(
        self,
        script: Sequence[Turn | TurnFunction] | TurnFunction,
        *,
        delay: float = 0.0,
        supports_native_tools: bool = True,
        history: int = DEFAULT_HISTORY,
    ) -> None:
        if history < 0:
            message = f"history must be 0 or more requests, not {history}"
            raise UsageError(message)
        self._script = script
        self._delay = delay
        self._native = supports_native_tools
        self.requests: collections.deque[ScriptedRequest] = collections.deque(maxlen=history)

    @property
    def supports_native_tools(self) -> bool:
        """As configured: `False` plays a model that writes calls as tags."""
        return self._native

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[Tool] = (),
        stop: Sequence[str] = (),
    ) -> AsyncIterator[ChatDelta]:
        """Stream the turn the script gives for this conversation (`stop` is recorded only)."""
        self.requests.append(ScriptedRequest(tuple(messages), tuple(tools), tuple(stop)))
        turn = self._pick(messages)
        for delta in self._deltas(turn):
            if self._delay > 0:
                await asyncio.sleep(self._delay)
            yield delta

    def _pick(self, messages: Sequence[ChatMessage]) -> Turn:
        if callable(self._script):
            return self._script(messages)
        number = sum(1 for message in messages if message.role == "assistant")
        if number >= len(self._script):
            message = (
                f"the scripted model has {len(self._script)} turn(s) and was asked for turn "
                f"{number + 1}; add a turn to its script"
            )
            raise AgentError(message)
        entry = self._script[number]
        return entry if isinstance(entry, Turn) else entry(messages)

    def _deltas(self, turn: Turn) -> list[ChatDelta]:
        deltas: list[ChatDelta] = []
        if self._native:
            deltas += [ReasoningDelta(word) for word in _WORDS.findall(turn.reasoning)]
            deltas += [TextDelta(word) for word in _WORDS.findall(turn.content)]
            deltas += _interleaved(turn.calls)
        else:
            text = f"{THINK_OPEN}{turn.reasoning}{THINK_CLOSE}" if turn.reasoning else ""
            text += turn.content
            text += "".join(render_call(call.name, call.argument_text) for call in turn.calls)
            deltas += [TextDelta(word) for word in _WORDS.findall(text)]
        if turn.usage is not None:
            deltas.append(UsageDelta(turn.usage))
        deltas.append(FinishDelta("tool_calls" if turn.calls else "stop"))
        return deltas


def _interleaved(calls: Sequence[Call]) -> list[ChatDelta]:
    # As providers do: every call's opening fragment, then argument pieces round-robin.
    pieces = [_pieces(call.argument_text) for call in calls]
    deltas: list[ChatDelta] = [
        ToolCallDelta(index=index, id=call.id, name=call.name) for index, call in enumerate(calls)
    ]
    for step in range(max((len(p) for p in pieces), default=0)):
        deltas += [
            ToolCallDelta(index=index, arguments=parts[step])
            for index, parts in enumerate(pieces)
            if step < len(parts)
        ]
    return deltas


def _pieces(text: str) -> list[str]:
    return [text[start : start + _FRAGMENT] for start in range(0, len(text), _FRAGMENT)]
