"""Tool dispatch: the streaming XML parser, native fragment assembly, and the dispatchers."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Sequence
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

from agui import RunAgentInput, RunContext, Tool
from agui.agents import ToolLoopAgent, tool
from agui.agents._xml import (
    MalformedTag,
    ReasoningPiece,
    TextPiece,
    ToolCallTag,
    XmlPiece,
    render_call,
)
from agui.agents._xml_prompt import (
    prompt_instructions,
    render_block,
    render_malformed,
    render_result,
)
from agui.agents.dispatch import (
    AssistantTurn,
    CallResult,
    MalformedCall,
    NativeDispatcher,
    ParsedCall,
    ToolDispatcher,
    XmlDispatcher,
    XmlStreamParser,
    select_dispatcher,
)
from agui.agents.models import (
    Call,
    ChatDelta,
    ChatMessage,
    FinishDelta,
    ReasoningDelta,
    ScriptedModel,
    TextDelta,
    ToolCallDelta,
    Turn,
    UsageDelta,
)
from agui.agents.tools import ToolResult
from agui.agents.turn import WARNING_EVENT, TurnWriter
from agui.errors import UsageError
from agui.events import (
    CustomEvent,
    Event,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import (
    AssistantMessage,
    FunctionCall,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agui.testing import assert_valid, collect
from agui.types import TokenUsage

# -- the streaming XML parser ------------------------------------------------------------------

WEATHER = '<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool_call>'
TIME = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
WEATHER_CALL = ToolCallTag("get_weather", '{"location":"Paris"}')
TIME_CALL = ToolCallTag("get_time", "{}")
NOT_JSON = "the tag does not hold JSON"
NO_NAME = 'the tag must hold an object with a "name" string'
THINK_IN_TAG = (
    "the tag does not hold JSON: it holds a <think> block, and a call holds only its JSON"
)
FENCE_IN_TAG = "the tag does not hold JSON: it holds a ``` block, and a call holds only its JSON"
NOTE = '{"name": "write_note", "arguments": {"content": "```python\\nprint(1)\\n```"}}'
"""A call whose arguments hold a Markdown code block, fence and all, inside a JSON string."""
NOTE_CALL = ToolCallTag("write_note", '{"content":"```python\\nprint(1)\\n```"}')


SURROGATE_NAME = '<tool_call>{"name": "f\\udc00", "arguments": {}}</tool_call>'
BARE = '{"name": "get_weather", "arguments": {"location": "Paris"}}'
"""The escape of a lone surrogate (ASCII text, which Python's json reads) in a call's name."""


def _malformed(raw: str, reason: str) -> MalformedTag:
    return MalformedTag(raw, reason)


TAG_CASES: list[tuple[str, str, list[XmlPiece]]] = [
    ("empty", "", []),
    ("plain text", "It is sunny.", [TextPiece("It is sunny.")]),
    ("one call", WEATHER, [WEATHER_CALL]),
    ("text before a call", "Let me check." + WEATHER, [TextPiece("Let me check."), WEATHER_CALL]),
    ("text after a call", WEATHER + " Done.", [WEATHER_CALL, TextPiece(" Done.")]),
    (
        "text before, between and after two calls",
        "A " + WEATHER + " B " + TIME + " C",
        [TextPiece("A "), WEATHER_CALL, TextPiece(" B "), TIME_CALL, TextPiece(" C")],
    ),
    ("two adjacent calls", WEATHER + TIME, [WEATHER_CALL, TIME_CALL]),
    (
        "three calls on their own lines",
        WEATHER + "\n" + TIME + "\n" + WEATHER,
        [WEATHER_CALL, TextPiece("\n"), TIME_CALL, TextPiece("\n"), WEATHER_CALL],
    ),
    (
        "think at the start",
        "<think>The user wants Paris.</think>It is sunny.",
        [ReasoningPiece("The user wants Paris."), TextPiece("It is sunny.")],
    ),
    (
        "think in the middle",
        "First. <think>hmm</think> Second.",
        [TextPiece("First. "), ReasoningPiece("hmm"), TextPiece(" Second.")],
    ),
    (
        "think then a call",
        "<think>Need the weather.</think>" + WEATHER,
        [ReasoningPiece("Need the weather."), WEATHER_CALL],
    ),
    (
        "a tool_call tag inside think is reasoning",
        "<think>maybe " + WEATHER + "</think>ok",
        [ReasoningPiece("maybe " + WEATHER), TextPiece("ok")],
    ),
    (
        "malformed JSON is reported and skipped",
        'Hi <tool_call>{"name": "get_weather", </tool_call> bye',
        [
            TextPiece("Hi "),
            _malformed('<tool_call>{"name": "get_weather", </tool_call>', NOT_JSON),
            TextPiece(" bye"),
        ],
    ),
    (
        "a JSON array is not a call",
        "<tool_call>[1, 2]</tool_call>",
        [_malformed("<tool_call>[1, 2]</tool_call>", NO_NAME)],
    ),
    (
        "a call without a name is not a call",
        '<tool_call>{"arguments": {}}</tool_call>',
        [_malformed('<tool_call>{"arguments": {}}</tool_call>', NO_NAME)],
    ),
    (
        "a call whose name is blank is not a call",
        '<tool_call>{"name": " ", "arguments": {}}</tool_call>',
        [_malformed('<tool_call>{"name": " ", "arguments": {}}</tool_call>', NO_NAME)],
    ),
    (
        "arguments that are not an object",
        '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
        [
            _malformed(
                '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
                '"arguments" must be an object',
            )
        ],
    ),
    (
        "arguments as a JSON string are read",
        '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>',
        [ToolCallTag("f", '{"a":1}')],
    ),
    (
        "arguments as a string that is not JSON",
        '<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>',
        [
            _malformed(
                '<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>',
                '"arguments" is a string that does not hold JSON',
            )
        ],
    ),
    ("no arguments means none", '<tool_call>{"name": "f"}</tool_call>', [ToolCallTag("f", "{}")]),
    (
        "parameters is read as arguments",
        '<tool_call>{"name": "f", "parameters": {"a": 1}}</tool_call>',
        [ToolCallTag("f", '{"a":1}')],
    ),
    (
        "whitespace around the JSON",
        '<tool_call>\n  {"name": "f", "arguments": {}}\n</tool_call>',
        [ToolCallTag("f", "{}")],
    ),
    (
        "an unterminated call holding a whole call still counts",
        "Sure." + WEATHER.removesuffix("</tool_call>"),
        [TextPiece("Sure."), WEATHER_CALL],
    ),
    (
        "an unterminated call with partial JSON is reported",
        'Sure.<tool_call>{"name": "get_wea',
        [
            TextPiece("Sure."),
            _malformed(
                '<tool_call>{"name": "get_wea', "the response ended inside a <tool_call> tag"
            ),
        ],
    ),
    (
        "an unterminated think ends as reasoning",
        "ok <think>still thinking",
        [TextPiece("ok "), ReasoningPiece("still thinking")],
    ),
    ("a tag prefix at the end is text", "Hello <tool_ca", [TextPiece("Hello <tool_ca")]),
    ("a think prefix at the end is text", "Hello <thi", [TextPiece("Hello <thi")]),
    ("stray angle brackets are text", "if a < b and c > d", [TextPiece("if a < b and c > d")]),
    (
        "other tags are text",
        "<b>bold</b> <tool>x</tool>",
        [TextPiece("<b>bold</b> <tool>x</tool>")],
    ),
    ("a stray closing think is text", "done</think> ok", [TextPiece("done</think> ok")]),
    ("an empty think block vanishes", "a<think></think>b", [TextPiece("ab")]),
    (
        "adjacent think blocks make one reasoning",
        "<think>a</think><think>b</think>",
        [ReasoningPiece("ab")],
    ),
    (
        "angle brackets inside a JSON string",
        '<tool_call>{"name": "search", "arguments": {"q": "a<b>c"}}</tool_call>',
        [ToolCallTag("search", '{"q":"a<b>c"}')],
    ),
    (
        "a closing tag inside a JSON string",
        '<tool_call>{"name": "echo", "arguments": {"s": "</tool_call>"}}</tool_call> after',
        [ToolCallTag("echo", '{"s":"</tool_call>"}'), TextPiece(" after")],
    ),
    (
        "an escaped quote before a closing tag inside a string",
        (
            '<tool_call>{"name": "echo", "arguments": {"s": "say \\"</tool_call>\\" \\\\"}}'
            "</tool_call>"
        ),
        [ToolCallTag("echo", '{"s":"say \\"</tool_call>\\" \\\\"}')],
    ),
    (
        "a think tag inside a JSON string",
        '<tool_call>{"name": "echo", "arguments": {"s": "<think>"}}</tool_call>',
        [ToolCallTag("echo", '{"s":"<think>"}')],
    ),
    (
        "an angle bracket outside strings makes the JSON malformed",
        '<tool_call>{"name": "f"} <b></tool_call>',
        [_malformed('<tool_call>{"name": "f"} <b></tool_call>', NOT_JSON)],
    ),
    (
        "non-ASCII text and arguments",
        (
            'Météo à Zürich 🌧 <tool_call>{"name": "météo", "arguments": {"ville": "Zürich"}}'
            "</tool_call> — fini"
        ),
        [
            TextPiece("Météo à Zürich 🌧 "),
            ToolCallTag("météo", '{"ville":"Zürich"}'),
            TextPiece(" — fini"),
        ],
    ),
    (
        "non-ASCII escapes are decoded",
        '<tool_call>{"name": "f", "arguments": {"c": "\\u00e9"}}</tool_call>',
        [ToolCallTag("f", '{"c":"é"}')],
    ),
    (
        "an escaped lone surrogate in the arguments stays escaped, all in ASCII",
        '<tool_call>{"name": "f", "arguments": {"c": "\\u00e9\\ud800"}}</tool_call>',
        [ToolCallTag("f", '{"c":"\\u00e9\\ud800"}')],
    ),
    (
        "an escaped lone surrogate in the name is malformed",
        SURROGATE_NAME,
        [_malformed(SURROGATE_NAME, '"name" holds a lone surrogate, which is not valid Unicode')],
    ),
    (
        "a think block inside a tag is malformed, and named as the mistake",
        '<tool_call><think>f</think>{"name": "f", "arguments": {}}</tool_call>',
        [
            _malformed(
                '<tool_call><think>f</think>{"name": "f", "arguments": {}}</tool_call>',
                THINK_IN_TAG,
            )
        ],
    ),
    (
        "a fenced block inside a tag is malformed, and named as the mistake",
        "<tool_call>\n```json\n" + BARE + "\n```\n</tool_call>",
        [_malformed("<tool_call>\n```json\n" + BARE + "\n```\n</tool_call>", FENCE_IN_TAG)],
    ),
    (
        "a quote left open at a line break does not hide the closing tag",
        '<tool_call>{"q": "a\n</tool_call> ok',
        [_malformed('<tool_call>{"q": "a\n</tool_call>', NOT_JSON), TextPiece(" ok")],
    ),
]


FUNCTION = '<function=get_weather>{"location": "Paris"}</function>'

# The forms local models write a call in when they do not write the tags.
LOCAL_FORM_CASES: list[tuple[str, str, list[XmlPiece]]] = [
    ("a bare JSON call", BARE, [WEATHER_CALL]),
    (
        "text around a bare JSON call",
        "Sure. " + BARE + " Wait.",
        [TextPiece("Sure. "), WEATHER_CALL, TextPiece(" Wait.")],
    ),
    (
        "a fenced json call",
        "Sure.\n```json\n" + BARE + "\n```",
        [TextPiece("Sure.\n"), WEATHER_CALL],
    ),
    (
        "two fenced calls on consecutive lines",
        "```json\n" + BARE + "\n```\n```json\n" + '{"name": "get_time", "arguments": {}}\n```',
        [WEATHER_CALL, TextPiece("\n"), TIME_CALL],
    ),
    ("a fenced call without a language", "```\n" + BARE + "```", [WEATHER_CALL]),
    (
        "a fenced list of two calls",
        "```json\n[" + BARE + ', {"name": "get_time", "arguments": {}}]\n```',
        [WEATHER_CALL, TIME_CALL],
    ),
    ("the function form", FUNCTION + " ok", [WEATHER_CALL, TextPiece(" ok")]),
    ("the function form without arguments", "<function=get_time></function>", [TIME_CALL]),
    (
        "the function form with a body that is not JSON",
        "<function=f>city=Paris</function>",
        [_malformed("<function=f>city=Paris</function>", NOT_JSON)],
    ),
    (
        "the function form with a body that is not an object",
        "<function=f>[1]</function>",
        [_malformed("<function=f>[1]</function>", '"arguments" must be an object')],
    ),
    (
        "an unterminated function form holding whole arguments still counts",
        FUNCTION.removesuffix("</function>"),
        [WEATHER_CALL],
    ),
    (
        "an unterminated function form with partial arguments is reported",
        '<function=f>{"a": ',
        [_malformed('<function=f>{"a": ', "the response ended inside a <function=f> tag")],
    ),
    (
        "a function tag with a space in its name is text",
        "<function=a b>x",
        [TextPiece("<function=a b>x")],
    ),
    (
        "a plain JSON answer is text",
        '{"city": "Paris", "temp": 18}',
        [TextPiece('{"city": "Paris", "temp": 18}')],
    ),
    (
        "an object with a name and no arguments is text",
        '{"name": "Paris"}',
        [TextPiece('{"name": "Paris"}')],
    ),
    (
        "an object whose arguments are not an object is text",
        '{"name": "f", "arguments": 3}',
        [TextPiece('{"name": "f", "arguments": 3}')],
    ),
    (
        "a bare call with arguments as a JSON string",
        '{"name": "f", "parameters": "{\\"a\\": 1}"}',
        [ToolCallTag("f", '{"a":1}')],
    ),
    ("braces in prose are text", "use {x} and {} here", [TextPiece("use {x} and {} here")]),
    ("a brace left open is text", "a {b", [TextPiece("a {b")]),
    (
        "a brace in prose does not hide a call after it",
        "A set like {a, b. " + WEATHER + " ok",
        [TextPiece("A set like {a, b. "), WEATHER_CALL, TextPiece(" ok")],
    ),
    (
        "a brace and a quote in prose do not hide a call after them",
        'He said {"hi. ' + BARE,
        [TextPiece('He said {"hi. '), WEATHER_CALL],
    ),
    (
        "a bare object holding NaN is not JSON, so it stays text",
        '{"name": "f", "arguments": {"x": NaN, "y": -Infinity}}',
        [TextPiece('{"name": "f", "arguments": {"x": NaN, "y": -Infinity}}')],
    ),
    (
        "a tag holding an infinity is malformed: the wire could not carry its arguments",
        '<tool_call>{"name": "f", "arguments": {"y": -Infinity}}</tool_call>',
        [
            _malformed(
                '<tool_call>{"name": "f", "arguments": {"y": -Infinity}}</tool_call>', NOT_JSON
            )
        ],
    ),
    (
        "a tag holding a number too large for a double is malformed, as an infinity is",
        '<tool_call>{"name": "f", "arguments": {"x": 1e400}}</tool_call>',
        [_malformed('<tool_call>{"name": "f", "arguments": {"x": 1e400}}</tool_call>', NOT_JSON)],
    ),
    (
        "arguments given as a string holding NaN are malformed",
        '<tool_call>{"name": "f", "arguments": "{\\"x\\": NaN}"}</tool_call>',
        [
            _malformed(
                '<tool_call>{"name": "f", "arguments": "{\\"x\\": NaN}"}</tool_call>',
                '"arguments" is a string that does not hold JSON',
            )
        ],
    ),
    (
        "a fenced code block is text",
        "```python\nprint({1: 2})\n```",
        [TextPiece("```python\nprint({1: 2})\n```")],
    ),
    ("a fence left open is text", "```json\n{", [TextPiece("```json\n{")]),
    (
        "a fence left open holding a whole call counts",
        "```json\n" + BARE,
        [WEATHER_CALL],
    ),
    (
        "a fenced list that is not of calls is text",
        "```\n[1, {}]```",
        [TextPiece("```\n[1, {}]```")],
    ),
    ("a fenced empty list is text", "```[]```", [TextPiece("```[]```")]),
    ("backticks in prose are text", "say `hi` or ``x``", [TextPiece("say `hi` or ``x``")]),
    (
        "a fenced call whose arguments hold a fence closes at its own fence",
        "Saving.\n```json\n" + NOTE + "\n```\nDone.",
        [TextPiece("Saving.\n"), NOTE_CALL, TextPiece("\nDone.")],
    ),
    ("a bare call whose arguments hold a fence", NOTE, [NOTE_CALL]),
    (
        "a quote left open at a line break does not hide the closing fence",
        '```\nsay "hi\n```' + WEATHER,
        [TextPiece('```\nsay "hi\n```'), WEATHER_CALL],
    ),
]
XML_CASES = [*TAG_CASES, *LOCAL_FORM_CASES]


def _normal(pieces: Sequence[XmlPiece]) -> list[XmlPiece]:
    """Joins adjacent text (or reasoning) and cuts a malformed tag's reason to its stable part."""
    out: list[XmlPiece] = []
    for piece in pieces:
        last = out[-1] if out else None
        if isinstance(piece, TextPiece) and isinstance(last, TextPiece):
            out[-1] = TextPiece(last.text + piece.text)
        elif isinstance(piece, ReasoningPiece) and isinstance(last, ReasoningPiece):
            out[-1] = ReasoningPiece(last.text + piece.text)
        elif isinstance(piece, MalformedTag):
            out.append(MalformedTag(piece.raw, piece.reason.partition(" (")[0]))
        else:
            out.append(piece)
    return out


def _parse(deltas: Sequence[str]) -> list[XmlPiece]:
    parser = XmlStreamParser()
    pieces: list[XmlPiece] = []
    for delta in deltas:
        pieces += parser.feed(delta)
    pieces += parser.finish()
    return _normal(pieces)


def _split(text: str, cuts: Sequence[int]) -> list[str]:
    bounds = [0, *sorted(set(cuts)), len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


CASE_IDS = [name for name, _, _ in XML_CASES]


def test_the_xml_table_has_at_least_25_cases() -> None:
    assert len(XML_CASES) >= 25


@pytest.mark.parametrize(("name", "text", "expected"), XML_CASES, ids=CASE_IDS)
def test_a_whole_response_parses_to_the_expected_pieces(
    name: str, text: str, expected: list[XmlPiece]
) -> None:
    assert _parse([text]) == expected, name


@pytest.mark.parametrize(("name", "text", "expected"), XML_CASES, ids=CASE_IDS)
def test_a_response_split_at_any_one_position_parses_the_same(
    name: str, text: str, expected: list[XmlPiece]
) -> None:
    for cut in range(len(text) + 1):
        assert _parse([text[:cut], text[cut:]]) == expected, (name, cut)


@pytest.mark.parametrize(("name", "text", "expected"), XML_CASES, ids=CASE_IDS)
def test_a_response_fed_one_character_at_a_time_parses_the_same(
    name: str, text: str, expected: list[XmlPiece]
) -> None:
    assert _parse(list(text)) == expected, name


@given(
    case=st.sampled_from(XML_CASES),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
def test_any_split_of_a_table_response_gives_the_same_pieces(
    case: tuple[str, str, list[XmlPiece]], cuts: list[int]
) -> None:
    _, text, expected = case

    assert _parse(_split(text, [cut for cut in cuts if cut <= len(text)])) == expected


FRAGMENTS = [
    "`",
    "```",
    "<function=f>",
    "</function>",
    '"arguments": {}',
    "a",
    " ",
    "é",
    "<",
    ">",
    "/",
    '"',
    "\\",
    "{",
    "}",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    '{"name": "f", "arguments": {"q": "',
    '"}}',
    "<tool_",
    "</tool_",
    "\n",
    "```json\n",
    '"```python\\n',
    NOTE,
]


@settings(max_examples=300)
@given(
    text=st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=15),
)
def test_any_split_of_any_text_gives_the_pieces_of_the_whole(text: str, cuts: list[int]) -> None:
    assert _parse(_split(text, [cut for cut in cuts if cut <= len(text)])) == _parse([text])


@given(text=st.text(alphabet=st.characters(exclude_characters="<{`"), max_size=50))
def test_text_without_an_angle_bracket_brace_or_backtick_is_released_at_once(text: str) -> None:
    assert _normal(XmlStreamParser().feed(text)) == ([TextPiece(text)] if text else [])


def test_a_brace_in_prose_is_released_as_soon_as_what_follows_cannot_be_json() -> None:
    parser = XmlStreamParser()

    assert _normal(parser.feed("Use {x} or {b")) == [TextPiece("Use {x} or {b")]
    assert _normal(parser.feed(" and { ")) == [TextPiece(" and ")]


def test_a_long_fenced_call_fed_in_small_deltas_is_read_whole() -> None:
    # Each delta used to search the whole fence again, which made this test take half a minute
    # (it takes well under a second now); how fast is the benchmarks' business, not a test's.
    body = '```json\n{"name": "f", "arguments": {"q": "' + "x" * 300_000 + '"}}\n```'
    parser = XmlStreamParser()

    pieces = [
        piece for start in range(0, len(body), 4) for piece in parser.feed(body[start : start + 4])
    ]

    assert pieces == [ToolCallTag("f", json.dumps({"q": "x" * 300_000}, separators=(",", ":")))]


def test_only_the_suffix_that_could_still_become_a_tag_is_held_back() -> None:
    parser = XmlStreamParser()

    assert parser.feed("a<b<tool") == [TextPiece("a<b")]
    assert parser.feed("s") == [TextPiece("<tools")]


def test_the_prompt_lists_each_tool_as_a_json_signature_inside_tools_tags() -> None:
    tools = [
        Tool(name="get_weather", description="Weather", parameters={"type": "object"}),
        Tool(name="ping", description=""),
    ]

    prompt = prompt_instructions(tools)

    listed = prompt.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()
    assert [json.loads(line) for line in listed] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather",
                "parameters": {"type": "object"},
            },
        },
        {
            "type": "function",
            "function": {"name": "ping", "description": "", "parameters": {"type": "object"}},
        },
    ]
    assert prompt_instructions([]) == ""


