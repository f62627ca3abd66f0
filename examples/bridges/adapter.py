"""An AG-UI adapter's event stream, served by agui: `agui.bridges.from_events`.

Many agent frameworks ship an AG-UI adapter: a function that takes the official
`ag_ui.core.RunAgentInput` and yields `ag_ui.core` events. `from_events` serves any such
function as an agui agent. The adapter here is hand-written, so it runs without a framework or a
model, and it does what adapters do: it sends its own `RUN_STARTED` and `RUN_FINISHED`, thinking
in the retired `THINKING_*` events, state as whole snapshots, and a `RAW` event. agui swallows
the foreign run boundaries (its driver sends its own), translates the thinking into `REASONING_*`,
publishes each snapshot as a delta where that is smaller, drops the `RAW` event, and verifies
every event on its way out.

Serve it from the repository root (it needs the `bridges` extra):

    agui serve examples/bridges/adapter.py:agent

and talk to it with `agui watch http://127.0.0.1:8000/ -m "Seoul"`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ag_ui.core import (
    BaseEvent,
    RawEvent,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    UserMessage,
)

from agui.bridges import from_events


async def weather_adapter(run: RunAgentInput) -> AsyncIterator[BaseEvent | dict[str, object]]:
    """A framework's adapter, as it would stream one run: its own boundaries, snapshots, RAW."""
    asked = [m.content for m in run.messages if isinstance(m, UserMessage)]
    city = str(asked[-1]) if asked else "Seoul"
    yield RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id)
    log = ["received the question", "looked up the city", "asked the weather service"]
    yield StateSnapshotEvent(snapshot={"city": city, "status": "looking up", "log": log})
    yield {"type": "THINKING_START"}
    yield {"type": "THINKING_TEXT_MESSAGE_START"}
    yield {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": f"The user asks about {city}."}
    yield {"type": "THINKING_TEXT_MESSAGE_END"}
    yield {"type": "THINKING_END"}
    yield RawEvent(event={"provider": "a frame agui does not pass on"})
    yield TextMessageStartEvent(message_id=f"{run.run_id}-answer", role="assistant")
    for word in ("It ", "is ", "21°C ", f"in {city}."):
        yield TextMessageContentEvent(message_id=f"{run.run_id}-answer", delta=word)
    yield TextMessageEndEvent(message_id=f"{run.run_id}-answer")
    yield StateSnapshotEvent(snapshot={"city": city, "status": "done", "log": log})
    yield RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id)


agent = from_events(weather_adapter)
