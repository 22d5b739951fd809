"""The sandbox: guard, engine, canonical result, in one call that never raises.

    Sandbox.execute(sql, db)
        ──length check──► shape and expected parse time within the bounds and the deadline
        ──► guard (sqlglot; admissions cached, bounded in bytes)
        ──► engine for db.dialect, in this thread's worker process (or inline; a server
            database always inline, on its bounded connection pool)
            with what is left of the deadline, the row cap and the byte budget
        ──► ExecutionResult(rows, hash)
    any SandboxError ──► ExecutionResult(error, error_kind, hash="ERR:…")

Fails closed: a string the guard cannot parse never runs. The engine's parser is asked,
without running anything, only to tell a syntax error (``sql_error``, in the engine's words)
from a string the engine would accept (refused: ``read_only_violation``).

The deadline covers the whole call: the guard's expected time must fit in it before the
guard starts (``guard.parse_seconds``), its actual time is taken from it, the engine is
interrupted when it passes, and in ``process`` isolation the worker is killed
``kill_grace_s`` later if the engine has not stopped (see ``worker.py``, ``worker_process.py``,
``limits.py``).

``rows`` keep the engine's order (ORDER BY stays visible) with canonical cells; ``hash`` is
order-free. A result cut at ``row_cap`` is marked ``truncated`` and hashes its first
``row_cap`` rows.

Example::

    >>> sandbox = Sandbox(timeout_s=5, row_cap=100)
    >>> result = sandbox.execute("SELECT count(*) FROM singer", db)
    >>> result.rows, result.error
    (((6,),), None)
    >>> sandbox.execute("DROP TABLE singer", db).error_kind
    'read_only_violation'
    >>> sandbox.close()
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Self

from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.sandbox import duckdb as duckdb_engine
from pipelines.sandbox import postgres as postgres_engine
from pipelines.sandbox import sqlite as sqlite_engine
from pipelines.sandbox.canonical import canonical_rows, error_hash, result_hash
from pipelines.sandbox.engine import Engine
from pipelines.sandbox.errors import (
    QueryTimeout,
    ReadOnlyViolation,
    ResourceLimit,
    SandboxError,
    SQLExecutionError,
    UncheckableSQL,
)
from pipelines.sandbox.guard import ApprovalCache, check_read_only, parse_seconds, sql_shape
from pipelines.sandbox.limits import SandboxLimits
from pipelines.sandbox.worker import DISCARD_AFTER
from pipelines.sandbox.worker_process import RunResult
from pipelines.sandbox.worker_set import WorkerSet

# dialect -> (sandboxed engine, plain read-only connector for trusted introspection)
ENGINES: dict[str, tuple[Callable[..., Engine], Callable[[str], Any]]] = {
    "sqlite": (sqlite_engine.SQLiteEngine, sqlite_engine.connect),
    "duckdb": (duckdb_engine.DuckDBEngine, duckdb_engine.connect),
    "postgres": (postgres_engine.PostgresEngine, postgres_engine.connect),
}
# Engines whose database is on a server: they run in the calling thread (the server bounds
# time and memory), sharing one bounded connection pool per database and process.
SERVER_DIALECTS = frozenset({"postgres"})

# dialect -> the engine's own parser: its syntax complaint, or None if the string parses
SYNTAX_CHECKS: dict[str, Callable[[str], str | None]] = {
    "sqlite": sqlite_engine.syntax_error,
    "duckdb": duckdb_engine.syntax_error,
    "postgres": postgres_engine.syntax_error,
}

# Scoring runs each gold query once per prediction, and the sqlglot parse dominates a fast
# query's cost: admissions are remembered process-wide.
APPROVALS = ApprovalCache()


def _engine_table(dialect: str) -> tuple[Callable[..., Engine], Callable[[str], Any]]:
    try:
        return ENGINES[dialect]
    except KeyError:
        raise ValueError(
            f"no sandbox engine for dialect {dialect!r}; known: {sorted(ENGINES)}"
        ) from None


def connect_readonly(db: DatabaseRef) -> Any:
    """A DB-API-like connection (``execute(...).fetchall()``) for trusted schema introspection.

    Read-only at the engine level (SQLite ``mode=ro`` + ``query_only``; DuckDB ``read_only``
    without external access; PostgreSQL ``default_transaction_read_only``, the role checked
    when a sandbox first queries the database) but without the guard, so PRAGMAs and catalog
    functions work.
    The caller closes it. Raises ``DatabaseUnavailable``.
    """
    _, connector = _engine_table(db.dialect)
    return connector(db.path)


def admit(
    sql: str, dialect: str, limits: SandboxLimits | None = None, seconds_left: float = math.inf
) -> None:
    """Pass the guard or raise: ``ReadOnlyViolation``, or ``SQLExecutionError`` for a syntax
    error, or ``UncheckableSQL`` for a string only the engine can parse. Never runs ``sql``.

    Before parsing, the statement's shape is held to ``limits`` (``ResourceLimit``) and its
    expected parse time to ``seconds_left`` (``QueryTimeout``): the parse cannot be stopped
    once started, so what it would cost is judged first.
    """
    if (sql, dialect) in APPROVALS:
        return
    limits = limits or SandboxLimits()
    tokens, depth = sql_shape(sql)
    if tokens > limits.max_sql_tokens:
        raise ResourceLimit(
            f"the SQL has {tokens} words and symbols, more than {limits.max_sql_tokens}"
        )
    if depth > limits.max_sql_depth:
        raise ResourceLimit(
            f"the SQL nests parentheses {depth} deep, more than {limits.max_sql_depth}"
        )
    if parse_seconds(tokens) > seconds_left:
        raise QueryTimeout(seconds_left)
    try:
        check_read_only(sql, dialect)
    except ReadOnlyViolation:
        raise
    except MemoryError as error:
        raise ResourceLimit("out of memory while checking the SQL") from error
    except Exception as error:  # ParseError, or sqlglot failing in any other way
        _refuse_unparsed(sql, dialect, error)
    APPROVALS.add(sql, dialect)


def _refuse_unparsed(sql: str, dialect: str, error: BaseException) -> None:
    complaint = SYNTAX_CHECKS[dialect](sql)
    if complaint is not None:
        raise SQLExecutionError(complaint) from error
    raise UncheckableSQL(f"sqlglot: {str(error).splitlines()[0][:200]}") from error


class _Inline:
    """Engines in the calling thread: one per database and thread."""

    def __init__(self, limits: SandboxLimits) -> None:
        self._limits = limits
        self._engines: dict[tuple[str, str, int], Engine] = {}
        self._lock = threading.Lock()

    def run(self, sql: str, db: DatabaseRef, timeout_s: float, row_cap: int) -> RunResult:
        key = (db.dialect, db.path, threading.get_ident())
        with self._lock:
            engine = self._engines.get(key)
        if engine is None:
            factory, _ = _engine_table(db.dialect)
            engine = factory(db.path, self._limits)  # outside the lock: opening may take a while
            with self._lock:
                self._engines[key] = engine
        raw = engine.run(
            sql, timeout_s=timeout_s, row_cap=row_cap, max_bytes=self._limits.max_result_bytes
        )
        rows = canonical_rows(raw.rows, keep_order=True)
        digest = result_hash(rows, len(raw.columns))
        return RunResult(raw.columns, tuple(rows), digest, raw.truncated)

    def discard(self, db: DatabaseRef) -> None:
        with self._lock:
            engine = self._engines.pop((db.dialect, db.path, threading.get_ident()), None)
        if engine is not None:
            engine.close()

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._engines)

    def close(self) -> None:
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()


class _InProcesses:
    """Engines in worker processes: one worker per calling thread (``worker_set.WorkerSet``)."""

    def __init__(self, limits: SandboxLimits) -> None:
        self._limits = limits
        self.workers = WorkerSet(limits)

    def run(self, sql: str, db: DatabaseRef, timeout_s: float, row_cap: int) -> RunResult:
        worker = self.workers.for_this_thread()
        return worker.run(
            db.dialect,
            db.path,
            sql,
            timeout_s=timeout_s,
            row_cap=row_cap,
            max_bytes=self._limits.max_result_bytes,
        )

    def discard(self, db: DatabaseRef) -> None:
        worker = self.workers.current()
        if worker is not None:
            worker.close_engine(db.dialect, db.path)

    @property
    def open_connections(self) -> int:
        return self.workers.open_connections

    def close(self) -> None:
        self.workers.close()


class Sandbox:
    """Runs one read query against a database, read-only, within ``SandboxLimits``.

    ``Sandbox(timeout_s, row_cap)`` keeps its old meaning; every other bound is a keyword
    (``max_result_bytes=…``, ``memory_mb=…``, ``isolation="inline"``, …) or comes from
    ``limits``. Thread-safe: each thread gets its own worker (or, inline, its own connection
    per database). ``execute`` never raises for bad SQL, a bad database or an exhausted
    resource; ``execute_strict`` raises the typed ``SandboxError`` instead.
    """

    def __init__(
        self,
        timeout_s: float | None = None,
        row_cap: int | None = None,
        *,
        limits: SandboxLimits | None = None,
        **bounds: Any,
    ) -> None:
        given = {"timeout_s": timeout_s, "row_cap": row_cap, **bounds}
        base = (limits or SandboxLimits()).model_dump()
        # A ValidationError is a ValueError: bad limits fail here, not at the first query.
        self.limits = SandboxLimits(**{**base, **{k: v for k, v in given.items() if v is not None}})
        self.timeout_s = self.limits.timeout_s
        self.row_cap = self.limits.row_cap
        self._inline = _Inline(self.limits)
        self._runner: _Inline | _InProcesses = (
            self._inline if self.limits.isolation == "inline" else _InProcesses(self.limits)
        )

    def _runner_for(self, db: DatabaseRef) -> _Inline | _InProcesses:
        return self._inline if db.dialect in SERVER_DIALECTS else self._runner

    def check_database(self, db: DatabaseRef) -> None:
        """Raise the typed error that would fail every query on ``db`` (``DatabaseUnavailable``;
        ``UnsafeRole`` for a server role that can write); nothing is kept open."""
        factory, connector = _engine_table(db.dialect)
        if db.dialect in SERVER_DIALECTS:
            factory(db.path, self.limits).close()
        else:
            connector(db.path).close()

    def execute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        """Run ``sql``; every failure comes back as an error result, never an exception."""
        started = time.perf_counter()
        self._limit(timeout_s)  # a bad argument is the caller's bug: that one raises
        try:
            return self.execute_strict(sql, db, timeout_s=timeout_s)
        except SandboxError as error:
            return _error_result(error, db, started)
        except MemoryError:
            return _error_result(ResourceLimit("out of memory in the sandbox"), db, started)
        except Exception as error:  # a bug must not take the caller down with it
            internal = SandboxError(f"internal sandbox error: {type(error).__name__}: {error}")
            return _error_result(internal, db, started)

    async def aexecute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        """``execute`` on a worker thread, for asyncio callers."""
        return await asyncio.to_thread(self.execute, sql, db, timeout_s=timeout_s)

    def _limit(self, timeout_s: float | None) -> float:
        limit = self.timeout_s if timeout_s is None else timeout_s
        if limit <= 0:
            raise ValueError(f"timeout_s must be > 0, got {limit}")
        return float(limit)

    def execute_strict(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        """Run ``sql``; raise ``ReadOnlyViolation``, ``QueryTimeout``, ``ResourceLimit``,
        ``DatabaseUnavailable`` or ``SQLExecutionError`` on failure."""
        limit = self._limit(timeout_s)
        _engine_table(db.dialect)
        runner = self._runner_for(db)
        started = time.perf_counter()
        try:
            if len(sql) > self.limits.max_sql_chars:
                raise ResourceLimit(
                    f"the SQL text has {len(sql)} characters, more than {self.limits.max_sql_chars}"
                )
            admit(sql, db.dialect, self.limits, limit - (time.perf_counter() - started))
            remaining = limit - (time.perf_counter() - started)
            if remaining <= 0:
                raise QueryTimeout(limit)
            result = runner.run(sql, db, remaining, self.row_cap)
        except QueryTimeout as error:
            runner.discard(db)
            raise QueryTimeout(limit) from error  # the caller's limit, not what was left of it
        except DISCARD_AFTER:
            runner.discard(db)
            raise
        return ExecutionResult(
            rows=result.rows,
            columns=result.columns,
            row_count=len(result.rows),
            hash=result.hash,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            truncated=result.truncated,
        )

    @property
    def open_connections(self) -> int:
        inline = self._inline.open_connections if self._runner is not self._inline else 0
        return self._runner.open_connections + inline

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of this sandbox's live workers (none inline)."""
        if isinstance(self._runner, _InProcesses):
            return [worker.pid for worker in self._runner.workers.workers]
        return []

    def close(self) -> None:
        """Close every cached connection (call when no query is running); in ``process``
        isolation the idle workers are kept for the next sandbox with the same limits."""
        self._runner.close()
        if self._runner is not self._inline:
            self._inline.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _error_result(error: SandboxError, db: DatabaseRef, started: float) -> ExecutionResult:
    message = str(error)
    return ExecutionResult(
        error=message,
        error_kind=error.kind,
        hash=error_hash(message, db.path),
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
