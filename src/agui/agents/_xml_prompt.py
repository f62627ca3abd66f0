"""What a model without native tool calling is told and shown: the prompt, its calls, results.

The parser (`agui.agents._xml`) reads calls in every form local models write them; this module
decides the one form they are taught. That form is a fenced `json` block holding
`{"name": ..., "arguments": {...}}`, with the tools listed as JSON signatures inside `<tools>`,
because that is what small local models write reliably: Qwen's `<tool_call>` is one special
token that its Coder fine-tunes never produce, and taught to write the tag they either write the
bare JSON or invent a result; taught the fenced block, they write it. The prompt follows the
layout of Qwen's own tool template (a `# Tools` section, one signature per line), which these
models were trained on, and shows one call of the first tool as an example. It asks for an
answer that gives the facts and names the results hold: told only to answer, a small model
tends to say "there are several restaurants" without naming one.

The prompt does not show the result format: a model that has seen `<tool_result ...>` in its
instructions writes one itself, with invented data, instead of calling. Results go back as
`<tool_result>` blocks in a user message, and `<tool_result` is a stop sequence, so a model
that starts writing one anyway is cut off there. Past calls are echoed back in the taught form,
so the history shows the model what it was asked to write; a run of backticks inside the JSON
(arguments holding a Markdown code block) is written as `\u0060` escapes, which JSON reads as
the same text, so no reader takes it for the end of the block. A call the parser could not read
gets an error block saying what was wrong and the form to write, so the model can call again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import JsonValue

from agui._protocol.text import read_json
from agui.agents._xml import FENCE, dump_json
from agui.agents.models.base import ChatMessage
from agui.types import Tool

__all__ = [
    "STOP_SEQUENCES",
    "history",
    "prompt_instructions",
    "render_block",
    "render_malformed",
    "render_result",
]

RESULT_OPEN = "<tool_result"
_BACKTICKS = re.compile(r"`{3,}")

STOP_SEQUENCES = (RESULT_OPEN,)
"""Where the model must stop: a `<tool_result>` it writes itself holds invented data."""


def prompt_instructions(tools: Sequence[Tool]) -> str:
    r"""The system-prompt text that lists the tools and teaches the call format, by example.

    Examples:
        >>> from agui.types import Tool
        >>> schema = {"type": "object", "required": ["location"]}
        >>> tool = Tool(name="get_weather", description="The weather.", parameters=schema)
        >>> text = prompt_instructions([tool])
        >>> print(text.split("<tools>\n")[1].split("\n</tools>")[0])
        {"type": "function", "function": {"name": "get_weather", "description": "The weather.",
         "parameters": {"type": "object", "required": ["location"]}}}
        >>> text.split("for example:\n")[1].splitlines()[:3]
        ['```json', '{"name": "get_weather", "arguments": {"location": "..."}}', '```']
        >>> prompt_instructions([])
        ''
    """
    if not tools:
        return ""
    signatures = [dump_json(_signature(tool)) for tool in tools]
    first = tools[0]
    example = render_block(first.name, json.dumps(_example_arguments(first)))
    return "\n".join(
        [
            "# Tools",
            "",
            "You may call one or more functions to assist with the user query.",
            "",
            "You are provided with function signatures within <tools></tools> XML tags:",
            "<tools>",
            *signatures,
            "</tools>",
            "",
            (
                f"To call a function, reply with a {FENCE}json code block holding a json object "
                "with the function name and arguments, for example:"
            ),
            example,
            (
                "To call several functions, write one block for each. Then stop: the results "
                "come back in the next message, and you never write a result yourself. Only "
                "call a function from <tools>, and only when the user request needs it. If no "
                "listed function fits the request, answer the user directly in plain text "
                "without a code block. Once you have the function results, answer from them, "
                "in plain text: give the facts and names they hold."
            ),
        ]
    )


def render_block(name: str, arguments: str) -> str:
    r"""A past tool call as the model is taught to write it: a fenced `json` block.

    Arguments that are not JSON are kept, as a string, rather than dropped. A run of backticks
    in a string is escaped, so the block's only fence is its own.

    Examples:
        >>> print(render_block("get_weather", '{"location": "Paris"}'))
        ```json
        {"name": "get_weather", "arguments": {"location": "Paris"}}
        ```
        >>> print(render_block("note", '{"text": "```sh\\nls\\n```"}'))
        ```json
        {"name": "note", "arguments": {"text": "\u0060\u0060\u0060sh\nls\n\u0060\u0060\u0060"}}
        ```
    """
    try:
        parsed: JsonValue = read_json(arguments or "{}")
    except ValueError:
        parsed = arguments
    # Backticks occur only inside JSON strings, where an escape reads as the same character.
    body = _BACKTICKS.sub(
        lambda run: "\\u0060" * len(run.group()), dump_json({"name": name, "arguments": parsed})
    )
    return f"{FENCE}json\n{body}\n{FENCE}"


def render_result(name: str, content: str, *, ok: bool) -> str:
    """A tool's result as a `<tool_result>` block for the model to read.

    Examples:
        >>> render_result("get_weather", "sunny", ok=True)
        '<tool_result name="get_weather" status="ok">sunny</tool_result>'
    """
    status = "ok" if ok else "error"
    return f'<tool_result name={json.dumps(name)} status="{status}">{content}</tool_result>'


def render_malformed(reason: str) -> str:
    """The error block for a call the parser could not read: what was wrong, and what to write.

    Examples:
        >>> print(render_malformed("the tag does not hold JSON"))
        <tool_result status="error">Error: your tool call could not be read, so it did not run:
         the tag does not hold JSON. To call a function, write a ```json code block holding only
         {"name": "<function name>", "arguments": {<arguments>}}, then stop.</tool_result>
    """
    content = (
        f"Error: your tool call could not be read, so it did not run: {reason}. To call a "
        f"function, write a {FENCE}json code block holding only "
        '{"name": "<function name>", "arguments": {<arguments>}}, then stop.'
    )
    return f'<tool_result status="error">{content}</tool_result>'


def history(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """A provider conversation as the model is taught it: calls in the text, results as blocks.

    Examples:
        >>> from agui.agents.models.base import ChatToolCall
        >>> call = ChatToolCall("c1", "get_time", "{}")
        >>> native = [ChatMessage.assistant("", [call]), ChatMessage.tool("c1", "12:00")]
        >>> [message.role for message in history(native)]
        ['assistant', 'user']
    """
    # Each run of results becomes one user message.
    out: list[ChatMessage] = []
    results: list[str] = []
    for message in [*messages, None]:
        if message is not None and message.role == "tool":
            name = message.name or "unknown"
            results.append(render_result(name, message.content, ok=not message.is_error))
            continue
        if results:
            out.append(ChatMessage.user("\n".join(results)))
            results = []
        if message is not None and message.role == "assistant" and message.tool_calls:
            tags = [render_block(call.name, call.arguments) for call in message.tool_calls]
            out.append(ChatMessage.assistant("\n".join([message.content, *tags]).strip()))
        elif message is not None:
            out.append(message)
    return out


def _signature(tool: Tool) -> dict[str, JsonValue]:
    parameters: JsonValue = {"type": "object"} if tool.parameters is None else tool.parameters
    function: dict[str, JsonValue] = {"name": tool.name, "description": tool.description}
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def _example_arguments(tool: Tool) -> dict[str, JsonValue]:
    # One placeholder per required argument, so the example is a call the tool would accept.
    parameters = tool.parameters if isinstance(tool.parameters, dict) else {}
    required = parameters.get("required")
    names = (
        [name for name in required if isinstance(name, str)] if isinstance(required, list) else []
    )
    return dict.fromkeys(names, "...")