def test_the_prompt_teaches_a_fenced_json_call_the_parser_reads() -> None:
    schema: JsonValue = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    }
    prompt = prompt_instructions([Tool(name="get_weather", description="", parameters=schema)])

    example = '```json\n{"name": "get_weather", "arguments": {"city": "..."}}\n```'
    assert f"for example:\n{example}\n" in prompt
    assert _parse([example]) == [ToolCallTag("get_weather", '{"city":"..."}')]
    assert "you never write a result yourself" in prompt


def test_the_prompt_never_shows_a_result_the_model_could_copy() -> None:
    prompt = XmlDispatcher().prompt_instructions([Tool(name="f", description="")])

    assert prompt == prompt_instructions([Tool(name="f", description="")])
    assert "<tool_result" not in prompt
    assert "<tool_call>" not in prompt


def test_rendered_calls_and_results_are_forms_the_parser_reads_back() -> None:
    assert render_block("f", '{"a": 1}') == '```json\n{"name": "f", "arguments": {"a": 1}}\n```'
    assert render_block("f", "not json") == ('```json\n{"name": "f", "arguments": "not json"}\n```')
    assert render_block("f", "") == '```json\n{"name": "f", "arguments": {}}\n```'
    assert _parse([render_block("f", '{"a": 1}')]) == [ToolCallTag("f", '{"a":1}')]
    assert render_call("f", '{"a": 1}') == (
        '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    )
    assert _parse([render_call("f", "")]) == [ToolCallTag("f", "{}")]
    assert render_call("f", "a=1") == '<tool_call>{"name": "f", "arguments": "a=1"}</tool_call>'
    assert render_result("f", "sunny", ok=True) == (
        '<tool_result name="f" status="ok">sunny</tool_result>'
    )
    assert render_result("f", "boom", ok=False) == (
        '<tool_result name="f" status="error">boom</tool_result>'
    )


def test_a_rendered_call_keeps_an_escaped_lone_surrogate_escaped_so_it_can_be_sent() -> None:
    arguments = '{"c": "é\\ud800"}'

    assert render_block("f", arguments) == (
        '```json\n{"name": "f", "arguments": {"c": "\\u00e9\\ud800"}}\n```'
    )
    assert render_call("f", arguments) == (
        '<tool_call>{"name": "f", "arguments": {"c": "\\u00e9\\ud800"}}</tool_call>'
    )


def test_a_rendered_call_escapes_a_run_of_backticks_so_its_fence_is_the_only_one() -> None:
    arguments = {"content": "```python\nprint(1)\n````", "inline": "`x` or ``y``"}

    block = render_block("write_note", json.dumps(arguments))

    assert block.count("```") == 2
    assert "`x` or ``y``" in block
    body = block.removeprefix("```json\n").removesuffix("\n```")
    assert json.loads(body) == {"name": "write_note", "arguments": arguments}
    assert _parse([block]) == [
        ToolCallTag("write_note", json.dumps(arguments, separators=(",", ":")))
    ]


# -- dispatchers reading a response ------------------------------------------------------------


async def _stream(deltas: Sequence[ChatDelta]) -> AsyncIterator[ChatDelta]:
    for delta in deltas:
        yield delta


def _read(
    dispatcher: ToolDispatcher, deltas: Sequence[ChatDelta]
) -> tuple[AssistantTurn, list[Event]]:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    writer = TurnWriter(ctx, turn=1)
    turn = asyncio.run(dispatcher.parse_response(_stream(deltas), writer))
    return turn, events.drain()


def _types(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


def test_the_xml_dispatcher_streams_text_and_reasoning_and_collects_calls_in_order() -> None:
    deltas: list[ChatDelta] = [
        TextDelta("<think>Two tools"),
        TextDelta(".</think>\n\nChecking. <tool_"),
        TextDelta('call>{"name": "a", "arguments": {}}</tool_call> and <tool_call>'),
        TextDelta('{"name": "b"}</tool_call>'),
        UsageDelta(TokenUsage(output_tokens=9)),
        FinishDelta("stop"),
    ]

    turn, events = _read(XmlDispatcher(), deltas)

    assert turn.text == "Checking. and "
    assert [(call.name, call.arguments, call.id, call.started) for call in turn.calls] == [
        ("a", "{}", "r-call-1", True),
        ("b", "{}", "r-call-2", True),
    ]
    assert turn.usage == TokenUsage(output_tokens=9)
    assert turn.finish_reason == "stop"
    assert turn.message_id == "r-msg-2"  # one assistant message: the text, both calls
    assert _types(events) == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]


def test_text_after_a_call_continues_the_turns_one_assistant_message() -> None:
    deltas: list[ChatDelta] = [TextDelta("Let me check." + WEATHER + " One moment.")]

    turn, events = _read(XmlDispatcher(), deltas)

    assert _types(events) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
    ]
    starts = [e for e in events if isinstance(e, (TextMessageStartEvent, ToolCallStartEvent))]
    assert [
        e.message_id if isinstance(e, TextMessageStartEvent) else e.parent_message_id
        for e in starts
    ] == ["r-msg-1", "r-msg-1", "r-msg-1"]
    assert [e.delta for e in events if isinstance(e, TextMessageContentEvent)] == [
        "Let me check.",
        "One moment.",
    ]
    assert turn.calls == (
        ParsedCall("get_weather", '{"location":"Paris"}', "r-call-1", started=True),
    )


