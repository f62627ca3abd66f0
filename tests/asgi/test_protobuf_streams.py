"""Streaming a run in the protobuf binding, and when the binding is offered."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest

from agui import UsageError
from agui.asgi import asgi_app
from agui.asgi._admission import Message
from agui.events import (
    CustomEvent,
    EventType,
)
from agui.proto import PROTO_MEDIA_TYPE, decode_proto
from asgi_calls import PING, PROTO_HEADERS, SSE, Ctx, Exchange, call, drive, hello

# -- the protobuf binding ----------------------------------------------------------------------


def test_a_proto_run_streams_length_prefixed_frames_with_no_buffering_headers() -> None:
    exchange = drive(call(asgi_app(hello), headers=PROTO_HEADERS))

    assert exchange.status == 200
    assert exchange.headers == {
        "content-type": "application/vnd.ag-ui.event+proto",
        "cache-control": "no-cache, no-store, no-transform",
        "x-accel-buffering": "no",
        "vary": "Accept",
    }
    assert [e.type for e in exchange.proto_events()] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_FINISHED,
    ]
    first = exchange.bodies[0]
    assert int.from_bytes(first[:4], "big") < len(first)


def test_a_proto_stream_coalesces_queued_events_into_one_send() -> None:
    async def main() -> Exchange:
        proceed = asyncio.Event()

        async def agent(ctx: Ctx) -> None:
            ctx.say("one")
            ctx.say("two")
            await proceed.wait()
            ctx.say("three")

        def on_send(message: Message, _exchange: Exchange) -> None:
            if message["type"] == "http.response.body":
                proceed.set()

        return await call(asgi_app(agent), headers=PROTO_HEADERS, on_send=on_send)

    exchange = drive(main())

    assert [len(decode_proto(body)) for body in exchange.bodies] == [7, 4, 0]
    assert len(exchange.proto_events()) == 11


def test_an_idle_proto_stream_gets_no_keepalive_pings() -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("thinking")
        await asyncio.sleep(0.1)
        ctx.say("done")

    exchange = drive(call(asgi_app(agent, keepalive=0.01), headers=PROTO_HEADERS))

    assert PING not in exchange.bodies
    assert [e.type for e in exchange.proto_events()].count("TEXT_MESSAGE_START") == 2


def test_an_event_the_binary_binding_cannot_write_ends_the_stream_with_run_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def agent(ctx: Ctx) -> None:
        ctx.say("before")
        ctx.emit(CustomEvent(name="huge", value=10**400))
        await asyncio.sleep(10)

    exchange = drive(call(asgi_app(agent), headers=PROTO_HEADERS))

    events = [event for body in exchange.bodies for event in decode_proto(body)]
    assert [e.type for e in events] == [
        EventType.RUN_STARTED,
        EventType.TEXT_MESSAGE_START,
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TEXT_MESSAGE_END,
        EventType.RUN_ERROR,
    ]
    assert events[-1].model_dump(mode="json")["code"] == "SERIALIZATION_ERROR"
    assert "a CUSTOM event could not be serialized" in caplog.text


def test_protobuf_is_offered_when_installed_and_not_when_turned_off() -> None:
    assert asgi_app(hello).media_types == (SSE, PROTO_MEDIA_TYPE)
    assert asgi_app(hello, protobuf=True).media_types == (SSE, PROTO_MEDIA_TYPE)
    assert asgi_app(hello, protobuf=False).media_types == (SSE,)


def test_protobuf_true_with_a_protobuf_too_old_names_the_one_it_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import google.protobuf  # noqa: PLC0415 - patched for this test only

    monkeypatch.setattr(google.protobuf, "__version__", "4.25.3")
    monkeypatch.delitem(sys.modules, "agui.proto._codec")

    with pytest.raises(
        UsageError,
        match=re.escape(
            "protobuf=True needs protobuf 5.26.1 or later, and protobuf 4.25.3 is installed: "
            'pip install --upgrade "protobuf>=5.26.1"'
        ),
    ):
        asgi_app(hello, protobuf=True)
    assert asgi_app(hello).media_types == (SSE,)


def test_without_the_extra_protobuf_is_left_out_unless_it_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if protobuf were not installed: the codec is the part of agui.proto that imports it.
    monkeypatch.setitem(sys.modules, "agui.proto._codec", None)

    app = asgi_app(hello)
    with pytest.raises(
        UsageError, match=r'protobuf=True needs .*pip install "agui-server\[proto\]"'
    ):
        asgi_app(hello, protobuf=True)

    assert app.media_types == (SSE,)
    assert drive(call(app, headers=PROTO_HEADERS)).status == 406
