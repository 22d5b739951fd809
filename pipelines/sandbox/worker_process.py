"""The parent's side of one worker process (``worker.py``): start it, send it a query, read
its answer, and kill it when it overruns or misbehaves.

    Sandbox (parent) ──pipe: ("run", dialect, path, sql, timeout_s, row_cap, max_bytes)──►
        worker: engine.run ──► canonical rows + hash ──pipe: plain data──► parent
    no answer by timeout_s + kill_grace_s ──► SIGKILL, QueryTimeout, a fresh worker next time

    >>> process_key(SandboxLimits(memory_mb=512)) == process_key(SandboxLimits(memory_mb=512))
    True
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

from pipelines.sandbox.errors import (
    QueryTimeout,
    ResultTooLarge,
    SandboxError,
    WorkerDied,
    from_wire,
)
from pipelines.sandbox.limits import MIB, SandboxLimits

_START_TIMEOUT_S = 60.0  # a cold start imports DuckDB and pydantic; a loaded machine is slow


class _DataOnly(pickle.Unpickler):
    """Unpickles plain data only: a worker's answer may never name a class or function."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a sandbox worker answer may not name {module}.{name}")


def _load(data: bytes) -> Any:
    return _DataOnly(io.BytesIO(data)).load()


class RunResult(NamedTuple):
    """A query's rows as the sandbox keeps them: canonical, in the engine's order."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    hash: str
    truncated: bool


def _worker_environment() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding ``pipelines``
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.setdefault("MALLOC_ARENA_MAX", "2")  # fewer per-thread arenas inside the data cap
    return env


class WorkerProcess:
    """One worker process and its two pipes. Used by one thread at a time."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self.key = process_key(limits)
        self.engines: set[tuple[str, str]] = set()  # databases it holds open, as it reported
        self._sequence = 0  # of the last request; each answer carries its request's
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    "import sys; from pipelines.sandbox.worker import main; main(sys.argv[1:])",
                    str(requests_read),
                    str(replies_write),
                    str(os.getpid()),
                    limits.model_dump_json(),
                ],
                pass_fds=(requests_read, replies_write),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=_worker_environment(),
            )
        except OSError as error:
            for fd in (requests_read, requests_write, replies_read, replies_write):
                os.close(fd)
            raise SandboxError(f"cannot start a sandbox worker: {error}") from error
        os.close(requests_read)
        os.close(replies_write)
        self._owner = os.getpid()
        self._requests = Connection(requests_write, readable=False)
        self._replies = Connection(replies_read, writable=False)
        self._running = True
        if not self._replies.poll(_START_TIMEOUT_S):
            self.kill()
            raise SandboxError(f"a sandbox worker did not start within {_START_TIMEOUT_S:g} s")
        try:
            _load(self._replies.recv_bytes(1024))
        except (EOFError, OSError, pickle.UnpicklingError) as error:
            self.kill()
            detail = self._exit_detail()
            raise SandboxError(f"a sandbox worker failed to start: {detail}") from error

    @property
    def alive(self) -> bool:
        """Running, and started by this process: a forked child never shares its parent's
        workers (their pipes would interleave)."""
        return self._running and self._owner == os.getpid()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _exit_detail(self) -> str:
        code = self._process.poll()
        if code is None:
            return "no answer"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def run(
        self,
        dialect: str,
        path: str,
        sql: str,
        *,
        timeout_s: float,
        row_cap: int,
        max_bytes: int,
    ) -> RunResult:
        """Run one query; raise its ``SandboxError``. Kills the worker at
        ``timeout_s + kill_grace_s`` (``QueryTimeout``), and if it dies (``WorkerDied``)."""
        key = (dialect, path)
        self._sequence += 1
        request = ("run", self._sequence, dialect, path, sql, timeout_s, row_cap, max_bytes)
        try:
            data = self._exchange(request, timeout_s, max_bytes)
        except SandboxError:
            raise
        except BaseException:
            # Interrupted between request and answer (a bug, KeyboardInterrupt, MemoryError):
            # the answer would be read as the next query's. The worker goes.
            self.kill()
            raise
        try:
            reply = _load(data)
            sequence, status = reply[0], reply[1]
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError) as error:
            self.kill()
            raise SandboxError(f"a sandbox worker sent an unreadable answer: {error}") from error
        if sequence != self._sequence:
            self.kill()
            raise SandboxError("a sandbox worker answered another request")
        if status == "ok":
            _, _, columns, rows, digest, truncated, evicted = reply
            self.engines.difference_update(evicted)
            self.engines.add(key)
            return RunResult(tuple(columns), rows, digest, truncated)
        _, _, name, message, attributes, kept, evicted = reply
        self.engines.difference_update(evicted)
        if kept:
            self.engines.add(key)
        else:
            self.engines.discard(key)
        raise from_wire(name, message, attributes)

    def _exchange(self, request: tuple[Any, ...], timeout_s: float, max_bytes: int) -> bytes:
        """Send ``request`` and wait for the answer's bytes; kill the worker on any failure."""
        try:
            self._requests.send_bytes(pickle.dumps(request))
        except OSError as error:  # the pipe is gone: the worker is dead
            self.kill()
            raise WorkerDied(self._exit_detail()) from error
        if not self._replies.poll(timeout_s + self.limits.kill_grace_s):
            self.kill()
            raise QueryTimeout(timeout_s)
        # Rows reach at most max_bytes by the engine's estimate; canonical text (a blob as
        # hex) can be about twice that, plus pickle framing.
        try:
            return self._replies.recv_bytes(3 * max_bytes + MIB)
        except EOFError as error:
            self.kill()
            raise WorkerDied(self._exit_detail()) from error
        except OSError as error:  # longer than allowed: the stream cannot be resynchronised
            self.kill()
            raise ResultTooLarge(max_bytes) from error

    def _send(self, message: tuple[Any, ...]) -> None:
        if not self.alive:
            return
        try:
            self._requests.send_bytes(pickle.dumps(message))
        except OSError:
            self.kill()

    def close_engine(self, dialect: str, path: str) -> None:
        if (dialect, path) in self.engines:
            self.engines.discard((dialect, path))
            self._send(("close", dialect, path))

    def close_engines(self) -> None:
        self.engines.clear()
        self._send(("close_all",))

    def stop(self, wait_s: float = 2.0) -> None:
        """Ask the worker to exit; kill it if it has not within ``wait_s``."""
        if self.alive:
            self._send(("exit",))
            try:
                self._process.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def kill(self) -> None:
        owned = self._owner == os.getpid()
        self._running = False
        self.engines.clear()
        if owned:  # a forked child leaves its parent's worker alone
            if self._process.poll() is None:
                self._process.kill()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
                pass
        for connection in (getattr(self, "_requests", None), getattr(self, "_replies", None)):
            if connection is not None:
                connection.close()
        self._requests = self._replies = _Closed()


class _Closed:
    """Stands in for a closed pipe after ``kill``."""

    def send_bytes(self, _data: bytes) -> None:
        raise OSError("the sandbox worker is gone")

    def poll(self, _timeout: float) -> bool:
        return True

    def recv_bytes(self, _maxlength: int) -> bytes:
        raise EOFError

    def close(self) -> None:
        pass


def process_key(limits: SandboxLimits) -> tuple[int, int, int]:
    """What a worker fixes at start; workers with equal keys are interchangeable."""
    return (limits.memory_mb, limits.max_value_bytes, limits.max_sql_chars)
