"""How often the tool loop gets it right on a real local model, with native and with XML calls.

Each question goes through `ToolLoopAgent` with the travel example's two tools (`get_weather`,
`search_restaurants`) and instructions, on an `OpenAIModel` talking to the local llama.cpp
server (Qwen2.5-Coder, `../shared/llm`), once with `dispatcher="native"` and once with
`dispatcher="xml"`. Sampling is greedy (`temperature: 0`), so a run is repeatable; a question
is one run per mode.

A run **passes** when it called exactly the tools the question needs, each with the city the
question names, and answered from their results (the temperature or the condition
`get_weather` returned appears in the answer; one of the restaurants `search_restaurants`
returned is named), or, for a question no tool answers, answered without a call. A follow-up is
asked after a first exchange, which is replayed as history; only the follow-up is scored. Every
stream is also checked with the verifier. The report is the table of questions and the share
of passing runs per mode.

Run: `python bench/bench_llm.py` starts the server itself (`AGUI_LLM_DIR`, `AGUI_LLM_MODEL`,
`AGUI_LLM_THREADS` as for `scripts/llm-lane`), or `--base-url http://127.0.0.1:PORT/v1` uses
one that runs; `--mode native` or `--mode xml` runs one mode; `--only N` runs the first N
questions, `--match TEXT` those holding TEXT. It takes about ten minutes for both modes on
two cores with the 1.5B.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import JsonValue

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the travel example imports as `examples.travel.app`

from examples.travel.app import (  # noqa: E402
    INSTRUCTIONS,
    QUESTION,
    get_weather,
    search_restaurants,
)

from agui import RunAgentInput  # noqa: E402 - after the path the example needs
from agui.agents import ToolLoopAgent  # noqa: E402
from agui.agents.models import OpenAIModel  # noqa: E402
from agui.events import (  # noqa: E402
    Event,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from agui.messages import AssistantMessage, Message, UserMessage  # noqa: E402
from agui.testing import assert_valid, collect, fold  # noqa: E402

LLM_DIR = Path(os.environ.get("AGUI_LLM_DIR") or ROOT.parent / "shared" / "llm")
MODES = ("native", "xml")


@dataclasses.dataclass(frozen=True)
class Question:
    """A question, the tools it needs (by name, to the city each must get), and its kind."""

    kind: str
    text: str
    tools: dict[str, str]
    before: str | None = None  # a first question, replayed as history, for a follow-up


QUESTIONS = [
    Question("one tool", "Is it raining in Oslo right now?", {"get_weather": "oslo"}),
    Question("one tool", "What's the temperature in Tokyo today?", {"get_weather": "tokyo"}),
    Question("one tool", "Find me some sushi places in Berlin.", {"search_restaurants": "berlin"}),
    Question(
        "one tool",
        "Where can I eat good Indian food in London?",
        {"search_restaurants": "london"},
    ),
    Question("two tools", QUESTION, {"get_weather": "paris", "search_restaurants": "paris"}),
    Question(
        "two tools",
        "I'm in Madrid tomorrow: how is the weather there, and where can I get tapas?",
        {"get_weather": "madrid", "search_restaurants": "madrid"},
    ),
    Question(
        "two tools",
        "Weather in Rome? And some good pizza.",
        {"get_weather": "rome", "search_restaurants": "rome"},
    ),
    Question(
        "two tools",
        "Going to Lisbon: what's the weather, and which restaurants do you recommend?",
        {"get_weather": "lisbon", "search_restaurants": "lisbon"},
    ),
    Question("no tool", "What is 12 times 7?", {}),
    Question("no tool", "Thanks, that is all for now. Goodbye!", {}),
    Question("no tool", "Write the word hello in capital letters.", {}),
    Question(
        "follow-up",
        "And in Vienna?",
        {"get_weather": "vienna"},
        before="What's the weather in Paris?",
    ),
    Question(
        "follow-up",
        "What's the weather like there?",
        {"get_weather": "paris"},
        before="Find me Italian restaurants in Paris.",
    ),
]


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One run, scored."""

    right_tools: bool
    used_results: bool
    seconds: float
    note: str

    @property
    def passed(self) -> bool:
        """Both halves of the score."""
        return self.right_tools and self.used_results


def _agent(base_url: str, mode: str) -> ToolLoopAgent:
    model = OpenAIModel(
        "local",
        base_url=base_url,
        extra_body={"temperature": 0, "max_tokens": 256},
        timeout=300.0,
        max_retries=0,
    )
    return ToolLoopAgent(
        model,
        tools=[get_weather, search_restaurants],
        instructions=INSTRUCTIONS,
        dispatcher="native" if mode == "native" else "xml",
        max_turns=4,
    )


def _run(agent: ToolLoopAgent, history: Sequence[Message]) -> tuple[list[Event], list[Message]]:
    run_input = RunAgentInput(thread_id="t", run_id=f"r{len(history)}", messages=list(history))
    events = asyncio.run(collect(agent, run_input))
    assert_valid(events, input=run_input)
    return events, fold(events, messages=run_input.messages).messages