def test_a_call_repeated_in_one_turn_goes_out_once_and_the_repeat_is_reported() -> None:
    fenced = render_block("get_weather", '{"location": "Paris"}')
    deltas: list[ChatDelta] = [TextDelta(WEATHER + "\n" + fenced + "\n" + TIME + BARE)]

    turn, events = _read(XmlDispatcher(), deltas)

    assert [(call.name, call.arguments) for call in turn.calls] == [
        ("get_weather", '{"location":"Paris"}'),
        ("get_time", "{}"),
    ]
    assert _types(events).count("TOOL_CALL_START") == 2
    warnings = [event.value for event in events if isinstance(event, CustomEvent)]
    assert (
        warnings
        == [
            {
                "message": "skipped a repeated tool call",
                "name": "get_weather",
                "arguments": '{"location":"Paris"}',
            }
        ]
        * 2
    )


CALL_FORMS = [
    WEATHER,
    NOTE,
    "```json\n" + NOTE + "\n```",
    BARE,
    render_block("get_weather", '{"location": "Paris"}'),
    TIME,
    "<function=get_time>{}</function>",
    WEATHER.replace("Paris", "Rome"),
]


@settings(max_examples=150)
@given(
    parts=st.lists(st.sampled_from([*CALL_FORMS, " ok ", "\n"]), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=10),
)
def test_any_split_of_repeated_calls_sends_each_distinct_call_once_in_order(
    parts: list[str], cuts: list[int]
) -> None:
    text = "".join(parts)
    deltas: list[ChatDelta] = [TextDelta(piece) for piece in _split(text, cuts) if piece]

    turn, events = _read(XmlDispatcher(), deltas)

    expected: list[tuple[str, str]] = []
    for piece in _parse([text]):
        if isinstance(piece, ToolCallTag) and (piece.name, piece.arguments) not in expected:
            expected.append((piece.name, piece.arguments))
    assert [(call.name, call.arguments) for call in turn.calls] == expected
    assert _types(events).count("TOOL_CALL_START") == len(expected)


