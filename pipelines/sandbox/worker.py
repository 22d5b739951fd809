"""Worker processes: where a sandboxed query runs when its bounds must hold.

    Sandbox (parent) ──pipe: ("run", dialect, path, sql, timeout_s, row_cap, max_bytes)──►
        worker: engine.run ──► canonical rows + hash ──pipe: plain data──► parent
    no answer by timeout_s + kill_grace_s ──► SIGKILL, QueryTimeout, a fresh worker next time

Why a process: SQLite checks its deadline between VM steps and DuckDB between vectors, so
one expensive function call (``instr`` over two long strings, say) runs on past any
in-process deadline; and memory can only be capped for a whole process. A worker:

- caps its private data at its size at start plus ``memory_mb`` (``RLIMIT_DATA``), with
  DuckDB's ``memory_limit`` and SQLite's hard heap limit at half of that each, so an engine
  fails with an out-of-memory error before the process limit is reached;
- runs one query at a time, keeps one engine per database (at most ``_MAX_ENGINES``), and
  drops an engine after a refusal, a timeout or a resource error;
- answers with plain data only (tuples, lists, dicts, str, int, float, None): the parent
  unpickles with no classes allowed, and bounds the answer's length;
- exits when its parent does (end of the request pipe, or a changed parent pid).

The parent side (``WorkerProcess``, ``WorkerSet``) gives each calling thread its own worker,
keeps idle workers for reuse (``WorkerSet`` per sandbox, and a process-wide spare list per
set of process limits), and replaces a worker that was killed or died.
"""

from __future__ import annotations

import atexit
import io
import os
import pickle
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

from pipelines.sandbox.canonical import canonical_rows, result_hash
from pipelines.sandbox.errors import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    ResourceLimit,
    ResultTooLarge,
    SandboxError,
    WorkerDied,
    from_wire,
    to_wire,
)
from pipelines.sandbox.limits import MIB, SandboxLimits

# After these an engine's state is suspect (or it never opened): drop it.
DISCARD_AFTER = (ReadOnlyViolation, QueryTimeout, DatabaseUnavailable, ResourceLimit)

_MAX_ENGINES = 32  # open databases per worker, least recently used closed first
_START_TIMEOUT_S = 60.0  # a cold start imports DuckDB and pydantic; a loaded machine is slow
_PARENT_CHECK_S = 1.0
_MAX_SPARES_PER_KEY = 4


# --- the worker (child process) ---------------------------------------------------------------


def _data_size_bytes() -> int:
    """This process's private data now (``VmData``), what ``RLIMIT_DATA`` counts."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _apply_memory_limits(limits: SandboxLimits) -> None:
    from pipelines.sandbox import duckdb as duckdb_engine
    from pipelines.sandbox import sqlite as sqlite_engine

    duckdb_engine.set_process_memory_limit(limits.engine_memory_mb)
    sqlite_engine.set_process_heap_limit(limits.engine_memory_mb)
    try:
        import resource
    except ImportError:  # not POSIX: the engines' own limits still hold
        return
    cap = _data_size_bytes() + limits.memory_mb * MIB
    resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))


def _exit_with_parent(parent_pid: int) -> None:
    # A query stuck in one long call never reads the closed pipe: watch the parent instead.
    while True:
        time.sleep(_PARENT_CHECK_S)
        if os.getppid() != parent_pid:
            os._exit(0)


class _Server:
    def __init__(self, limits: SandboxLimits) -> None:
        from pipelines.sandbox import duckdb as duckdb_engine
        from pipelines.sandbox import sqlite as sqlite_engine

        self._limits = limits
        self._factories = {
            "sqlite": sqlite_engine.SQLiteEngine,
            "duckdb": duckdb_engine.DuckDBEngine,
        }
        self._engines: OrderedDict[tuple[str, str], Any] = OrderedDict()

    def _engine(self, key: tuple[str, str]) -> tuple[Any, tuple[tuple[str, str], ...]]:
        engine = self._engines.get(key)
        if engine is not None:
            self._engines.move_to_end(key)
            return engine, ()
        dialect, path = key
        factory = self._factories.get(dialect)
        if factory is None:
            raise SandboxError(f"no sandbox engine for dialect {dialect!r}")
        engine = factory(path, self._limits)
        self._engines[key] = engine
        evicted = []
        while len(self._engines) > _MAX_ENGINES:
            old_key, old = self._engines.popitem(last=False)
            old.close()
            evicted.append(old_key)
        return engine, tuple(evicted)

    def close(self, key: tuple[str, str]) -> None:
        engine = self._engines.pop(key, None)
        if engine is not None:
            engine.close()

    def close_all(self) -> None:
        for key in list(self._engines):
            self.close(key)

    def run(self, request: tuple[Any, ...]) -> tuple[Any, ...]:
        _, _sequence, dialect, path, sql, timeout_s, row_cap, max_bytes = request
        key = (dialect, path)
        evicted: tuple[tuple[str, str], ...] = ()
        try:
            engine, evicted = self._engine(key)
            raw = engine.run(sql, timeout_s=timeout_s, row_cap=row_cap, max_bytes=max_bytes)
            rows = canonical_rows(raw.rows, keep_order=True)
            digest = result_hash(rows, len(raw.columns))
            return ("ok", raw.columns, tuple(rows), digest, raw.truncated, evicted)
        except SandboxError as error:
            if isinstance(error, DISCARD_AFTER):
                self.close(key)
            return ("error", *to_wire(error), key in self._engines, evicted)
        except MemoryError:
            self.close(key)
            return ("error", *to_wire(ResourceLimit("out of memory")), False, evicted)
        except Exception as error:  # a bug, not the query's fault: report it, carry on
            self.close(key)
            wire = to_wire(SandboxError(f"internal sandbox error: {type(error).__name__}: {error}"))
            return ("error", *wire, False, evicted)


def serve(requests: Connection, replies: Connection, limits: SandboxLimits) -> None:
    """The worker's loop: one request, one answer, until ``exit`` or the parent is gone."""
    server = _Server(limits)
    replies.send_bytes(pickle.dumps(("ready", os.getpid())))
    while True:
        try:
            request = pickle.loads(requests.recv_bytes())  # from the parent: trusted
        except (EOFError, OSError):
            return
        command = request[0]
        if command == "run":
            sequence = request[1]
            reply = server.run(request)
            try:
                payload = pickle.dumps((sequence, *reply), protocol=pickle.HIGHEST_PROTOCOL)
            except MemoryError:
                del reply
                payload = pickle.dumps(
                    (sequence, "error", *to_wire(ResourceLimit("out of memory")), False, ())
                )
            replies.send_bytes(payload)
        elif command == "close":
            server.close((request[1], request[2]))
        elif command == "close_all":
            server.close_all()
        elif command == "exit":
            server.close_all()
            return


