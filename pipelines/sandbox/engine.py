"""What every engine file (``sqlite.py``, ``duckdb.py``) provides to the sandbox.

    Engine(path, limits) ──run(sql, timeout_s, row_cap, max_bytes)──► RawResult(columns, rows, …)

An engine owns one read-only connection. It raises only sandbox errors: ``DatabaseUnavailable``
when opening, and ``QueryTimeout`` / ``ReadOnlyViolation`` / ``ResourceLimit`` /
``SQLExecutionError`` when running. Rows are fetched in batches against a byte budget
(``fetch_bounded``), so a result never grows past ``max_bytes`` by more than one batch.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from pipelines.sandbox.errors import DatabaseUnavailable, ResultTooLarge


class RawResult(BaseModel):
    """Rows as the driver returned them (up to the row cap), before canonicalisation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False


class Engine(Protocol):
    def run(
        self, sql: str, *, timeout_s: float, row_cap: int, max_bytes: int | None = None
    ) -> RawResult: ...

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


# Per cell: its slot in the row tuple and a small object's header, roughly what CPython keeps.
CELL_OVERHEAD_BYTES = 32
_SIZED = (str, bytes, bytearray, memoryview)


def value_bytes(value: Any) -> int:
    """Approximate memory of one fetched cell: its payload plus a fixed overhead."""
    if isinstance(value, _SIZED):
        return CELL_OVERHEAD_BYTES + len(value)
    if isinstance(value, (list, tuple)):
        return CELL_OVERHEAD_BYTES + sum(value_bytes(item) for item in value)
    if isinstance(value, dict):
        return CELL_OVERHEAD_BYTES + sum(
            value_bytes(key) + value_bytes(item) for key, item in value.items()
        )
    return CELL_OVERHEAD_BYTES


def rows_bytes(rows: Sequence[Sequence[Any]]) -> int:
    total = 0
    for row in rows:
        total += CELL_OVERHEAD_BYTES * len(row)
        for cell in row:
            if isinstance(cell, (str, bytes, list, tuple, dict, bytearray, memoryview)):
                total += value_bytes(cell) - CELL_OVERHEAD_BYTES
    return total


# Rows per fetch call: large enough that the per-call cost vanishes, small enough that one
# batch of maximal values stays a small multiple of the budget.
_FETCH_BATCH = 64


def fetch_bounded(
    fetchmany: Callable[[int], list[Any]], row_cap: int, max_bytes: int
) -> tuple[list[tuple[Any, ...]], bool]:
    """Up to ``row_cap`` rows and whether more existed; ``ResultTooLarge`` past ``max_bytes``."""
    rows: list[tuple[Any, ...]] = []
    total = 0
    wanted = row_cap + 1  # one more than the cap tells "truncated" from "exactly row_cap"
    while len(rows) < wanted:
        size = min(_FETCH_BATCH, wanted - len(rows))
        batch = fetchmany(size)
        total += rows_bytes(batch)
        if total > max_bytes:
            raise ResultTooLarge(max_bytes)
        rows.extend(batch)
        if len(batch) < size:  # the cursor is exhausted: spare the call that would say so
            break
    truncated = len(rows) > row_cap
    return rows[:row_cap] if truncated else rows, truncated


class Watchdog:
    """One thread per engine that calls ``interrupt`` once an armed deadline passes.

    ``arm`` / ``disarm`` bracket each query (a lock and a notify, where a timer thread per
    query cost a thread start). Firing and disarming hold the same lock, so once ``disarm``
    returns no interrupt for that query can come: a late one never hits the next query.
    """

    def __init__(self, interrupt: Callable[[], None], name: str = "sandbox-watchdog") -> None:
        self._interrupt = interrupt
        self._condition = threading.Condition()
        self._deadline: float | None = None
        self._closed = False
        self.fired = False
        self._thread = threading.Thread(target=self._watch, name=name, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        with self._condition:
            while not self._closed:
                if self._deadline is None:
                    self._condition.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._condition.wait(left)
                    continue
                self._deadline = None
                self.fired = True
                self._interrupt()

    def arm(self, timeout_s: float) -> None:
        with self._condition:
            self.fired = False
            self._deadline = time.monotonic() + timeout_s
            self._condition.notify()

    def disarm(self) -> None:
        with self._condition:
            self._deadline = None

    def close(self) -> None:
        with self._condition:
            self._closed = True
            self._deadline = None
            self._condition.notify()
