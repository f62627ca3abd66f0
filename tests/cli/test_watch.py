"""`agui watch`: a live run shown as it streams, its raw form, and what it refuses."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping

import pytest

import agui
from agui.cli import (
    _watch,
    main,
)
from agui.testing import serving
from agui_command import (
    AGUI,
    BROKEN,
    ROOT,
    RUN,
    STARTUP_SECONDS,
    Asgi,
    agui_serve,
    hello_agent,
    replaying,
    run_verify,
    run_watch,
)


def test_watch_shows_the_task_board_served_by_agui_serve() -> None:
    """The agent is typed `RunContext[Board]`; `agui serve` reads the state type from that."""
    with agui_serve("examples/task_board/app.py:agent", cwd=ROOT) as url:
        completed = subprocess.run(  # noqa: S603 - the project's own console script
            [str(AGUI), "watch", url, "-m", "add buy milk, call mum", "--tool", "add_task",
             "--state", '{"tasks": [{"id": 1, "title": "water plants"}]}'],
            capture_output=True,
            text=True,
            timeout=STARTUP_SECONDS,
            check=False,
        )  # fmt: skip

    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[:3] == [
        "[Run Started]",
        "[Step Started: update the board]",
        "[Reasoning] The user wants 2 new task(s) on the board; one call each.",
    ]
    assert lines[3:6] == [
        '[Tool Call: add_task] {"title":"buy milk"}',
        (
            '[State Snapshot] {"tasks":[{"id":1,"title":"water plants","done":false},'
            '{"id":2,"title":"buy milk","done":false}]}'
        ),
        '[Tool Result: add_task] {"added":{"id":2,"title":"buy milk","done":false}}',
    ]
    assert lines[6].startswith('[Tool Call: add_task] {"title":"call mum"}')
    assert lines[7].startswith("[State Delta] [")
    assert "Added #2 buy milk, #3 call mum." in lines
    assert lines[-5].startswith('[Tool Call: render_a2ui] {"surfaceId":"task-board"}')
    assert lines[-4].startswith('[Tool Result: render_a2ui] {"a2ui_operations":[')
    assert lines[-3:] == [
        "[Step Finished: update the board]",
        "[Run Finished]",
        (
            '[Final State] {"tasks":[{"id":1,"title":"water plants","done":false},'
            '{"id":2,"title":"buy milk","done":false},{"id":3,"title":"call mum","done":false}]}'
        ),
    ]


def test_watch_shows_an_approval_the_run_waits_for(capsys: pytest.CaptureFixture[str]) -> None:
    from examples.task_board.app import app  # noqa: PLC0415 - only this test serves it

    state = '{"tasks": [{"id": 1, "title": "water plants"}]}'
    with serving(app) as url:
        status, out, _ = run_watch(capsys, url, "-m", "delete 1", "--tool", "delete_task",
                                   "--state", state)  # fmt: skip

    assert status == 0
    assert out[-3] == "[Run Finished: interrupt]"
    assert out[-2].startswith("[Interrupt: approve-run-")
    assert "] Delete task #1 'water plants'? (tool call run-" in out[-2]
    assert out[-1] == '[Final State] {"tasks":[{"id":1,"title":"water plants","done":false}]}'


def test_watch_shows_violations_where_they_happen_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving(replaying(*BROKEN)) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 1
    assert out[0] == "[Run Started]"
    assert out[1] == (
        "[Note] event 1 (FUTURE_EVENT): dropped: unknown event type 'FUTURE_EVENT': AG-UI 1.0 "
        "does not define it (a consumer drops it)"
    )
    assert out[2] == "Hi"
    assert out[3].startswith(
        "[Violation: message-not-open] event 2 (TEXT_MESSAGE_CONTENT): Cannot send"
    )
    assert out[4] == "[Tool Call: f]"
    assert out[5].startswith("[Violation: truncated] end of stream: The stream ended without")
    assert len(out) == 6
    assert (
        err == "agui watch: 5 events in 1 run: 2 violations (2 more in the same runs not shown)\n"
    )


def test_watch_raw_prints_wire_json_lines_that_verify_accepts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(agui.asgi_app(hello_agent)) as url:
        status, out, err = run_watch(capsys, url, "--raw", "-m", "Ada")

    assert status == 0
    assert err == ""
    assert [json.loads(line)["type"] for line in out] == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]  # fmt: skip
    assert json.loads(out[2])["delta"] == "Hello, Ada!"
    stdin = io.TextIOWrapper(io.BytesIO(("\n".join(out) + "\n").encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert run_verify(capsys, "-")[:2] == (0, ["<stdin>: 5 events in 1 run: valid (JSON lines)"])


def test_watch_raw_sends_violations_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with serving(replaying(*BROKEN)) as url:
        status, out, err = run_watch(capsys, url, "--raw")

    assert status == 1
    assert out[4] == "not json"
    assert len(out) == 7
    errors = err.splitlines()
    assert errors[0].startswith("agui watch: event 1 (FUTURE_EVENT): note: dropped: ")
    assert errors[1].startswith(
        "agui watch: event 2 (TEXT_MESSAGE_CONTENT): message-not-open: Cannot send"
    )
    assert errors[2].startswith("agui watch: end of stream: truncated: ")


def test_watch_sends_the_message_state_tools_and_headers_it_is_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[agui.RunAgentInput] = []
    headers: list[dict[str, str]] = []

    async def echo(ctx: agui.RunContext[object]) -> None:
        seen.append(ctx.input)
        ctx.say("ok")

    def authorize(given: Mapping[str, str]) -> bool:
        headers.append(dict(given))
        return given.get("authorization") == "Bearer s3cret"

    app = agui.asgi_app(echo, authorize=authorize)
    with serving(app) as url:
        status, _, _ = run_watch(
            capsys, url, "-m", "hi", "--state", '{"n": 1}', "--tool", "a,b", "--tool", "c",
            "-H", "Authorization: Bearer s3cret",
        )  # fmt: skip
        refused, _, err = run_watch(capsys, url, "-H", "Authorization: Bearer wrong")

    assert status == 0
    [given] = seen
    assert [m.content for m in given.messages] == ["hi"]
    assert given.state == {"n": 1}
    assert [tool.name for tool in given.tools or []] == ["a", "b", "c"]
    assert headers[0]["accept"] == "text/event-stream"
    assert refused == 2
    assert err.startswith(f'agui watch: error: HTTP 403 Forbidden from {url}\n{{\n  "code":')


@pytest.mark.parametrize(
    ("app", "message"),
    [
        (replaying(b"<html>", content_type=b"text/html"), "answered with text/html, not an event"),
        (replaying(b"oops", status=500, content_type=b"text/plain"), "HTTP 500 Internal Server"),
    ],
    ids=["html", "server-error"],
)
def test_watch_exits_2_when_the_answer_is_no_stream(
    capsys: pytest.CaptureFixture[str], app: Asgi, message: str
) -> None:
    with serving(app) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert message in err


def test_watch_exits_2_when_it_cannot_connect(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"

    status, out, err = run_watch(capsys, url, "--timeout", "5")

    assert status == 2
    assert out == []
    assert err.startswith(f"agui watch: error: the connection to {url} failed: ConnectError")


@pytest.mark.parametrize("url", ["http://127.0.0.1:abc/", "http://[::1/"])
def test_watch_exits_2_for_a_url_that_cannot_be_reached(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert f"{url!r} is not a URL that can be reached (Invalid port" in err


def test_watch_exits_2_for_a_header_that_is_not_ascii(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_watch(capsys, "http://127.0.0.1:9/", "-H", "Authorization: Bearer é")

    assert status == 2
    assert out == []
    assert "the header 'authorization' holds text that is not ASCII ('Bearer é')" in err


def refusal(command: str, url: str, message: str) -> str:
    """The one line `agui watch URL` or `agui verify URL` prints when it cannot use the URL."""
    where = f"{url}: " if command == "verify" else ""
    return f"agui {command}: error: {where}{message}\n"


def run_live(capsys: pytest.CaptureFixture[str], command: str, *argv: str) -> tuple[int, str, str]:
    status = main([command, *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize(
    ("url", "reason"),
    [
        # The codec's own words, which Python 3.13 changed ("label empty or too long" before).
        (f"http://{'a' * 64}.example/", "too long"),
        ("http://a..b/", "empty"),
        ("http://xn--a/", "Codepoint U+0080 at position 1"),
    ],
    ids=["label-of-64", "empty-label", "bad-punycode"],
)
def test_watch_and_verify_exit_2_for_a_url_whose_host_is_not_a_name(
    capsys: pytest.CaptureFixture[str], command: str, url: str, reason: str
) -> None:
    """The resolver (or idna, for punycode) raised UnicodeError, a traceback."""
    status, out, err = run_live(capsys, command, url)

    assert status == 2
    assert out == ""
    fact = f"{url!r} is not a URL that can be reached: its host is not a name: "
    assert err.startswith(refusal(command, url, fact).removesuffix("\n"))
    assert reason in err
    assert err.endswith(
        "; a host name is labels of 1 to 63 letters, digits and hyphens, separated by dots\n"
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize("location", [f"http://{'a' * 64}.example/", "http://xn--a/"])
def test_watch_exits_2_when_redirected_to_a_url_whose_host_is_not_a_name(
    capsys: pytest.CaptureFixture[str], location: str
) -> None:
    with serving(replaying(status=307, location=location)) as url:
        status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert err.startswith(
        f"agui watch: error: the connection to {url} failed: it was redirected to a URL whose "
        "host is not a name: "
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize("port", [0, 65536, 99999])
def test_watch_and_verify_exit_2_for_a_url_whose_port_is_no_port(
    capsys: pytest.CaptureFixture[str], command: str, port: int
) -> None:
    """Port 99999 is no port: a socket would connect to 34463 (99999 - 65536) instead."""
    url = f"http://127.0.0.1:{port}/"

    status, out, err = run_live(capsys, command, url)

    assert status == 2
    assert out == ""
    assert err == refusal(
        command,
        url,
        f"{url!r} is not a URL that can be reached: its port {port} is no port; a port is 1 to "
        "65535",
    )


def test_watch_exits_2_for_a_url_that_is_not_utf8(capsys: pytest.CaptureFixture[str]) -> None:
    url = "http://127.0.0.1:9/agent\udcff"

    status, out, err = run_watch(capsys, url)

    assert status == 2
    assert out == []
    assert err == refusal(
        "watch", url, f"the URL {url!r} holds bytes that are not UTF-8; give it as UTF-8 text"
    )


@pytest.mark.parametrize("command", ["watch", "verify"])
@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            "Content-Length: 5",
            (
                "the header 'content-length' cannot be given: the command sets Content-Length "
                "itself, from the JSON body it sends; drop -H 'Content-Length: ...'"
            ),
        ),
        (
            "content-length: 99999",
            (
                "the header 'content-length' cannot be given: the command sets Content-Length "
                "itself, from the JSON body it sends; drop -H 'Content-Length: ...'"
            ),
        ),
        (
            "Transfer-Encoding: chunked",
            (
                "the header 'transfer-encoding' cannot be given: the command sends the JSON body "
                "whole, with its Content-Length; drop -H 'Transfer-Encoding: ...'"
            ),
        ),
        (
            "Bad Name: x",
            (
                "the header name 'bad name' is not an HTTP token: a name is letters, digits and "
                "!#$%&'*+-.^_`|~, with no space: give the header as 'Name: value'"
            ),
        ),
        (
            "X-Trace(1): x",
            "the header name 'x-trace(1)' is not an HTTP token: a name is letters, digits and",
        ),
        (
            "X-Note: one\ntwo",
            (
                "the header 'x-note' holds a control character ('one\\ntwo'); a header value is "
                "one line of printable text: send line breaks and the like encoded, as the "
                "server reads it"
            ),
        ),
        ("X-Note: a\x00b", "the header 'x-note' holds a control character ('a\\x00b'); a"),
    ],
    ids=["length", "length-too-long", "chunked", "space", "parenthesis", "newline", "nul"],
)
def test_watch_and_verify_exit_2_for_a_header_http_cannot_carry(
    capsys: pytest.CaptureFixture[str], command: str, header: str, message: str
) -> None:
    """Refused before any request: h11 raised for some (Content-Length, a traceback), and
    others reached the server."""
    with serving(agui.asgi_app(hello_agent)) as url:
        status, out, err = run_live(capsys, command, url, "-H", header)

    assert status == 2
    assert out == ""
    assert err.startswith(f"agui {command}: error: {message}")
    assert err.count("\n") == 1


def test_watch_sends_a_header_with_a_tab_and_an_empty_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    headers: list[dict[str, str]] = []

    def authorize(given: Mapping[str, str]) -> bool:
        headers.append(dict(given))
        return True

    with serving(agui.asgi_app(hello_agent, authorize=authorize)) as url:
        status, _, _ = run_watch(capsys, url, "-H", "X-Note: a\tb", "-H", "X-Empty:")

    assert status == 0
    assert headers[0]["x-note"] == "a\tb"
    assert headers[0]["x-empty"] == ""


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        ('{"a": NaN}', "--state is not JSON: NaN is not JSON"),
        ('{"a": 1e999}', "--state is not JSON: 1e999 is too large for a JSON number"),
        ('{"a": "\\ud800"}', "--state must be a JSON value, but it holds text that is not valid"),
    ],
    ids=["nan", "overflow", "surrogate"],
)
def test_watch_exits_2_for_a_state_no_request_can_carry(
    capsys: pytest.CaptureFixture[str], state: str, problem: str
) -> None:
    status, out, err = run_watch(capsys, "http://127.0.0.1:9/", "--state", state)

    assert status == 2
    assert out == []
    assert problem in err


def test_watch_exits_2_for_a_message_that_is_not_utf8(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_watch(capsys, "http://127.0.0.1:9/", "-m", "a\udcffb")

    assert status == 2
    assert "--message holds bytes that are not UTF-8; give it as UTF-8 text" in err


def test_watch_exits_2_for_a_state_that_is_not_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_watch(capsys, "http://127.0.0.1:9/", "--state", "{")

    assert status == 2
    assert err.startswith("agui watch: error: --state is not JSON: ")


def test_watch_stops_quietly_on_ctrl_c(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: object, **_kwargs: object) -> Iterator[str]:
        yield json.dumps(RUN[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(_watch, "post_stream", interrupted)

    status, out, err = run_watch(capsys, "http://127.0.0.1:9/")

    assert status == 130
    assert out == ["[Run Started]"]
    assert err == "agui watch: error: interrupted\n"


def test_watch_and_verify_name_the_extra_when_httpx_is_missing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)

    assert main(["watch", "http://127.0.0.1:9/"]) == 2
    assert "pip install 'agui-server[client]'" in capsys.readouterr().err
    assert main(["verify", "http://127.0.0.1:9/"]) == 2
    assert "pip install 'agui-server[client]'" in capsys.readouterr().err
