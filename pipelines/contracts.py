"""Typed contracts: every value that crosses a module boundary is one of these.

All are frozen pydantic v2 models (``core.types.Frozen``: ``frozen=True, extra="forbid"``), so
they are hashable, safe to share across async tasks and Ray actors, and a typo in a field name is
an error.

    Task ──► CandidateSQL(sql, producer, exec_result: ExecutionResult) ──► Prediction
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from core.types import Frozen, Usage

Dialect = Literal["sqlite", "duckdb", "postgres"]  # sqlglot's names of the dialects
Difficulty = Literal["simple", "moderate", "challenging", "easy", "medium", "hard", "extra"]


class DatabaseRef(Frozen):
    """Where a database lives. ``path`` is a local file (SQLite, DuckDB) or a
    ``postgresql://user@host:port/dbname`` URI (PostgreSQL); either is read, never written."""

    db_id: str
    path: str
    dialect: Dialect = "sqlite"
    # Folder of BIRD-style per-table description CSVs (or None).
    description_dir: str | None = None
    # A Spider-style tables.json holding this db_id's entry, with optional column_descriptions /
    # table_descriptions (or None: a tables.json beside the database is still looked for).
    tables_json: str | None = None
    # A YAML or JSON file of this database's own solved examples (or None: the example files
    # beside a database file are looked for; a server database has none unless named here).
    examples: str | None = None


class Task(Frozen):
    """One question against one database."""

    task_id: str
    question: str
    db: DatabaseRef
    evidence: str = ""
    gold_sql: str | None = None
    difficulty: Difficulty | None = None
    # The question's analytical depth on the SDS rubric (0-35), where its benchmark rates it.
    sds: int | None = Field(default=None, ge=0, le=35)
    # The one construct the question exercises, where its benchmark names one (a floor question).
    floor_construct: str | None = None
    benchmark: str = ""
    # Where the gold SQL runs when not on ``db``: the benchmark's own file, for a database
    # answered from a copy on a server (``benchmark.servers``).
    gold_db: DatabaseRef | None = None

    @property
    def gold_database(self) -> DatabaseRef:
        return self.gold_db or self.db


class SkippedTask(Frozen):
    """A benchmark question that cannot be run (e.g. its database is missing)."""

    task_id: str
    db_id: str
    reason: str


Cell = Any  # str | int | float | None after canonicalisation


class ExecutionResult(Frozen):
    """Result of running one SQL string in the sandbox.

    ``hash`` is BLAKE2b over the canonical (order-free, normalised) rows; errors hash as
    ``ERR:<hash of normalised message>`` so they never collide with a result.
    """

    rows: tuple[tuple[Cell, ...], ...] = ()
    columns: tuple[str, ...] = ()
    row_count: int = Field(default=0, ge=0)
    error: str | None = None
    error_kind: str | None = None
    hash: str
    elapsed_ms: float = Field(default=0.0, ge=0)
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def empty(self) -> bool:
        return self.error is None and self.row_count == 0


class CandidateSQL(Frozen):
    """A SQL candidate with who made it, why, what it returned, and how it got here."""

    sql: str
    producer: str  # e.g. "reasoning/T=0.7", "icl/cot/T=1.0"
    rationale: str | None = None
    exec_result: ExecutionResult | None = None
    lineage: tuple[str, ...] = ("gen",)  # ("gen", "fix:1", "revise:1")


class StepCost(Frozen):
    """What one step of a pipeline spent on one question (adaptive pipeline: ``first_wave``,
    ``fix``, ``widen``, ``revise``, ``tournament``; single pass: ``single_pass``)."""

    step: str
    calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0.0)


RetrievalSource = Literal["cells", "examples"]


class ChosenSetting(Frozen):
    """A setting the pipeline chose for a question's database (``pipelines/database_rules.py``).

    >>> str(ChosenSetting(name="select", value="vote")), str(ChosenSetting(name="budget", value=None))
    ('select=vote', 'budget=none')
    """

    name: str
    value: float | int | str | None

    def __str__(self) -> str:
        return f"{self.name}={'none' if self.value is None else self.value}"


class Prediction(Frozen):
    """The pipeline's answer for one Task, with the pool it chose from.

    ``answered_by`` names the step whose pool produced the answer (e.g. ``first_wave`` when the
    first wave's majority was clear); ``steps`` lists every step run, with its cost;
    ``retrieval`` the L0 retrievers that served this question (empty: answered without them).
    """

    task_id: str
    sql: str
    producer: str = ""
    exec_result: ExecutionResult | None = None
    candidates: tuple[CandidateSQL, ...] = ()
    usage: Usage = Usage()
    latency_s: float = 0.0
    degraded: bool = False
    degradation_reasons: tuple[str, ...] = ()
    error: str | None = None  # set only when no candidate could be produced at all
    trace_path: str | None = None
    answered_by: str = ""
    steps: tuple[StepCost, ...] = ()
    retrieval: tuple[RetrievalSource, ...] = ()
    chosen: tuple[ChosenSetting, ...] = ()  # the settings chosen for the question's database


# --- L0 retrieval (pipelines/indexing) ----------------------------------------------------------


class CellHit(Frozen):
    table: str
    column: str
    value: str
    score: float
    source: Literal["vector", "bm25", "hybrid"]


class ExampleHit(Frozen):
    question: str
    skeleton: str
    sql: str
    db_id: str
    score: float


class ColumnInfo(Frozen):
    name: str
    type: str
    description: str | None = None
    samples: tuple[str, ...] = ()
    primary_key: bool = False
    # Sub-fields of nested (STRUCT / LIST of STRUCT) columns, "parent.child" names.
    children: tuple[ColumnInfo, ...] = ()


class ForeignKey(Frozen):
    table: str
    column: str
    ref_table: str
    ref_column: str
    inferred: bool = False


class TableInfo(Frozen):
    name: str
    columns: tuple[ColumnInfo, ...]
    description: str | None = None
    row_count: int | None = None


class SchemaView(Frozen):
    """A database's schema as the prompts see it (optionally restricted to some tables)."""

    db_id: str
    dialect: Dialect
    tables: tuple[TableInfo, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()
    # The functions a server lets the role call (PostgreSQL's catalog), lower-cased and sorted;
    # empty: the engine installed here is asked (pipelines/agentic_mode/functions.py). Not shown
    # in repr, and left out of the JSON when empty, so a SQLite/DuckDB view serializes as before.
    functions: tuple[str, ...] = Field(default=(), repr=False, exclude_if=lambda names: not names)


class ErrorClass(StrEnum):
    wrong_join = "wrong_join"
    missing_filter = "missing_filter"
    wrong_aggregation = "wrong_aggregation"
    value_mismatch = "value_mismatch"
    evidence_ignored = "evidence_ignored"
    other = "other"
