"""DuckDB engine: read-only at the engine level, whatever SQL reaches it.

Walls, each enough on its own to keep the file's bytes unchanged:

- ``read_only=True``: every write, CREATE (except in-memory temp objects) and ATTACH of
  ``:memory:`` fails; a missing file is an error, never created;
- ``enable_external_access=False``: no file reads or writes outside the database (read_csv,
  ``FROM 'x.csv'``, COPY, EXPORT, ATTACH, INSTALL), no extension loading;
- extension auto-install/auto-load off, no community or unsigned extensions, no persistent
  secrets, no spilling to a temp directory (``temp_directory=''``, and a 0-byte cap);
- ``lock_configuration=True`` last, so a query cannot ``SET`` any of this back;
- DuckDB's own parser (``extract_statements``) must see exactly one statement, of type
  SELECT, and only that parsed statement is executed: a string that the guard and DuckDB
  read differently (comment nesting, say) cannot smuggle a second statement in. A SELECT
  cannot create temp views, tables or macros, so no state outlives a query.

Timeout: the engine's watchdog thread calls ``connection.interrupt()`` at the deadline (a real
interrupt, checked between vectors). Results stream, so the row cap and the byte budget are applied
while fetching (a huge cross join returns its first ``row_cap + 1`` rows without
materialising the rest).

    DuckDBEngine(path).run("SELECT count(*) FROM claims", timeout_s=30, row_cap=10_000)
    ──► RawResult(columns=("count_star()",), rows=((4812,),), truncated=False)
"""

from __future__ import annotations

import threading

import duckdb

from pipelines.sandbox import engine, errors
from pipelines.sandbox.limits import SandboxLimits

# Every DuckDB connection to one file in a process shares one instance, which must be opened
# with one configuration: sandbox engines and ``connect_readonly`` both use this one. A worker
# process lowers ``memory_limit`` for itself (``set_process_memory_limit``).
READ_ONLY_CONFIG: dict[str, str | bool] = {
    "enable_external_access": False,
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,
    "temp_directory": "",  # spilling would write beside the database
    "max_temp_directory_size": "0GB",
    "memory_limit": "4GB",  # a runaway join fails instead of starving the machine
    "lock_configuration": True,
}

# Engine messages that mean "refused because the connection is read-only / locked down".
_READ_ONLY_MESSAGES = (
    "read-only mode",
    "configuration has been locked",
    "disabled by configuration",
)


def set_process_memory_limit(megabytes: int) -> None:
    """``memory_limit`` for every DuckDB database this process opens from now on."""
    READ_ONLY_CONFIG["memory_limit"] = f"{int(megabytes)}MB"


def connect(path: str) -> duckdb.DuckDBPyConnection:
    """A read-only, external-access-free connection to an existing DuckDB file."""
    file = engine.require_database_file(path)
    try:
        return duckdb.connect(str(file), read_only=True, config=dict(READ_ONLY_CONFIG))
    except duckdb.Error as error:
        raise errors.DatabaseUnavailable(
            path, f"not a readable DuckDB database ({error})"
        ) from error


_parser = threading.local()


def syntax_error(sql: str) -> str | None:
    """DuckDB's own complaint if ``sql`` is not valid syntax, else ``None``; nothing runs
    (``extract_statements`` only parses, on an empty in-memory database)."""
    connection = getattr(_parser, "connection", None)
    if connection is None:
        connection = _parser.connection = duckdb.connect(":memory:")
    try:
        statements = connection.extract_statements(sql)
    except duckdb.Error as error:
        return str(error)
    return None if statements else "no SQL statement"


class DuckDBEngine:
    """One sandboxed read-only DuckDB connection."""

    def __init__(self, path: str, limits: SandboxLimits | None = None) -> None:
        self._path = path
        self._max_bytes = (limits or SandboxLimits()).max_result_bytes
        self._connection = connect(path)
        self._watchdog = engine.Watchdog(self._connection.interrupt, name="duckdb-watchdog")

    def _only_select(self, sql: str) -> duckdb.Statement:
        """The one SELECT statement DuckDB's parser finds in ``sql``, or a violation."""
        statements = self._connection.extract_statements(sql)
        if not statements:
            raise errors.SQLExecutionError("no SQL statement")
        if len(statements) > 1:
            raise errors.ReadOnlyViolation(
                "multiple statements", f"DuckDB's parser reads {len(statements)} statements"
            )
        statement = statements[0]
        if statement.type != duckdb.StatementType.SELECT:
            raise errors.ReadOnlyViolation(
                engine.statement_keyword(sql), f"DuckDB parses a {statement.type.name} statement"
            )
        return statement

    def run(
        self, sql: str, *, timeout_s: float, row_cap: int, max_bytes: int | None = None
    ) -> engine.RawResult:
        budget = self._max_bytes if max_bytes is None else max_bytes
        watchdog = self._watchdog
        try:
            statement = self._only_select(sql)
            watchdog.arm(timeout_s)
            try:
                result = self._connection.execute(statement)
                if result is None or result.description is None:
                    raise errors.SQLExecutionError("the statement returns no result set")
                columns = tuple(column[0] for column in result.description)
                rows, truncated = engine.fetch_bounded(result.fetchmany, row_cap, budget)
            finally:
                watchdog.disarm()
        except duckdb.Error as error:
            raise self._translate(error, sql, timeout_s, watchdog.fired) from error
        except (ValueError, OverflowError) as error:  # a value Python cannot hold
            raise errors.SQLExecutionError(f"cannot convert a result value: {error}") from error
        except MemoryError as error:
            raise errors.ResourceLimit("out of memory while fetching the result") from error
        return engine.RawResult(columns=columns, rows=tuple(rows), truncated=truncated)

    def _translate(
        self, error: duckdb.Error, sql: str, timeout_s: float, timed_out: bool
    ) -> errors.SandboxError:
        message = str(error)
        if timed_out or isinstance(error, duckdb.InterruptException):
            return errors.QueryTimeout(timeout_s)
        if isinstance(error, duckdb.OutOfMemoryException):
            return errors.ResourceLimit(f"DuckDB ran out of memory ({message.splitlines()[0]})")
        if isinstance(error, duckdb.PermissionException) or any(
            phrase in message for phrase in _READ_ONLY_MESSAGES
        ):
            return errors.ReadOnlyViolation(
                engine.statement_keyword(sql), f"refused by DuckDB: {message}"
            )
        if isinstance(error, duckdb.IOException):
            return errors.DatabaseUnavailable(
                self._path, f"cannot read the DuckDB database ({message})"
            )
        return errors.SQLExecutionError(message)

    def close(self) -> None:
        self._watchdog.close()
        self._connection.close()
