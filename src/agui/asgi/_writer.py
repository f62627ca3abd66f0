"""Writing a run's events onto the wire: from the agent's own step, coalescing, pings.

A `Streamer` (`agui.asgi._streaming`) owns the run; its `Writer` moves the run's events from
the receiver to the client, in the stream's `Encoding` (`agui.asgi._encoding`).

The direct path. The run's task runs the agent through `Writer.run`, which steps the agent's
coroutine as a task would and, each time the agent suspends, writes what that step queued with
one `send`, from the step itself, when nothing else is writing: on a server whose `send` does
not suspend while its transport keeps up (uvicorn's), a token stream's delta costs one task
step, as a hand-written ASGI app's does. It exists because a writer task woken by the queue
cost a second task step per delta and a whole iteration of the loop of latency: measured with
`bench/bench_streams.py` (bench/README.md), sending from the step took the server's CPU per
delta to 0.75x to 0.93x of the woken writer's, and the median latency at 1,000 and 2,000
streams from 1 to 16 ms to under 0.5 ms, the peer's. A `send` that does suspend (a paused
transport, or a server whose `send` always awaits) is handed, half done, to the pump.

The run's end goes out from its last step too. The pump (`Writer._pump`, a task started when
there is work for it, which ends once the queue is empty) writes everything else: the first
batch, what is emitted from other tasks (the receiver tells the idle writer,
`RunReceiver.notify`), a batch too large for one send, and a burst. In a burst, what the agent
adds in the next few turns of the loop goes with it, so sends are amortized over the events they
carry; a stream that emits now and then (a token every few tens of milliseconds) sends each
event from its step.
Keep-alive pings come from the endpoint's ticker (`agui.asgi._pings`), sent only while no
pump runs: one sender at a time.

Backpressure: the writer tells the run's receiver what it holds and when a send waits on the
client (`agui.sink`), and sends at most `MAX_SEND_BYTES` at a time, since a server's transport
buffers all of one send however slow its client.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Literal

from agui._emit.receiver import run_receiver
from agui._emit.record import Item
from agui.asgi._admission import Message, Send
from agui.asgi._encoding import SSE, Encoding, broken_frames
from agui.asgi._pings import Pings
from agui.asgi._stepping import Resumed, Stepping, Steps
from agui.errors import AguiError
from agui.sink import EventReceiver
from agui.sse import comment_frame

__all__ = ["MAX_SEND_BYTES", "Outcome", "Writer", "try_send"]

Outcome = Literal["done", "gone", "broken"]
"""How a stream ended: the run's events all went out, the client left, or an event was broken."""

_PING = comment_frame("ping")
_MAX_EVENTS_PER_SEND = 1024
_GATHER_TURNS = 16
_GATHER_ENOUGH = 256
_GATHER_SECONDS = 0.002

MAX_SEND_BYTES = 256 * 1024
"""The most one send carries: a larger batch's frames go out in slices of this size."""

Work = Callable[[], Awaitable[Outcome]]
"""What the direct path leaves the pump: the rest of a send, or frames to send."""


