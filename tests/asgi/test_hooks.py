"""The application's hooks failing: a JSON 500 naming the hook, and the error logged."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Mapping
from typing import Any, cast

import pytest
from typing_extensions import Never

from agui.asgi import asgi_app
from agui.capabilities import AgentCapabilities
from agui.transform import FilterToolCalls, Transformer
from asgi_calls import (
    SITE,
    Ctx,
    Exchange,
    call,
    drive,
    hello,
)

# -- the application's hooks failing --------------------------------------------------------------

ORIGIN = {**SITE, "origin": "https://app.example"}


def assert_hook_failed(exchange: Exchange, hook: str, error: str) -> None:
    assert exchange.status == 500
    assert exchange.json() == {
        "code": "HOOK_FAILED",
        "message": f"the endpoint's {hook} hook raised {error}; "
        "the traceback is on the agui.asgi log",
    }
    assert exchange.headers["access-control-allow-origin"] == "https://app.example"


def test_an_authorize_hook_that_raises_is_a_json_500_naming_it_and_its_error_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def authorize(headers: Mapping[str, str]) -> bool:
        return headers["x-api-key"] == "secret"

    app = asgi_app(hello, authorize=authorize, allowed_origins=["https://app.example"])
    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "authorize", "KeyError")
    assert "x-api-key" not in exchange.body.decode()
    assert exchange.reads == 0
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in failed] == [
        "the endpoint's authorize hook raised; answering 500"
    ]
    assert failed[0].exc_info is not None
    assert isinstance(failed[0].exc_info[1], KeyError)


def test_an_async_authorize_hook_that_raises_is_a_json_500() -> None:
    async def authorize(_headers: Mapping[str, str]) -> bool:
        await asyncio.sleep(0)
        message = "the key store is down"
        raise ConnectionError(message)

    app = asgi_app(hello, authorize=authorize, allowed_origins=["https://app.example"])
    exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "authorize", "ConnectionError")
    assert "key store" not in exchange.body.decode()


@pytest.mark.parametrize("raised", [KeyboardInterrupt, SystemExit, asyncio.CancelledError])
@pytest.mark.parametrize("hook", ["authorize", "transformers"])
def test_a_hook_raising_a_base_exception_of_its_own_is_a_json_500_too(
    hook: str, raised: type[BaseException]
) -> None:
    def failing(*_: object) -> Never:
        raise raised

    options: dict[str, Any] = {hook: failing, "allowed_origins": ["https://app.example"]}
    if hook == "authorize" and raised is asyncio.CancelledError and sys.version_info < (3, 11):
        # Python 3.10 cannot tell the hook's CancelledError from the request's own cancellation
        # (agui._util.tasks), so the request ends cancelled, as a cancelled request must.
        with pytest.raises(asyncio.CancelledError):
            drive(call(asgi_app(hello, **options), headers=ORIGIN))
        return
    exchange = drive(call(asgi_app(hello, **options), headers=ORIGIN))

    assert_hook_failed(exchange, hook, raised.__qualname__)


def test_a_request_cancelled_while_its_async_authorize_hook_waits_stays_cancelled() -> None:
    entered = asyncio.Event()

    async def authorize(_headers: Mapping[str, str]) -> bool:
        entered.set()
        await asyncio.sleep(30)  # the server shuts down meanwhile
        return True

    app = asgi_app(hello, authorize=authorize)

    async def main() -> bool:
        request = asyncio.ensure_future(call(app))
        await entered.wait()
        request.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await request
        return request.cancelled()

    assert drive(main()) is True


def test_a_transformer_factory_that_raises_is_a_json_500_and_the_agent_never_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    async def agent(ctx: Ctx) -> None:
        ran.append(ctx.run_id)

    def factory() -> list[Transformer]:
        message = "no chain today"
        raise RuntimeError(message)

    app = asgi_app(agent, transformers=factory, allowed_origins=["https://app.example"])
    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "transformers", "RuntimeError")
    assert ran == []
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        "the endpoint's transformers hook raised; answering 500"
    ]


def test_a_transformer_factory_that_returns_one_transformer_is_a_500_with_the_fix_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chain = FilterToolCalls({"lookup"})
    app = asgi_app(
        hello,
        transformers=lambda: cast("list[Transformer]", chain),
        allowed_origins=["https://app.example"],
    )
    with caplog.at_level(logging.ERROR, logger="agui.asgi"):
        exchange = drive(call(app, headers=ORIGIN))

    assert_hook_failed(exchange, "transformers", "UsageError")
    logged = caplog.records[-1].exc_info
    assert logged is not None
    assert "got one FilterToolCalls: pass [transformer]" in str(logged[1])


def test_a_capabilities_function_that_raises_or_returns_another_type_is_a_json_500() -> None:
    def failing(_derived: AgentCapabilities) -> AgentCapabilities:
        message = "no name yet"
        raise LookupError(message)

    def wrong(_derived: AgentCapabilities) -> AgentCapabilities:
        return cast("AgentCapabilities", {"transport": {}})

    raised, returned = (
        drive(
            call(
                asgi_app(hello, capabilities=declare, allowed_origins=["https://app.example"]),
                method="GET",
                path="/capabilities",
                headers=ORIGIN,
            )
        )
        for declare in (failing, wrong)
    )

    assert_hook_failed(raised, "capabilities", "LookupError")
    assert_hook_failed(returned, "capabilities", "UsageError")


def test_a_capabilities_function_is_not_called_for_a_request_authorize_refuses() -> None:
    called: list[AgentCapabilities] = []

    def declare(
        derived: AgentCapabilities,
    ) -> AgentCapabilities:
        called.append(derived)
        return derived

    app = asgi_app(hello, capabilities=declare, authorize=lambda _headers: False)
    refused = drive(call(app, method="GET", path="/capabilities"))

    assert refused.status == 401
    assert called == []
