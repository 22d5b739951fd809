"""One run's figures, computed once from its predictions and traces; every output renders them.

    predictions (this invocation's questions) ─┐
    their reasoning traces ─────────────────────┼─► run_result ──► RunResult ─┬─► console summary (summary.py)
    retrieval status, prices, pace ────────────┘                              ├─► report.md + plots (report.py)
                                                                              └─► MLflow metrics: .metrics()

``RunResult.metrics()`` names each figure as MLflow has always logged it (``ex_bird/hard``,
``pass_at_4``, ``cost_usd_per_correct``, ``trace/degraded_rate``, ...): runs compare across
versions by those names.

    result = run_result(frame, label="adaptive", skipped=1)
    result.overall.ex_bird, result.metrics()["ex_bird"]   ──►  0.648, 0.648
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from core.types import Frozen
from eval.grading.judge import judge_metrics
from eval.metrics import r_ves
from eval.metrics.traces import TraceMetrics, derive_metrics
from eval.reporting.accuracy import (
    SEMANTICS,
    cost_by_difficulty,
    ex_by_difficulty,
    ex_by_sds,
    pass_at_k_curve,
    question_verdicts,
    scored,
)
from eval.reporting.breakdown import Breakdown, breakdown
from eval.reporting.costs import ReferenceCost, Spend, reference_costs, spend
from eval.reporting.retrieval import RetrievalUse, retrieval_use
from models.budget import Price
from pipelines.trace import ReasoningTrace


class ExRow(Frozen):
    """EX of one group of scored questions: a difficulty, an SDS bucket, or ``all``."""

    group: str
    questions: int
    ex_bird: float | None = None
    ex_spider: float | None = None


class CostPoint(Frozen):
    """Per difficulty: mean tokens and dollars per scored question, and EX (BIRD)."""

    label: str
    tokens_per_question: float | None = None
    cost_usd_per_question: float | None = None
    ex_bird: float | None = None


class Latency(Frozen):
    p50_s: float
    p95_s: float
    mean_s: float


class RunResult(Frozen):
    """Everything measured on one run's questions (those of this invocation)."""

    label: str
    questions: int = 0
    scored: int = 0
    skipped: int = 0  # questions whose database is missing
    gold_errors: int = 0
    grading_errors: int = 0
    by_difficulty: tuple[ExRow, ...] = ()  # the last row is "all"
    by_sds: tuple[ExRow, ...] = ()  # for a benchmark that rates its questions on SDS
    pass_at_k: dict[int, float] = {}  # BIRD semantics; k = 1 .. the largest pool
    pass_at_k_spider: dict[int, float] = {}
    r_ves: float | None = None
    per_question: Spend | None = None
    per_correct: Spend | None = None  # None: no question was right
    reference: ReferenceCost | None = None
    pricing: str = ""  # the slots' prices, e.g. "default $0.0892/h"
    latency: Latency | None = None
    degraded_rate: float | None = None
    candidates_per_question: float | None = None
    ex_bird_degraded: float | None = None
    ex_bird_not_degraded: float | None = None
    cost_points: tuple[CostPoint, ...] = ()
    retrieval: RetrievalUse = RetrievalUse()
    breakdown: Breakdown = Breakdown()
    judge: dict[str, float] = {}  # eval.grading.judge.judge_metrics; empty when nothing was judged
    trace: TraceMetrics | None = None
    questions_per_minute: float | None = None  # answered by this invocation
    verdicts: dict[str, bool] = {}  # task id -> EX (BIRD) of each scored question, for pairing
    chosen: dict[str, str] = {}  # db id -> the settings the pipeline chose for it
    task_ids: tuple[str, ...] = ()

    @property
    def overall(self) -> ExRow:
        return self.by_difficulty[-1] if self.by_difficulty else ExRow(group="all", questions=0)

    def metrics(self) -> dict[str, float]:
        """Every figure under its MLflow name."""
        figures: dict[str, float] = {
            "questions": float(self.questions),
            "questions_scored": float(self.scored),
            "skipped": float(self.skipped),
            "gold_errors": float(self.gold_errors),
            "grading_errors": float(self.grading_errors),
        }
        for row in self.by_difficulty:
            suffix = "" if row.group == "all" else f"/{row.group}"
            figures |= _ex_figures(row, suffix)
        for row in self.by_sds:
            figures |= _ex_figures(row, f"/sds_{row.group}")
        figures |= {f"pass_at_{k}": value for k, value in self.pass_at_k.items()}
        figures |= {f"pass_at_spider_{k}": value for k, value in self.pass_at_k_spider.items()}
        optional = {
            "r_ves": self.r_ves,
            "degraded_rate": self.degraded_rate,
            "candidates_per_question": self.candidates_per_question,
            "ex_bird/degraded": self.ex_bird_degraded,
            "ex_bird/not_degraded": self.ex_bird_not_degraded,
            "questions_per_minute": self.questions_per_minute,
        }
        figures |= {name: value for name, value in optional.items() if value is not None}
        if self.per_question is not None:
            figures |= self.per_question.figures("per_question")
        if self.per_correct is not None:
            figures |= self.per_correct.figures("per_correct")
        if self.latency is not None:
            figures |= {
                "latency_p50_s": self.latency.p50_s,
                "latency_p95_s": self.latency.p95_s,
                "latency_mean_s": self.latency.mean_s,
            }
        figures |= self.retrieval.figures() | self.breakdown.figures() | self.judge
        if self.trace is not None:
            figures |= self.trace.figures()
        if self.reference is not None:
            figures |= self.reference.figures()
        return figures


