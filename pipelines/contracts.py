"""Typed contracts: every value that crosses a module boundary is one of these.

All are frozen pydantic v2 models (``core.types.Frozen``: ``frozen=True, extra="forbid"``), so
they are hashable, safe to share across async tasks and Ray actors, and a typo in a field name is
an error.

    Task ──► CandidateSQL(sql, producer, exec_result: ExecutionResult) ──► Prediction
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from core.types import Frozen, Usage
from pipelines.sql_hardness import Hardness

Dialect = Literal["sqlite", "duckdb"]
Difficulty = Literal["simple", "moderate", "challenging", "easy", "medium", "hard", "extra"]


class DatabaseRef(Frozen):
    """Where a database lives. ``path`` is a local file opened read-only, never written."""

    db_id: str
    path: str
    dialect: Dialect = "sqlite"
    # Folder of BIRD-style per-table description CSVs (or None).
    description_dir: str | None = None
    # A Spider-style tables.json holding this db_id's entry, with optional column_descriptions /
    # table_descriptions (or None: a tables.json beside the database is still looked for).
    tables_json: str | None = None


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
    benchmark: str = ""


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


class WidenStep(Frozen):
    """One widening request of the adaptive pipeline: ``n`` more samples of the first-wave prompt,
    with or without the retrieved examples and cell values (another prompt variant)."""

    n: int = Field(default=4, ge=1, le=64)
    temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    examples: bool = True
    cells: bool = True

    @property
    def variant(self) -> str:
        parts = [p for p, on in (("examples", self.examples), ("cells", self.cells)) if on]
        return "+".join(parts) or "plain"


class AdaptiveScaling(Frozen):
    """Widths, thresholds and steps of the adaptive pipeline (``pipelines/strategies/adaptive.py``).

    A first wave of ``greedy`` + ``samples`` candidates from one prompt, each SQL that names a
    column the schema lacks rewritten from the schema (``column_repair`` rounds); a clear majority —
    the top bucket non-empty, error-free, holding ``stop_share`` of the executed answers and at
    least ``stop_min_votes``, and before the widening its SQL no harder than
    ``stop_max_hardness`` — answers; otherwise the enabled steps run in order, each followed
    by the same check: fix (``fix_max`` distinct errored SQLs), widen (``widen`` requests, where
    ``widen_min_votes`` candidates agree),
    revise (critique + revision of a suspicious top bucket, off by default), tournament (top
    buckets whose margin is at most ``tournament_margin`` of the answers, off by default); a pool
    still split after them is decided by ``select``. Past ``escalate_within_s`` no step starts.
    """

    greedy: bool = True
    # One request with the greedy candidate's prompt: its KV cache is reused.
    samples: int = Field(default=4, ge=0, le=64)
    temperature: float = Field(default=0.8, ge=0.0, le=2.0)
    stop_share: float = Field(default=0.6, gt=0.0, le=1.0)  # of the executed (non-error) answers
    stop_min_votes: int = Field(default=4, ge=1)  # first wave: 4 of its 5 candidates agree
    early_stop: bool = True  # False: every enabled step runs (the −early-stop ablation)
    # A majority whose SQL Spider's rules rate harder than this (pipelines/sql_hardness.py) answers
    # only after the pool was widened; "extra" trusts every clear majority. "medium" widened 19 of
    # the fixed 108 and turned one answer right for ~3.5 s/question more (docs/benchmarks.md).
    stop_max_hardness: Hardness = "extra"
    # Rounds of schema-grounded rewrites of an unbound column, no LLM (pipelines/repair/columns.py).
    column_repair: int = Field(default=3, ge=0)
    # An empty result whose ``column = 'literal'`` filter names no stored value: the literal looked
    # up in the scope's text columns, no LLM (pipelines/repair/values.py).
    value_repair: bool = True
    # A JOIN whose ON condition names no key between the new table and those before it
    # (``ON T1.MakeId = T1.Make``) gets the schema's one join key before it runs, no LLM
    # (pipelines/repair/joins.py).
    join_repair: bool = True
    # A syntax error from an apostrophe inside a string (``'St. Luke\'s'``, ``'O'Brien'``): the
    # apostrophe doubled, no LLM (pipelines/repair/quotes.py); runs in the column repair's rounds.
    quote_repair: bool = True
    fix_max: int = Field(default=1, ge=0)  # distinct errored SQLs repaired, most frequent first
    # One request each, in order, while the pool is split; () disables widening. The default draws
    # from the plain prompt (no examples, no cell values): its samples are less correlated with the
    # first wave's, 0.48 of them right against 0.28 for more samples of the first wave's prompt on
    # the same questions (docs/benchmarks.md, *Value repair, and the cost-matched vote*).
    widen: tuple[WidenStep, ...] = (WidenStep(n=4, temperature=0.8, examples=False, cells=False),)
    # A widening starts only where at least this many candidates already agree on one executed
    # answer; a pool in which no two agree (every candidate errored or answered alone) goes
    # straight to ``select``. On the claims benchmark such pools were never turned right by a
    # widening, which took 20-60 s there and outvoted a right answer twice
    # (docs/benchmarks.md, *Widening only where candidates agree*). 0: every split pool widens.
    # auto: 2 on a large schema, else 0 (pipelines/database_rules.py).
    widen_min_votes: Annotated[int, Field(ge=0)] | Literal["auto"] = "auto"
    # Off: the local 1.5B critic's revisions lose more right majority answers than they fix
    # (docs/benchmarks.md, *Adaptive pipeline vs baselines*).
    revise: bool = False
    # Selector between the top buckets when their margin is close. Off: the local 1.5B selector
    # is at chance on a right against a wrong answer (18 of 40 verdicts right,
    # benchmarks/bench_selector.py) and answered fewer of its questions than the plain vote in
    # 3 of 4 runs on the 108 (docs/benchmarks.md); turn it on with a stronger selector model.
    tournament: bool = False
    tournament_margin: float = Field(default=0.25, ge=0.0, le=1.0)
    tournament_finalists: int = Field(default=2, ge=2)
    # How a pool still split after the last step is decided: "vote" (largest bucket) or
    # "likelihood" (the SQL the generator finds most probable under the ``select_prompt``,
    # teacher-forced, one call per distinct SQL, at most ``select_max_sqls``:
    # pipelines/selection/likelihood.py). "plain" is the prompt without examples and cell values. Against
    # the vote on the same pools: +3, 0 and +1 questions on three samples of the fixed 108, -3 on
    # 108 other dev questions, for ~0.5 calls and ~12 s where it runs: no gain beyond a run's
    # noise (docs/benchmarks.md, *Adaptive pipeline vs baselines*); on the claims halves the vote
    # answered 21 and 23 of 35 against 19 and 20. auto: the vote on a large schema, else the
    # likelihood (pipelines/database_rules.py).
    select: Literal["vote", "likelihood", "auto"] = "auto"
    select_max_sqls: int = Field(default=4, ge=1)
    # Scoring calls in flight at once: 1 on a 2-core CPU (another slot would evaluate the prompt
    # again); a GPU server scores a question's SQLs together.
    select_parallel: int = Field(default=1, ge=1)
    select_prompt: Literal["plain", "first_wave"] = "plain"
    # Seconds from the question's start after which no further step (fix, widen, revise,
    # tournament, likelihood) starts: a pool still split is decided by the vote, and the answer is
    # not degraded (global_timeout_s cuts a step off and marks it so). None: every step may run.
    # auto: 7.5 s per 1,000 tokens of a large schema's prompt, none on a small one
    # (pipelines/database_rules.py).
    escalate_within_s: Annotated[float, Field(gt=0)] | None | Literal["auto"] = "auto"

    @model_validator(mode="after")
    def _needs_a_candidate(self) -> AdaptiveScaling:
        if not self.greedy and self.samples == 0:
            raise ValueError(
                "adaptive first wave produces no candidates: greedy is false and samples is 0"
            )
        return self


class AgenticScaling(Frozen):
    """Turns, budgets and stages of the agentic mode (``pipelines/strategies/agentic.py``): one
    generated SQL at a time, checked, executed, classified and repaired with the taxonomy's
    directives until one is accepted or ``max_attempts`` generations were made.

    The stage switches are the ablations: without ``checker_chain`` a candidate goes straight to
    the verifier and the database; without ``directives`` the generator gets the raw error
    message instead of the class and its directive (the plain retry-with-error baseline);
    without ``schema_expansion`` a schema-coverage error is repaired in place like any other.
    """

    max_attempts: int = Field(default=3, ge=1, le=10)  # generator calls per question
    # Entities the selection may ask for at the start (shown hubs first; a cap keeps the
    # generator's prompt short on a CPU) and at most this many more over all expansions.
    # Two: on the 2-core CPU an enterprise prompt with three entities is 4,900-6,100 tokens and
    # 80-120 s to evaluate, and the model asked for three named three whether it needed them
    # or not; a missing entity comes back through the schema expansion.
    max_entities: int = Field(default=2, ge=1)
    max_expanded: int = Field(default=2, ge=0)
    # How the first entities are chosen: "llm" (one short call over the catalog, its answer
    # constrained to entity names), "focus" (the schema focus's linking, no LLM), or both.
    select_entities: Literal["llm", "focus", "both"] = "llm"
    examples: int = Field(default=3, ge=0)  # the database's own solved examples, most similar first
    # An empty result (the taxonomy's ``accept``: it can be right) goes back once for a repair
    # while attempts remain; it stands if the repair finds no rows either. Without the validator
    # nothing else questions it: the first enterprise trials accepted a join that matched nothing.
    retry_empty: bool = True
    checker_chain: bool = True
    # The checker chain binds an unknown column with the adaptive pipeline's column repair
    # (ColumnNames) instead of reporting it. Off: on the claims tuning half it rewrote 6
    # questions' SQL, turned none right and one wrong (a join to an unrelated table).
    bind_columns: bool = False
    directives: bool = True
    schema_expansion: bool = True
    cheatsheet: bool = True
    verifier: bool = False
    validator: bool = False
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)  # of the first generation
    # Of a repair: a little randomness, so a repeated mistake is not regenerated verbatim.
    repair_temperature: float = Field(default=0.3, ge=0.0, le=2.0)
    # The earlier attempts' SQL in the generator's history (their feedback always is). Off: the
    # 1.5B, shown its failed SQL, wrote it again in most repairs of the enterprise tuning
    # questions, even redrawn at 0.8 with another seed.
    show_failed_sql: bool = False
    # Of the one redraw of a generation that repeats an earlier attempt's SQL (the 1.5B, shown
    # its failed SQL, often writes it again at the repair temperature).
    duplicate_temperature: float = Field(default=0.8, ge=0.0, le=2.0)


class ScalingSettings(Frozen):
    """Every width, depth and cap of the pipeline. Only the orchestrator reads it.

    ``k`` maps a generator family (``pipelines/agents/generators.py``) to its samples per question;
    a family it does not name draws none. On the command line: ``scaling.k.reasoning=0``, and for
    names with a slash a mapping merged into the rest, ``scaling.k={icl/cot:0,icl/decompose:0}``.
    """

    k: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=lambda: {"reasoning": 2, "icl/direct": 2, "icl/cot": 2, "icl/decompose": 2}
    )
    # Samples per generator in a re-synthesis pass; None: max(1, largest k // 2).
    k_resynth: int | None = Field(default=None, ge=1)
    fixer_max_passes: int = Field(default=2, ge=0)
    refinement_max_passes: int = Field(default=1, ge=0)
    resynth_max_passes: int = Field(default=2, ge=0)
    complexity_retry_threshold: int = Field(default=7, ge=1, le=11)
    tournament_enabled: bool = True
    global_timeout_s: float = Field(default=120, gt=0)
    token_budget: int = Field(default=200_000, gt=0)
    # One greedy candidate, no refinement, no selection; sum(k) > 1 samples that many at
    # temperatures[0] and votes (self-consistency).
    single_pass: bool = False
    router_enabled: bool = False
    temperatures: tuple[float, ...] = (0.2, 0.7, 1.0)
    # Set: the adaptive pipeline (first wave, escalate where candidates disagree) answers instead
    # of the full-width orchestrator; the fields above other than the timeout and budget are unused.
    adaptive: AdaptiveScaling | None = None
    # Set: the agentic mode (one generation at a time, checked and repaired) answers.
    agentic: AgenticScaling | None = None

    @model_validator(mode="after")
    def _needs_a_generator(self) -> ScalingSettings:
        if not self.single_pass and self.candidates == 0:
            raise ValueError(f"ScalingSettings produces no candidates: every k is 0 ({self.k})")
        return self

    @property
    def candidates(self) -> int:
        """First-wave candidates: the sum of ``k``."""
        return sum(self.k.values())

    @property
    def effective_k_resynth(self) -> int:
        return (
            self.k_resynth
            if self.k_resynth is not None
            else max(1, max(self.k.values(), default=0) // 2)
        )


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


class ErrorClass(StrEnum):
    wrong_join = "wrong_join"
    missing_filter = "missing_filter"
    wrong_aggregation = "wrong_aggregation"
    value_mismatch = "value_mismatch"
    evidence_ignored = "evidence_ignored"
    other = "other"