def test_the_same_tool_with_other_arguments_is_not_a_repeat() -> None:
    other = WEATHER.replace("Paris", "Rome")

    turn, events = _read(XmlDispatcher(), [TextDelta(WEATHER + other)])

    assert [call.arguments for call in turn.calls] == [
        '{"location":"Paris"}',
        '{"location":"Rome"}',
    ]
    assert not [event for event in events if isinstance(event, CustomEvent)]


def test_only_the_xml_dispatcher_asks_the_model_to_stop_before_a_tool_result() -> None:
    assert XmlDispatcher().stop_sequences == ("<tool_result",)
    assert NativeDispatcher().stop_sequences == ()


def test_a_malformed_tag_becomes_a_warning_event_and_the_stream_goes_on() -> None:
    turn, events = _read(XmlDispatcher(), [TextDelta("Hi <tool_call>{oops}</tool_call> there")])

    warnings = [event for event in events if isinstance(event, CustomEvent)]
    assert turn.calls == ()
    assert turn.text == "Hi  there"
    assert [w.name for w in warnings] == [WARNING_EVENT]
    assert isinstance(warnings[0].value, dict)
    assert warnings[0].value["raw"] == "<tool_call>{oops}</tool_call>"
    assert str(warnings[0].value["message"]).startswith("skipped a malformed tool call")
    assert [call.raw for call in turn.malformed] == ["<tool_call>{oops}</tool_call>"]


