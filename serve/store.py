"""The endpoint's state in one SQLite file (``<serve.state_dir>/serve.sqlite``), shared by every
replica and kept across restarts:

=============  =================================================================================
``databases``  registered databases (name, path, engine; from the config or the admin API)
``cache``      answers by cache key (normalised question + database fingerprint + profile + …)
``query_log``  every answered query: question, SQL, result hash, latency, key id, cached,
               its cache key, and the asker's feedback (``accepted``: 1, 0 or NULL)
``traces``     each answer's reasoning trace (JSON), for ``GET /v1/traces/{trace_id}``
=============  =================================================================================

    >>> import tempfile
    >>> store = StateStore(tempfile.mkdtemp())
    >>> store.put_cached("k", {"sql": "SELECT 1"}, ttl_s=60)
    >>> store.get_cached("k")
    {'sql': 'SELECT 1'}

Each call opens its own connection (WAL, so readers never wait for a writer): replicas live in
different processes, and a connection is never shared between threads. A state file written
before a column existed gets it when the store opens (``_MIGRATIONS``).

Accepted answers become the database's own solved examples (``accepted_examples``), which the
pipeline deployment shows the model (``pipelines/indexing/examples/own_examples.py``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from core.types import Frozen

if TYPE_CHECKING:
    from pipelines.indexing.examples.own_examples import SolvedExample

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
    degraded INTEGER NOT NULL, trace_id TEXT, accepted INTEGER, cache_key TEXT);
CREATE TABLE IF NOT EXISTS traces (
    trace_id TEXT PRIMARY KEY, at_unix REAL NOT NULL, database TEXT NOT NULL, trace TEXT NOT NULL);
"""
# Columns added after the first release: (table, column, type), added on open when missing.
_MIGRATIONS = (
    ("query_log", "accepted", "INTEGER"),  # the asker's feedback: 1 accepted, 0 rejected
    ("query_log", "cache_key", "TEXT"),  # the answer's cache entry, dropped when rejected
    ("databases", "examples", "TEXT"),  # the file of the database's own solved questions
)
_INDEXES = """
CREATE INDEX IF NOT EXISTS query_log_feedback ON query_log (database, accepted);
CREATE INDEX IF NOT EXISTS query_log_cache_key ON query_log (cache_key);
"""


def normalise(question: str) -> str:
    """The question as the cache sees it: case, spacing and trailing punctuation ignored."""
    return re.sub(r"\s+", " ", question).strip().casefold().rstrip("?.! ")


class RegisteredDatabase(Frozen):
    name: str
    path: str
    engine: str  # sqlite | duckdb | postgres
    description_dir: str | None = None
    source: str = "config"  # config | admin
    examples: str | None = None  # its own solved questions' file, where one is named


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
    accepted: bool | None = None  # the asker's feedback; None: none given
    cache_key: str | None = None  # the cache entry the answer came from or went to
    id: int | None = None  # set when read back from the log


