"""Fakes shared by the pipeline tests: a scripted model client, a small SQLite sandbox, a tiny db;
and databases documented as real ones are (the agentic checks and the documentation read them):
a small work-item DuckDB with a list of structs, a nested struct and enum-like columns documented
by ``COMMENT ON``, a flat SQLite of the same data, the enterprise schema built empty (its DDL and
comments only, no rows).

The scripted client answers by the agent a request is for (recognised from the line of the
prompt that states the agent's task, see ``agent_of``), so a test scripts behaviour per agent and can inject faults.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from core.types import Usage
from eval.enterprise.schema import TABLES as ENTERPRISE_TABLES
from models.errors import BudgetExceeded, ContextTooLong
from models.types import ChatRequest, ChatResponse, TokenLogprob
from pipelines.contracts import DatabaseRef, ExecutionResult, SchemaView
from pipelines.schema import introspect
from pipelines.schema.view import token_size

# First words of the line stating each agent's task -> agent name (kept in step with pipelines/prompts).
_MARKERS = {
    "You extract": "extractor",
    "You reason": "reasoning",
    "You write SQL from examples": "icl/direct",
    "You think step by step": "icl/cot",
    "You decompose": "icl/decompose",
    "You repair": "fixer",
    "You review": "critic",
    "You revise": "revisor",
    "You judge": "selector",
    "You inspect": "plan_verifier",
    "You validate": "semantic_validator",
    "-- Using valid": "single_pass",  # the single-pass prompt, also the adaptive first wave's
    # and the agentic generator's
    "You plan": "select_entities",  # the agentic mode's entity selection
}


def agent_of(request: ChatRequest) -> str:
    """The agent whose task line (a line of the user message, or the start of the system message
    for prompts with their own) starts with one of the markers."""
    lines = request.messages[-1].content.splitlines()
    if request.messages[0].role == "system":
        lines.append(request.messages[0].content)
    for marker, name in _MARKERS.items():
        if any(line.startswith(marker) for line in lines):
            return name
    raise AssertionError(f"unrecognised prompt: {request.messages[-1].content[:60]!r}")


def forced_text(request: ChatRequest) -> str:
    """The one text a teacher-forced request's grammar admits (models/scoring.py)."""
    return json.loads(request.grammar.removeprefix("root ::= "))


def forced_logprobs(text: str, logprob: float) -> tuple[TokenLogprob, ...]:
    """The fence as three tokens of -1, then each word of the rest at ``logprob``."""
    body = text.removeprefix("```sql\n")
    opening = [] if body == text else [("```", -1.0), ("sql", -1.0), ("\n", -1.0)]
    words = [(w, logprob) for w in body.split(" ")]
    return tuple(TokenLogprob(token=t, logprob=p) for t, p in opening + words)


class ScriptedClient:
    """ModelClient fake: ``script[agent](request)`` gives the reply texts or an exception.

    A scoring request (``logprobs``) goes to ``script["likelihood"](sql)``, which gives the
    log-probability of each of that SQL's words (or an exception)."""

    def __init__(self, script: dict[str, Callable[[ChatRequest], object]]) -> None:
        self.script = script
        self.requests: list[tuple[str, ChatRequest]] = []

    @property
    def calls(self) -> Counter:
        return Counter(agent for agent, _ in self.requests)

    async def chat(
        self, request: ChatRequest, *, role: str = "generator", budget=None
    ) -> ChatResponse:
        agent = "likelihood" if request.logprobs else agent_of(request)
        if (
            budget is not None
            and budget.remaining_tokens is not None
            and budget.remaining_tokens < 100
        ):
            raise BudgetExceeded(
                f"token budget exhausted before {agent}"
            )  # as the real client does
        self.requests.append((agent, request))
        if agent not in self.script:
            raise AssertionError(f"unscripted call to {agent}")
        logprobs: tuple[tuple[TokenLogprob, ...], ...] = ()
        if request.logprobs:
            text = forced_text(request)
            sql = text.removeprefix("```sql\n").removesuffix("\n```")
            reply = self.script[agent](sql)
            if not isinstance(reply, Exception):
                logprobs, reply = (forced_logprobs(text, reply),), text
        else:
            reply = self.script[agent](request)
        if isinstance(reply, Exception):
            raise reply
        texts = [reply] * request.n if isinstance(reply, str) else list(reply)
        usage = Usage(calls=1, prompt_tokens=100, completion_tokens=10 * len(texts))
        if budget is not None:
            budget.charge(usage)
        return ChatResponse(
            texts=tuple(texts),
            usage=usage,
            latency_s=0.0,
            model="scripted",
            finish_reasons=("stop",) * len(texts),
            logprobs=logprobs,
        )