THINKING = '<tool_call><think>weather</think>{"name": "get_weather", "arguments": {}}</tool_call>'
"""A call the probe found a local model writing: its reasoning inside the tag."""


def test_a_malformed_xml_call_is_echoed_and_answered_with_an_error_naming_the_form() -> None:
    turn, events = _read(XmlDispatcher(), [TextDelta("Checking." + THINKING)])

    assert turn.calls == ()
    assert turn.malformed == (MalformedCall(THINKING, THINK_IN_TAG),)
    assert [e.name for e in events if isinstance(e, CustomEvent)] == [WARNING_EVENT]
    messages = XmlDispatcher().format_results(turn, [])
    assert messages == [
        ChatMessage.assistant("Checking.\n" + THINKING),
        ChatMessage.user(render_malformed(THINK_IN_TAG)),
    ]
    assert messages[1].content.startswith(
        '<tool_result status="error">Error: your tool call could not be read, so it did not run: '
        + THINK_IN_TAG
    )
    assert "write a ```json code block holding only" in messages[1].content


def test_a_call_that_ran_and_a_malformed_one_are_answered_together_in_order() -> None:
    cut = '<tool_call>{"name": "get_time", "arguments": {}</tool_call>'
    turn, _ = _read(XmlDispatcher(), [TextDelta(WEATHER + cut)])
    ran = CallResult("r-call-1", "get_weather", '{"location":"Paris"}', ToolResult("sunny"))

    messages = XmlDispatcher().format_results(turn, [ran])

    [malformed] = turn.malformed
    assert (malformed.raw, malformed.reason.partition(" (")[0]) == (cut, NOT_JSON)
    assert messages == [
        ChatMessage.assistant(render_block("get_weather", '{"location":"Paris"}') + "\n" + cut),
        ChatMessage.user(
            render_result("get_weather", "sunny", ok=True)
            + "\n"
            + render_malformed(malformed.reason)
        ),
    ]


