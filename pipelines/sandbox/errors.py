"""Typed errors of the read-only sandbox.

``Sandbox.execute`` turns each of these into an ``ExecutionResult`` with an ``error_kind``;
``Sandbox.execute_strict`` raises them.

    SandboxError
    ├── ReadOnlyViolation   the statement is not exactly one read query   (read_only_violation)
    ├── QueryTimeout        the engine was interrupted at the deadline    (timeout)
    ├── DatabaseUnavailable missing, empty, corrupt or non-database file   (database_unavailable)
    └── SQLExecutionError   the engine rejected the query                  (sql_error)
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base of every sandbox error; ``kind`` is the ``ExecutionResult.error_kind`` it maps to."""

    kind = "sandbox_error"


class ReadOnlyViolation(SandboxError):
    """A statement that could change state or reach outside the database.

    ``offender`` names what was refused: a statement kind (``"DELETE"``, ``"ATTACH"``,
    ``"multiple statements"``) or a function name (``"read_csv"``).
    """

    kind = "read_only_violation"

    def __init__(self, offender: str, detail: str = "") -> None:
        self.offender = offender
        message = f"read-only violation: {offender} is not allowed"
        super().__init__(f"{message} ({detail})" if detail else message)


class QueryTimeout(SandboxError):
    """The query ran past its wall-clock limit and the engine was interrupted."""

    kind = "timeout"

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(f"query timed out: exceeded the {timeout_s:g} s limit")


class DatabaseUnavailable(SandboxError):
    """The database file cannot be opened read-only as a database of its dialect."""

    kind = "database_unavailable"

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"database unavailable: {reason}: {path}")


class SQLExecutionError(SandboxError):
    """The engine rejected or failed the query (syntax error, unknown column, ...)."""

    kind = "sql_error"
