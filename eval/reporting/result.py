"""One run's figures, computed once from its predictions and traces; every output renders them.

    predictions (this invocation's questions) ─┐
    their reasoning traces ─────────────────────┼─► run_result ──► RunResult ─┬─► console summary (summary.py)
    retrieval status, prices, pace ────────────┘                              ├─► report.md + plots (report.py)
                                                                              └─► MLflow metrics: .metrics()

Each concern computes its part once, from the predictions: ``accuracy`` (EX, run and pool rates,
pass@k, R-VES, verdicts), ``costs`` (spend at the configured and a reference price),
``retrieval_use``, ``breakdown`` (steps, families, losses), the judge's verdicts and the traces'
metrics.
``RunResult.metrics()`` names each figure as MLflow has always logged it (``ex_bird/hard``,
``pass_at_4``, ``cost_usd_per_correct``, ``trace/degraded_rate``, ...): runs compare across
versions by those names.

    result = run_result(frame, label="adaptive", skipped=1)
    result.accuracy.overall.ex_bird, result.metrics()["ex_bird"]   ──►  0.648, 0.648
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from core.types import Frozen
from eval.grading.judge import judge_metrics
from eval.metrics.traces import TraceMetrics, derive_metrics
from eval.reporting.accuracy import Accuracy, ExRow, accuracy
from eval.reporting.breakdown import Breakdown, breakdown
from eval.reporting.costs import Costs, costs
from eval.reporting.retrieval import RetrievalUse, retrieval_use
from models.budget import Price
from models.config import ModelSettings
from pipelines.prompt_fit import REDUCED
from pipelines.trace import ReasoningTrace


class Latency(Frozen):
    p50_s: float
    p95_s: float
    mean_s: float


class RunResult(Frozen):
    """Everything measured on one run's questions (those of this invocation)."""

    label: str
    questions: int = 0
    skipped: int = 0  # questions whose database is missing
    gold_errors: int = 0
    grading_errors: int = 0
    accuracy: Accuracy = Accuracy()
    costs: Costs = Costs()
    latency: Latency | None = None  # None: no question
    degraded_rate: float | None = None
    # questions whose prompt gave something up to fit the model's context (pipelines/prompt_fit.py)
    reduced_prompts: int = 0
    candidates_per_question: float | None = None
    retrieval: RetrievalUse = RetrievalUse()
    breakdown: Breakdown = Breakdown()
    judge: dict[str, float] = {}  # eval.grading.judge.judge_metrics; empty when nothing was judged
    trace: TraceMetrics | None = None
    questions_per_minute: float | None = None  # answered by this invocation
    chosen: dict[str, str] = {}  # db id -> the settings the pipeline chose for it
    task_ids: tuple[str, ...] = ()

    @property
    def overall(self) -> ExRow:
        rows = self.accuracy.by_difficulty
        return rows[-1] if rows else ExRow(group="all", questions=0)

    def metrics(self) -> dict[str, float]:
        """Every figure under its MLflow name."""
        figures: dict[str, float] = {
            "questions": float(self.questions),
            "reduced_prompts": float(self.reduced_prompts),
            "questions_scored": float(self.accuracy.scored),
            "skipped": float(self.skipped),
            "gold_errors": float(self.gold_errors),
            "grading_errors": float(self.grading_errors),
        }
        figures |= _accuracy_figures(self.accuracy) | self.costs.figures()
        if self.latency is not None:
            figures |= {
                "latency_p50_s": self.latency.p50_s,
                "latency_p95_s": self.latency.p95_s,
                "latency_mean_s": self.latency.mean_s,
            }
        optional = {
            "degraded_rate": self.degraded_rate,
            "candidates_per_question": self.candidates_per_question,
            "questions_per_minute": self.questions_per_minute,
        }
        figures |= {name: value for name, value in optional.items() if value is not None}
        figures |= self.retrieval.figures() | self.breakdown.figures() | self.judge
        return figures | (self.trace.figures() if self.trace else {})


