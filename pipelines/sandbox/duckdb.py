"""DuckDB engine: read-only at the engine level, whatever SQL reaches it.

Walls, each enough on its own to keep the file's bytes unchanged:

- ``read_only=True``: every write, CREATE (except in-memory temp objects) and ATTACH of
  ``:memory:`` fails; a missing file is an error, never created;
- ``enable_external_access=False``: no file reads or writes outside the database (read_csv,
  ``FROM 'x.csv'``, COPY, EXPORT, ATTACH, INSTALL), no extension loading;
- extension auto-install/auto-load off, no community or unsigned extensions, no persistent
  secrets, no spilling to a temp directory next to the database;
- ``lock_configuration=True`` last, so a query cannot ``SET`` any of this back.

Timeout: a watchdog timer calls ``connection.interrupt()`` at the deadline (a real interrupt).
Results stream, so the row cap is applied while fetching (a huge cross join returns its first
``row_cap + 1`` rows without materialising the rest).

    DuckDBEngine(path).run("SELECT count(*) FROM claims", timeout_s=30, row_cap=10_000)
    ──► RawResult(columns=("count_star()",), rows=((4812,),), truncated=False)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Self

import duckdb

from pipelines.sandbox.engine import RawResult, require_database_file, statement_keyword
from pipelines.sandbox.errors import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    SandboxError,
    SQLExecutionError,
)

# Every DuckDB connection to one file in a process shares one instance, which must be opened
# with one configuration: sandbox engines and ``connect_readonly`` both use this one.
READ_ONLY_CONFIG: dict[str, str | bool] = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,
    "temp_directory": "",  # spilling would write beside the database
    "memory_limit": "4GB",  # a runaway join fails instead of starving the machine
    "lock_configuration": True,
}

# Engine messages that mean "refused because the connection is read-only / locked down".
_READ_ONLY_MESSAGES = (
    "read-only mode",
    "configuration has been locked",
    "disabled by configuration",
)


def connect(path: str) -> duckdb.DuckDBPyConnection:
    """A read-only, external-access-free connection to an existing DuckDB file."""
    file = require_database_file(path)
    try:
        return duckdb.connect(str(file), read_only=True, config=dict(READ_ONLY_CONFIG))
    except duckdb.Error as error:
        raise DatabaseUnavailable(path, f"not a readable DuckDB database ({error})") from error


class _Watchdog:
    """Calls ``interrupt`` once ``timeout_s`` passes, unless the block ended first.

    The lock makes "ended" and "fired" exclusive, so a late timer can never interrupt the
    connection's next query.
    """

    def __init__(self, timeout_s: float, interrupt: Callable[[], None]) -> None:
        self._interrupt = interrupt
        self._lock = threading.Lock()
        self._ended = False
        self.fired = False
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if not self._ended:
                self.fired = True
                self._interrupt()

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            self._ended = True
        self._timer.cancel()


class DuckDBEngine:
    """One sandboxed read-only DuckDB connection."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._connection = connect(path)

    def run(self, sql: str, *, timeout_s: float, row_cap: int) -> RawResult:
        watchdog = _Watchdog(timeout_s, self._connection.interrupt)
        try:
            with watchdog:
                result = self._connection.execute(sql)
                if result is None or result.description is None:  # None: no statement at all
                    raise SQLExecutionError("the statement returns no result set")
                columns = tuple(column[0] for column in result.description)
                rows = result.fetchmany(row_cap + 1)
        except duckdb.Error as error:
            raise self._translate(error, sql, timeout_s, watchdog.fired) from error
        except (ValueError, OverflowError) as error:  # a value Python cannot hold
            raise SQLExecutionError(f"cannot convert a result value: {error}") from error
        return RawResult(columns=columns, rows=tuple(rows[:row_cap]), truncated=len(rows) > row_cap)

    def _translate(
        self, error: duckdb.Error, sql: str, timeout_s: float, timed_out: bool
    ) -> SandboxError:
        message = str(error)
        if timed_out or isinstance(error, duckdb.InterruptException):
            return QueryTimeout(timeout_s)
        if isinstance(error, duckdb.PermissionException) or any(
            phrase in message for phrase in _READ_ONLY_MESSAGES
        ):
            return ReadOnlyViolation(statement_keyword(sql), f"refused by DuckDB: {message}")
        if isinstance(error, duckdb.IOException):
            return DatabaseUnavailable(self._path, f"cannot read the DuckDB database ({message})")
        return SQLExecutionError(message)

    def close(self) -> None:
        self._connection.close()
