"""SQLite engine: read-only at the engine level, whatever SQL reaches it.

Walls, each enough on its own to keep the file's bytes unchanged:

- ``file:<path>?mode=ro`` URI: the file is opened read-only and never created;
- ``PRAGMA query_only=ON``: every write statement fails;
- an authorizer that permits only reading (SELECT, READ, FUNCTION, RECURSIVE): it refuses
  ATTACH (which would create a new file), PRAGMA, temp objects, transactions and the
  functions the guard blocks;
- autocommit (``isolation_level=None``): the driver never opens a transaction behind our back.

Timeout: a progress handler aborts the VM once the deadline passes (a real interrupt; the
connection stays usable, but the sandbox discards it anyway).

    SQLiteEngine(path).run("SELECT count(*) FROM singer", timeout_s=30, row_cap=10_000)
    ──► RawResult(columns=("count(*)",), rows=((6,),), truncated=False)
"""

from __future__ import annotations

import math
import sqlite3
import time

from pipelines.sandbox.engine import RawResult, require_database_file, statement_keyword
from pipelines.sandbox.errors import (
    DatabaseUnavailable,
    QueryTimeout,
    ReadOnlyViolation,
    SandboxError,
    SQLExecutionError,
)
from pipelines.sandbox.guard import is_blocked_function

# VM instructions between deadline checks: frequent enough to stop within milliseconds,
# rare enough that the Python callback costs nothing measurable.
_PROGRESS_STEPS = 10_000

_READ_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})


def _decode_text(raw: bytes) -> str:
    # Benchmark databases hold some non-UTF-8 text; replacing bytes beats failing the query.
    return raw.decode("utf-8", errors="replace")


def connect(path: str) -> sqlite3.Connection:
    """A read-only (``mode=ro`` + ``query_only``) connection, checked to be a SQLite database."""
    file = require_database_file(path)
    try:
        connection = sqlite3.connect(
            file.as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as error:
        raise DatabaseUnavailable(path, f"cannot open read-only ({error})") from error
    try:
        connection.execute("PRAGMA query_only=ON")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        connection.close()
        raise DatabaseUnavailable(path, f"not a readable SQLite database ({error})") from error
    connection.text_factory = _decode_text
    return connection


def _authorize(
    action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
) -> int:
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION and arg2 and not is_blocked_function(arg2, "sqlite"):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class SQLiteEngine:
    """One sandboxed read-only SQLite connection."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._connection = connect(path)
        self._deadline = math.inf
        self._connection.set_authorizer(_authorize)
        self._connection.set_progress_handler(self._past_deadline, _PROGRESS_STEPS)

    def _past_deadline(self) -> int:
        return int(time.monotonic() > self._deadline)

    def run(self, sql: str, *, timeout_s: float, row_cap: int) -> RawResult:
        self._deadline = time.monotonic() + timeout_s
        try:
            cursor = self._connection.execute(sql)
            if cursor.description is None:
                raise SQLExecutionError("the statement returns no result set")
            rows = cursor.fetchmany(row_cap + 1)
            columns = tuple(column[0] for column in cursor.description)
            cursor.close()
        except sqlite3.Error as error:
            raise self._translate(error, sql, timeout_s) from error
        except (ValueError, OverflowError) as error:  # a value Python cannot hold
            raise SQLExecutionError(f"cannot convert a result value: {error}") from error
        finally:
            self._deadline = math.inf
        return RawResult(columns=columns, rows=tuple(rows[:row_cap]), truncated=len(rows) > row_cap)

    def _translate(self, error: sqlite3.Error, sql: str, timeout_s: float) -> SandboxError:
        code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF  # primary result code
        if code == sqlite3.SQLITE_INTERRUPT:
            return QueryTimeout(timeout_s)
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH) or "not authorized" in str(error):
            return ReadOnlyViolation(statement_keyword(sql), f"refused by SQLite: {error}")
        if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            return DatabaseUnavailable(self._path, f"corrupt SQLite database ({error})")
        return SQLExecutionError(str(error))

    def close(self) -> None:
        self._connection.close()