class Writer:
    """Moves a run's events from its receiver to the client: from the agent's steps, or the pump.

    `start` begins the stream; `run` wraps the run's coroutine (the direct path); a pump task,
    started for work and gone once the queue is empty, writes the rest; the endpoint's ticker
    has it send keep-alive pings when the encoding has them, while it is idle; `ended` says how the
    stream ended, and `stop` ends it where it is. Whatever sends, it is the only one: the
    agent's step only while no pump runs, a ping only then too, and a send of either that
    waits is finished by a pump.
    """

    def __init__(
        self,
        send: Send,
        receiver: EventReceiver,
        pings: Pings | None,
        encoding: Encoding = SSE,
    ) -> None:
        self._loop = asyncio.get_running_loop()
        self._send = send
        self._receiver = run_receiver(receiver)
        self.encoding = encoding
        self._frames = encoding.frames
        self._pings = pings if encoding.pings else None
        self.torn = False
        """Whether the stream may end inside a frame: a slice of one is out, not all of them."""
        self._last = self._loop.time()
        # When a batch last went out; within `_GATHER_SECONDS` of it, the stream is in a burst.
        # The first batch (RUN_STARTED and what came with it) goes out at once.
        self._sent = -_GATHER_SECONDS
        self._idle = False
        """Whether no pump runs and the stream goes on: only then may the agent's step write."""
        self._pumping: asyncio.Task[None] | None = None
        self.ended: asyncio.Future[Outcome] = self._loop.create_future()
        """How the stream ended, once it has; cancelled when it was stopped (`stop`)."""
        self.stepping = False
        """Whether the run's coroutine is being stepped: what it queues, its step writes."""
        self._on_push = self._pushed  # bound once: asked for again each time the pump ends

    def run(
        self, start: Callable[[], Coroutine[object, object, None]]
    ) -> Coroutine[object, object, None]:
        """The coroutine for the run's task: `start()`'s, each step's events written as it ends.

        `start()` is called in the run's first step: a run cancelled before that (its client
        left at once) leaves no coroutine that was never awaited, and its agent never starts.
        """
        return Stepping(start, self)

    def flush(self) -> None:
        """Write what is queued from the step that queued it, unless the pump should.

        A pump writes when one runs (it takes what is queued itself), in a burst (it gathers),
        and for a batch that is not one plain send. The stream's end goes out from the step
        that ended it too: handed to a pump, a token stream's last delta, which comes in that
        step, waited a turn of the loop (bench/README.md, run 8). Never raises: a frame or a
        send that fails is the pump's to report. A send that suspends goes on in the pump's
        task.
        """
        receiver = self._receiver
        waiting, closed = receiver.waiting, receiver.closed
        if not self._idle or not (waiting or closed):
            return
        if not closed and self._loop.time() - self._sent < _GATHER_SECONDS:
            self._hand(None)  # a burst: the pump gathers what comes next
            return
        if waiting and not self._write_now(receiver.items()):
            return  # the pump took the batch over
        if closed:
            self._end("done")

    def _write_now(self, batch: list[Item]) -> bool:
        """Send `batch` from the step; `False` once it is the pump's, to send or to report.

        Framed as one send straight away, without `_encode`'s lists and tuple, three objects a
        delta more. Anything else (a batch of more than one send, a frame that fails) the pump
        frames again, sends and reports.
        """
        data = self._framed(batch)
        if data is None:
            self._hand(functools.partial(self._write, batch))
            return False
        if len(data) > MAX_SEND_BYTES:
            self._hand(functools.partial(self._send_blobs, [data], "done"))
            return False
        self._sent = self._loop.time()
        self._send_now(data)
        return self._idle

    def _framed(self, batch: list[Item]) -> bytes | None:
        """The batch's frames for one send; `None` for the pump to frame (and report) instead."""
        if len(batch) > _MAX_EVENTS_PER_SEND:
            return None
        try:
            return self._frames(batch)
        except Exception:  # noqa: BLE001 - the pump frames it again, and reports it
            return None

    def _send_now(self, data: bytes) -> None:
        """Send `data` now, the pump idle; a send that suspends is left to the pump to finish."""
        self._last = self._loop.time()
        steps = self._send(_body(data)).__await__()
        try:
            waiting = next(steps)
        except StopIteration:
            return  # sent: the common case
        except OSError:
            self._hand(_gone)
            return
        except Exception as error:  # noqa: BLE001 - the pump raises it, where it is logged
            self._hand(functools.partial(_raise, error))
            return
        self._receiver.sending(len(data))  # it waits on the client: weigh what comes meanwhile
        self._hand(functools.partial(self._rest, steps, waiting))

    def _hand(self, work: Work | None) -> None:
        """Start the pump, with the work the direct path leaves it (`None`: the queue)."""
        assert self._idle  # noqa: S101 - only an idle stream is handed work
        self._idle = False
        self._receiver.notify(None)
        self._pumping = self._loop.create_task(self._pump(work))

    async def _rest(self, steps: Steps, waiting: object) -> Outcome:
        """Finish a send that suspended in the agent's step."""
        try:
            await Resumed(steps, waiting)
        except OSError:
            return "gone"
        finally:
            self._receiver.sent(0)
        return "done"

    def ping_if_quiet(self, now: float, keepalive: float) -> None:
        """Send a comment frame if nothing went out for `keepalive` seconds (`Pings` asks).

        Only while no pump runs: one that runs has work, or its send waits on the client; and
        once the stream has ended it is never idle again, so no comment follows the terminal
        event.
        """
        if self._idle and now - self._last >= keepalive:
            self._send_now(_PING)

    def _pushed(self) -> None:
        """Something was queued while the stream is idle: from another task, a pump writes it.

        Told of every push while idle (`RunReceiver.notify`, asked when the pump ends): what
        the agent's own step queues, that step's flush writes.
        """
        if not self.stepping:
            self._hand(None)

    def start(self) -> None:
        """Start streaming: the pump writes (and weighs) the first batch; the pings begin."""
        if self._pings is not None:
            self._pings.add(self)
        self._idle = True
        self._hand(None)  # sent from the step unweighed, stalled streams overran the budget

    async def stop(self) -> None:
        """Stop the stream where it is (the client is gone, or the server shuts down)."""
        pumping = self._pumping
        if pumping is not None and not pumping.done():
            pumping.cancel()
            await asyncio.wait({pumping})
        self._end(None)

    async def _pump(self, work: Work | None) -> None:
        """Write until nothing is queued (then idle: the pump's task ends), or the stream ends.

        A task only while there is work: a token stream's pump is gone between its deltas,
        which its steps write (see `flush`); an idle pump waiting on a future cost a stream
        about 1 KiB, and 5% to 7% more CPU per delta (bench/README.md).
        """
        try:
            outcome = await self._drain(work)
        except asyncio.CancelledError:
            self._end(None)
            raise
        except Exception as error:  # noqa: BLE001 - the stream's end carries it, to be logged
            self._end(error)
            return
        finally:
            self._pumping = None  # a finished task held to the next burst cost 0.7 KiB a stream
        if outcome is None:
            self._idle = True
            self._receiver.notify(self._on_push)
        else:
            self._end(outcome)

    async def _drain(self, work: Work | None) -> Outcome | None:
        """Do `work`, then write what is queued until the queue is empty (`None`) or closed."""
        receiver = self._receiver
        outcome = "done" if work is None else await work()
        while outcome == "done":
            batch = receiver.items()
            if not batch:
                return "done" if receiver.closed else None
            # Gather only in a burst: when the last send went out under `_GATHER_SECONDS`
            # ago. A token stream's delta comes alone; gathering it found nothing and cost a
            # turn of the loop per delta. Not gathering at all cost the dense burst
            # (`bench_served.py`) 12%. bench/README.md has both.
            if self._loop.time() - self._sent < _GATHER_SECONDS:
                batch = await self._gather(batch)
            outcome = await self._write(batch)
            self._sent = self._loop.time()
        return outcome

    def _end(self, outcome: Outcome | Exception | None) -> None:
        """End the stream once: no flush, ping or pump after it; `None` when it was stopped."""
        ended = self.ended
        if ended.done():
            return
        self._idle = False
        if self._pings is not None:
            self._pings.discard(self)
        receiver = self._receiver
        receiver.notify(None)
        receiver.unbind()
        if outcome is None:
            ended.cancel()
        elif isinstance(outcome, Exception):
            ended.set_exception(outcome)
        else:
            ended.set_result(outcome)

    async def _gather(self, batch: list[Item]) -> list[Item]:
        """Add what an agent emitting as it goes produces in the next few turns of the loop.

        Called in a burst only (see `pump`): an agent that awaits between events would
        otherwise cost one send per event. Each turn lets it run once more; gathering stops at
        the first turn that adds nothing, so a burst that ends delays its last event by one turn
        of the loop. A busy one delays it by at most 16
        turns or 2 ms, whichever comes first, and one turn more: a turn that runs long (an agent
        computing between two awaits) cannot hold back what is already gathered. A batch that
        is already large goes out at once: sends are amortized, latency matters more.
        """
        loop = asyncio.get_running_loop()
        until = loop.time() + _GATHER_SECONDS
        for _ in range(_GATHER_TURNS):
            if len(batch) >= _GATHER_ENOUGH or loop.time() >= until:
                break
            await asyncio.sleep(0)
            more = self._receiver.items()
            if not more:
                break
            batch += more
        return batch

    async def _write(self, batch: list[Item]) -> Outcome:
        """Encode the batch, then send it in slices, telling the receiver what is still held."""
        blobs, outcome = self._encode(batch)
        batch.clear()  # the frames stand for it now: what the client has not taken is counted once
        return await self._send_blobs(blobs, outcome)

    async def _send_blobs(self, blobs: list[bytes], outcome: Outcome) -> Outcome:
        held = sum(map(len, blobs))
        for blob in blobs:
            held = await self._send_blob(blob, held)
            if held < 0:
                return "gone"
        return outcome

    async def _send_blob(self, blob: bytes, held: int) -> int:
        """Send one blob of frames in slices; what is still held after it, or -1 if one failed."""
        receiver = self._receiver
        sliced = len(blob) > MAX_SEND_BYTES
        for start in range(0, len(blob), MAX_SEND_BYTES):
            data = blob[start : start + MAX_SEND_BYTES] if sliced else blob
            receiver.sending(held)
            # A slice stopped midway (the client gone, the task cancelled) may end in a frame.
            self.torn = sliced
            went = await self._send_data(data)
            self.torn = start + len(data) < len(blob)
            held -= len(data)
            receiver.sent(held)
            if not went:
                return -1
        return held

    def _encode(self, batch: list[Item]) -> tuple[list[bytes], Outcome]:
        blobs: list[bytes] = []
        size = _MAX_EVENTS_PER_SEND
        parts = (
            [batch]
            if len(batch) <= size
            else [batch[at : at + size] for at in range(0, len(batch), size)]
        )
        for part in parts:
            try:
                blobs.append(self._frames(part))
            except (ValueError, AguiError):
                blobs.append(broken_frames(part, self.encoding))
                return blobs, "broken"
        return blobs, "done"

    async def _send_data(self, data: bytes) -> bool:
        self._last = asyncio.get_running_loop().time()
        return await try_send(self._send, _body(data))


async def _gone() -> Outcome:
    return "gone"


async def _raise(error: Exception) -> Outcome:
    raise error


def _body(data: bytes) -> Message:
    return {"type": "http.response.body", "body": data, "more_body": True}


async def try_send(send: Send, message: Message) -> bool:
    """Send one ASGI message; `False` when the client is gone (a failed send is a disconnect)."""
    try:
        await send(message)
    except OSError:
        return False
    return True