def test_a_run_tells_the_model_of_a_malformed_call_beside_one_that_ran() -> None:
    cut = '<tool_call>{"name": "get_time", "arguments": {}</tool_call>'

    @tool
    def get_weather(location: str) -> str:
        return f"sunny in {location}"

    model = ScriptedModel(
        [Turn.text(WEATHER + cut), Turn.text("Sunny.")], supports_native_tools=False
    )
    agent = ToolLoopAgent(model, tools=[get_weather])
    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))

    assert_valid(events)
    assert _types(events).count("TOOL_CALL_RESULT") == 1
    told = model.requests[1].messages[-1]
    assert told.role == "user"
    assert told.content.startswith(render_result("get_weather", "sunny in Paris", ok=True))
    assert "Error: your tool call could not be read, so it did not run" in told.content


MALFORMED = [
    THINKING,
    '<tool_call>\n```json\n{"name": "get_weather", "arguments": {}}\n```\n</tool_call>',
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"</tool_call>',
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}',
]


@pytest.mark.parametrize("text", MALFORMED, ids=["think", "fence", "cut", "unclosed"])
def test_each_malformed_call_is_reported_and_kept_for_the_model_in_a_valid_stream(
    text: str,
) -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    dispatcher = XmlDispatcher()
    deltas: list[ChatDelta] = [TextDelta(piece) for piece in _split(text, [5, 17, 30])]

    turn = asyncio.run(dispatcher.parse_response(_stream(deltas), TurnWriter(ctx, turn=1)))

    [malformed] = turn.malformed
    messages = dispatcher.format_results(turn, [])
    assert messages == [
        ChatMessage.assistant(malformed.raw),
        ChatMessage.user(render_malformed(malformed.reason)),
    ]
    stream = [
        RunStartedEvent(thread_id="t", run_id="r"),
        *events.drain(),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    assert _types(stream) == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]
    assert_valid(stream)


def test_an_xml_call_with_an_escaped_lone_surrogate_gets_an_error_result_as_a_native_one_does() -> (
    None
):
    @tool
    def note(text: str) -> str:
        return f"saved {text}"

    script = [Turn.tool_calls(Call("note", '{"text": "a\\ud800b"}')), Turn.text("Sorry.")]
    model = ScriptedModel(script, supports_native_tools=False)
    agent = ToolLoopAgent(model, tools=[note])
    events = asyncio.run(collect(agent, RunAgentInput(thread_id="t", run_id="r")))

    assert_valid(events)
    args = [event.delta for event in events if isinstance(event, ToolCallArgsEvent)]
    results = [event for event in events if isinstance(event, ToolCallResultEvent)]
    assert args == ['{"text":"a\\ud800b"}']
    assert len(results) == 1
    assert str(results[0].content).startswith("Error: the arguments of tool 'note' are not JSON")
    # The model reads its call back and the error, in text its API can carry.
    seen = model.requests[1].messages
    assert all(message.content.encode() for message in seen)
    assert "not JSON" in seen[-1].content


class _Point:
    """Something a model of the app's own might yield by mistake."""


@pytest.mark.parametrize("dispatcher", [NativeDispatcher(), XmlDispatcher()], ids=["native", "xml"])
@pytest.mark.parametrize(
    ("item", "refusal"),
    [
        (
            "Hello",
            r"yielded a str, which is not a ChatDelta: .*; yield TextDelta\(text\) for text$",
        ),
        (3, r"yielded an int, which is not a ChatDelta: .*; yield one of those$"),
        (_Point(), r"yielded a [\w.]+\._Point, which is not a ChatDelta"),
    ],
    ids=["str", "int", "object"],
)
def test_a_model_yielding_what_is_no_delta_is_refused_naming_it_and_the_deltas(
    dispatcher: ToolDispatcher, item: object, refusal: str
) -> None:
    deltas = cast("list[ChatDelta]", [TextDelta("Hi"), item])
    listed = r"yields the deltas of agui\.agents\.models \(TextDelta, ReasoningDelta, "

    with pytest.raises(UsageError, match=refusal):
        _read(dispatcher, deltas)
    with pytest.raises(UsageError, match=listed + r"ToolCallDelta, UsageDelta, FinishDelta\)"):
        _read(dispatcher, deltas)


def test_a_run_whose_model_yields_a_str_ends_with_a_usage_error_and_a_valid_stream() -> None:
    class Careless:
        supports_native_tools = True

        async def stream(
            self,
            messages: Sequence[ChatMessage],  # noqa: ARG002
            *,
            tools: Sequence[Tool] = (),  # noqa: ARG002
            stop: Sequence[str] = (),  # noqa: ARG002
        ) -> AsyncIterator[ChatDelta]:
            yield TextDelta("Hello")
            yield cast("ChatDelta", " there")

    events = asyncio.run(
        collect(ToolLoopAgent(Careless()), RunAgentInput(thread_id="t", run_id="r"))
    )

    assert_valid(events)
    assert _types(events)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert isinstance(events[-1], RunErrorEvent)
    assert events[-1].code == "USAGE_ERROR"


def test_the_xml_dispatcher_also_takes_native_reasoning_and_native_calls() -> None:
    deltas: list[ChatDelta] = [
        ReasoningDelta("thinking"),
        TextDelta("Hi"),
        ToolCallDelta(index=0, id="c9", name="late", arguments="{}"),
    ]

    turn, events = _read(XmlDispatcher(), deltas)

    assert [(c.name, c.id) for c in turn.calls] == [("late", "c9")]
    assert _types(events)[0] == "REASONING_START"


