"""The bridges' examples, each served by `agui serve` in a real subprocess as its docstring says.

Each example's run over HTTP must be the run the same agent gives in process (`collect`): the
same events in the same order and the same folded conversation and state. The proxy is served in
front of the adapter example, itself served by a second `agui serve`.
"""

from __future__ import annotations

import asyncio

import pytest
from examples.bridges import adapter, langgraph_app, openai_agents_app, pydantic_ai_app

import agui
from agui.fold import fold
from agui.messages import UserMessage
from agui.testing import collect
from agui_command import ROOT, agui_serve, post_run

EXAMPLES = [
    pytest.param("adapter", adapter.agent, "Seoul", id="from_events"),
    pytest.param("pydantic_ai_app", pydantic_ai_app.agent, "add milk", id="pydantic_ai"),
    pytest.param("openai_agents_app", openai_agents_app.agent, "hotels in Lisbon", id="openai"),
    pytest.param("langgraph_app", langgraph_app.agent, "hotels in Lisbon", id="langgraph"),
]


def ask(text: str) -> agui.RunAgentInput:
    return agui.RunAgentInput(
        thread_id="t", run_id="r1", messages=[UserMessage(id="u1", content=text)]
    )


def served(url: str, text: str) -> list[agui.Event]:
    return post_run(url, ask(text).model_dump(mode="json", by_alias=True, exclude_none=True))


def assert_same_run(over_http: list[agui.Event], in_process: list[agui.Event]) -> None:
    assert over_http[-1].type == "RUN_FINISHED"
    assert [event.type for event in over_http] == [event.type for event in in_process]
    http_fold, local_fold = fold(over_http), fold(in_process)
    assert [(m.role, m.content) for m in http_fold.messages] == [
        (m.role, m.content) for m in local_fold.messages
    ]
    assert http_fold.state == local_fold.state


@pytest.mark.parametrize(("module", "agent", "text"), EXAMPLES)
def test_each_bridge_example_serves_with_agui_serve_the_run_it_gives_in_process(
    module: str, agent: agui.Agent[object], text: str
) -> None:
    in_process = asyncio.run(collect(agent, ask(text)))

    with agui_serve(f"examples/bridges/{module}.py:agent", cwd=ROOT) as url:
        over_http = served(url, text)

    assert_same_run(over_http, in_process)


def test_the_proxy_example_serves_the_adapter_example_from_another_agui_serve() -> None:
    in_process = asyncio.run(collect(adapter.agent, ask("Busan")))

    with (
        agui_serve("examples/bridges/adapter.py:agent", cwd=ROOT) as upstream,
        agui_serve(
            "examples/bridges/proxy.py:agent", cwd=ROOT, env={"AGUI_UPSTREAM_URL": upstream}
        ) as url,
    ):
        over_http = served(url, "Busan")

    assert_same_run(over_http, in_process)