class StateStore:
    """The state file under ``directory`` (created on first use)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / FILE_NAME
        with self._connect() as conn:
            conn.executescript(_SCHEMA)
            _migrate(conn)
            conn.executescript(_INDEXES)

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
                "INSERT OR REPLACE INTO databases (name, path, engine, description_dir, source,"
                " added_unix, examples) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    db.name,
                    db.path,
                    db.engine,
                    db.description_dir,
                    db.source,
                    time.time(),
                    db.examples,
                ),
            )

    def delete_database(self, name: str) -> bool:
        with self._connect() as conn:
            return conn.execute("DELETE FROM databases WHERE name = ?", (name,)).rowcount > 0

    def database(self, name: str) -> RegisteredDatabase | None:
        with self._connect() as conn:
            row = conn.execute(
                f"SELECT {_DATABASE_COLUMNS} FROM databases WHERE name = ?",
                (name,),
            ).fetchone()
        return None if row is None else _database(row)

    def databases(self) -> list[RegisteredDatabase]:
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT {_DATABASE_COLUMNS} FROM databases ORDER BY name"
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

    def drop_cached(self, key: str) -> bool:
        with self._connect() as conn:
            return conn.execute("DELETE FROM cache WHERE key = ?", (key,)).rowcount > 0

    # --- query log and traces -------------------------------------------------------------

    def log_query(self, entry: LogEntry) -> int:
        """Append ``entry``; its id in the log (``query_id`` of the answer)."""
        with self._connect() as conn:
            cursor = conn.execute(
                "INSERT INTO query_log (at_unix, key_id, database, profile, question, sql, "
                "result_hash, row_count, latency_s, cached, degraded, trace_id, accepted, "
                "cache_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    None if entry.accepted is None else int(entry.accepted),
                    entry.cache_key,
                ),
            )
            return int(cursor.lastrowid or 0)

    def query_log(self, limit: int = 100) -> list[LogEntry]:
        """The latest ``limit`` entries, newest first."""
        with self._connect() as conn:
            rows = conn.execute(
                f"SELECT {_LOG_COLUMNS} FROM query_log ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
        return [_log_entry(row) for row in rows]

    def logged_query(self, query_id: int) -> LogEntry | None:
        with self._connect() as conn:
            row = conn.execute(
                f"SELECT {_LOG_COLUMNS} FROM query_log WHERE id = ?", (query_id,)
            ).fetchone()
        return None if row is None else _log_entry(row)

    def set_feedback(self, query_id: int, accepted: bool) -> bool:
        """Mark a logged answer accepted or rejected (new feedback replaces the old)."""
        with self._connect() as conn:
            return (
                conn.execute(
                    "UPDATE query_log SET accepted = ? WHERE id = ?", (int(accepted), query_id)
                ).rowcount
                > 0
            )

    def was_rejected(self, cache_key: str, sql: str) -> bool:
        """Whether the newest judged answer ``sql`` logged under ``cache_key`` was rejected."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT accepted FROM query_log WHERE cache_key = ? AND sql = ? "
                "AND accepted IS NOT NULL ORDER BY id DESC LIMIT 1",
                (cache_key, sql),
            ).fetchone()
        return row is not None and row[0] == 0

    def accepted_examples(self, database: str, limit: int = 200) -> list[SolvedExample]:
        """The newest accepted (question, SQL) pairs of ``database`` (a registered name), one
        per question (normalised as the cache does; the newest wins), newest first.

        An answer whose SQL was rejected later for the same question is left out.
        """
        from pipelines.indexing.examples.own_examples import SolvedExample

        out: list[SolvedExample] = []
        seen: set[str] = set()
        rejected: set[tuple[str, str]] = set()
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT question, sql, accepted FROM query_log WHERE database = ? "
                "AND accepted IS NOT NULL ORDER BY id DESC",
                (database,),
            )
            for question, sql, accepted in rows:
                asked, sql = normalise(question), sql.strip()
                if not accepted:
                    rejected.add((asked, sql))
                elif asked and sql and asked not in seen and (asked, sql) not in rejected:
                    seen.add(asked)
                    out.append(SolvedExample(question=" ".join(question.split()), sql=sql))
                    if len(out) >= limit:
                        break
        return out

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


_LOG_COLUMNS = (
    "key_id, database, profile, question, sql, result_hash, row_count, latency_s, cached, "
    "degraded, trace_id, accepted, cache_key, id"
)


def _log_entry(row: tuple) -> LogEntry:
    fields = dict(zip(LogEntry.model_fields, row))
    if fields["accepted"] is not None:
        fields["accepted"] = bool(fields["accepted"])
    return LogEntry(**fields)


def _migrate(conn: sqlite3.Connection) -> None:
    """Add the columns a state file from an older version lacks (another replica may be adding
    the same column at the same moment: a duplicate is not an error)."""
    for table, column, kind in _MIGRATIONS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column in present:
            continue
        try:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc).lower():
                raise


_DATABASE_COLUMNS = "name, path, engine, description_dir, source, examples"


def _database(row: tuple) -> RegisteredDatabase:
    return RegisteredDatabase(**dict(zip(_DATABASE_COLUMNS.split(", "), row, strict=True)))
