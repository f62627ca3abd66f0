"""Building the app: its options, the agent and state checks, and the capabilities route."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, cast

import pytest
from pydantic import JsonValue

import agui
from agui import RunAgentInput, UsageError
from agui.asgi import asgi_app
from asgi_calls import (
    SITE,
    Ctx,
    call,
    drive,
    hello,
)

# -- options -----------------------------------------------------------------------------------


def test_the_package_reexports_asgi_app() -> None:
    assert agui.asgi_app is asgi_app


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"transformers": []}, "transformers must be a factory"),
        ({"max_body_bytes": 0}, "max_body_bytes must be a positive whole number of bytes, not 0"),
        ({"max_body_bytes": "1000"}, "max_body_bytes must be a positive whole number of bytes"),
        ({"max_body_bytes": True}, "max_body_bytes must be a positive whole number of bytes"),
        ({"max_buffered_bytes": 1.5}, "max_buffered_bytes must be a positive whole number"),
        ({"keepalive": "15"}, r"keepalive must be a positive number of seconds or None, not '15'"),
        ({"body_timeout": True}, "body_timeout must be a positive number of seconds, not True"),
        ({"cancel_grace": None}, "cancel_grace must be zero or more seconds, not None"),
        ({"debug": "0"}, "debug must be True or False, not '0'"),
        ({"inspector": 1}, "inspector must be True or False, not 1"),
        ({"protobuf": "yes"}, "protobuf must be True or False, or None, not 'yes'"),
        ({"authorize": True}, r"authorize must be a function \(sync or async\), not bool"),
        ({"on_disconnect": 5}, r"on_disconnect must be a function \(sync or async\), not int"),
        ({"protocol_version": "2.0"}, "protocol_version must be 'auto', '1.0' or '0.x', not '2.0'"),
        ({"runs": "memory"}, r"runs must be a run log from agui.runs, MemoryRunLog\(\) or Redis"),
        ({"capabilities": "yes"}, "capabilities must be None, True or False, an AgentCapabilities"),
        (
            {"debug": "no", "keepalive": -1},
            "debug must be True or False, not 'no'; keepalive must be a positive number",
        ),
        ({"keepalive": 0}, "keepalive must be a positive number of seconds or None, not 0"),
        ({"disconnect": "linger"}, "disconnect must be 'cancel' or 'detach', not 'linger'"),
        ({"cancel_grace": -1}, "cancel_grace must be zero or more seconds, not -1"),
        ({"body_timeout": 0}, "body_timeout must be a positive number of seconds, not 0"),
        (
            {"allowed_origins": ["app.example"]},
            "allowed_origins entry 'app.example' is not an origin: write it as a browser sends",
        ),
        (
            {"allowed_origins": ["https://app.example/x", "https://b.example?q", "http://a:x"]},
            (
                r"entry 'https://app.example/x' is not .*entry 'https://b.example\?q' is not .*"
                r"entry 'http://a:x' is not"
            ),
        ),
        ({"allowed_origins": ["https://u@a.example"]}, "'https://u@a.example' is not an origin"),
        ({"allowed_hosts": ["localhost:8000"]}, "allowed_hosts entry 'localhost:8000' is not"),
        ({"allowed_hosts": ["[::1]", ""]}, r"'\[::1\]' is not a host name.*'' is not a host"),
    ],
)
def test_bad_options_are_refused_when_the_app_is_built(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        asgi_app(hello, **options)


def test_something_that_is_not_an_agent_is_refused_as_every_entry_point_refuses_it() -> None:
    with pytest.raises(UsageError, match=r"int is not an agent: it is a int \(42\), which cannot"):
        asgi_app(42)  # type: ignore[arg-type]
    called = hello(cast("Ctx", None))
    with pytest.raises(
        UsageError,
        match=r"is not an agent: it is a coroutine, an agent already called: pass the function "
        r"itself, not a call",
    ):
        asgi_app(called)  # type: ignore[arg-type]
    called.close()


def test_a_state_that_is_not_a_type_is_refused_when_the_app_is_built() -> None:
    with pytest.raises(
        UsageError,
        match=r"the state type must be one the client's state can be read into .*, not a dict "
        r"\(\{'tasks': \[\]\}\); pass the class itself$",
    ):
        asgi_app(hello, state=cast("type[JsonValue]", {"tasks": []}))


def test_head_at_capabilities_answers_their_headers_without_a_body() -> None:
    exchange = drive(call(asgi_app(hello, capabilities=True), method="HEAD", path="/capabilities"))

    assert exchange.status == 200
    assert int(exchange.headers["content-length"]) > 0
    assert exchange.body == b""


def test_an_allowed_origin_reads_the_capabilities_and_why_a_post_there_is_refused() -> None:
    app = asgi_app(hello, allowed_origins=["https://app.example"])
    origin = {**SITE, "origin": "https://app.example"}
    served = drive(call(app, method="GET", path="/agent/capabilities/", headers=origin))
    posted = drive(call(app, path="/agent/capabilities", headers=origin))

    assert served.status == 200
    assert served.json()["humanInTheLoop"] == {"supported": True, "interrupts": True}
    assert served.headers["access-control-allow-origin"] == "https://app.example"
    assert posted.status == 405
    assert posted.headers["access-control-allow-origin"] == "https://app.example"


def test_a_function_agent_declares_no_tools_even_before_the_tool_loop_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "agui.agents.loop", raising=False)

    capabilities = asgi_app(hello).capabilities

    assert capabilities is not None
    assert capabilities.tools is None
    assert "agui.agents.loop" not in sys.modules


def test_a_plain_function_is_refused_when_the_app_is_built_as_run_refuses_it() -> None:
    def greet(ctx: agui.RunContext[object]) -> None:
        ctx.say("Hello!")

    with pytest.raises(
        UsageError, match="greet is not an agent: it is a function that is not async"
    ):
        asgi_app(greet)  # type: ignore[arg-type]
    with pytest.raises(
        UsageError, match="greet is not an agent: it is a function that is not async"
    ):
        asyncio.run(agui.testing.collect(greet, RunAgentInput(thread_id="t", run_id="r")))  # type: ignore[arg-type]
