"""What every engine file (``sqlite.py``, ``duckdb.py``) provides to the sandbox.

    Engine(path) ──run(sql, timeout_s, row_cap)──► RawResult(columns, rows, truncated)

An engine owns one read-only connection. It raises only sandbox errors: ``DatabaseUnavailable``
when opening, and ``QueryTimeout`` / ``ReadOnlyViolation`` / ``SQLExecutionError`` when running.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from pipelines.sandbox.errors import DatabaseUnavailable


class RawResult(BaseModel):
    """Rows as the driver returned them (up to the row cap), before canonicalisation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False


class Engine(Protocol):
    def run(self, sql: str, *, timeout_s: float, row_cap: int) -> RawResult: ...

    def close(self) -> None: ...


_LEADING_COMMENTS = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)


def statement_keyword(sql: str) -> str:
    """The first word of a statement after any comments, for naming what an engine refused."""
    words = _LEADING_COMMENTS.sub("", sql).split(None, 1)
    return words[0].upper() if words else "empty statement"


def require_database_file(path: str) -> Path:
    """The database file as an absolute path, or ``DatabaseUnavailable`` — never creates one."""
    file = Path(path).expanduser().resolve()
    if not file.exists():
        raise DatabaseUnavailable(path, "no such file")
    if not file.is_file():
        raise DatabaseUnavailable(path, "not a regular file")
    if file.stat().st_size == 0:
        raise DatabaseUnavailable(path, "empty file, not a database")
    return file
