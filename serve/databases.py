"""Registered databases as the endpoint sees them: checked names, registration, the reference a
pipeline takes, and a fingerprint that changes with the file.

    >>> NAME.fullmatch("claims") is not None, NAME.fullmatch("../etc") is None
    (True, True)

``serve/cli.py`` registers the configured databases with ``register``; the admin route
(``serve/routes/databases.py``) registers the others the same way.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pipelines.contracts import DatabaseRef
from pipelines.sandbox.errors import SandboxError
from pipelines.sandbox.postgres import is_server_location
from serve.errors import ApiError
from serve.store import RegisteredDatabase, StateStore
from serve.types import RegisterRequest

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def present(path: str) -> bool:
    """Whether the database file is there; a server database always is (a server that is down
    answers each query with a typed error)."""
    return is_server_location(path) or Path(path).is_file()


def fingerprint(path: str) -> str:
    """Changes whenever the database file (or its write-ahead log) does; for a server database,
    whenever its catalog or its tables' write counters do."""
    if is_server_location(path):
        from pipelines.indexing.builder.fingerprint import data_state, schema_hash

        db = DatabaseRef(db_id="fingerprint", path=path, dialect="postgres")
        try:
            state = f"{schema_hash(db)}|{data_state(db, 'stat')}"
        except SandboxError:
            state = "unavailable"
        return hashlib.sha256(f"{path}|{state}".encode()).hexdigest()[:16]
    parts = []
    for suffix in ("", "-wal", ".wal"):
        file = Path(path + suffix)
        if file.exists():
            st = file.stat()
            parts.append(f"{suffix}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
    return hashlib.sha256("|".join([path, *parts]).encode()).hexdigest()[:16]


def database_ref(name: str, registered: RegisteredDatabase) -> DatabaseRef:
    return DatabaseRef(
        db_id=name,
        path=registered.path,
        dialect=registered.engine,  # type: ignore[arg-type]
        description_dir=registered.description_dir,
        examples=registered.examples,
    )


def register(store: StateStore, request: RegisterRequest, source: str) -> RegisteredDatabase:
    """Check ``request`` (name, file, engine, readable) and store it; ``ApiError`` when bad.

    Messages never repeat the path: a caller learns what is wrong, not what the disk holds.
    """
    from pipelines.ask_cli import database_ref as file_ref
    from pipelines.schema.introspect import introspect

    if not NAME.fullmatch(request.name):
        raise ApiError(
            422,
            "invalid_name",
            "a database name is 1-64 letters, digits, '_' or '-', starting with a letter or digit",
        )
    if request.examples is not None and not Path(request.examples).expanduser().is_file():
        raise ApiError(422, "no_examples_file", "no examples file at the given path")
    try:
        db = file_ref(request.path, request.name, request.description_dir, request.examples)
    except FileNotFoundError:
        raise ApiError(422, "no_database_file", "no database file at the given path") from None
    except (ValueError, OSError):
        raise ApiError(
            422,
            "unknown_engine",
            "the file must end in .sqlite, .sqlite3, .db or .duckdb, or the path be a "
            "postgresql:// URI",
        ) from None
    if is_server_location(db.path):
        from pipelines.sandbox.errors import UnsafeRole
        from pipelines.sandbox.postgres import connect

        try:
            connect(db.path, allow_write_role=False).close()
        except UnsafeRole:
            raise ApiError(
                422, "unsafe_role", "the database's role can write: register a SELECT-only role"
            ) from None
        except SandboxError:
            raise ApiError(
                422, "unreadable_database", "the PostgreSQL database cannot be reached"
            ) from None
    try:
        introspect(db, sample_values=0, infer_joins=False)
    except Exception:
        raise ApiError(
            422, "unreadable_database", "the file is not a readable SQLite/DuckDB database"
        ) from None
    registered = RegisteredDatabase(
        name=request.name,
        path=db.path,
        engine=db.dialect,
        description_dir=db.description_dir,
        source=source,
        examples=db.examples,
    )
    store.put_database(registered)
    return registered
