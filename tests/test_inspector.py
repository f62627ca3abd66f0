"""The inspector page: served on GET, and driven for real in headless Chromium.

The plain tests check what the endpoint answers and what the page is made of. The browser tests
start uvicorn in a thread on 127.0.0.1 and drive Debian's Chromium with Playwright for Python:
the travel and task board examples run from the page, Stop cancels a slow run on the server, and
recorded streams of the official conformance corpus, replayed by a server that is not agui
(`tests/inspector_replay.py`), are marked as the reference client judges them. The page's own
pieces (its ordering rules, its SSE parser, its JSON Patch) are checked against agui's, in the
page. Each browser test saves a screenshot under its `tmp_path` when it fails.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Generator, Iterator, Mapping, MutableMapping
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright
from pydantic import JsonValue

import agui
import corpus
from agui.asgi import AguiApp, inspector
from agui.errors import MalformedEvent, PatchError, ProtocolViolation, UnknownEventType
from agui.events import Event
from agui.patch import apply
from agui.runs import MemoryRunLog
from agui.verify import Rule, Verifier
from agui.wire import parse_event

if TYPE_CHECKING:
    from inspector_replay import ReplayApp

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 20_000
"""The longest any one wait in the page may take."""
SERVER_SECONDS = 10.0
TRAVEL_QUESTION = "What's the weather like in Paris and suggest some Italian restaurants?"
BOARD_TOOLS = '["add_task", "complete_task", "rename_task", "delete_task"]'


def _load(name: str, path: Path) -> ModuleType:
    """Load a module by file path (the examples and the replay helper are not packages here)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


replay = _load("inspector_replay", Path(__file__).with_name("inspector_replay.py"))


# -- the endpoint, without a browser -------------------------------------------------------------


async def hello(ctx: agui.RunContext[Any]) -> None:
    ctx.say("Hello!")


@dataclasses.dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def call(
    app: AguiApp[Any],
    method: str,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
) -> Answer:
    """One HTTP request through the ASGI app, in process."""
    sent: list[MutableMapping[str, Any]] = []

    async def exchange() -> None:
        delivered = False

        async def receive() -> MutableMapping[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client stays until the answer is complete
            return {"type": "http.disconnect"}  # pragma: no cover

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": method,
            "path": "/",
            "query_string": b"",
            "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        }
        await asyncio.wait_for(app(scope, receive, send), SERVER_SECONDS)

    asyncio.run(exchange())
    start = sent[0]
    raw = cast("list[tuple[bytes, bytes]]", start["headers"])
    content = b"".join(bytes(m.get("body", b"")) for m in sent[1:])
    return Answer(start["status"], {k.decode(): v.decode() for k, v in raw}, content)


def test_get_answers_with_the_page_when_the_inspector_is_on() -> None:
    answer = call(agui.asgi_app(hello, inspector=True), "GET", {"accept": "text/html,*/*;q=0.8"})

    assert answer.status == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.body == inspector.page().encode()
    assert answer.headers["content-length"] == str(len(answer.body))
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["vary"] == "Accept"
    assert b"<main>" in answer.body
    assert b'aria-live="polite"' in answer.body


def test_a_get_without_accept_and_a_head_get_the_page_too() -> None:
    app = agui.asgi_app(hello, inspector=True)

    assert call(app, "GET").status == 200
    head = call(app, "HEAD")
    assert (head.status, head.body) == (200, b"")
    assert head.headers["content-length"] == str(len(inspector.page().encode()))


def test_get_is_refused_with_405_without_the_inspector() -> None:
    answer = call(agui.asgi_app(hello), "GET", {"accept": "text/html"})

    assert answer.status == 405
    assert answer.headers["allow"] == "POST"
    assert json.loads(answer.body)["code"] == "METHOD_NOT_ALLOWED"


def test_a_get_that_accepts_only_an_event_stream_is_refused_with_406() -> None:
    answer = call(agui.asgi_app(hello, inspector=True), "GET", {"accept": "text/event-stream"})

    assert answer.status == 406
    refusal = json.loads(answer.body)
    assert refusal["code"] == "NOT_ACCEPTABLE"
    assert "POST" in refusal["message"]
    assert "text/html" in refusal["message"]


def test_other_methods_are_refused_naming_get_head_and_post() -> None:
    answer = call(agui.asgi_app(hello, inspector=True), "PUT")

    assert answer.status == 405
    assert answer.headers["allow"] == "GET, HEAD, POST"
    assert "inspector page on GET" in json.loads(answer.body)["message"]


def test_a_post_still_runs_the_agent_with_the_inspector_on() -> None:
    body = json.dumps({"threadId": "t", "runId": "r", "messages": []}).encode()
    headers = {"accept": "*/*", "content-type": "application/json"}
    answer = call(agui.asgi_app(hello, inspector=True), "POST", headers, body)

    assert answer.status == 200
    types = [json.loads(f[6:])["type"] for f in answer.body.split(b"\n\n") if f]
    assert types[0] == "RUN_STARTED"
    assert types[-1] == "RUN_FINISHED"


def test_the_page_is_served_without_authorize_but_its_runs_are_authorized() -> None:
    app = agui.asgi_app(hello, inspector=True, authorize=lambda _headers: False)

    assert call(app, "GET").status == 200
    assert call(app, "POST", {}, b"{}").status == 401


def test_the_page_makes_no_external_requests() -> None:
    html = inspector.page()
    files = resources.files("agui.asgi.inspector")
    sources = [files.joinpath(name).read_text(encoding="utf-8") for name in _PAGE_FILES]

    for text in (html, *sources):
        assert re.search(r"https?:", text) is None
        assert re.search(r"//[\w.-]+\.[a-z]{2,}/", text) is None
        assert "@import" not in text
        assert "url(" not in text
    assert re.findall(r'(?:src|href)="([^"]*)"', html) == ["data:,"]
    assert "innerHTML" not in html
    assert "eval(" not in html


def test_the_content_security_policy_allows_exactly_the_inlined_script_and_style() -> None:
    html = inspector.page()
    policy = dict(inspector.headers())["content-security-policy"]
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    styles = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)

    assert (len(scripts), len(styles)) == (1, 1)
    assert f"script-src {_csp_hash(scripts[0])};" in policy
    assert f"style-src {_csp_hash(styles[0])};" in policy
    assert "connect-src 'self'" in policy
    assert "'unsafe-inline'" not in policy


