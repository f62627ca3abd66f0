"""The inspector page on an endpoint whose `authorize` names identities, in a real Chromium.

The page sends its Authorization field with each run, cancel and read, so it works as the
identity that field names; a reload keeps no credentials, so the reattach it tries is refused
(401) and shown as such, as on an endpoint without identities.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

import httpx

import agui
import test_inspector
from agui.runs import MemoryRunLog
from test_inspector import (
    SERVER_SECONDS,
    Tab,
    needs_chromium,
    screenshot_on_failure,
    send,
    serving,
    wait_outcome,
)

# The inspector tests' Chromium, and a fresh page of it for each test.
browser = test_inspector.browser
tab = test_inspector.tab


def by_token(headers: Mapping[str, str]) -> str | bool:
    return {"Bearer k": "alice", "Bearer b": "bob"}.get(headers.get("authorization", ""), False)


@needs_chromium
def test_the_page_runs_as_the_identity_its_field_names_and_a_reload_is_refused_cleanly(
    tab: Tab,
) -> None:
    release = threading.Event()

    async def halting(ctx: agui.RunContext[Any]) -> None:
        with ctx.message() as message:
            message.delta("before the reload. ")
            await asyncio.to_thread(release.wait, SERVER_SECONDS)
            message.delta("after the reload.")

    app = agui.asgi_app(halting, inspector=True, runs=MemoryRunLog(), authorize=by_token)
    page = tab.page
    try:
        with serving(app) as url, screenshot_on_failure(tab):
            page.goto(url + "/")
            page.locator("#auth").evaluate("(field) => { field.value = 'Bearer k' }")
            send(page, "Mine")
            page.wait_for_function(
                "() => (document.querySelector('article.role-assistant .content') || {})"
                ".textContent?.includes('before the reload')"
            )
            [posted] = tab.posts()
            page.reload()
            refused = wait_outcome(page, "http-error")
            release.set()
            reads = [r for r in tab.requests if r.method == "GET" and "/runs/" in r.url]
            events = f"{url}/runs/{posted['runId']}/events"
            as_alice = httpx.get(events, headers={"authorization": "Bearer k"}, timeout=30)
            as_bob = httpx.get(events, headers={"authorization": "Bearer b"}, timeout=30)
    finally:
        release.set()

    assert refused.startswith("HTTP 401 UNAUTHORIZED")
    assert [r.url for r in reads] == [events]
    assert reads[0].headers.get("authorization") is None
    assert "after the reload." in as_alice.text  # the run went on, Alice's
    assert as_bob.status_code == 404