def _accuracy_figures(acc: Accuracy) -> dict[str, float]:
    figures: dict[str, float] = {}
    for row in acc.by_difficulty:
        figures |= _ex_figures(row, "" if row.group == "all" else f"/{row.group}")
    for row in acc.by_sds:
        figures |= _ex_figures(row, f"/sds_{row.group}")
    for row in acc.by_construct:
        figures |= _ex_figures(row, f"/construct_{row.group}")
    figures |= {f"pool_rate/{semantics}": rate for semantics, rate in acc.pool_rate.items()}
    figures |= {f"pass_at_{k}": value for k, value in acc.pass_at_k.items()}
    figures |= {f"pass_at_spider_{k}": value for k, value in acc.pass_at_k_spider.items()}
    figures |= {f"pass_at_columns_{k}": value for k, value in acc.pass_at_k_columns.items()}
    optional = {
        "r_ves": acc.r_ves,
        "run_rate": acc.run_rate,
        "ex_bird/degraded": acc.ex_bird_degraded,
        "ex_bird/not_degraded": acc.ex_bird_not_degraded,
    }
    return figures | {name: value for name, value in optional.items() if value is not None}


def _ex_figures(row: ExRow, suffix: str) -> dict[str, float]:
    values = {"ex_bird": row.ex_bird, "ex_spider": row.ex_spider, "ex_columns": row.ex_columns}
    return {f"{name}{suffix}": v for name, v in values.items() if v is not None}


def chosen_by_database(frame: pl.DataFrame) -> dict[str, str]:
    """db id -> the settings chosen for its questions (the latest answered question's, in
    benchmark order); databases whose questions recorded none are left out."""
    if "chosen" not in frame.columns:
        return {}
    rows = frame.select("db_id", "chosen").drop_nulls().filter(pl.col("chosen") != "")
    return dict(zip(rows["db_id"].to_list(), rows["chosen"].to_list()))


_NO_STATUS = RetrievalUse()


def run_result(
    frame: pl.DataFrame,
    *,
    label: str,
    skipped: int = 0,
    traces: Sequence[ReasoningTrace] = (),
    retrieval: RetrievalUse = _NO_STATUS,
    model: ModelSettings | None = None,
    reference: tuple[str, Price] | None = None,
    answered: int = 0,
    elapsed_s: float = 0.0,
) -> RunResult:
    """The figures of the questions in ``frame``: ``traces`` are theirs, ``answered`` of them in
    ``elapsed_s`` by this invocation (its pace); their cost at ``model``'s slot prices and,
    with a ``reference``, at that hosted list price as well."""
    latency = frame.get_column("latency_s")
    answered_any = frame.height > 0
    own = dict(
        label=label,
        questions=frame.height,
        skipped=skipped,
        gold_errors=int(frame.get_column("gold_error").is_not_null().sum()),
        grading_errors=int(frame.get_column("grading_error").is_not_null().sum()),
        latency=Latency(
            p50_s=float(latency.quantile(0.5, interpolation="linear")),
            p95_s=float(latency.quantile(0.95, interpolation="linear")),
            mean_s=float(latency.mean()),
        )
        if answered_any
        else None,
        degraded_rate=float(frame.get_column("degraded").mean()) if answered_any else None,
        reduced_prompts=int(frame.get_column("degradation_reasons").list.contains(REDUCED).sum()),
        candidates_per_question=(
            float(frame.get_column("candidates").list.len().mean()) if answered_any else None
        ),
        questions_per_minute=60 * answered / elapsed_s if answered else None,
        chosen=chosen_by_database(frame),
        task_ids=tuple(frame.get_column("task_id").to_list()),
    )
    right = accuracy(frame)
    return RunResult(
        **own,
        accuracy=right,
        costs=costs(frame, right.correct, model, reference),
        retrieval=retrieval_use(frame, retrieval.status, retrieval.expected),
        breakdown=breakdown(frame),
        judge=judge_metrics(frame),
        trace=derive_metrics(traces) if traces else None,
    )
