"""PostgreSQL engine: a database on a server, read-only whatever SQL reaches it.

Walls, each enough on its own to leave the database unchanged:

- the role: the engine refuses to start (``UnsafeRole``, one line) when the role it connects
  as can write — a superuser or a role with CREATEROLE / CREATEDB / REPLICATION / BYPASSRLS,
  INSERT / UPDATE / DELETE / TRUNCATE on a table, CREATE in a schema or in the database —
  unless ``allow_write_role`` says so (``SandboxLimits``);
- every query runs in a ``READ ONLY`` transaction that is rolled back, whatever it did;
- the query runs as a server-side cursor (``DECLARE … CURSOR FOR``), which the server accepts
  for exactly one SELECT, VALUES or TABLE statement without data-modifying WITH clauses;
- calls to the database's own volatile functions (what a user function that writes, or
  reaches another server, is declared as) are refused before anything runs.

Bounds: ``statement_timeout`` and ``idle_in_transaction_session_timeout`` are set for each
transaction to what is left of the deadline, and a watchdog cancels the query on the server
when the deadline passes (each FETCH is a statement of its own: the watchdog holds the whole
call). Rows are fetched from the cursor in batches against the row cap and the byte budget,
so the server never sends more than the cap and one batch. Connections come from one bounded
pool per server database and process (``pool_size``; waiting for one counts against the
deadline); a connection whose rollback fails is closed rather than reused.

A server that is down gives ``DatabaseUnavailable`` at once after the first failure (the
pool is bypassed for a direct attempt until the server answers again); a restarted server's
dropped connections are replaced by the pool's check.

    PostgresEngine("postgresql://reader@db:5432/claims").run(
        "SELECT count(*) FROM claims", timeout_s=30, row_cap=10_000)
    ──► RawResult(columns=("count",), rows=((4812,),), truncated=False)
"""

from __future__ import annotations

import atexit
import math
import os
import re
import threading
import time

import psycopg
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from pipelines.sandbox import engine, errors
from pipelines.sandbox.limits import SandboxLimits

SCHEMES = ("postgresql://", "postgres://")
_CONNECT_TIMEOUT_S = 5  # the direct attempt that tells a down server from a busy pool

# Schemas of the server itself, never the user's data.
SYSTEM_SCHEMAS = "('pg_catalog', 'information_schema')"
_USER_SCHEMA = f"n.nspname NOT IN {SYSTEM_SCHEMAS} AND n.nspname NOT LIKE 'pg\\_%'"

# What makes a role able to write, one column per reason (true = it can).
_ROLE_CHECK = f"""
SELECT
  r.rolsuper AS superuser,
  r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls AS role_attributes,
  EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND {_USER_SCHEMA}
            AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')) AS table_writes,
  EXISTS (SELECT 1 FROM pg_namespace n
          WHERE {_USER_SCHEMA} AND has_schema_privilege(n.oid, 'CREATE')) AS schema_create,
  has_database_privilege(current_database(), 'CREATE') AS database_create
FROM pg_roles r WHERE r.rolname = current_user
"""
_ROLE_REASONS = (
    "is a superuser",
    "has CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS",
    "has INSERT, UPDATE, DELETE or TRUNCATE on a table",
    "has CREATE on a schema",
    "has CREATE on the database",
)

# The database's own volatile functions: what the engine refuses to call.
_VOLATILE_FUNCTIONS = f"""
SELECT DISTINCT lower(p.proname) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE {_USER_SCHEMA} AND p.provolatile = 'v'
"""
_CALL = re.compile(r'(?:"((?:[^"]|"")+)"|([A-Za-z_][\w$]*))\s*\(')

# SQLSTATE classes and codes, as the server reports them.
_CANCELED = "57014"
_READ_ONLY_STATES = {"25006", "42501"}  # read-only transaction, insufficient privilege
_UNAVAILABLE_CLASSES = ("08", "57P", "3D")  # connection, shutdown, no such database
_RESOURCE_CLASSES = ("53", "54")  # insufficient resources, program limit exceeded
_MULTIPLE_STATEMENTS = "multiple commands"
_DATA_MODIFYING = "data-modifying statements"  # a cursor over WITH … DELETE / INSERT / UPDATE
_NOT_A_QUERY = re.compile(r'^syntax error at or near "(\w+)"', re.IGNORECASE)


def is_server_location(location: str) -> bool:
    return location.startswith(SCHEMES)


def redacted(location: str) -> str:
    """``location`` without a password, for messages and logs."""
    return re.sub(r"^(\w+://[^:/@]*):[^@/]*@", r"\1:***@", location)


def database_name(location: str) -> str:
    """The database a ``postgresql://`` URI names (the role's name when it names none)."""
    info = psycopg.conninfo.conninfo_to_dict(location)
    return str(info.get("dbname") or info.get("user") or "postgres")


