"""A real redis-server for the tests: its own process on a free loopback port, no persistence.

`RedisServer.start()` runs Debian's `redis-server` in a temporary directory with `--save ""`
and `--appendonly no`, waits (bounded) until it answers PING, and `stop()` ends it. `restart()`
stops it and starts a fresh, empty one on the same port, which is what a crashed Redis without
persistence comes back as.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Generator
from pathlib import Path

STARTUP_SECONDS = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process of the tests' own."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        assert Path(binary).exists(), "the tests need Debian's redis-server (apt install it)"
        self.binary = binary
        self.port = free_port()
        self.directory = tempfile.mkdtemp(prefix="agui-redis-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - a fixed binary on fixed arguments
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.directory,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _ping(self.port):
            assert self.process.poll() is None, "redis-server exited at startup"
            assert time.monotonic() < deadline, "redis-server did not answer PING in time"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=STARTUP_SECONDS)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2.0) as conn:
            conn.sendall(b"FLUSHALL\r\n")
            assert conn.recv(16).startswith(b"+OK")


@contextlib.contextmanager
def running_redis() -> Generator[RedisServer, None, None]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)
