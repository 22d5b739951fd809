"""SQLite engine: read-only at the engine level, whatever SQL reaches it.

Walls, each enough on its own to keep the file's bytes unchanged:

- ``file:<path>?mode=ro`` URI: the file is opened read-only and never created;
- ``PRAGMA query_only=ON``: every write statement fails;
- an authorizer that permits only reading (SELECT, READ, FUNCTION, RECURSIVE): it refuses
  ATTACH (which would create a new file), PRAGMA, temp objects, transactions and the
  functions the guard blocks — so no query can leave state on the connection;
- one statement per call (the driver refuses a second one), autocommit
  (``isolation_level=None``), and a check after each query that no transaction or change
  was left behind (the connection is dropped if one was).

Bounds, set on the connection before the authorizer goes on (user SQL cannot change them):
``SQLITE_LIMIT_LENGTH`` (longest string or blob, ``max_value_bytes``), ``SQLITE_LIMIT_SQL_LENGTH``,
no attached databases, and ``temp_store=MEMORY`` (sorts and temp b-trees never spill to
hidden files; in a worker process SQLite's heap limit and the process limit bound them).
Rows are fetched against a byte budget. Timeout: a progress handler aborts the VM once the
deadline passes — between VM steps only, so one long function call can overrun it; the
worker process (``worker.py``) is what makes the deadline hard.

    SQLiteEngine(path).run("SELECT count(*) FROM singer", timeout_s=30, row_cap=10_000)
    ──► RawResult(columns=("count(*)",), rows=((6,),), truncated=False)
"""

from __future__ import annotations

import math
import sqlite3
import time

from pipelines.sandbox import engine, errors
from pipelines.sandbox.limits import SandboxLimits
from pipelines.sandbox.rules import is_blocked_function

# VM instructions between deadline checks: frequent enough to stop within milliseconds,
# rare enough that the Python callback costs nothing measurable.
_PROGRESS_STEPS = 10_000

_READ_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})

# What the driver says when a string holds more than one statement (3.11 words).
_MULTIPLE_STATEMENTS = "one statement at a time"

# Messages of errors raised while parsing, before any authorizer call: a syntax error.
_SYNTAX_MESSAGES = ("syntax error", "incomplete input", "unrecognized token")


def _decode_text(raw: bytes) -> str:
    # Benchmark databases hold some non-UTF-8 text; replacing bytes beats failing the query.
    return raw.decode("utf-8", errors="replace")


def connect(path: str) -> sqlite3.Connection:
    """A read-only (``mode=ro`` + ``query_only``) connection, checked to be a SQLite database."""
    file = engine.require_database_file(path)
    try:
        connection = sqlite3.connect(
            file.as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as error:
        raise errors.DatabaseUnavailable(path, f"cannot open read-only ({error})") from error
    try:
        connection.execute("PRAGMA query_only=ON")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        connection.close()
        raise errors.DatabaseUnavailable(
            path, f"not a readable SQLite database ({error})"
        ) from error
    connection.text_factory = _decode_text
    return connection


def set_process_heap_limit(megabytes: int) -> None:
    """SQLite's hard heap limit for this whole process (``sqlite3_hard_heap_limit64``):
    past it every allocation fails with SQLITE_NOMEM. Only worker processes set it."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute(f"PRAGMA hard_heap_limit={int(megabytes) << 20}")
    finally:
        connection.close()


def _authorize(
    action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
) -> int:
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and arg2 and not is_blocked_function(arg2, "sqlite"):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _deny_all(*_args: object) -> int:
    return sqlite3.SQLITE_DENY


def syntax_error(sql: str) -> str | None:
    """SQLite's own complaint if ``sql`` is not valid syntax, else ``None``; nothing runs.

    The statement is only prepared, on an empty in-memory database whose authorizer denies
    every action (so preparing a valid statement fails too, with "not authorized") and
    whose progress handler would stop the first VM step.
    """
    connection = sqlite3.connect(":memory:", isolation_level=None)
    try:
        connection.set_authorizer(_deny_all)
        connection.set_progress_handler(lambda: 1, 1)
        try:
            cursor = connection.execute(sql)
        except sqlite3.Error as error:
            message = str(error)
            if any(phrase in message for phrase in _SYNTAX_MESSAGES):
                return message
            return None  # it parsed; preparing it failed later (authorizer, names)
        return "no SQL statement" if cursor.description is None else None
    finally:
        connection.close()


class SQLiteEngine:
    """One sandboxed read-only SQLite connection."""

    def __init__(self, path: str, limits: SandboxLimits | None = None) -> None:
        limits = limits or SandboxLimits()
        self._path = path
        self._max_bytes = limits.max_result_bytes
        self._connection = connect(path)
        self._deadline = math.inf
        connection = self._connection
        connection.execute("PRAGMA temp_store=MEMORY")
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limits.max_value_bytes)
        # In bytes; a character takes at most 4 in UTF-8.
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 4 * limits.max_sql_chars + 16)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.set_authorizer(_authorize)
        connection.set_progress_handler(self._past_deadline, _PROGRESS_STEPS)

    def _past_deadline(self) -> int:
        return int(time.monotonic() > self._deadline)

    def run(
        self, sql: str, *, timeout_s: float, row_cap: int, max_bytes: int | None = None
    ) -> engine.RawResult:
        self._deadline = time.monotonic() + timeout_s
        budget = self._max_bytes if max_bytes is None else max_bytes
        cursor = None
        try:
            cursor = self._connection.execute(sql)
            if cursor.description is None:
                raise errors.SQLExecutionError("the statement returns no result set")
            columns = tuple(column[0] for column in cursor.description)
            rows, truncated = engine.fetch_bounded(cursor.fetchmany, row_cap, budget)
        except sqlite3.Error as error:
            raise self._translate(error, sql, timeout_s) from error
        except (ValueError, OverflowError) as error:  # a value Python cannot hold
            raise errors.SQLExecutionError(f"cannot convert a result value: {error}") from error
        except MemoryError as error:
            raise errors.ResourceLimit("out of memory while running the query") from error
        finally:
            self._deadline = math.inf
            if cursor is not None:
                cursor.close()
        self._check_no_state_left(sql)
        return engine.RawResult(columns=columns, rows=tuple(rows), truncated=truncated)

    def _check_no_state_left(self, sql: str) -> None:
        # The authorizer allows nothing that could do this; if it ever happened, the sandbox
        # discards the connection on the violation.
        if self._connection.in_transaction or self._connection.total_changes:
            raise errors.ReadOnlyViolation(
                engine.statement_keyword(sql), "it left state on the connection"
            )

    def _translate(self, error: sqlite3.Error, sql: str, timeout_s: float) -> errors.SandboxError:
        code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF  # primary result code
        message = str(error)
        if code == sqlite3.SQLITE_INTERRUPT:
            return errors.QueryTimeout(timeout_s)
        if _MULTIPLE_STATEMENTS in message:
            return errors.ReadOnlyViolation("multiple statements", "SQLite reads more than one")
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH) or "not authorized" in message:
            return errors.ReadOnlyViolation(
                engine.statement_keyword(sql), f"refused by SQLite: {error}"
            )
        if code == sqlite3.SQLITE_TOOBIG:
            return errors.ResourceLimit(f"a value or the SQL text is too long for SQLite ({error})")
        if code == sqlite3.SQLITE_NOMEM:
            return errors.ResourceLimit(f"SQLite ran out of memory ({error})")
        if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            return errors.DatabaseUnavailable(self._path, f"corrupt SQLite database ({error})")
        return errors.SQLExecutionError(message)

    def close(self) -> None:
        self._connection.close()
