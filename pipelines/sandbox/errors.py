"""Typed errors of the read-only sandbox.

``Sandbox.execute`` turns each of these into an ``ExecutionResult`` with an ``error_kind``;
``Sandbox.execute_strict`` raises them.

    SandboxError                                                           (sandbox_error)
    ├── ReadOnlyViolation   the statement is not exactly one read query   (read_only_violation)
    │   └── UncheckableSQL  the guard cannot parse it, the engine can: refused, never run
    ├── QueryTimeout        the query ran past its deadline               (timeout)
    ├── ResourceLimit       a memory, value-size or SQL-size bound was hit (resource_limit)
    │   ├── ResultTooLarge  the fetched rows passed the byte budget
    │   └── WorkerDied      the process running the query died
    ├── DatabaseUnavailable missing, empty, corrupt or non-database file, or a server
    │                       that cannot be reached                        (database_unavailable)
    ├── UnsafeRole          a server role that can write: refused unless allowed (unsafe_role)
    └── SQLExecutionError   the engine rejected the query                  (sql_error)

Errors cross the worker-process boundary as plain data (``to_wire`` / ``from_wire``): the
class name from a fixed table, the message and a few str/float attributes.
"""

from __future__ import annotations

from typing import Any


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


class UncheckableSQL(ReadOnlyViolation):
    """SQL the guard cannot tokenize or parse but the engine would accept: refused unseen.

    The sandbox fails closed: what the checker cannot read, the engine never runs.
    """

    def __init__(self, detail: str = "") -> None:
        super().__init__("a statement the guard cannot parse", detail)


class QueryTimeout(SandboxError):
    """The query (guard included) ran past its wall-clock limit and was stopped."""

    kind = "timeout"

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(f"query timed out: exceeded the {timeout_s:g} s limit")


class ResourceLimit(SandboxError):
    """The query needed more memory, a longer value or a longer SQL text than allowed."""

    kind = "resource_limit"

    def __init__(self, detail: str) -> None:
        super().__init__(f"resource limit: {detail}")


class ResultTooLarge(ResourceLimit):
    """The rows fetched so far passed ``max_result_bytes``: fetching stopped, no rows kept.

    An error rather than a cut result: a prefix chosen by size could match another query's
    answer by accident.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        super().__init__(f"the result exceeds the {max_bytes} byte budget")


class WorkerDied(ResourceLimit):
    """The worker process running the query exited (out of memory, or killed)."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"the sandbox worker process died ({detail})")


class DatabaseUnavailable(SandboxError):
    """The database file cannot be opened read-only as a database of its dialect."""

    kind = "database_unavailable"

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"database unavailable: {reason}: {path}")


class UnsafeRole(SandboxError):
    """The role the sandbox connects to a server as can write to the database: no query runs.

    ``reason`` says how it can write; the message says how to connect instead, on one line.
    """

    kind = "unsafe_role"

    def __init__(self, location: str, reason: str) -> None:
        self.path = location
        self.reason = reason
        super().__init__(
            f"refusing to run queries on {location}: the role {reason}; connect with a role "
            "that has SELECT only (docs/postgres.md), or set pipeline.sandbox.allow_write_role=true"
        )


class SQLExecutionError(SandboxError):
    """The engine rejected or failed the query (syntax error, unknown column, ...)."""

    kind = "sql_error"


_WIRE_CLASSES: dict[str, type[SandboxError]] = {
    cls.__name__: cls
    for cls in (
        SandboxError,
        ReadOnlyViolation,
        UncheckableSQL,
        QueryTimeout,
        ResourceLimit,
        ResultTooLarge,
        WorkerDied,
        DatabaseUnavailable,
        UnsafeRole,
        SQLExecutionError,
    )
}
_WIRE_ATTRIBUTES = ("offender", "timeout_s", "max_bytes", "path", "reason")


def to_wire(error: SandboxError) -> tuple[str, str, dict[str, Any]]:
    """``error`` as plain data: (class name, message, attributes)."""
    name = type(error).__name__ if type(error).__name__ in _WIRE_CLASSES else "SandboxError"
    attributes = {a: getattr(error, a) for a in _WIRE_ATTRIBUTES if hasattr(error, a)}
    return name, str(error), attributes


def from_wire(name: str, message: str, attributes: dict[str, Any]) -> SandboxError:
    """The error ``to_wire`` described, with its message and attributes as they were."""
    cls = _WIRE_CLASSES.get(name, SandboxError)
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    for attribute, value in attributes.items():
        if attribute in _WIRE_ATTRIBUTES and isinstance(value, (str, int, float)):
            setattr(error, attribute, value)
    return error
