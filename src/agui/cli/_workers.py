"""`agui serve --workers N`: N processes serving on the socket the command bound.

The command binds and listens once, then starts N worker processes (multiprocessing's `spawn`,
as uvicorn's own supervisor does: nothing of the parent's state but the socket and the
command's options crosses), each of which loads the target again and serves on the shared
socket with the graceful shutdown of a single `agui serve`; the kernel hands each new
connection to one of them. Runs live in their worker, so durable runs need a log the workers
share (`--runs redis://...`): a run started through one worker is then read through any.

The supervisor stops every worker once: on SIGINT or SIGTERM it sends each SIGTERM, waits for
them (each ends its runs within the grace period, then its connections), and kills what is
left after that. A worker is put in a process group of its own, so a Ctrl-C at a terminal
reaches the supervisor alone rather than every worker twice (a second signal cuts uvicorn's
graceful shutdown short); a worker whose supervisor is gone (killed, so that it could not stop
them) stops by itself. A worker that exits on its own stops the others, and the command exits
with status 1, for whatever restarts it (systemd, a container runtime) to start it again whole.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.context import SpawnProcess
from types import FrameType

__all__ = ["supervise"]

Work = Callable[[socket.socket], None]
"""What a worker does with the listening socket: serve on it until told to stop."""

_POLL_SECONDS = 0.2
_END_MARGIN = 5.0  # seconds past twice the grace: the runs end, then the connections close


def supervise(work: Work, sock: socket.socket, workers: int, *, grace: float) -> int:
    """Run `work(sock)` in `workers` processes until a signal stops them; the exit status.

    `work` must be picklable (a module's function, or a `functools.partial` of one).
    """
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = {number: signal.signal(number, on_signal) for number in _STOPPING}
    multiprocessing.allow_connection_pickling()  # the socket crosses to each worker
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_worker, args=(work, sock, os.getpid()), name=f"agui worker {n}")
        for n in range(1, workers + 1)
    ]
    ended: Sequence[object] = ()
    try:
        for process in processes:
            process.start()
        sentinels = [process.sentinel for process in processes]
        while not (stop.is_set() or ended):
            ended = multiprocessing.connection.wait(sentinels, timeout=_POLL_SECONDS)
    finally:
        _stop(processes, 2 * grace + _END_MARGIN)
        for number, handler in previous.items():
            signal.signal(number, handler)
    if not ended:
        return 0
    first = next(process for process in processes if process.sentinel in ended)
    message = (
        f"agui serve: error: {first.name} exited on its own (status {first.exitcode}); the "
        "others were stopped"
    )
    print(message, file=sys.stderr)  # noqa: T201
    return 1


_STOPPING = (signal.SIGINT, signal.SIGTERM)


def _stop(processes: list[SpawnProcess], seconds: float) -> None:
    """SIGTERM each worker still running, wait up to `seconds` in all, then kill the rest."""
    started = [process for process in processes if process.pid is not None]
    for process in started:
        process.terminate()  # does nothing to one that has ended
    deadline = time.monotonic() + seconds
    for process in started:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():  # pragma: no cover - a worker past its shutdown, killed
            process.kill()
            process.join()


def _worker(work: Work, sock: socket.socket, parent: int) -> None:  # pragma: no cover - a worker
    """A worker process: its own process group, stopped if its supervisor goes, then `work`."""
    os.setpgid(0, 0)
    threading.Thread(
        target=_watch, args=(parent,), name="agui supervisor watch", daemon=True
    ).start()
    work(sock)


def _watch(parent: int) -> None:  # pragma: no cover - runs in a worker process
    """Stop this worker (as SIGTERM does) once its supervisor is gone."""
    while os.getppid() == parent:
        time.sleep(_POLL_SECONDS * 5)
    os.kill(os.getpid(), signal.SIGTERM)