@pytest.mark.parametrize("streamed", [False, True])
def test_a_native_call_whose_name_is_blank_is_skipped_with_a_warning(
    streamed: bool,  # noqa: FBT001 - a parameter of the test
) -> None:
    deltas: list[ChatDelta] = [
        ToolCallDelta(index=0, id="c1", name="  ", arguments="{}"),
        ToolCallDelta(index=1, id="c2", name="get_time", arguments="{}"),
    ]

    turn, events = _read(NativeDispatcher(stream_tool_calls=streamed), deltas)

    assert [c.name for c in turn.calls] == ["get_time"]
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert [e.tool_call_name for e in starts] == (["get_time"] if streamed else [])
    warnings = [e for e in events if isinstance(e, CustomEvent) and e.name == WARNING_EVENT]
    assert [cast("dict[str, object]", w.value)["message"] for w in warnings] == [
        "skipped a tool call that had no name"
    ]
    assert turn.malformed == (MalformedCall("{}", "it has no name"),)


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("text", "arguments"),
    [("On it.", '{"x": "1"}'), ("", "")],
    ids=["after text", "alone, without arguments"],
)
def test_a_native_call_without_a_name_is_answered_with_an_error_the_model_reads(
    streamed: bool,  # noqa: FBT001 - a parameter of the test
    text: str,
    arguments: str,
) -> None:
    deltas: list[ChatDelta] = [ToolCallDelta(index=0, id="c1", name="", arguments=arguments)]
    turn, events = _read(NativeDispatcher(stream_tool_calls=streamed), [TextDelta(text), *deltas])

    messages = NativeDispatcher().format_results(turn, [])

    assert turn.calls == ()
    assert turn.malformed == (MalformedCall(arguments, "it has no name"),)
    assert messages == [
        ChatMessage.assistant(text),
        ChatMessage.user(
            "Error: a tool call in your reply did not run: it has no name (its arguments: "
            f"{arguments or '{}'}). Call the tool again, by its name."
        ),
    ]
    stream = [RunStartedEvent(thread_id="t", run_id="r"), *events]
    assert_valid([*stream, RunFinishedEvent(thread_id="t", run_id="r")])


def test_native_fragments_interleaved_by_index_assemble_into_whole_calls() -> None:
    deltas: list[ChatDelta] = [
        TextDelta("Checking both."),
        ToolCallDelta(index=0, id="c1", name="get_weather", arguments=""),
        ToolCallDelta(index=1, id="c2", name="get_time", arguments='{"ci'),
        ToolCallDelta(index=0, arguments='{"location": "Pa'),
        ToolCallDelta(index=1, arguments='ty": "Oslo"}'),
        ToolCallDelta(index=0, arguments='ris"}'),
        FinishDelta("tool_calls"),
    ]

    turn, events = _read(NativeDispatcher(), deltas)

    assert [(c.id, c.name, c.arguments) for c in turn.calls] == [
        ("c1", "get_weather", '{"location": "Paris"}'),
        ("c2", "get_time", '{"city": "Oslo"}'),
    ]
    assert turn.message_id == "r-msg-1"
    assert _types(events) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        (
            [
                ToolCallDelta(index=0, id="a", name="f", arguments="{}"),
                ToolCallDelta(index=0, id="b", name="g", arguments="{}"),
            ],
            [("a", "f", "{}"), ("b", "g", "{}")],
        ),
        (
            [
                ToolCallDelta(id="a", name="f", arguments='{"x":'),
                ToolCallDelta(id="b", name="g", arguments="{}"),
                ToolCallDelta(id="a", arguments="1}"),
            ],
            [("a", "f", '{"x":1}'), ("b", "g", "{}")],
        ),
        (
            [ToolCallDelta(name="f", arguments='{"x":'), ToolCallDelta(arguments="1}")],
            [(None, "f", '{"x":1}')],
        ),
        (
            [
                ToolCallDelta(index=0, id="a", name="f"),
                ToolCallDelta(index=0, id="a", name="f", arguments='{"x":1}'),
            ],
            [("a", "f", '{"x":1}')],
        ),
        (
            [ToolCallDelta(index=3, name="f", arguments="  "), ToolCallDelta(index=3, id="late")],
            [("late", "f", "{}")],
        ),
        (
            [
                ToolCallDelta(index=0, id="a", name="f"),
                ToolCallDelta(index=1, id="a", name="f"),
                ToolCallDelta(index=0, arguments='{"x":1}'),
                ToolCallDelta(index=1, arguments='{"x":2}'),
            ],
            [("a", "f", '{"x":1}'), ("a", "f", '{"x":2}')],
        ),
    ],
    ids=[
        "a reused index with a new id is a new call",
        "no index: fragments follow their id",
        "neither index nor id: fragments continue the last call",
        "a repeated name is not appended",
        "blank arguments become an empty object and a late id is kept",
        "one id at two indexes is two calls",
    ],
)
def test_native_fragments_are_merged_by_index_then_id_then_position(
    deltas: list[ChatDelta], expected: list[tuple[str | None, str, str]]
) -> None:
    turn, _ = _read(NativeDispatcher(), deltas)

    assert [(c.id, c.name, c.arguments) for c in turn.calls] == expected


def test_a_native_call_that_never_got_a_name_is_skipped_with_a_warning() -> None:
    turn, events = _read(NativeDispatcher(), [ToolCallDelta(index=0, arguments="{}")])

    assert turn.calls == ()
    assert [event.type for event in events] == ["CUSTOM"]


def test_streamed_native_calls_go_out_interleaved_and_are_marked_started() -> None:
    deltas: list[ChatDelta] = [
        TextDelta("On it."),
        ToolCallDelta(index=0, id="c1", name="a"),
        ToolCallDelta(index=1, arguments='{"y":'),
        ToolCallDelta(index=0, arguments='{"x":1}'),
        ToolCallDelta(index=1, name="b", arguments="2}"),
    ]

    turn, events = _read(NativeDispatcher(stream_tool_calls=True), deltas)

    assert [(c.id, c.name, c.arguments, c.started) for c in turn.calls] == [
        ("c1", "a", '{"x":1}', True),
        ("r-turn-1-call-1", "b", '{"y":2}', True),
    ]
    assert [(e.type, getattr(e, "tool_call_id", None)) for e in events] == [
        ("TEXT_MESSAGE_START", None),
        ("TEXT_MESSAGE_CONTENT", None),
        ("TOOL_CALL_START", "c1"),
        ("TOOL_CALL_ARGS", "c1"),
        ("TOOL_CALL_START", "r-turn-1-call-1"),
        ("TOOL_CALL_ARGS", "r-turn-1-call-1"),
        ("TOOL_CALL_ARGS", "r-turn-1-call-1"),
        ("TEXT_MESSAGE_END", None),
        ("TOOL_CALL_END", "c1"),
        ("TOOL_CALL_END", "r-turn-1-call-1"),
    ]
    assert getattr(events[2], "parent_message_id", None) == "r-msg-1"


