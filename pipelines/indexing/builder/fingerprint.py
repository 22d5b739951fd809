"""A database's fingerprint: schema hash + file state (+ the index settings that shape the index).

    fingerprint(db, mode="stat") ──► Fingerprint(schema=..., data="size:mtime_ns", settings=...)

``mode="stat"`` uses size and modification time (cheap, enough for files changed in place);
``mode="content"`` hashes the bytes (robust to copies and touched files, costs one read).
Write-ahead-log companions (``-wal`` for SQLite, ``.wal`` for DuckDB) count as part of the file.
A server database (PostgreSQL) has no file: its data state is its tables' write counters
(``pg_stat_user_tables``: rows inserted, updated, deleted), in either mode.
An index is rebuilt exactly when its stored fingerprint differs from the database's current one.
"""

from __future__ import annotations

import hashlib
from contextlib import closing
from pathlib import Path
from typing import Literal

from core.types import Frozen
from pipelines.contracts import DatabaseRef
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema.introspect import DRIVER_ERRORS

SCHEMA_QUERIES = {
    "sqlite": "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
    "duckdb": (
        "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE NOT internal AND database_name = current_database() "
        "ORDER BY schema_name, table_name, column_index"
    ),
    "postgres": (
        "SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1, 2, a.attnum"
    ),
}
# Per-table write counters of a server database, standing for its file's state.
SERVER_DATA_QUERIES = {
    "postgres": (
        "SELECT schemaname, relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
        "ORDER BY 1, 2"
    ),
}
WAL_SUFFIXES = {"sqlite": "-wal", "duckdb": ".wal"}
CHUNK = 1 << 20


class Fingerprint(Frozen):
    schema_hash: str
    data: str
    settings: str = ""

    @property
    def digest(self) -> str:
        key = f"{self.schema_hash}|{self.data}|{self.settings}"
        return hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def _files(db: DatabaseRef) -> list[Path]:
    main = Path(db.path)
    wal = main.with_name(main.name + WAL_SUFFIXES[db.dialect])
    return [main] + ([wal] if wal.exists() else [])


def _server_state(db: DatabaseRef) -> str:
    rows = _catalog(db, SERVER_DATA_QUERIES[db.dialect])
    return "server:" + hashlib.blake2b(repr(rows).encode(), digest_size=16).hexdigest()


def data_state(db: DatabaseRef, mode: Literal["stat", "content"]) -> str:
    if db.dialect in SERVER_DATA_QUERIES:
        return _server_state(db)
    parts = []
    for path in _files(db):
        if mode == "stat":
            st = path.stat()
            parts.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
        else:
            h = hashlib.blake2b(digest_size=16)
            with path.open("rb") as f:
                while chunk := f.read(CHUNK):
                    h.update(chunk)
            parts.append(f"{path.name}:{h.hexdigest()}")
    return ";".join(parts)


def _catalog(db: DatabaseRef, query: str) -> list[tuple]:
    try:
        with closing(connect_readonly(db)) as conn:
            return conn.execute(query).fetchall()
    except DRIVER_ERRORS as exc:
        raise DatabaseUnavailable(db.path, f"cannot read schema: {exc}") from exc


def schema_hash(db: DatabaseRef) -> str:
    rows = _catalog(db, SCHEMA_QUERIES[db.dialect])
    return hashlib.blake2b(repr(rows).encode(), digest_size=16).hexdigest()


def fingerprint(
    db: DatabaseRef, mode: Literal["stat", "content"] = "stat", settings: str = ""
) -> Fingerprint:
    """Raises ``DatabaseUnavailable`` when the file is missing or not a database."""
    return Fingerprint(schema_hash=schema_hash(db), data=data_state(db, mode), settings=settings)
