"""Throwaway servers for the fault tests: a PostgreSQL cluster, a Redis and a gunicorn of our own on free
loopback ports, so that a test may stop and restart them without touching the machine's shared ones.

PostgreSQL runs as the ``postgres`` system user (``initdb`` refuses root) from the Debian binaries in
``/usr/lib/postgresql/<version>/bin``; its data folder is a temporary one, removed by :meth:`remove`.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["Gunicorn", "ThrowawayPostgres", "ThrowawayRedis", "free_port", "postgres_binaries", "wait_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float, *, open_: bool = True) -> None:
    """Wait until something listens on ``port`` (or, ``open_=False``, until nothing does)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if open_:
                    return
        except OSError:
            if not open_:
                return
        time.sleep(0.05)
    raise TimeoutError(f"port {port} did not {'open' if open_ else 'close'} within {timeout:g} s")


def postgres_binaries() -> Path | None:
    """The newest installed PostgreSQL server binaries, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _as_postgres(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--", *args]
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


class ThrowawayPostgres:
    """``initdb`` into a temporary folder, ``pg_ctl start/stop`` on a free port (trust auth, loopback)."""

    def __init__(self) -> None:
        binaries = postgres_binaries()
        if binaries is None:
            raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql")
        self.bin = binaries
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="atelier-fault-pg-"))
        self.data = self.root / "data"
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        _as_postgres([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                      "--no-sync", "-E", "UTF8"])
        self.start()

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
                   f"-c max_connections=200")
        _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l",
                      str(self.root / "server.log"), "-w", "-t", "60", "start"])

    def stop(self, mode: str = "fast") -> None:
        """``fast`` disconnects clients and shuts down cleanly; ``immediate`` is a crash (recovery at start)."""
        _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"])

    def remove(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


class ThrowawayRedis:
    """``redis-server`` in the foreground on a free port, no persistence; stop and start keep the port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, 10)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None
            wait_port(self.port, 10, open_=False)

    def remove(self) -> None:
        self.stop()


class Gunicorn:
    """The site under gunicorn on a free port with ``env`` (its database, var folder, broker)."""

    def __init__(self, env: dict[str, str], workers: int = 2) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "evalsite.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(workers), "--timeout", "60", "--log-level", "warning"],
            cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, 60)
        self.warm(workers)

    def warm(self, workers: int, timeout: float = 120) -> None:
        """Until /readyz answers 200 a few times: each worker imports the site on its first request, which
        on a busy machine takes seconds (a load started at once would time out on it)."""
        import http.client

        answered, deadline = 0, time.monotonic() + timeout
        while answered < 2 * workers and time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn.request("GET", "/readyz")
                answered += conn.getresponse().status == 200
                conn.close()
            except OSError:
                time.sleep(0.2)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
