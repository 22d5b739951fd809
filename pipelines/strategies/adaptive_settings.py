"""The settings of the adaptive pipeline (``pipelines/strategies/adaptive.py``): the ``scaling``
group when ``scaling.strategy`` is ``adaptive`` (``conf/scaling/adaptive.yaml``, ``greedy.yaml``).

    AdaptiveScaling(samples=0, widen=()).first_wave   ──► 1
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from core.types import Frozen
from pipelines.repair.base import Grounder, Rewriter
from pipelines.repair.registry import RepairEntry, RepairList, build_repairs
from pipelines.sql_hardness import Hardness
from pipelines.strategies.scaling import StrategyScaling


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


class AdaptiveScaling(StrategyScaling):
    """Widths, thresholds and steps of the adaptive pipeline (``pipelines/strategies/adaptive.py``).

    A first wave of ``greedy`` + ``samples`` candidates from one prompt, each repaired by the
    listed schema-grounded ``repairs`` (an SQL that names a column the schema lacks rewritten
    from the schema, ...); a clear majority —
    the top bucket non-empty, error-free, holding ``stop_share`` of the executed answers and at
    least ``stop_min_votes``, and before the widening its SQL no harder than
    ``stop_max_hardness`` — answers; otherwise the enabled steps run in order, each followed
    by the same check: fix (``fix_max`` distinct errored SQLs), widen (``widen`` requests, where
    ``widen_min_votes`` candidates agree),
    revise (critique + revision of a suspicious top bucket, off by default), tournament (top
    buckets whose margin is at most ``tournament_margin`` of the answers, off by default); a pool
    still split after them is decided by ``select``. Past ``escalate_within_s`` no step starts.
    """

    strategy: Literal["adaptive"] = "adaptive"
    greedy: bool = True
    # One request with the greedy candidate's prompt: its KV cache is reused.
    samples: int = Field(default=4, ge=0, le=64)
    temperature: float = Field(default=0.8, ge=0.0, le=2.0)
    stop_share: float = Field(default=0.6, gt=0.0, le=1.0)  # of the executed (non-error) answers
    stop_min_votes: int = Field(default=4, ge=1)  # first wave: 4 of its 5 candidates agree
    early_stop: bool = True  # False: every enabled step runs (the −early-stop ablation)
    # A majority whose SQL Spider's rules rate harder than this (pipelines/sql_hardness.py) answers
    # only after the pool was widened; "extra" trusts every clear majority. "medium" widened 19 of
    # the fixed 108 and turned one answer right for ~3.5 s/question more (docs/benchmarks.md#hardness-gate).
    stop_max_hardness: Hardness = "extra"
    # The schema-grounded repairs of a candidate, no LLM, by name (pipelines/repair/registry.py),
    # each with its settings as ``{name: {setting: value}}``; they run by phase, in this order
    # within a phase: ``joins`` before it runs (a JOIN whose ON names no key between the new table
    # and those before it gets the schema's one join key: ``ON T1.MakeId = T1.Make``), ``columns``
    # and ``quotes`` on its error (an unbound column rewritten from the schema, ``rounds``: 3
    # rewrites at most; an apostrophe inside a string, ``'O'Brien'``, doubled), before them
    # ``double_quoted_strings`` (SQLite's double-quoted string refused as a column by PostgreSQL
    # or DuckDB, ``state = "Ohio"``, read as ``'Ohio'``: 6 candidates of 2 questions of the claims
    # tuning half from PostgreSQL), ``values`` on a
    # result with nothing in it (a ``column = 'literal'`` filter that names no stored value,
    # the literal looked up in the scope's text columns), ``sqlite_dates`` on a PostgreSQL
    # server's refusal of SQLite's date calls (``julianday``, ``strftime``, ``EXTRACT`` and
    # ``TO_CHAR`` on ISO text, rewritten for the server; nothing on another engine). First of
    # all, before it runs,
    # the rewriters of DuckDB's nested types (nothing on an engine without them):
    # ``list_column_tables`` (a list column read as a table, ``JOIN tags AS g``, unnested from its
    # owner), ``struct_column_tables`` (a struct column read as one, ``JOIN sla_tracker AS s``,
    # read off its owner) and ``list_field_reads`` (a field read off a list of structs,
    # ``a.owned_by.user_id``, read off its items): 16 of single pass's 36 errors on the enterprise
    # tuning half were these; on the enterprise floors they answer 5 more of 36 questions (tuning
    # 7 against 5 of 18, held-out 8 against 5) and lose none (docs/benchmarks.md#enterprise-nested-repairs).
    # With them, on any engine, ``subtype_tables``: a kind of row named as a table
    # (``JOIN capabilities AS c`` where ``parts.part_type`` documents ``capability``) read as its
    # table's rows of that kind; with it and struct_column_tables reading a struct inside a
    # struct or alone in FROM, the floor questions they touch: held-out 1 of 4 right against 0,
    # tuning 1 of 6 against 1 (docs/benchmarks.md#enterprise-subtype-tables). [] runs none.
    repairs: RepairList = (
        "list_column_tables",
        "struct_column_tables",
        "subtype_tables",
        "list_field_reads",
        "joins",
        "double_quoted_strings",
        "columns",
        "quotes",
        "values",
        "sqlite_dates",
    )
    fix_max: int = Field(default=1, ge=0)  # distinct errored SQLs repaired, most frequent first
    # One request each, in order, while the pool is split; () disables widening. The default draws
    # from the plain prompt (no examples, no cell values): its samples are less correlated with the
    # first wave's, 0.48 of them right against 0.28 for more samples of the first wave's prompt on
    # the same questions (docs/benchmarks.md#value-repair).
    widen: tuple[WidenStep, ...] = (WidenStep(n=4, temperature=0.8, examples=False, cells=False),)
    # A widening starts only where at least this many candidates already agree on one executed
    # answer; a pool in which no two agree (every candidate errored or answered alone) goes
    # straight to ``select``. On the claims benchmark such pools were never turned right by a
    # widening, which took 20-60 s there and outvoted a right answer twice
    # (docs/benchmarks.md#widening-rule). 0: every split pool widens.
    # auto: 2 on a large schema, else 0 (pipelines/database_rules.py).
    widen_min_votes: Annotated[int, Field(ge=0)] | Literal["auto"] = "auto"
    # Off: the local 1.5B critic's revisions lose more right majority answers than they fix
    # (docs/benchmarks.md#spider-adaptive).
    revise: bool = False
    # Selector between the top buckets when their margin is close. Off: the local 1.5B selector
    # is at chance on a right against a wrong answer (18 of 40 verdicts right,
    # benchmarks/bench_selector.py) and answered fewer of its questions than the plain vote in
    # 3 of 4 runs on the 108 (docs/benchmarks.md#selector); turn it on with a stronger selector model.
    tournament: bool = False
    tournament_margin: float = Field(default=0.25, ge=0.0, le=1.0)
    tournament_finalists: int = Field(default=2, ge=2)
    # How a pool still split after the last step is decided: "vote" (largest bucket) or
    # "likelihood" (the SQL the generator finds most probable under the ``select_prompt``,
    # teacher-forced, one call per distinct SQL, at most ``select_max_sqls``:
    # pipelines/selection/likelihood.py). "plain" is the prompt without examples and cell values. Against
    # the vote on the same pools: +3, 0 and +1 questions on three samples of the fixed 108, -3 on
    # 108 other dev questions, for ~0.5 calls and ~12 s where it runs: no gain beyond a run's
    # noise (docs/benchmarks.md#spider-adaptive); on the claims halves the vote
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

    @field_validator("repairs")
    @classmethod
    def _runs_on_candidates(cls, repairs: tuple[RepairEntry, ...]) -> tuple[RepairEntry, ...]:
        for repair in build_repairs(repairs):
            if not isinstance(repair, (Rewriter, Grounder)):
                raise ValueError(f"{repair.name} reports findings; the adaptive pipeline rewrites")
        return repairs

    @model_validator(mode="after")
    def _needs_a_candidate(self) -> AdaptiveScaling:
        if not self.greedy and self.samples == 0:
            raise ValueError(
                "adaptive first wave produces no candidates: greedy is false and samples is 0"
            )
        return self

    @property
    def first_wave(self) -> int:
        return int(self.greedy) + self.samples
