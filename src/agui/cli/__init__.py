"""The `agui` command: serve an agent, watch and verify AG-UI streams, and a demo.

| command | what it does |
| --- | --- |
| `agui serve TARGET` | serves an agent over HTTP with uvicorn |
| `agui demo` | serves the travel example on a free port, asks it a question, shows the run |
| `agui watch URL` | sends one request to any AG-UI endpoint and shows the run, verified |
| `agui verify SOURCE...` | checks captured streams, or a live endpoint, with agui's verifier |

**serve.** `agui serve TARGET` serves an agent over HTTP with uvicorn
(`pip install "agui-server[serve]"`): one POST per run, answered with the AG-UI event stream, as
`agui.asgi_app` does. TARGET names the agent as `package.module:attr` (imported with the
current directory on `sys.path`) or as `path/to/file.py:attr` (loaded from that file, with its
directory on `sys.path`; a file is loaded once, so the agent and `--state` may come from the
same one). The agent is an `async def agent(ctx)` taking one argument, or an object with such
an async `run` method. Without `--state`, the state type is the one the agent's annotation
names, when it is a class: `async def agent(ctx: RunContext[Board])` is served with `Board`.

```
agui serve examples/hello.py:agent --port 8000 --path /agent
agui serve myapp.agents:support --state myapp.state:Draft --debug
```

`--port 0` picks a free port. Once the socket is bound, the command prints one line,
`agui: serving on http://HOST:PORT/PATH` (PATH percent-encoded), so scripts and tests can read
the address; the socket is already listening then. Bound to a loopback address, it answers only
requests whose `Host` names this machine (`localhost`, `127.0.0.1`, `::1`) or the `--host`
given. It parses HTTP with h11, which bounds a request's head while reading it, even where
httptools is installed. `--buffer-budget MIB` (256) caps what all streams together hold for
clients that do not read (see `agui.asgi`'s `buffer_budget`); a size that is not a positive
whole number of MiB is a usage error (status 2). `--workers N` serves from N processes sharing
the socket (`agui.cli._workers`); durable runs then need a log they share (`--runs redis://...`),
and SIGTERM or Ctrl-C stops them all, each gracefully.
Ctrl-C (SIGINT) shuts the server down gracefully, with status 0. A target that cannot be
loaded is reported in one line on stderr, naming what is wrong: the file or module, the
attribute, or why the object is not an agent.

**demo, watch, verify.** `agui demo` and `agui watch` show a run as a person reads it:
`[Run Started]`, `[Tool Call: NAME] ARGUMENTS`, `[Tool Result: NAME] CONTENT`, the answer as
its deltas arrive, `[Run Finished]`, and the state at the end (`[Final State]`). With `--raw`
they print the events instead, one wire JSON object a line, in UTF-8 whatever the terminal's
encoding, which `agui verify -` reads back.
Every event is checked by agui's verifier as it arrives, and a violation is shown with its
rule where it happens; `agui verify` prints each one with its event's index. They go on after
a violation: the first violation of each run is reported and the rest of that run counted
(they mostly follow from the first), and the end of the stream is always checked, so a stream
without a terminal event is reported as `truncated`. An item that is not JSON, or not a valid
event, is a violation (`invalid-json`, `malformed-event`); an event type AG-UI 1.0 does not
define is dropped with a note, as the official client drops it. The demo and `watch` need httpx
(`agui-server[client]`), the demo uvicorn too.

**Exit statuses**, the same in every command (each `--help` ends with its own table):

- `0`: done: the run finished and its stream is valid (`serve`: stopped with Ctrl-C).
- `1`: the run or the check failed: the stream breaks AG-UI's rules, or (`demo`, `watch`) the
  run ended with `RUN_ERROR`.
- `2`: the command line, the environment or an input cannot be used: a usage error (a port
  outside 0-65535, an unknown option), a target that does not load, a missing optional
  dependency, an address that cannot be bound, a file that cannot be read or whose format cannot
  be told, a server that cannot be reached or answers with an HTTP error (its JSON body is
  printed), standard output closed before the end (`agui demo | head -3`).
- `130`: interrupted with Ctrl-C (`demo`, `watch`, `verify`).

Every error is one line on stderr, `agui COMMAND: error: ...`, never a traceback.

Each command lives in its own private module (`agui.cli._serve`, `_demo`, `_watch`, `_verify`),
loaded only when it runs, and the target loaders when first asked for, so `agui --version` and
`agui --help` load none of them.
"""

from typing import TYPE_CHECKING

from agui.cli._main import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, main

if TYPE_CHECKING:
    from agui.cli._targets import load_agent, load_state_type, load_target

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "load_agent",
    "load_state_type",
    "load_target",
    "main",
]

_LOADERS = frozenset({"load_agent", "load_state_type", "load_target"})


def __getattr__(name: str) -> object:
    """The target loaders, imported when first asked for: `agui --version` needs none of them."""
    if name in _LOADERS:
        from agui.cli import _targets  # noqa: PLC0415 - lazy, so the command starts light

        return getattr(_targets, name)
    message = f"module 'agui.cli' has no attribute {name!r}"
    raise AttributeError(message)