def _calls(events: Sequence[Event]) -> list[tuple[str, dict[str, object]]]:
    names = {e.tool_call_id: e.tool_call_name for e in events if isinstance(e, ToolCallStartEvent)}
    arguments = dict.fromkeys(names, "")
    for event in events:
        if isinstance(event, ToolCallArgsEvent):
            arguments[event.tool_call_id] += event.delta
    out: list[tuple[str, dict[str, object]]] = []
    for call_id, name in names.items():
        try:
            out.append((name, json.loads(arguments[call_id] or "{}")))
        except ValueError:
            out.append((name, {}))
    return out


def _evidence(events: Sequence[Event]) -> list[list[str]]:
    """For each tool result, the strings an answer from it would quote (any one will do)."""
    found: list[list[str]] = []
    for event in events:
        if not isinstance(event, ToolCallResultEvent) or not isinstance(event.content, str):
            continue
        try:
            value: JsonValue = json.loads(event.content)
        except ValueError:
            continue
        if isinstance(value, dict) and "temperature_c" in value:
            found.append([str(value["temperature_c"]), str(value.get("condition")).lower()])
        elif isinstance(value, list) and value:
            places = [place for place in value if isinstance(place, dict)]
            found.append([str(place.get("name")).lower() for place in places])
    return found


def _score(question: Question, events: list[Event], seconds: float) -> Outcome:
    messages = fold(events).messages
    texts = [m.content for m in messages if isinstance(m, AssistantMessage) and m.content]
    answer = str(texts[-1]).lower() if texts else ""
    calls = _calls(events)
    called = {name for name, _ in calls}
    right = called == set(question.tools) and all(
        question.tools.get(name, "\0") in str(arguments.get("location", "")).lower()
        for name, arguments in calls
    )
    evidence = _evidence(events)
    if question.tools:
        used = bool(evidence) and all(any(s in answer for s in strings) for strings in evidence)
    else:
        used = bool(answer.strip())
    shown = ", ".join(f"{name}({json.dumps(args)})" for name, args in calls) or "no call"
    return Outcome(right, used, seconds, f"{shown} -> {answer[:160]!r}")


def ask(base_url: str, mode: str, question: Question) -> Outcome:
    """Run one question in one mode and score it."""
    agent = _agent(base_url, mode)
    history: list[Message] = []
    if question.before is not None:
        history.append(UserMessage(id="u0", content=question.before))
        _, history = _run(agent, history)
    history.append(UserMessage(id="u1", content=question.text))
    start = time.monotonic()
    events, _ = _run(agent, history)
    return _score(question, events, time.monotonic() - start)


@contextmanager
def served() -> Generator[str]:
    """The local model server on a free loopback port, for as long as the block runs."""
    subprocess.run([LLM_DIR / "setup.sh"], check=True, stdout=subprocess.DEVNULL)  # noqa: S603
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(  # noqa: S603 - the folder's own script
        [LLM_DIR / "serve.sh", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, "the model server exited"
            assert time.monotonic() < deadline, "the model server was not healthy in 180 s"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def report(base_url: str, modes: Sequence[str], questions: Sequence[Question]) -> None:
    """Ask every question in every mode; print a Markdown table and the pass rate per mode."""
    header = "| kind | question | " + " | ".join(modes) + " |"
    rows = [header, "|---|---|" + "---|" * len(modes)]
    passed = dict.fromkeys(modes, 0)
    for question in questions:
        cells: list[str] = []
        for mode in modes:
            outcome = ask(base_url, mode, question)
            passed[mode] += outcome.passed
            mark = "pass" if outcome.passed else "FAIL"
            tools = "" if outcome.right_tools else " (wrong tools)"
            unused = "" if outcome.used_results else " (results unused)"
            cells.append(f"{mark}{tools}{unused}, {outcome.seconds:.0f} s")
            print(f"[{mode}] {question.text!r}: {mark} {outcome.note}", file=sys.stderr)
        asked = f"{question.before} / {question.text}" if question.before else question.text
        rows.append(f"| {question.kind} | {asked} | " + " | ".join(cells) + " |")
    shares = [
        f"{passed[mode]}/{len(questions)} ({passed[mode] / len(questions):.0%})" for mode in modes
    ]
    rows.append("| | **passed** | " + " | ".join(f"**{share}**" for share in shares) + " |")
    print("\n".join(rows))


def main() -> None:
    """Parse the options, start the server unless one is given, and report."""
    parser = argparse.ArgumentParser(description="The tool loop on a real model, scored.")
    parser.add_argument("--base-url", help="a running server's API root; else one is started")
    parser.add_argument("--mode", choices=MODES, action="append", help="default: both")
    parser.add_argument("--only", type=int, default=len(QUESTIONS), help="the first N questions")
    parser.add_argument("--match", default="", help="only the questions holding this text")
    options = parser.parse_args()
    modes = options.mode or list(MODES)
    questions = [q for q in QUESTIONS[: options.only] if options.match.lower() in q.text.lower()]
    if options.base_url:
        report(options.base_url, modes, questions)
        return
    with served() as base_url:
        report(base_url, modes, questions)


if __name__ == "__main__":
    main()
