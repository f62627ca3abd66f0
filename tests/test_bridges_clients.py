"""The bridges' examples through the official TypeScript client, 1.0.0 and 0.0.59.

`tests/js/hitl.mjs` drives `HttpAgent` against the pydantic-ai shopping list and the OpenAI
Agents SDK front desk, each served by a real uvicorn on 127.0.0.1, through an approval answered
in `resume[]`. Collected from Python 3.11 on, as the bridges are (`conftest.py`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from examples.bridges import openai_agents_app as desk
from examples.bridges import pydantic_ai_app as shopping

from agui.testing import serving
from test_hitl_clients import CLIENTS, Json, drive


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    with serving(shopping.app) as shopping_url, serving(desk.app) as desk_url:
        yield {"AGUI_SHOPPING_URL": shopping_url, "AGUI_DESK_URL": desk_url}


def _outcomes(result: Json) -> list[str]:
    return [run["outcome"]["type"] if run["outcome"] else "none" for run in result["runs"]]


@pytest.mark.parametrize("client", CLIENTS)
def test_the_pydantic_ai_example_clears_its_list_once_the_client_approves(
    urls: dict[str, str], client: str
) -> None:
    result = drive(urls, client, "shopping")

    assert _outcomes(result) == ["success", "interrupt", "success"]
    assert result["state"] == {"items": []}
    assert result["messages"][-1]["content"] == "Cleared the list."
    assert result["runs"][-1]["pendingInterrupts"] == []


@pytest.mark.parametrize("client", CLIENTS)
def test_the_openai_agents_example_books_once_the_client_approves(
    urls: dict[str, str], client: str
) -> None:
    result = drive(urls, client, "desk")

    assert _outcomes(result) == ["success", "interrupt", "success"]
    assert result["messages"][-1]["content"] == "Booked a room at Lumen."
    assert result["runs"][-1]["pendingInterrupts"] == []
