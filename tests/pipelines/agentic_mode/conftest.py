"""Real databases for the agentic checks: those of ``tests/pipelines/conftest.py`` (the work-item
DuckDB, its flat SQLite twin, the enterprise schema), in memory too, and the claims schema built
empty (its DDL only, no rows); a check context on each. And the real model client over a backend
that always gives one reply, for the LLM checks' replies as the client validates them."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import duckdb
import pytest

from core.types import Usage
from eval.demo.schema import TABLES as CLAIMS_TABLES
from models.client import ModelClient, RetryPolicy, Slot
from models.types import ChatRequest, ChatResponse
from pipelines.agentic_mode import load_taxonomy
from pipelines.agentic_mode.checks import parse
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.contracts import DatabaseRef, SchemaView
from pipelines.repair.base import Blocker, RepairContext, Rewriter
from pipelines.schema import introspect
from tests.pipelines.conftest import FLAT_DDL, WORK_DDL


class OneReplyBackend:
    """A chat backend whose every reply is ``text``."""

    model = "one-reply"

    def __init__(self, text: str) -> None:
        self.text = text

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(
            texts=(self.text,) * request.n,
            usage=Usage(calls=1, prompt_tokens=100, completion_tokens=10),
            latency_s=0.0,
            model=self.model,
        )

    async def aclose(self) -> None:
        pass


def client_replying(text: str, *roles: str) -> ModelClient:
    """The real ModelClient (its JSON-schema check included), ``roles`` on a backend that
    replies ``text``."""
    slot = Slot("default", OneReplyBackend(text))
    return ModelClient(
        {"default": slot}, dict.fromkeys(roles, "default"), RetryPolicy(max_attempts=1)
    )


def work_duckdb_memory() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    conn.execute(WORK_DDL)
    return conn


def flat_sqlite_memory() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(FLAT_DDL)
    return conn


@pytest.fixture
def flat_view(flat_sqlite: DatabaseRef) -> SchemaView:
    return introspect(flat_sqlite, 0)


@pytest.fixture(scope="session")
def claims_view(tmp_path_factory: pytest.TempPathFactory) -> SchemaView:
    """The claims demo's SQLite schema, no rows."""
    path = tmp_path_factory.mktemp("claims") / "claims.sqlite"
    with closing(sqlite3.connect(path)) as conn:
        for table in CLAIMS_TABLES:
            conn.execute(table.ddl())
    return introspect(DatabaseRef(db_id="claims", path=str(path)), 0)


def context_for(view: SchemaView) -> RepairContext:
    return RepairContext(index=SchemaIndex.from_view(view), taxonomy=load_taxonomy())


def findings_of(stage: Blocker, sql: str, context: RepairContext) -> list[tuple[str, str]]:
    """(class, identifier) of each finding ``stage`` reports on ``sql``."""
    return [(f.error_class, f.identifier) for f in stage.check(parse(sql, context.index), context)]


def rows(db: DatabaseRef, sql: str) -> tuple[tuple[str, ...], list[tuple]]:
    """Column names and sorted rows of ``sql`` on a read-only connection to ``db``."""
    if db.dialect == "duckdb":
        conn = duckdb.connect(db.path, read_only=True)
    else:
        conn = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
    with closing(conn):
        cursor = conn.execute(sql)
        names = tuple(d[0] for d in cursor.description)
        return names, sorted(cursor.fetchall(), key=repr)


def assert_rewrites_right(
    stage: Rewriter, context: RepairContext, db: DatabaseRef, sql: str, expected: str, right: str
) -> None:
    """``db``'s engine refuses ``sql`` as written; ``stage`` rewrites it to ``expected``, which
    returns the rows of ``right`` (the query written right)."""
    with pytest.raises((duckdb.Error, sqlite3.Error)):
        rows(db, sql)
    rewrite = stage.rewrite(sql, context)
    assert rewrite is not None and rewrite.after == expected
    assert rows(db, rewrite.after)[1] == rows(db, right)[1]


@pytest.fixture
def work_context(work_view: SchemaView) -> RepairContext:
    return context_for(work_view)


@pytest.fixture
def flat_context(flat_view: SchemaView) -> RepairContext:
    return context_for(flat_view)


@pytest.fixture(scope="session")
def enterprise_context(enterprise_view: SchemaView) -> RepairContext:
    return context_for(enterprise_view)
