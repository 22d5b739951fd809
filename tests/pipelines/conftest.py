"""Fakes shared by the pipeline tests: a scripted model client, a small SQLite sandbox, a tiny db.

The scripted client answers by the agent a request is for (recognised from the line of the
prompt that states the agent's task, see ``agent_of``), so a test scripts behaviour per agent and can inject faults.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from core.types import Usage
from models.errors import BudgetExceeded
from models.types import ChatRequest, ChatResponse, TokenLogprob
from pipelines.contracts import DatabaseRef, ExecutionResult

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
    "-- Using valid": "single_pass",  # the single-pass prompt, also the adaptive first wave's
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
