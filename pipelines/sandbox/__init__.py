"""Read-only SQL execution sandbox: every candidate SQL runs here, and only here.

    sql, DatabaseRef ──guard (sqlglot; fails closed)──► worker process ──► read-only engine
    (SQLite / DuckDB) under SandboxLimits (deadline, row cap, byte budget, memory)
    — or, for a PostgreSQL database, a READ ONLY transaction on a bounded connection pool
    ──► canonical rows ──► ExecutionResult(rows, hash) | ExecutionResult(error, "ERR:…")

Public API::

    Sandbox(timeout_s=30.0, row_cap=10_000, **bounds).execute(sql, db)  # never raises
    Sandbox(...).execute_strict(sql, db) -> ExecutionResult        # raises SandboxError
    await Sandbox(...).aexecute(sql, db)
    SandboxLimits(...)                                             # the bounds; see limits.py
    await LocalSandboxPool.create(size, timeout_s, row_cap, **bounds).execute(sql, db)
    await SandboxPool.create(size, timeout_s, row_cap, **bounds).execute(sql, db)  # Ray actors
    Sandbox(...).check_database(db)      # raises DatabaseUnavailable / UnsafeRole, runs nothing
    check_read_only(sql, dialect) -> sqlglot.Expression
    result_hash(rows, n_columns=None), error_hash(message, db_path=None), canonical_rows(rows)
    connect_readonly(db) -> DB-API-like read-only connection (trusted introspection only)
"""

from pipelines.sandbox.canonical import canonical_rows, canonical_value, error_hash, result_hash
from pipelines.sandbox.errors import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    ResourceLimit,
    ResultTooLarge,
    SandboxError,
    SQLExecutionError,
    UncheckableSQL,
    UnsafeRole,
    WorkerDied,
)
from pipelines.sandbox.guard import check_read_only
from pipelines.sandbox.limits import SandboxLimits, SandboxSettings
from pipelines.sandbox.pool import ExecutionPool, LocalSandboxPool, SandboxPool
from pipelines.sandbox.sandbox import Sandbox, connect_readonly

__all__ = [
    "DatabaseUnavailable",
    "ExecutionPool",
    "LocalSandboxPool",
    "QueryTimeout",
    "ReadOnlyViolation",
    "ResourceLimit",
    "ResultTooLarge",
    "SQLExecutionError",
    "Sandbox",
    "SandboxError",
    "SandboxLimits",
    "SandboxSettings",
    "SandboxPool",
    "UncheckableSQL",
    "UnsafeRole",
    "WorkerDied",
    "canonical_rows",
    "canonical_value",
    "check_read_only",
    "connect_readonly",
    "error_hash",
    "result_hash",
]
