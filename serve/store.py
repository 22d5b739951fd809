"""The endpoint's state in one SQLite file (``<serve.state_dir>/serve.sqlite``), shared by every
replica and kept across restarts:

=============  =================================================================================
``databases``  registered databases (name, path, engine; from the config or the admin API)
``cache``      answers by cache key (normalised question + database fingerprint + profile + …)
``query_log``  every answered query: question, SQL, result hash, latency, key id, cached
``traces``     each answer's reasoning trace (JSON), for ``GET /v1/traces/{trace_id}``
=============  =================================================================================

    >>> import tempfile
    >>> store = StateStore(tempfile.mkdtemp())
    >>> store.put_cached("k", {"sql": "SELECT 1"}, ttl_s=60)
    >>> store.get_cached("k")
    {'sql': 'SELECT 1'}

Each call opens its own connection (WAL, so readers never wait for a writer): replicas live in
different processes, and a connection is never shared between threads.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import Field

from core.types import Frozen

FILE_NAME = "serve.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS databases (
    name TEXT PRIMARY KEY, path TEXT NOT NULL, engine TEXT NOT NULL,
    description_dir TEXT, source TEXT NOT NULL, added_unix REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, answer TEXT NOT NULL, expires_unix REAL NOT NULL);
CREATE TABLE IF NOT EXISTS query_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at_unix REAL NOT NULL, key_id TEXT NOT NULL,
    database TEXT NOT NULL, profile TEXT NOT NULL, question TEXT NOT NULL, sql TEXT NOT NULL,
    result_hash TEXT, row_count INTEGER, latency_s REAL NOT NULL, cached INTEGER NOT NULL,
    degraded INTEGER NOT NULL, trace_id TEXT);
CREATE TABLE IF NOT EXISTS traces (
    trace_id TEXT PRIMARY KEY, at_unix REAL NOT NULL, database TEXT NOT NULL, trace TEXT NOT NULL);
"""


class RegisteredDatabase(Frozen):
    name: str
    path: str
    engine: str  # sqlite | duckdb
    description_dir: str | None = None
    source: str = "config"  # config | admin


class LogEntry(Frozen):
    """One line of the query log."""

    key_id: str
    database: str
    profile: str
    question: str
    sql: str
    result_hash: str | None = None
    row_count: int | None = None
    latency_s: float = Field(ge=0)
    cached: bool = False
    degraded: bool = False
    trace_id: str | None = None


class StateStore:
    """The state file under ``directory`` (created on first use)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / FILE_NAME
        with self._connect() as conn:
            conn.executescript(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            with conn:  # one transaction: committed on success, rolled back on error
                yield conn
        finally:
            conn.close()

    # --- databases ------------------------------------------------------------------------

    def put_database(self, db: RegisteredDatabase) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO databases VALUES (?, ?, ?, ?, ?, ?)",
                (db.name, db.path, db.engine, db.description_dir, db.source, time.time()),
            )

    def delete_database(self, name: str) -> bool:
        with self._connect() as conn:
            return conn.execute("DELETE FROM databases WHERE name = ?", (name,)).rowcount > 0

    def database(self, name: str) -> RegisteredDatabase | None:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT name, path, engine, description_dir, source FROM databases WHERE name = ?",
                (name,),
            ).fetchone()
        return None if row is None else _database(row)

    def databases(self) -> list[RegisteredDatabase]:
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT name, path, engine, description_dir, source FROM databases ORDER BY name"
            ).fetchall()
        return [_database(row) for row in rows]

    # --- cache ----------------------------------------------------------------------------

    def get_cached(self, key: str) -> dict[str, Any] | None:
        with self._connect() as conn:
            row = conn.execute(
                "SELECT answer FROM cache WHERE key = ? AND expires_unix > ?", (key, time.time())
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def put_cached(self, key: str, answer: dict[str, Any], *, ttl_s: float) -> None:
        now = time.time()
        with self._connect() as conn:
            conn.execute("DELETE FROM cache WHERE expires_unix <= ?", (now,))
            conn.execute(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?)",
                (key, json.dumps(answer), now + ttl_s),
            )

    # --- query log and traces -------------------------------------------------------------

    def log_query(self, entry: LogEntry) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT INTO query_log (at_unix, key_id, database, profile, question, sql, "
                "result_hash, row_count, latency_s, cached, degraded, trace_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    entry.key_id,
                    entry.database,
                    entry.profile,
                    entry.question,
                    entry.sql,
                    entry.result_hash,
                    entry.row_count,
                    entry.latency_s,
                    int(entry.cached),
                    int(entry.degraded),
                    entry.trace_id,
                ),
            )

    def query_log(self, limit: int = 100) -> list[LogEntry]:
        """The latest ``limit`` entries, newest first."""
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT key_id, database, profile, question, sql, result_hash, row_count, "
                "latency_s, cached, degraded, trace_id FROM query_log ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        fields = list(LogEntry.model_fields)
        return [LogEntry(**dict(zip(fields, row))) for row in rows]

    def put_trace(self, trace_id: str, database: str, trace_json: str) -> None:
        with self._connect() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?)",
                (trace_id, time.time(), database, trace_json),
            )

    def trace(self, trace_id: str) -> tuple[str, str] | None:
        """``(database, trace JSON)``."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT database, trace FROM traces WHERE trace_id = ?", (trace_id,)
            ).fetchone()
        return None if row is None else (row[0], row[1])


def _database(row: tuple) -> RegisteredDatabase:
    name, path, engine, description_dir, source = row
    return RegisteredDatabase(
        name=name, path=path, engine=engine, description_dir=description_dir, source=source
    )