def main(argv: list[str]) -> None:
    requests_fd, replies_fd, parent_pid, limits_json = argv
    limits = SandboxLimits.model_validate_json(limits_json)
    threading.Thread(target=_exit_with_parent, args=(int(parent_pid),), daemon=True).start()
    _apply_memory_limits(limits)
    serve(
        Connection(int(requests_fd), writable=False),
        Connection(int(replies_fd), readable=False),
        limits,
    )


# --- the parent side --------------------------------------------------------------------------


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


class _Spares:
    """Idle workers of closed sandboxes, per process key, for the next sandbox to reuse."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple[int, int, int], list[WorkerProcess]] = {}

    def take(self, key: tuple[int, int, int]) -> WorkerProcess | None:
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                worker = idle.pop()
                if worker.alive and worker._process.poll() is None:
                    return worker
        return None

    def give(self, worker: WorkerProcess) -> None:
        if not worker.alive:
            return
        worker.close_engines()
        with self._lock:
            idle = self._idle.setdefault(worker.key, [])
            if len(idle) < _MAX_SPARES_PER_KEY:
                idle.append(worker)
                return
        worker.stop()

    def stop_all(self) -> None:
        with self._lock:
            workers = [w for idle in self._idle.values() for w in idle]
            self._idle.clear()
        for worker in workers:
            worker.stop(wait_s=0.5)


SPARES = _Spares()
atexit.register(SPARES.stop_all)


class WorkerSet:
    """The workers of one sandbox: one per calling thread, reused across threads that end."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self._key = process_key(limits)
        self._lock = threading.Lock()
        self._leases: dict[threading.Thread, WorkerProcess] = {}
        self._idle: list[WorkerProcess] = []

    def for_this_thread(self) -> WorkerProcess:
        me = threading.current_thread()
        with self._lock:
            worker = self._leases.pop(me, None)
            if worker is not None and worker.alive:
                self._leases[me] = worker
                return worker
            worker = None
            for thread in [t for t in self._leases if not t.is_alive()]:
                self._idle.append(self._leases.pop(thread))
            while self._idle and worker is None:
                candidate = self._idle.pop()
                worker = candidate if candidate.alive else None
            if worker is None:
                worker = SPARES.take(self._key)
        if worker is None:
            worker = WorkerProcess(self.limits)  # outside the lock: starting takes a while
        with self._lock:
            self._leases[me] = worker
        return worker

    def current(self) -> WorkerProcess | None:
        """This thread's worker, if it has a live one."""
        with self._lock:
            worker = self._leases.get(threading.current_thread())
        return worker if worker is not None and worker.alive else None

    @property
    def open_connections(self) -> int:
        with self._lock:
            workers = [*self._leases.values(), *self._idle]
        return sum(len(w.engines) for w in workers if w.alive)

    @property
    def workers(self) -> list[WorkerProcess]:
        with self._lock:
            return [w for w in (*self._leases.values(), *self._idle) if w.alive]

    def close(self) -> None:
        """Hand every worker back to the process-wide spares (their databases closed)."""
        with self._lock:
            workers = [*self._leases.values(), *self._idle]
            self._leases.clear()
            self._idle.clear()
        for worker in workers:
            SPARES.give(worker)
