"""The worker process: where a sandboxed query runs when its bounds must hold.

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

The parent starts it and talks to it through ``worker_process.WorkerProcess``; ``worker_set``
gives each calling thread its own and keeps idle ones for reuse.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pipelines.sandbox.canonical import canonical_rows, result_hash
from pipelines.sandbox.errors import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    ResourceLimit,
    SandboxError,
    to_wire,
)
from pipelines.sandbox.limits import MIB, SandboxLimits

# After these an engine's state is suspect (or it never opened): drop it.
DISCARD_AFTER = (ReadOnlyViolation, QueryTimeout, DatabaseUnavailable, ResourceLimit)

_MAX_ENGINES = 32  # open databases per worker, least recently used closed first
_PARENT_CHECK_S = 1.0


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