def test_streamed_native_calls_pass_the_verifier_inside_a_run() -> None:
    ctx, events = RunContext.new(RunAgentInput(thread_id="t", run_id="r"))
    deltas: list[ChatDelta] = [ToolCallDelta(index=0, id="c1", name="a", arguments="{}")]

    asyncio.run(
        NativeDispatcher(stream_tool_calls=True).parse_response(
            _stream(deltas), TurnWriter(ctx, turn=1)
        )
    )

    stream = [
        RunStartedEvent(thread_id="t", run_id="r"),
        *events.drain(),
        RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    assert_valid(stream)


# -- carrying results and history back ---------------------------------------------------------

RESULTS = [
    CallResult("c1", "get_weather", '{"location":"Paris"}', ToolResult("sunny")),
    CallResult("c2", "get_time", "{}", ToolResult("Error: boom", ok=False)),
]
TURN = AssistantTurn("Checking.", (ParsedCall("get_weather", "{}"), ParsedCall("get_time", "{}")))


def test_native_results_echo_the_calls_then_one_tool_message_each() -> None:
    messages = NativeDispatcher().format_results(TURN, RESULTS)

    assert [(m.role, m.content, m.tool_call_id, m.is_error) for m in messages] == [
        ("assistant", "Checking.", None, False),
        ("tool", "sunny", "c1", False),
        ("tool", "Error: boom", "c2", True),
    ]
    assert [call.id for call in messages[0].tool_calls] == ["c1", "c2"]


def test_xml_results_echo_the_calls_as_json_blocks_then_one_user_message_of_results() -> None:
    messages = XmlDispatcher().format_results(TURN, RESULTS)

    assert messages == [
        ChatMessage.assistant(
            "Checking.\n"
            + render_block("get_weather", '{"location":"Paris"}')
            + "\n"
            + render_block("get_time", "{}")
        ),
        ChatMessage.user(
            render_result("get_weather", "sunny", ok=True)
            + "\n"
            + render_result("get_time", "Error: boom", ok=False)
        ),
    ]


HISTORY: list[Message] = [
    UserMessage(id="u1", content="Weather and time?"),
    AssistantMessage(
        id="a1",
        tool_calls=[
            ToolCall(id="c1", function=FunctionCall(name="get_weather", arguments="{}")),
            ToolCall(id="c2", function=FunctionCall(name="get_time", arguments="{}")),
        ],
    ),
    ToolMessage(id="t1", tool_call_id="c1", content="sunny"),
    ToolMessage(id="t2", tool_call_id="c2", content="", error="no clock"),
    AssistantMessage(id="a2", content="Sunny; no clock."),
]


def test_the_xml_history_renders_calls_as_json_blocks_and_results_as_one_user_message() -> None:
    messages = XmlDispatcher().to_provider_messages(HISTORY)

    assert [(m.role, m.content) for m in messages] == [
        ("user", "Weather and time?"),
        ("assistant", render_block("get_weather", "{}") + "\n" + render_block("get_time", "{}")),
        (
            "user",
            render_result("get_weather", "sunny", ok=True)
            + "\n"
            + render_result("get_time", "no clock", ok=False),
        ),
        ("assistant", "Sunny; no clock."),
    ]


def test_the_native_history_keeps_calls_and_results_structured() -> None:
    messages = NativeDispatcher().to_provider_messages(HISTORY)

    assert [(m.role, m.tool_call_id, m.name) for m in messages] == [
        ("user", None, None),
        ("assistant", None, None),
        ("tool", "c1", "get_weather"),
        ("tool", "c2", "get_time"),
        ("assistant", None, None),
    ]


@pytest.mark.parametrize(
    ("choice", "native", "expected"),
    [
        ("auto", True, NativeDispatcher),
        ("auto", False, XmlDispatcher),
        ("native", False, NativeDispatcher),
        ("xml", True, XmlDispatcher),
    ],
    ids=["auto-native", "auto-xml", "native", "xml"],
)
def test_the_dispatcher_is_chosen_by_name_or_by_what_the_model_supports(
    choice: str, *, native: bool, expected: type[object]
) -> None:
    model = ScriptedModel([], supports_native_tools=native)

    assert type(select_dispatcher(choice, model)) is expected  # type: ignore[arg-type]


def test_a_dispatcher_instance_is_used_as_given_and_an_unknown_name_is_refused() -> None:
    model = ScriptedModel([])
    mine = NativeDispatcher(stream_tool_calls=True)

    assert select_dispatcher(mine, model) is mine
    with pytest.raises(UsageError, match="unknown dispatcher 'json'"):
        select_dispatcher("json", model)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, b"native", object()], ids=["none", "bytes", "object"])
def test_what_is_no_dispatcher_is_refused_when_the_agent_is_built(value: object) -> None:
    model = ScriptedModel([])

    with pytest.raises(
        UsageError,
        match=r"dispatcher=.* is not a ToolDispatcher: use 'native', 'xml', 'auto' or a "
        r"ToolDispatcher, such as NativeDispatcher\(stream_tool_calls=True\)$",
    ):
        select_dispatcher(cast("ToolDispatcher", value), model)
    with pytest.raises(UsageError, match=r"dispatcher=None is not a ToolDispatcher"):
        ToolLoopAgent(model, dispatcher=cast("ToolDispatcher", None))


def test_a_dispatcher_of_ones_own_missing_members_is_told_which() -> None:
    class Half:
        should_send_tool_specs = True
        stop_sequences = ()

        def prompt_instructions(self, tools: Sequence[Tool]) -> str:  # noqa: ARG002
            return ""

    with pytest.raises(
        UsageError,
        match=r"is not a ToolDispatcher \(it has no format_results, parse_response, "
        r"to_provider_messages\)",
    ):
        select_dispatcher(cast("ToolDispatcher", Half()), ScriptedModel([]))


def test_both_dispatchers_satisfy_the_protocol() -> None:
    assert isinstance(NativeDispatcher(), ToolDispatcher)
    assert isinstance(XmlDispatcher(), ToolDispatcher)
    assert NativeDispatcher().prompt_instructions([Tool(name="f", description="")]) == ""
    assert not XmlDispatcher().should_send_tool_specs