def _unavailable(location: str, error: BaseException) -> errors.DatabaseUnavailable:
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return errors.DatabaseUnavailable(
        redacted(location), f"PostgreSQL server unavailable ({detail})"
    )


def check_role(connection: psycopg.Connection, location: str) -> None:
    """Raise ``UnsafeRole`` when the connected role can write (see the module docstring)."""
    row = connection.execute(_ROLE_CHECK).fetchone()
    if row is None:
        raise errors.UnsafeRole(redacted(location), "is not in pg_roles")
    reasons = [reason for flag, reason in zip(row, _ROLE_REASONS) if flag]
    if reasons:
        raise errors.UnsafeRole(redacted(location), f"{connection.info.user!r} {reasons[0]}")


def connect(location: str, *, allow_write_role: bool = True) -> psycopg.Connection:
    """A read-only connection (``default_transaction_read_only``, autocommit); the role is
    checked unless ``allow_write_role`` (trusted introspection reads with the default). Raises
    ``DatabaseUnavailable`` or ``UnsafeRole``."""
    try:
        connection = psycopg.connect(location, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S)
    except psycopg.Error as error:
        raise _unavailable(location, error) from error
    try:
        connection.execute("SET default_transaction_read_only = on")
        if not allow_write_role:
            check_role(connection, location)
    except BaseException:
        connection.close()
        raise
    return connection


def _configure(connection: psycopg.Connection) -> None:
    connection.autocommit = True
    connection.execute("SET default_transaction_read_only = on")
    connection.autocommit = False
    connection.read_only = True


class _Server:
    """One server database in this process: its bounded pool, its role checked once, the
    names of its volatile functions, and whether it was last seen down."""

    def __init__(self, location: str, limits: SandboxLimits) -> None:
        self.location = location
        with connect(location, allow_write_role=limits.allow_write_role) as connection:
            rows = connection.execute(_VOLATILE_FUNCTIONS).fetchall()
        self.volatile = frozenset(row[0] for row in rows)
        self.down = False
        self._limits = limits
        self._lock = threading.Lock()
        self.pool = self._new_pool()

    def _new_pool(self) -> ConnectionPool:
        return ConnectionPool(
            self.location,
            min_size=0,
            max_size=self._limits.pool_size,
            kwargs={"connect_timeout": _CONNECT_TIMEOUT_S},
            configure=_configure,
            check=ConnectionPool.check_connection,
            name=f"sandbox:{redacted(self.location)}",
            open=True,
        )

    def take(self, timeout_s: float) -> tuple[ConnectionPool, psycopg.Connection]:
        """A pooled connection and its pool, waiting at most ``timeout_s``; a down server
        fails at once."""
        if self.down:
            with self._lock:
                if self.down:
                    self._probe()
                    # Back: a fresh pool, free of the old one's dead connections and of the
                    # growing delays between its failed attempts.
                    old, self.pool = self.pool, self._new_pool()
                    self.down = False
                    old.close(timeout=0)
        pool = self.pool
        try:
            return pool, pool.getconn(timeout=timeout_s)
        except PoolClosed:  # renewed by another thread meanwhile
            return self.take(timeout_s)
        except PoolTimeout as error:
            self._probe()  # a down server is unavailable, not slow
            raise errors.QueryTimeout(timeout_s) from error

    def _probe(self) -> None:
        try:
            psycopg.connect(self.location, connect_timeout=_CONNECT_TIMEOUT_S).close()
        except psycopg.Error as error:
            self.down = True
            raise _unavailable(self.location, error) from error

    @staticmethod
    def give_back(pool: ConnectionPool, connection: psycopg.Connection) -> None:
        """Roll the transaction back and return the connection (closed if that fails)."""
        try:
            connection.rollback()
        except psycopg.Error:
            connection.close()
        pool.putconn(connection)

    def close(self) -> None:
        self.pool.close()


_SERVERS: dict[tuple[int, str, int, bool], _Server] = {}
_SERVERS_LOCK = threading.Lock()


def server(location: str, limits: SandboxLimits) -> _Server:
    """The process's one ``_Server`` for ``location`` under ``limits``' pool settings."""
    key = (os.getpid(), location, limits.pool_size, limits.allow_write_role)
    with _SERVERS_LOCK:
        found = _SERVERS.get(key)
        if found is None:
            found = _SERVERS[key] = _Server(location, limits)
    return found


@atexit.register
def close_servers() -> None:
    """Close every pool this process opened."""
    with _SERVERS_LOCK:
        servers = [s for key, s in _SERVERS.items() if key[0] == os.getpid()]
        _SERVERS.clear()
    for found in servers:
        found.close()