def over_context(
    reply: Callable[[ChatRequest], object], *, too_long: Callable[[ChatRequest], bool]
) -> Callable[[ChatRequest], object]:
    """``reply`` behind a model server that refuses a request ``too_long`` says is over its
    context, naming the prompt's tokens (as the pipeline estimates them) and a context just
    below them with room for the reply, as llama.cpp's refusal does."""

    def answer(request: ChatRequest) -> object:
        if not too_long(request):
            return reply(request)
        tokens = sum(token_size(m.content) for m in request.messages)
        context = tokens + request.max_tokens - 1
        return ContextTooLong(
            f"request ({tokens} tokens) exceeds the available context size ({context} tokens)",
            prompt_tokens=tokens,
            context=context,
            max_tokens=request.max_tokens,
        )

    return answer


class SQLiteSandbox:
    """Read-only SQLite executor with an order-free result hash (stand-in for the real sandbox)."""

    def __init__(self) -> None:
        self.executed: list[str] = []

    async def execute(self, sql: str, db: DatabaseRef) -> ExecutionResult:
        self.executed.append(sql)
        conn = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
        try:
            cur = conn.execute(sql)
            rows = tuple(tuple(r) for r in cur.fetchall())
            columns = tuple(d[0] for d in cur.description or ())
        except sqlite3.Error as exc:
            digest = hashlib.blake2b(str(exc).encode(), digest_size=8).hexdigest()
            return ExecutionResult(error=str(exc), error_kind="sql_error", hash=f"ERR:{digest}")
        finally:
            conn.close()
        canon = json.dumps(sorted(rows, key=repr), default=str)
        digest = hashlib.blake2b(canon.encode(), digest_size=8).hexdigest()
        return ExecutionResult(rows=rows, columns=columns, row_count=len(rows), hash=digest)


def sqlite_db(path: Path, script: str) -> DatabaseRef:
    """A SQLite file at ``path`` built by ``script``, named after the file."""
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()
    return DatabaseRef(db_id=path.stem, path=str(path))


def read_sorted(db: DatabaseRef, sql: str) -> list[tuple]:
    """The rows of ``sql`` on a read-only connection, sorted."""
    conn = sqlite3.connect(f"file:{db.path}?mode=ro", uri=True)
    try:
        return sorted(conn.execute(sql).fetchall())
    finally:
        conn.close()


@pytest.fixture
def tiny_db(tmp_path: Path) -> DatabaseRef:
    """singer(singer_id, name, country, age) with 5 rows; concert(concert_id, singer_id, year)."""
    return sqlite_db(
        tmp_path / "concerts.sqlite",
        """
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, singer_id INTEGER
                              REFERENCES singer(singer_id), year INTEGER);
        INSERT INTO singer VALUES (1,'Joe','France',52),(2,'Ann','France',29),(3,'Li','China',41),
                                  (4,'Bo','USA',33),(5,'Eve','USA',25);
        INSERT INTO concert VALUES (1,1,2014),(2,1,2015),(3,3,2015),(4,4,2014);
        """,
    )


@pytest.fixture
def sandbox() -> SQLiteSandbox:
    return SQLiteSandbox()


@pytest.fixture
def scripted():
    return ScriptedClient


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