def _ex_figures(row: ExRow, suffix: str) -> dict[str, float]:
    values = {"ex_bird": row.ex_bird, "ex_spider": row.ex_spider}
    return {f"{name}{suffix}": v for name, v in values.items() if v is not None}


def _ex_rows(table: pl.DataFrame, group: str) -> tuple[ExRow, ...]:
    return tuple(
        ExRow(
            group=row[group],
            questions=row["questions"],
            ex_bird=row["ex_bird"],
            ex_spider=row["ex_spider"],
        )
        for row in table.iter_rows(named=True)
    )


_NOT_SAID = RetrievalUse()


def chosen_by_database(frame: pl.DataFrame) -> dict[str, str]:
    """db id -> the settings chosen for its questions (the latest answered question's, in
    benchmark order); databases whose questions recorded none are left out."""
    if "chosen" not in frame.columns:
        return {}
    rows = frame.select("db_id", "chosen").drop_nulls().filter(pl.col("chosen") != "")
    return dict(zip(rows["db_id"].to_list(), rows["chosen"].to_list()))


def run_result(
    frame: pl.DataFrame,
    *,
    label: str,
    skipped: int = 0,
    traces: Sequence[ReasoningTrace] = (),
    retrieval: RetrievalUse = _NOT_SAID,
    pricing: str = "",
    reference: tuple[str, Price] | None = None,
    answered: int = 0,
    elapsed_s: float = 0.0,
) -> RunResult:
    """The figures of the questions in ``frame``; ``traces`` are theirs, ``answered`` of them in
    ``elapsed_s`` by this invocation (its pace), ``reference`` a hosted list price to price
    the run's tokens at as well."""
    common = dict(
        label=label,
        questions=frame.height,
        skipped=skipped,
        gold_errors=int(frame.get_column("gold_error").is_not_null().sum()),
        grading_errors=int(frame.get_column("grading_error").is_not_null().sum()),
        retrieval=retrieval_use(frame, retrieval.status, retrieval.expected),
        pricing=pricing,
        trace=derive_metrics(traces) if traces else None,
        questions_per_minute=60 * answered / elapsed_s if answered else None,
        verdicts=question_verdicts(frame),
        chosen=chosen_by_database(frame),
        task_ids=tuple(frame.get_column("task_id").to_list()),
    )
    if frame.height == 0:
        return RunResult(**common)
    counted = scored(frame)
    per_question, per_correct = spend(
        frame, int(counted.get_column("ex_bird").sum()) if counted.height else 0
    )
    latency = frame.get_column("latency_s")
    by_degradation = {
        degraded: counted.filter(pl.col("degraded") == degraded) for degraded in (True, False)
    }
    ex_when = {
        degraded: float(part.get_column("ex_bird").cast(pl.Float64).mean()) if part.height else None
        for degraded, part in by_degradation.items()
    }
    return RunResult(
        **common,
        scored=counted.height,
        by_difficulty=_ex_rows(ex_by_difficulty(frame), "difficulty"),
        by_sds=_ex_rows(ex_by_sds(frame), "sds_bucket"),
        pass_at_k=pass_at_k_curve(frame, SEMANTICS[0]),
        pass_at_k_spider=pass_at_k_curve(frame, SEMANTICS[1]),
        r_ves=(
            r_ves(counted.get_column("ves_reward").fill_null(0.0).to_list())
            if counted.height
            else None
        ),
        per_question=per_question,
        per_correct=per_correct,
        reference=reference and reference_costs(*reference, per_question, per_correct),
        latency=Latency(
            p50_s=float(latency.quantile(0.5, interpolation="linear")),
            p95_s=float(latency.quantile(0.95, interpolation="linear")),
            mean_s=float(latency.mean()),
        ),
        degraded_rate=float(frame.get_column("degraded").mean()),
        candidates_per_question=float(frame.get_column("candidates").list.len().mean()),
        ex_bird_degraded=ex_when[True],
        ex_bird_not_degraded=ex_when[False],
        cost_points=tuple(
            CostPoint(**row) for row in cost_by_difficulty(frame).iter_rows(named=True)
        ),
        breakdown=breakdown(frame),
        judge=judge_metrics(frame),
    )
