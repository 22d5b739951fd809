"""Real databases for the agentic checks: a small work-item DuckDB with a list of structs, a
nested struct and enum-like columns documented by ``COMMENT ON``; a flat SQLite of the same
data; the enterprise and claims schemas built empty (their DDL and comments only, no rows)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from eval.demo.schema import TABLES as CLAIMS_TABLES
from eval.enterprise.schema import TABLES as ENTERPRISE_TABLES
from pipelines.agentic import load_taxonomy
from pipelines.agentic.checks import Blocker, CheckContext, parse
from pipelines.agentic.schema_index import SchemaIndex
from pipelines.contracts import DatabaseRef, SchemaView
from pipelines.schema import introspect

WORK_DDL = """
CREATE TABLE users (user_id VARCHAR PRIMARY KEY, display_name VARCHAR, title VARCHAR);
CREATE TABLE tickets (
    ticket_id INTEGER PRIMARY KEY,
    title VARCHAR,
    stage VARCHAR,
    severity VARCHAR,
    opened DATE,
    closed DATE,
    reopen_count INTEGER,
    owner_id VARCHAR REFERENCES users (user_id),
    links STRUCT(type VARCHAR, display_id VARCHAR)[],
    sla STRUCT(status VARCHAR, policy STRUCT(name VARCHAR, target_minutes INTEGER))
);
COMMENT ON COLUMN tickets.stage IS 'Workflow stage. One of: ''queued'' = open, waiting;
    ''work_in_progress'' = open, being worked on;
    ''resolved'' = closed, the customer''s problem was solved.';
COMMENT ON COLUMN tickets.severity IS 'Impact. One of: ''blocker'' = cannot work;
    ''high'' = a workflow is broken; ''low'' = cosmetic.';
COMMENT ON COLUMN tickets.links IS 'Typed links to other items, a list (possibly empty).
    type is one of: ''blocks'' = it blocks the target; ''is_blocked_by'' = the target blocks it;
    ''resolves'' = it resolves the target; display_id is the key of the target (e.g. ''ISS-1'').';
COMMENT ON COLUMN tickets.sla IS 'SLA clock. status is one of: ''running'' = counting;
    ''paused'' = waiting on the customer. policy.name names the policy.';
INSERT INTO users VALUES ('U1', 'Ada', 'support_engineer'), ('U2', 'Grace', 'support_lead');
INSERT INTO tickets VALUES
    (1, 'Login fails', 'queued', 'blocker', DATE '2025-01-02', NULL, 0, 'U1',
     [{'type': 'is_blocked_by', 'display_id': 'ISS-1'}],
     {'status': 'running', 'policy': {'name': 'gold', 'target_minutes': 60}}),
    (2, 'Slow export', 'work_in_progress', 'high', DATE '2025-01-05', NULL, 1, 'U2',
     [], {'status': 'paused', 'policy': {'name': 'gold', 'target_minutes': 240}}),
    (3, 'Typo', 'resolved', 'low', DATE '2025-01-06', DATE '2025-01-16', 0, 'U1',
     [{'type': 'resolves', 'display_id': 'ISS-2'}, {'type': 'blocks', 'display_id': 'TKT-9'}],
     {'status': 'running', 'policy': {'name': 'basic', 'target_minutes': 600}});
"""

# The same tickets, flat, for SQLite (no nested types, no comments).
FLAT_DDL = """
CREATE TABLE users (user_id TEXT PRIMARY KEY, display_name TEXT, title TEXT);
CREATE TABLE tickets (ticket_id INTEGER PRIMARY KEY, title TEXT, stage TEXT, severity TEXT,
                      opened TEXT, closed TEXT, reopen_count INTEGER,
                      owner_id TEXT REFERENCES users (user_id));
INSERT INTO users VALUES ('U1', 'Ada', 'support_engineer'), ('U2', 'Grace', 'support_lead');
INSERT INTO tickets VALUES (1, 'Login fails', 'queued', 'blocker', '2025-01-02', NULL, 0, 'U1'),
                           (2, 'Slow export', 'work_in_progress', 'high', '2025-01-05', NULL, 1, 'U2'),
                           (3, 'Typo', 'resolved', 'low', '2025-01-06', '2025-01-16', 0, 'U1');
"""


def work_duckdb_memory() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    conn.execute(WORK_DDL)
    return conn


def flat_sqlite_memory() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(FLAT_DDL)
    return conn


@pytest.fixture
def work_duckdb(tmp_path: Path) -> DatabaseRef:
    path = tmp_path / "work.duckdb"
    with closing(duckdb.connect(str(path))) as conn:
        conn.execute(WORK_DDL)
    return DatabaseRef(db_id="work", path=str(path), dialect="duckdb")


@pytest.fixture
def flat_sqlite(tmp_path: Path) -> DatabaseRef:
    path = tmp_path / "flat.sqlite"
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(FLAT_DDL)
    return DatabaseRef(db_id="flat", path=str(path))


@pytest.fixture
def work_view(work_duckdb: DatabaseRef) -> SchemaView:
    return introspect(work_duckdb, 0)


@pytest.fixture
def flat_view(flat_sqlite: DatabaseRef) -> SchemaView:
    return introspect(flat_sqlite, 0)


@pytest.fixture(scope="session")
def enterprise_db(tmp_path_factory: pytest.TempPathFactory) -> DatabaseRef:
    """The enterprise work-item schema with every COMMENT ON, and no rows."""
    path = tmp_path_factory.mktemp("enterprise") / "workitems.duckdb"
    with closing(duckdb.connect(str(path))) as conn:
        for table in ENTERPRISE_TABLES:
            conn.execute(table.ddl())
            for statement in table.comments():
                conn.execute(statement)
    return DatabaseRef(db_id="workitems", path=str(path), dialect="duckdb")


@pytest.fixture(scope="session")
def enterprise_view(enterprise_db: DatabaseRef) -> SchemaView:
    return introspect(enterprise_db, 0)


@pytest.fixture(scope="session")
def claims_view(tmp_path_factory: pytest.TempPathFactory) -> SchemaView:
    """The claims demo's SQLite schema, no rows."""
    path = tmp_path_factory.mktemp("claims") / "claims.sqlite"
    with closing(sqlite3.connect(path)) as conn:
        for table in CLAIMS_TABLES:
            conn.execute(table.ddl())
    return introspect(DatabaseRef(db_id="claims", path=str(path)), 0)


def context_for(view: SchemaView) -> CheckContext:
    return CheckContext(index=SchemaIndex.from_view(view), taxonomy=load_taxonomy())


def findings_of(stage: Blocker, sql: str, context: CheckContext) -> list[tuple[str, str]]:
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


@pytest.fixture
def work_context(work_view: SchemaView) -> CheckContext:
    return context_for(work_view)


@pytest.fixture
def flat_context(flat_view: SchemaView) -> CheckContext:
    return context_for(flat_view)


@pytest.fixture(scope="session")
def enterprise_context(enterprise_view: SchemaView) -> CheckContext:
    return context_for(enterprise_view)