def test_the_page_names_the_rules_with_agui_rule_values() -> None:
    script = resources.files("agui.asgi.inspector").joinpath("inspector.js").read_text("utf-8")
    block = script[script.index("const RULE = Object.freeze({") :]
    block = block[: block.index("});")]
    pairs = re.findall(r"^\s+([A-Z_]+): '([a-z-]+)',$", block, re.MULTILINE)

    assert pairs == [(rule.name, rule.value) for rule in Rule]
    used = set(re.findall(r"RULE\.([A-Z_]+)", script))
    assert used == {rule.name for rule in Rule}


def test_the_page_files_ship_inside_the_package() -> None:
    files = resources.files("agui.asgi.inspector")

    for name in _PAGE_FILES:
        assert files.joinpath(name).is_file(), name


def test_agui_serve_with_inspector_answers_get_with_the_page(tmp_path: Path) -> None:
    process = subprocess.Popen(  # noqa: S603 - the project's own command, with fixed arguments
        [
            sys.executable,
            "-c",
            "import sys; from agui.cli import main; sys.exit(main())",
            "serve",
            str(ROOT / "examples" / "hello.py") + ":agent",
            "--port",
            "0",
            "--path",
            "/agent",
            "--inspector",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = _announced(process)
        page = httpx.get(url, headers={"accept": "text/html"}, timeout=SERVER_SECONDS)
        assert page.status_code == 200
        assert page.text == inspector.page()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=SERVER_SECONDS)
        finally:
            if process.poll() is None:  # pragma: no cover - only when it hangs
                process.kill()
                process.wait(timeout=SERVER_SECONDS)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
    assert status == 0


_PAGE_FILES = ("index.html", "inspector.js", "inspector.css")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def _announced(process: subprocess.Popen[bytes]) -> str:
    """The URL `agui serve` prints once it listens."""
    assert process.stdout is not None
    deadline = time.monotonic() + SERVER_SECONDS
    line = b""
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        assert remaining > 0, "agui serve did not announce its address in time"
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if ready:
            byte = os.read(process.stdout.fileno(), 1)
            assert byte, "agui serve exited early"
            line += byte
    return line.decode().strip().removeprefix("agui: serving on ")


# -- the browser ---------------------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright gives each launch a fresh, empty profile directory of its own.
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclasses.dataclass
class Tab:
    """A page, with what it requested and any error it raised or logged."""

    page: Page
    shots: Path
    requests: list[Request] = dataclasses.field(default_factory=list[Request])
    problems: list[str] = dataclasses.field(default_factory=list[str])

    def on_request(self, request: Request) -> None:
        self.requests.append(request)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(f"console: {message.text}")

    def assert_clean(self, origin: str) -> None:
        """No errors in the page, and every request went to `origin`."""
        assert self.problems == []
        foreign = [r.url for r in self.requests if _origin(r.url) != _origin(origin)]
        assert foreign == []
        assert self.requests

    def posts(self) -> list[dict[str, Any]]:
        """The bodies of the page's POSTs of run input, in order (not those to the run routes)."""
        bodies: list[dict[str, Any]] = []
        for request in self.requests:
            if request.method == "POST" and "/runs/" not in request.url:
                body = request.post_data
                assert body is not None
                bodies.append(json.loads(body))
        return bodies


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture
def tab(browser: Browser, tmp_path: Path) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    seen = Tab(page, tmp_path)
    page.on("request", seen.on_request)
    page.on("console", seen.on_console)
    page.on("pageerror", lambda error: seen.problems.append(f"error: {error}"))
    try:
        yield seen
    finally:
        context.close()


@contextlib.contextmanager
def screenshot_on_failure(tab: Tab) -> Generator[None, None, None]:
    """Save a screenshot of the page under the test's tmp_path when the body fails."""
    try:
        yield
    except BaseException:
        shot = tab.shots / "failure.png"
        with contextlib.suppress(Exception):
            tab.page.screenshot(path=shot, full_page=True)
            print(f"screenshot of the failure: {shot}", file=sys.stderr)  # noqa: T201
        raise


def example(relative: str) -> ModuleType:
    path = ROOT / "examples" / relative
    return _load(f"inspector_example_{path.parent.name}", path)


def send(page: Page, text: str) -> None:
    box = page.get_by_label("Message", exact=True)
    box.fill(text)
    box.press("Enter")


def wait_outcome(page: Page, outcome: str) -> str:
    """Wait until the run outcome is `outcome`; return its words."""
    page.wait_for_selector(f'#outcome[data-outcome="{outcome}"]')
    return page.locator("#outcome").inner_text()


@needs_chromium
def test_a_travel_run_streams_its_answer_tool_calls_and_results(tab: Tab) -> None:
    app = agui.asgi_app(example("travel/app.py").agent, inspector=True)
    page = tab.page
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        send(page, TRAVEL_QUESTION)
        # Seen while it streams: the answer is written before the run is over.
        page.wait_for_selector("article.role-assistant.streaming")
        assert wait_outcome(page, "success") == "Finished: success."

        calls = page.locator("section.tool-call")
        assert calls.count() == 2
        weather, places = calls.nth(0), calls.nth(1)
        assert weather.locator(".call-name").inner_text() == "Tool call: get_weather"
        assert json.loads(weather.locator(".call-args").inner_text()) == {"location": "Paris"}
        assert json.loads(weather.locator(".call-result").inner_text())["location"] == "Paris"
        assert places.locator(".call-name").inner_text() == "Tool call: search_restaurants"
        assert json.loads(places.locator(".call-args").inner_text()) == {
            "location": "Paris",
            "cuisine": "italian",
        }
        restaurants = json.loads(places.locator(".call-result").inner_text())
        assert [place["cuisine"] for place in restaurants] == ["italian"] * 3
        assert weather.get_attribute("data-state") == places.get_attribute("data-state") == "done"
        answer = page.locator("article.role-assistant .content").last.inner_text()
        assert answer.startswith("In Paris it is ")
        assert "Italian restaurants worth a visit" in answer
        assert page.locator("article.role-user").inner_text().endswith(TRAVEL_QUESTION)

        log = page.locator("section.request")
        assert log.get_attribute("data-violations") == "0"
        assert page.locator(".events li.broken").count() == 0
        assert page.locator('.events li[data-type="TOOL_CALL_ARGS"]').count() >= 2
        assert page.locator('.events li[data-type="TEXT_MESSAGE_CONTENT"]').count() > 5
        [request] = tab.posts()
        assert request["messages"][0]["content"] == TRAVEL_QUESTION
        assert request["tools"] == []
        tab.assert_clean(url)


@needs_chromium
def test_a_supervisors_researcher_is_grouped_and_labelled_in_the_page(tab: Tab) -> None:
    supervisor = example("supervisor/app.py")
    app = agui.asgi_app(supervisor.agent, inspector=True)
    page = tab.page
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        send(page, supervisor.QUESTION)
        assert wait_outcome(page, "success") == "Finished: success."

        [request] = tab.posts()
        sub = f"{request['runId']}-sub-1"
        head = page.locator("h3.subagent-head")
        assert head.count() == 1
        assert head.inner_text() == f"Subagent researcher ({sub}): finished"
        assert head.get_attribute("data-status") == "finished"
        grouped = page.locator(f'article.in-subagent[data-subagent-run-id="{sub}"]')
        assert grouped.count() == 2  # the researcher's call to its notes, and its answer
        assert grouped.first.locator(".call-name").inner_text() == "Tool call: look_up_project"
        assert "14 March 2027" in grouped.last.locator(".content").inner_text()
        assert grouped.last.locator(".who").inner_text() == f"Assistant · subagent {sub}"
        answer = page.locator("article.role-assistant:not(.in-subagent) .content").last
        assert answer.inner_text().startswith("Here is what my researcher found:")
        assert page.locator('.events li[data-type="SUBAGENT_STARTED"]').count() == 1
        assert page.locator("section.request").get_attribute("data-violations") == "0"
        assert request["protocolVersion"] == "1.0"
        tab.assert_clean(url)


@needs_chromium
def test_a_task_board_delete_is_approved_in_the_page(tab: Tab) -> None:
    board = example("task_board/app.py")
    app = agui.asgi_app(board.agent, state=board.Board, inspector=True)
    page = tab.page
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        page.locator("#settings summary").click()
        page.get_by_label("Offer tools (JSON list)").fill(BOARD_TOOLS)
        send(page, "add buy milk, call mum")
        wait_outcome(page, "success")
        added = json.loads(page.locator("#state").inner_text())
        assert [task["title"] for task in added["tasks"]] == ["buy milk", "call mum"]

        send(page, "delete 1")
        words = wait_outcome(page, "interrupt")
        assert words.startswith("Interrupted: the agent is waiting for your answer")
        question = page.locator("fieldset.interrupt")
        assert question.locator(".interrupt-message").inner_text() == "Delete task #1 'buy milk'?"
        question.get_by_role("button", name="Approve").click()

        wait_outcome(page, "success")
        state = json.loads(page.locator("#state").inner_text())
        assert [task["title"] for task in state["tasks"]] == ["call mum"]
        assert "Deleted #1 buy milk." in page.locator("#conversation").inner_text()
        thoughts = page.locator("article.role-reasoning details")
        assert thoughts.count() >= 1
        assert thoughts.first.get_attribute("open") is None  # folded away until asked for
        assert page.locator("#interrupt-form").is_hidden()

        first, second, resumed = tab.posts()
        assert [tool["name"] for tool in first["tools"]] == json.loads(BOARD_TOOLS)
        assert "state" not in first
        assert (second["state"], resumed["state"]) == (added, added)
        assert len({first["runId"], second["runId"], resumed["runId"]}) == 3
        assert first["threadId"] == second["threadId"] == resumed["threadId"]
        [entry] = resumed["resume"]
        assert entry["interruptId"].startswith("approve-")
        assert (entry["status"], entry["payload"]) == ("resolved", {"approved": True})
        for section in page.locator("section.request").all():
            assert section.get_attribute("data-violations") == "0"
        tab.assert_clean(url)


@needs_chromium
def test_stop_aborts_the_request_and_the_server_cancels_the_run(tab: Tab) -> None:
    unwound = threading.Event()
    seen: list[str] = []
    told: list[str] = []

    async def slow(ctx: agui.RunContext[Any]) -> None:
        try:
            with ctx.message() as message:
                for n in range(400):
                    message.delta(f"word{n} ")
                    await asyncio.sleep(0.05)
        except BaseException as error:
            seen.append(type(error).__name__)
            raise
        finally:
            unwound.set()

    app = agui.asgi_app(slow, inspector=True, on_disconnect=lambda i: told.append(i.run_id))
    page = tab.page
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        send(page, "Take your time")
        page.wait_for_function(
            "() => (document.querySelector('article.role-assistant .content') || {})"
            ".textContent?.includes('word3')"
        )
        page.get_by_role("button", name="Stop").click()
        assert wait_outcome(page, "aborted").startswith("Stopped: you aborted the request")

        assert unwound.wait(SERVER_SECONDS), "the run did not unwind after the client left"
        assert seen == ["CancelledError"]
        deadline = time.monotonic() + SERVER_SECONDS
        while not told and time.monotonic() < deadline:
            time.sleep(0.01)
        [request] = tab.posts()
        assert told == [request["runId"]]
        assert page.get_by_role("button", name="Send").is_enabled()
        assert page.get_by_role("button", name="Stop").is_disabled()
        tab.assert_clean(url)


@needs_chromium
def test_stop_on_a_durable_run_cancels_it_on_the_server_and_reads_it_to_its_end(tab: Tab) -> None:
    unwound = threading.Event()
    seen: list[str] = []

    async def slow(ctx: agui.RunContext[Any]) -> None:
        try:
            with ctx.message() as message:
                for n in range(400):
                    message.delta(f"word{n} ")
                    await asyncio.sleep(0.05)
        except BaseException as error:
            seen.append(type(error).__name__)
            raise
        finally:
            unwound.set()

    app = agui.asgi_app(slow, inspector=True, runs=MemoryRunLog())
    page = tab.page
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        send(page, "Take your time")
        page.wait_for_function(
            "() => (document.querySelector('article.role-assistant .content') || {})"
            ".textContent?.includes('word3')"
        )
        page.get_by_role("button", name="Stop").click()
        assert wait_outcome(page, "cancelled").startswith("Cancelled: the run stopped on purpose")

        assert unwound.wait(SERVER_SECONDS), "the run did not unwind after the cancel"
        assert seen == ["CancelledError"]
        [posted] = tab.posts()
        cancels = [r.url for r in tab.requests if r.method == "POST" and "/cancel" in r.url]
        assert cancels == [f"{url}/runs/{posted['runId']}/cancel"]
        assert page.get_by_role("button", name="Send").is_enabled()
        tab.assert_clean(url)


@needs_chromium
def test_the_authorization_field_goes_with_the_run_and_with_its_cancel(tab: Tab) -> None:
    seen: list[str | None] = []

    def authorize(headers: Mapping[str, str]) -> bool:
        seen.append(headers.get("authorization"))
        return headers.get("authorization") == "Bearer k"

    async def slow(ctx: agui.RunContext[Any]) -> None:
        with ctx.message() as message:
            for n in range(400):
                message.delta(f"word{n} ")
                await asyncio.sleep(0.05)

    app = agui.asgi_app(slow, inspector=True, runs=MemoryRunLog(), authorize=authorize)
    page = tab.page
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        page.locator("#auth").evaluate("(field) => { field.value = ' Bearer k ' }")
        send(page, "Take your time")
        page.wait_for_function(
            "() => (document.querySelector('article.role-assistant .content') || {})"
            ".textContent?.includes('word3')"
        )
        page.get_by_role("button", name="Stop").click()
        assert wait_outcome(page, "cancelled").startswith("Cancelled: the run stopped on purpose")

        cancels = [r for r in tab.requests if r.method == "POST" and "/cancel" in r.url]
        assert [r.headers.get("authorization") for r in cancels] == ["Bearer k"]
        assert seen == ["Bearer k", "Bearer k"]  # the run's POST, then its cancel
        tab.assert_clean(url)


@needs_chromium
def test_a_reload_mid_run_reattaches_to_the_durable_run_and_shows_it_once(tab: Tab) -> None:
    release = threading.Event()

    async def halting(ctx: agui.RunContext[Any]) -> None:
        with ctx.message() as message:
            message.delta("before the reload. ")
            await asyncio.to_thread(release.wait, SERVER_SECONDS)  # the test's thread sets it
            message.delta("after the reload.")

    app = agui.asgi_app(halting, inspector=True, runs=MemoryRunLog())
    page = tab.page
    try:
        with serving(app) as url, screenshot_on_failure(tab):
            page.goto(url + "/")
            send(page, "Survive a reload")
            page.wait_for_function(
                "() => (document.querySelector('article.role-assistant .content') || {})"
                ".textContent?.includes('before the reload')"
            )
            page.reload()
            notice = page.locator("#reattached")
            notice.wait_for(state="visible")
            [posted] = tab.posts()
            run_id = posted["runId"]
            assert notice.inner_text().startswith(f"Reattached after a reload: run {run_id}")
            assert page.locator("#thread-id").inner_text() == posted["threadId"]
            page.wait_for_function(
                "() => (document.querySelector('article.role-assistant .content') || {})"
                ".textContent?.includes('before the reload')"
            )
            assert page.locator("#outcome").get_attribute("data-outcome") == "running"
            release.set()
            assert wait_outcome(page, "success").startswith("Finished: success.")

            assert page.locator("article.role-user .content").all_inner_texts() == [
                "Survive a reload"
            ]
            assert page.locator("article.role-assistant .content").all_inner_texts() == [
                "before the reload. after the reload."
            ]
            [section] = page.locator("section.request").all()  # the POST's went with the reload
            heading = section.locator("h3").inner_text()
            assert heading == f"Request 1: GET run {run_id} (reattached after a reload)"
            types = section.locator("ol.events > li").evaluate_all(
                "(items) => items.map((item) => item.dataset.type)"
            )
            assert (types[0], types[-1], types.count("TEXT_MESSAGE_CONTENT")) == (
                "RUN_STARTED",
                "RUN_FINISHED",
                2,
            )
            assert section.get_attribute("data-violations") == "0"
            reads = [r.url for r in tab.requests if r.method == "GET" and "/runs/" in r.url]
            assert reads == [f"{url}/runs/{run_id}/events"]

            send(page, "And after it")  # the thread goes on from what the reload restored
            wait_outcome(page, "success")
            assert notice.is_hidden()
            _, second = tab.posts()
            assert second["threadId"] == posted["threadId"]
            assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
            assert second["messages"][1]["content"] == "before the reload. after the reload."
            tab.assert_clean(url)
    finally:
        release.set()


@needs_chromium
def test_a_reload_on_an_endpoint_without_runs_starts_afresh(tab: Tab) -> None:
    page = tab.page
    app = agui.asgi_app(hello, inspector=True)
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        thread = page.locator("#thread-id").inner_text()
        send(page, "Hi")
        wait_outcome(page, "success")
        assert page.evaluate("() => sessionStorage.length") == 0
        page.reload()
        page.locator("#thread-id").wait_for()
        assert page.locator("#thread-id").inner_text() not in ("", thread)
        assert page.locator("#conversation article").count() == 0
        assert page.locator("#outcome").get_attribute("data-outcome") == "none"
        assert page.locator("#reattached").is_hidden()
        assert page.locator("section.request").count() == 0
        assert [r.url for r in tab.requests if "/runs/" in r.url] == []
        tab.assert_clean(url)


@needs_chromium
def test_a_reload_after_the_run_expired_says_so_and_keeps_the_conversation(tab: Tab) -> None:
    page = tab.page
    app = agui.asgi_app(hello, inspector=True, runs=MemoryRunLog())
    record = {
        "runId": "gone",
        "threadId": "t-kept",
        "messages": [{"id": "m1", "role": "user", "content": "Still here"}],
        "lastEventId": "4",
    }
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        page.evaluate(
            "(record) => sessionStorage.setItem(`agui-inspector:${location.pathname}`,"
            " JSON.stringify(record))",
            record,
        )
        page.reload()
        assert wait_outcome(page, "http-error").startswith("HTTP 404 RUN_NOT_FOUND: no run 'gone'")
        assert "had read it through event 4" in page.locator("#reattached").inner_text()
        assert page.locator("#thread-id").inner_text() == "t-kept"
        assert page.locator("article.role-user .content").all_inner_texts() == ["Still here"]
        assert page.evaluate("() => sessionStorage.length") == 0  # the next reload starts afresh
        assert page.get_by_role("button", name="Send").is_enabled()
        assert [p for p in tab.problems if "404" not in p] == []  # Chromium logs the 404


@needs_chromium
def test_a_refused_request_shows_its_status_and_code(tab: Tab) -> None:
    page = tab.page
    app = agui.asgi_app(hello, inspector=True, max_body_bytes=64)
    with serving(app) as url, screenshot_on_failure(tab):
        page.goto(url + "/")
        page.locator("#settings summary").click()
        tools = page.get_by_label("Offer tools (JSON list)")
        tools.fill('["add_task",')
        send(page, "a message that makes the request body larger than 64 bytes")
        assert page.locator("#tools-error").inner_text().startswith("Not JSON")
        assert tab.posts() == []
        assert page.locator("#tools").evaluate("(node) => node === document.activeElement")

        tools.fill('[{"description": "no name"}]')
        page.get_by_role("button", name="Send").click()
        assert "is neither" in page.locator("#tools-error").inner_text()
        tools.fill("[]")
        page.get_by_role("button", name="Send").click()
        words = wait_outcome(page, "http-error")
        assert words.startswith("HTTP 413 BODY_TOO_LARGE: the request body is larger")
        summary = page.locator(".log-summary").inner_text()
        assert summary == "No event stream was read: see the run outcome."
        assert page.get_by_role("button", name="Send").is_enabled()


# -- the page against a server that is not agui: the conformance corpus --------------------------


@pytest.fixture(scope="module")
def replayed() -> Iterator[tuple[ReplayApp, str]]:
    corpus.require()  # the replayed streams are the corpus's: without it, one line says so
    app = replay.ReplayApp()
    with serving(app) as url:
        yield app, url


@needs_chromium
@pytest.mark.parametrize(
    ("name", "options", "rule"),
    [
        ("content-without-start-fatal", "", "message-not-open"),
        ("event-after-run-finished-fatal", "?crlf=1", "event-after-run-finished"),
        ("first-event-not-run-started-fatal", "?split=7", "first-event-not-run-started"),
        ("open-message-at-run-finished-fatal", "?crlf=1&split=5", "open-blocks-at-run-finished"),
        ("custom-closes-chunk-stream-fatal", "", "chunk-missing-id"),
        ("subagent-attribution-mismatch-fatal", "", "subagent-attribution-mismatch"),
        ("nested-run-started-fatal", "", "nested-run-started"),
    ],
)
def test_a_replayed_stream_that_breaks_a_rule_is_marked(
    tab: Tab, replayed: tuple[ReplayApp, str], name: str, options: str, rule: str
) -> None:
    page = tab.page
    _, url = replayed
    with screenshot_on_failure(tab):
        page.goto(f"{url}/{name}{options}")
        send(page, "replay it")
        page.wait_for_selector("#send:not([disabled])")
        page.wait_for_selector("section.request[data-violations]")

        marked = page.locator(f'.events li[data-rule="{rule}"]')
        assert marked.count() == 1
        assert f"⚠ violation: {rule}" in marked.inner_text()
        expect = replay.fixture(name)["expect"]
        assert expect["errorContains"] in marked.inner_text()
        summary = page.locator(".log-summary").inner_text()
        assert re.match(r"\d+ protocol problems? in this stream", summary)
        tab.assert_clean(url)


@needs_chromium
def test_a_conformant_replayed_stream_is_marked_nowhere(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    page = tab.page
    app, url = replayed
    with screenshot_on_failure(tab):
        page.goto(f"{url}/conformant-run-is-quiet?crlf=1&split=3")
        send(page, "replay it")
        assert wait_outcome(page, "success") == "Finished: success."

        assert page.locator(".mark").count() == 0
        assert "⚠" not in page.locator("#log").inner_text()
        assert page.locator(".log-summary").inner_text() == "No protocol violations in this stream."
        assert page.locator(".events li").count() == 9
        assert json.loads(page.locator("#state").inner_text()) == {"answered": True}
        assert page.locator("article.role-assistant .content").inner_text() == "Hello, world."
        assert app.requests[-1]["messages"][-1]["content"] == "replay it"
        tab.assert_clean(url)


@needs_chromium
@pytest.mark.parametrize(
    ("name", "outcome", "words"),
    [
        (
            "run-error-first-run-continues",
            "error",
            "Error UNAVAILABLE: run-error-first: the agent was unreachable.",
        ),
        ("run-finished-cancelled-outcome-accepted", "cancelled", "Cancelled: the run stopped"),
        ("late-run-error-after-finished-run-continues", "error", "Error: late-run-error: the"),
        ("truncated-run-reported-as-completed", "truncated", "Ended without a terminal event"),
    ],
)
def test_the_outcome_of_a_replayed_run_is_put_in_words(
    tab: Tab, replayed: tuple[ReplayApp, str], name: str, outcome: str, words: str
) -> None:
    page = tab.page
    _, url = replayed
    with screenshot_on_failure(tab):
        page.goto(f"{url}/{name}")
        send(page, "replay it")

        assert wait_outcome(page, outcome).startswith(words)


@needs_chromium
def test_an_interrupt_is_declined_with_a_payload_from_the_page(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    page = tab.page
    app, url = replayed
    with screenshot_on_failure(tab):
        page.goto(f"{url}/run-finished-interrupt-outcome-accepted")
        send(page, "may I?")
        wait_outcome(page, "interrupt")
        question = page.locator('fieldset[data-interrupt-id="run-finished-interrupt-i-1"]')
        message = "Approve the transfer before the run continues."
        assert question.locator(".interrupt-message").inner_text() == message
        payload = question.get_by_label("Payload (optional JSON)")
        payload.fill("{not json")
        question.get_by_role("button", name="Decline").click()
        assert question.locator(".answer").inner_text().startswith("The payload is not JSON")
        payload.fill('{"reason": "too much"}')
        question.get_by_role("button", name="Decline").click()

        wait_outcome(page, "interrupt")  # the replay asks the same question again
        assert app.requests[-1]["resume"] == [
            {
                "interruptId": "run-finished-interrupt-i-1",
                "status": "resolved",
                "payload": {"reason": "too much", "approved": False},
            }
        ]
        assert [m["role"] for m in app.requests[-1]["messages"]] == ["user", "assistant"]


@needs_chromium
def test_the_page_judges_the_whole_corpus_as_agui_does(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    """The page's port of the rules reaches agui's verdict on every fixture, rule for rule."""
    page = tab.page
    _, url = replayed
    page.goto(f"{url}/conformant-run-is-quiet")
    names = sorted(replay.STREAMS)
    streams = [replay.fixture(name)["stream"] for name in names]
    marks = cast(
        "list[list[dict[str, Any]]]",
        page.evaluate("(streams) => streams.map((s) => aguiInspector.checkStream(s))", streams),
    )

    for name, stream, found in zip(names, streams, marks, strict=True):
        broken = [mark for mark in found if mark["kind"] in ("violation", "malformed")]
        verdict = _agui_verdict(stream)
        if verdict is None:
            assert broken == [], name
        elif verdict == "malformed":
            assert broken, name
            assert broken[0]["kind"] == "malformed", name
        else:
            assert broken, name
            assert (broken[0]["kind"], broken[0]["rule"]) == ("violation", verdict), name


@needs_chromium
def test_the_page_refuses_a_run_id_the_stream_has_already_run_as_agui_does(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    page = tab.page
    _, url = replayed
    page.goto(f"{url}/conformant-run-is-quiet")
    run = [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
    ]
    for stream in (run + run, [*run, {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}]):
        marks = cast(
            "list[dict[str, Any]]", page.evaluate("(s) => aguiInspector.checkStream(s)", stream)
        )
        broken = [(mark["rule"], mark["message"]) for mark in marks if mark["kind"] == "violation"]
        assert broken[:1] == [_agui_refusal(stream)]


def _agui_refusal(stream: list[dict[str, str]]) -> tuple[str, str] | None:
    """The rule and message of agui's first refusal of a stream of valid events, if any."""
    verifier = Verifier()
    try:
        for event in map(parse_event, stream):
            verifier.observe(event)
        verifier.finish()
    except ProtocolViolation as violation:
        return violation.rule.value, str(violation)
    return None


FOLD_DIFFERENCES = {
    "unknown-part-in-message-list": (
        "the client strips a content part of an unknown type; the page shows what was sent"
    ),
}
"""Fixtures whose messages the page shows otherwise than the reference client, on purpose."""


@needs_chromium
def test_the_page_applies_the_corpus_as_the_reference_client_does(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    """Messages and state after each accepted stream are the ones the fixture expects."""
    page = tab.page
    _, url = replayed
    page.goto(f"{url}/conformant-run-is-quiet")
    names = [name for name in sorted(replay.STREAMS) if name not in FOLD_DIFFERENCES]
    expects = [_expectation(replay.fixture(name)) for name in names]
    streams = [replay.fixture(name)["stream"] for name in names]
    folded = json.loads(
        cast(
            "str",
            page.evaluate(
                "(t) => JSON.stringify(JSON.parse(t).map((s) => aguiInspector.foldStream(s)))",
                json.dumps(streams),
            ),
        )
    )
    checked = 0
    for name, expect, ui in zip(names, expects, folded, strict=True):
        if expect["outcome"] != "completed":
            continue
        if "messageCount" in expect:
            assert len(ui["messages"]) == expect["messageCount"], name
        for wanted, held in zip(expect.get("messages", []), ui["messages"], strict=False):
            assert {key: held.get(key) for key in wanted} == wanted, name
        assert len(ui["messages"]) >= len(expect.get("messages", [])), name
        if "state" in expect:
            assert ui.get("state") == expect["state"], name
        checked += "messages" in expect or "state" in expect
    assert checked > 30


def _expectation(fixture: Mapping[str, Any]) -> dict[str, Any]:
    """The TypeScript client's verdict: the base expectation with its override, if any."""
    overrides: Mapping[str, Any] = fixture.get("expectOverrides", {})
    return {**fixture["expect"], **overrides.get("typescript", {})}


def _agui_verdict(stream: list[Mapping[str, Any]]) -> str | None:
    """agui's verdict on a stream: the first rule it breaks, "malformed", or None."""
    verifier = Verifier()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            events: list[Event] = []
            for raw in stream:
                with contextlib.suppress(UnknownEventType):
                    events.append(parse_event(raw))
    except MalformedEvent:
        return "malformed"
    try:
        for event in events:
            verifier.observe(event)
        verifier.finish()
    except ProtocolViolation as violation:
        return Rule(violation.rule).value
    return None


# -- the page's own pieces -----------------------------------------------------------------------


@needs_chromium
def test_the_sse_parser_finds_the_same_frames_however_the_bytes_are_cut(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    page = tab.page
    _, url = replayed
    page.goto(f"{url}/conformant-run-is-quiet")
    text = (
        'data: {"a":"é€𝄞"}\n\n: ping\n\ndata:{"b":1}\r\n\r\nevent: x\r\ndata: {"c":\r\ndata: 2}\r\n'
        '\r\nid: 7\rdata: {"d":"\\r"}\r\rdata: {"e":[]}\n\ndata: {"unfinished":'
    )
    expected = ['{"a":"é€𝄞"}', '{"b":1}', '{"c":\n2}', '{"d":"\\r"}', '{"e":[]}']
    encoded = list(text.encode())
    script = """([bytes, size]) => {
        const frames = [];
        const parser = new aguiInspector.SSEParser((data) => frames.push(data));
        for (let at = 0; at < bytes.length; at += size) {
            parser.push(new Uint8Array(bytes.slice(at, at + size)));
        }
        return {frames, rest: parser.end(), comments: parser.comments};
    }"""
    for size in (1, 2, 3, 5, 8, len(encoded)):
        result = page.evaluate(script, [encoded, size])
        assert result == {"frames": expected, "rest": 'data: {"unfinished":', "comments": 1}, size


@needs_chromium
def test_json_patch_in_the_page_agrees_with_agui_patch(
    tab: Tab, replayed: tuple[ReplayApp, str]
) -> None:
    page = tab.page
    _, url = replayed
    page.goto(f"{url}/conformant-run-is-quiet")
    rng = random.Random(6902)  # noqa: S311 - test data, not secrets
    edges: list[tuple[JsonValue, list[dict[str, JsonValue]]]] = [
        ({"a/b": 1, "m~n": 2}, [{"op": "move", "from": "/a~1b", "path": "/m~0n"}]),
        ({"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}]),
        ({"a": [1, 2]}, [{"op": "remove", "path": "/a/-"}]),
        ({"a": [1, 2]}, [{"op": "replace", "path": "/a/01", "value": 0}]),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/b"}]),
        ({"a": 1}, [{"op": "test", "path": "/a", "value": True}]),
        ({"a": 1}, [{"op": "copy", "from": "/a", "path": ""}]),
        ({"a": 1}, [{"op": "remove", "path": ""}]),
        ({"a": 1}, [{"op": "add", "path": "a", "value": 2}]),
        ({"a": 1}, [{"op": "add", "path": "/~2", "value": 2}]),
        ({}, [{"op": "add", "path": "/__proto__", "value": {"x": 1}}]),
    ]
    cases = [_patch_case(rng) for _ in range(600)] + edges
    # JSON both ways: Playwright's own serializer drops a "__proto__" member.
    answered = page.evaluate(
        """(text) => JSON.stringify(JSON.parse(text).map(([doc, ops]) => {
            try { return {doc: aguiInspector.applyPatch(doc, ops).doc}; }
            catch (error) { return {error: error.message}; }
        }))""",
        json.dumps(cases),
    )
    results: list[dict[str, Any]] = json.loads(cast("str", answered))

    for (doc, ops), result in zip(cases, results, strict=True):
        try:
            expected = apply(doc, ops)
        except PatchError:
            assert "error" in result, (doc, ops, result)
        else:
            assert "doc" in result, (doc, ops, result)
            assert result["doc"] == expected, (doc, ops)


def _patch_case(rng: random.Random) -> tuple[JsonValue, list[dict[str, JsonValue]]]:
    doc = _random_json(rng, 3)
    ops: list[dict[str, JsonValue]] = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(["add", "remove", "replace", "move", "copy", "test"])
        op: dict[str, JsonValue] = {"op": name, "path": _random_pointer(rng, doc)}
        if name in ("add", "replace", "test"):
            op["value"] = _random_json(rng, 1)
            if name == "test" and rng.random() < 0.5:
                with contextlib.suppress(PatchError):
                    op["value"] = apply(doc, [{"op": "copy", "from": op["path"], "path": ""}])
        if name in ("move", "copy"):
            op["from"] = _random_pointer(rng, doc)
        ops.append(op)
    return doc, ops


_KEYS = ["a", "b", "x/y", "m~n", "", "0", "-"]


def _random_json(rng: random.Random, depth: int) -> JsonValue:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice([None, True, False, 0, 1, 7, "s", "", "t~/"])
    if roll < 0.65:
        return {rng.choice(_KEYS): _random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))}
    return [_random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))]


def _random_pointer(rng: random.Random, doc: JsonValue) -> str:
    """A pointer that usually exists in `doc`, sometimes one step past it or beside it."""
    tokens: list[str] = []
    node = doc
    while rng.random() < 0.7:
        if isinstance(node, dict) and node:
            key = rng.choice(sorted(node))
            tokens.append(key)
            node = node[key]
        elif isinstance(node, list) and node:
            index = rng.randrange(len(node))
            tokens.append(str(index))
            node = node[index]
        else:
            break
    if rng.random() < 0.3:
        tokens.append(rng.choice([*_KEYS, "-", "1", "5", "01"]))
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


@contextlib.contextmanager
def serving(app: Any) -> Generator[str, None, None]:
    """Serve `app` with uvicorn on 127.0.0.1 in a thread; yield its URL; stop it."""
    with replay.serving(app) as url:
        yield cast("str", url)