def _server_message(error: psycopg.Error) -> str:
    """The server's message and hint, without the statement's context lines (which quote the
    sandbox's own DECLARE around the query)."""
    diagnostic = error.diag
    parts = [diagnostic.message_primary, diagnostic.message_detail, diagnostic.message_hint]
    return " ".join(part for part in parts if part)


def _without_trailing_semicolons(sql: str) -> str:
    return sql.rstrip().rstrip(";").rstrip()


class PostgresEngine:
    """Sandboxed read-only queries on one PostgreSQL database, through its process-wide pool.
    Used by one thread at a time (the sandbox keeps one per thread and database)."""

    def __init__(self, location: str, limits: SandboxLimits | None = None) -> None:
        self._limits = limits or SandboxLimits()
        self._location = location
        self._server = server(location, self._limits)
        self._current: psycopg.Connection | None = None
        self._watchdog = engine.Watchdog(self._cancel, name="postgres-watchdog")

    def _cancel(self) -> None:
        connection = self._current
        if connection is not None:
            try:
                connection.cancel_safe(timeout=_CONNECT_TIMEOUT_S)
            except psycopg.Error:
                pass  # the server is gone: the query fails on its own

    def _refuse_volatile_calls(self, sql: str) -> None:
        for quoted, plain in _CALL.findall(sql):
            name = (quoted.replace('""', '"') if quoted else plain).lower()
            if name in self._server.volatile:
                raise errors.ReadOnlyViolation(
                    f"function {name}()", "a volatile function of the database's own"
                )

    def run(
        self, sql: str, *, timeout_s: float, row_cap: int, max_bytes: int | None = None
    ) -> engine.RawResult:
        deadline = time.monotonic() + timeout_s
        budget = self._limits.max_result_bytes if max_bytes is None else max_bytes
        self._refuse_volatile_calls(sql)
        pool, connection = self._server.take(timeout_s)
        try:
            left_ms = max(1, math.ceil((deadline - time.monotonic()) * 1000))
            self._current = connection
            self._watchdog.arm(left_ms / 1000)
            try:
                connection.execute(
                    "SELECT set_config('statement_timeout', %s, true), "
                    "set_config('idle_in_transaction_session_timeout', %s, true)",
                    (str(left_ms), str(left_ms + math.ceil(self._limits.kill_grace_s * 1000))),
                )
                with connection.cursor(name="sandbox_query") as cursor:
                    cursor.execute(_without_trailing_semicolons(sql))
                    if cursor.description is None:
                        raise errors.SQLExecutionError("the statement returns no result set")
                    columns = tuple(column.name for column in cursor.description)
                    rows, truncated = engine.fetch_bounded(cursor.fetchmany, row_cap, budget)
            finally:
                self._watchdog.disarm()
                self._current = None
        except psycopg.Error as error:
            raise self._translate(error, sql, timeout_s, self._watchdog.fired) from error
        except (ValueError, OverflowError) as error:  # a value Python cannot hold
            raise errors.SQLExecutionError(f"cannot convert a result value: {error}") from error
        except MemoryError as error:
            raise errors.ResourceLimit("out of memory while fetching the result") from error
        finally:
            self._server.give_back(pool, connection)
        return engine.RawResult(columns=columns, rows=tuple(rows), truncated=truncated)

    def _translate(
        self, error: psycopg.Error, sql: str, timeout_s: float, timed_out: bool
    ) -> errors.SandboxError:
        state = error.sqlstate or ""
        message = str(error).strip()
        first = message.splitlines()[0] if message else type(error).__name__
        if timed_out or state == _CANCELED:
            return errors.QueryTimeout(timeout_s)
        if state in _READ_ONLY_STATES:
            return errors.ReadOnlyViolation(
                engine.statement_keyword(sql), f"refused by PostgreSQL: {first}"
            )
        if _MULTIPLE_STATEMENTS in first:
            return errors.ReadOnlyViolation("multiple statements", "PostgreSQL reads more than one")
        if _DATA_MODIFYING in first:
            return errors.ReadOnlyViolation(
                "a data-modifying WITH", f"refused by PostgreSQL: {first}"
            )
        if (head := _NOT_A_QUERY.match(first)) and engine.statement_keyword(sql) == head[1].upper():
            return errors.ReadOnlyViolation(head[1].upper(), "PostgreSQL runs only a query here")
        if state.startswith(_RESOURCE_CLASSES):
            return errors.ResourceLimit(f"PostgreSQL: {first}")
        if state.startswith(_UNAVAILABLE_CLASSES) or isinstance(
            error, (psycopg.OperationalError, psycopg.InterfaceError)
        ):
            self._server.down = True
            return _unavailable(self._location, error)
        return errors.SQLExecutionError(_server_message(error) or message)

    def close(self) -> None:
        self._watchdog.close()


def syntax_error(sql: str) -> str | None:
    """No parser is at hand without a server: ``None`` (a string the guard cannot parse is
    refused unrun)."""
    return None
