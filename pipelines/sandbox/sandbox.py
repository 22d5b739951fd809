"""The in-process sandbox: guard, engine, canonical result, in one call that never raises.

    Sandbox.execute(sql, db)
        ──check_read_only (sqlglot)──► engine for db.dialect (one per database and thread)
        ──► RawResult ──canonical_rows / result_hash──► ExecutionResult
    any SandboxError ──► ExecutionResult(error, error_kind, hash="ERR:…")

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
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from typing import Any, Self

from sqlglot.errors import ParseError

from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.sandbox import duckdb as duckdb_engine
from pipelines.sandbox import sqlite as sqlite_engine
from pipelines.sandbox.canonical import canonical_rows, error_hash, result_hash
from pipelines.sandbox.engine import Engine
from pipelines.sandbox.errors import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    SandboxError,
)
from pipelines.sandbox.guard import check_read_only

# dialect -> (sandboxed engine, plain read-only connector for trusted introspection)
ENGINES: dict[str, tuple[Callable[[str], Engine], Callable[[str], Any]]] = {
    "sqlite": (sqlite_engine.SQLiteEngine, sqlite_engine.connect),
    "duckdb": (duckdb_engine.DuckDBEngine, duckdb_engine.connect),
}

# After these the connection's state is suspect (or it never opened): drop it.
_DISCARD_AFTER = (ReadOnlyViolation, QueryTimeout, DatabaseUnavailable)


@functools.lru_cache(maxsize=4096)
def _admit(sql: str, dialect: str) -> None:
    """The guard's verdict, cached: scoring runs each gold query once per prediction, and
    the sqlglot parse dominates a fast query's cost. Only admissions are cached (a raise is
    not), so a rejected statement is re-examined every time."""
    check_read_only(sql, dialect)


def _engine_table(dialect: str) -> tuple[Callable[[str], Engine], Callable[[str], Any]]:
    try:
        return ENGINES[dialect]
    except KeyError:
        raise ValueError(
            f"no sandbox engine for dialect {dialect!r}; known: {sorted(ENGINES)}"
        ) from None


def connect_readonly(db: DatabaseRef) -> Any:
    """A DB-API-like connection (``execute(...).fetchall()``) for trusted schema introspection.

    Read-only at the engine level (SQLite ``mode=ro`` + ``query_only``; DuckDB ``read_only``
    without external access) but without the guard, so PRAGMAs and catalog functions work.
    The caller closes it. Raises ``DatabaseUnavailable``.
    """
    _, connector = _engine_table(db.dialect)
    return connector(db.path)


class Sandbox:
    """Runs one read query against a database, read-only, with a timeout and a row cap.

    Thread-safe: each thread gets its own connection per database (created on first use).
    ``execute`` never raises for bad SQL or a bad database; ``execute_strict`` raises the
    typed ``SandboxError`` instead.
    """

    def __init__(self, timeout_s: float = 30.0, row_cap: int = 10_000) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if row_cap < 1:
            raise ValueError(f"row_cap must be >= 1, got {row_cap}")
        self.timeout_s = float(timeout_s)
        self.row_cap = int(row_cap)
        self._engines: dict[tuple[str, str, int], Engine] = {}
        self._lock = threading.Lock()

    def execute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        """Run ``sql``; every failure comes back as an error result, never an exception."""
        started = time.perf_counter()
        try:
            return self.execute_strict(sql, db, timeout_s=timeout_s)
        except SandboxError as error:
            message = str(error)
            return ExecutionResult(
                error=message,
                error_kind=error.kind,
                hash=error_hash(message, db.path),
                elapsed_ms=(time.perf_counter() - started) * 1000,
            )

    async def aexecute(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        """``execute`` on a worker thread, for asyncio callers."""
        return await asyncio.to_thread(self.execute, sql, db, timeout_s=timeout_s)

    def execute_strict(
        self, sql: str, db: DatabaseRef, *, timeout_s: float | None = None
    ) -> ExecutionResult:
        """Run ``sql``; raise ``ReadOnlyViolation``, ``QueryTimeout``, ``DatabaseUnavailable``
        or ``SQLExecutionError`` on failure."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        if limit <= 0:
            raise ValueError(f"timeout_s must be > 0, got {limit}")
        started = time.perf_counter()
        key = (db.dialect, db.path, threading.get_ident())
        try:
            try:
                _admit(sql, db.dialect)
            except ParseError:
                pass  # the engine reports it in its own words, and is read-only on its own
            raw = self._engine(key, db).run(sql, timeout_s=limit, row_cap=self.row_cap)
        except _DISCARD_AFTER:
            self._discard(key)
            raise
        rows = canonical_rows(raw.rows, keep_order=True)
        return ExecutionResult(
            rows=tuple(rows),
            columns=raw.columns,
            row_count=len(rows),
            hash=result_hash(rows, len(raw.columns)),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            truncated=raw.truncated,
        )

    def _engine(self, key: tuple[str, str, int], db: DatabaseRef) -> Engine:
        with self._lock:
            engine = self._engines.get(key)
        if engine is None:
            factory, _ = _engine_table(db.dialect)
            engine = factory(db.path)  # outside the lock: opening may take a while
            with self._lock:
                self._engines[key] = engine
        return engine

    def _discard(self, key: tuple[str, str, int]) -> None:
        with self._lock:
            engine = self._engines.pop(key, None)
        if engine is not None:
            engine.close()

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._engines)

    def close(self) -> None:
        """Close every cached connection (call when no query is running)."""
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
