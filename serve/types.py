"""What the HTTP API takes and returns (the OpenAPI schema at ``/docs`` is generated from these).

>>> QueryRequest(question="How many singers?", database="concerts").profile is None
True
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.types import Frozen
from pipelines.contracts import DatabaseRef

Profile = Literal["fast", "balanced", "thorough", "agentic"]
JsonScalar = str | int | float | bool | None


class QueryRequest(Frozen):
    question: str = Field(min_length=1, description="the question, in words")
    database: str = Field(min_length=1, description="a registered database's name")
    evidence: str = Field(default="", description="hints: definitions, formulas, value spellings")
    profile: Profile | None = Field(
        default=None,
        description="fast (one SQL), balanced (adaptive), thorough (full width), agentic "
        "(one SQL at a time, checked and repaired)",
    )
    max_rows: int | None = Field(default=None, ge=1, description="rows returned at most")


class QueryUsage(Frozen):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class QueryAnswer(Frozen):
    """The answer to one question."""

    sql: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[JsonScalar, ...], ...] = ()
    row_count: int = 0
    truncated: bool = False
    explanation: str = ""
    assumptions: tuple[str, ...] = ()
    # candidate agreement and selection margin, discounted for few candidates (serve/engine.py)
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    degraded: bool = False
    degradation_reasons: tuple[str, ...] = ()
    cached: bool = False
    trace_id: str = ""
    database: str = ""
    profile: str = ""
    usage: QueryUsage = QueryUsage()
    query_id: int | None = Field(
        default=None, description="the answer's query log id: POST /v1/queries/{id}/feedback"
    )


class QueryJob(Frozen):
    """What the ingress hands the pipeline deployment."""

    question: str
    evidence: str = ""
    db: DatabaseRef
    database: str  # the registered name
    profile: str
    max_rows: int
    trace_id: str
    deadline_s: float


class EngineAnswer(Frozen):
    answer: QueryAnswer
    result_hash: str | None = None


class Progress(Frozen):
    """One stage event of a streamed answer."""

    stage: Literal["understanding", "candidates", "refinement", "selection", "explanation"]
    llm_calls: int = 0
    candidates: int = 0  # SQL candidates generated so far
    expected: int = 0  # the first wave's width


class TableSummary(Frozen):
    name: str
    columns: tuple[str, ...]
    row_count: int | None = None


class DatabaseInfo(Frozen):
    name: str
    engine: str
    tables: tuple[TableSummary, ...] = ()
    error: str | None = None  # set when the database cannot be read now


class RegisterRequest(Frozen):
    name: str = Field(description="letters, digits, _ and -, up to 64")
    path: str = Field(
        description="a SQLite (.sqlite/.sqlite3/.db) or DuckDB (.duckdb) file, or a PostgreSQL "
        "database as postgresql://user@host:port/dbname"
    )
    description_dir: str | None = None
    examples: str | None = Field(
        default=None,
        description="a YAML or JSON file of the database's own solved questions ({question, sql}); "
        "a database file's beside it are found without it",
    )


class FeedbackRequest(Frozen):
    accepted: bool = Field(strict=True, description="true: the answer is right; false: wrong")


class Feedback(Frozen):
    """The feedback now recorded for one answer."""

    query_id: int
    accepted: bool
