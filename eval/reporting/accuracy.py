"""Execution accuracy of a run's predictions: which questions count, EX by difficulty, SDS bucket
and floor construct, how many answers ran and how many pools held a right answer, pass@k over the
candidate pools, and each question's verdict for paired comparisons.

EX is the share of *scored* questions answered correctly. A question whose gold SQL failed is
counted apart (``gold_errors``); one that could not be graded (the sandbox failed) stays in the
denominator as wrong and is counted in ``grading_errors`` (``sweep.retry=errors`` answers it again).
pass@k uses the unbiased estimator over each question's candidate pool; a question with fewer
than k candidates contributes pass@n (all its samples), one with none contributes 0. The run rate
is the share of scored questions whose answer executed without error; the pool rate, under each
semantics the candidates carry, the share whose pool held a candidate right under it.

On the predictions of a finished run:

    frame = RunStore.open(run_dir, identity).read()
    ex_by_difficulty(frame)  ──►  difficulty | questions | ex_bird | ex_spider | ex_columns, last row "all"
"""

from __future__ import annotations

import polars as pl

from core.types import Frozen
from eval.metrics import pass_at_k, r_ves
from eval.sds import SDS_BUCKETS, sds_bucket

SEMANTICS = ("ex_bird", "ex_spider", "ex_columns")  # the last: eval/grading/column_matching.py
# Each semantics' verdict on a candidate of the pool (eval/sweep/records.py CandidateRecord).
CANDIDATE_FIELDS = {
    "ex_bird": "correct_bird",
    "ex_spider": "correct_spider",
    "ex_columns": "correct_columns",
}
DIFFICULTY_ORDER = ("simple", "moderate", "challenging", "easy", "medium", "hard", "extra")


def scored(frame: pl.DataFrame) -> pl.DataFrame:
    """The questions EX counts: graded ones, and ungraded ones with gold SQL, as wrong (their
    verdict is unknown, and leaving them out would raise EX by whatever made grading fail).
    A run graded before a semantics existed gets that column as unknown (null)."""
    frame = frame.with_columns(
        pl.lit(None, pl.Boolean).alias(s) for s in SEMANTICS if s not in frame.columns
    )
    ungraded = (
        pl.col("ex_bird").is_null()
        & pl.col("grading_error").is_not_null()
        & (pl.col("gold_sql").fill_null("") != "")
        & pl.col("gold_error").is_null()
    )
    return frame.filter(pl.col("ex_bird").is_not_null() | ungraded).with_columns(
        *(pl.when(ungraded).then(False).otherwise(pl.col(s)).alias(s) for s in SEMANTICS)
    )


def question_verdicts(frame: pl.DataFrame, semantics: str = "ex_bird") -> dict[str, bool]:
    """Task id -> verdict of each question EX counts (for paired comparisons of runs)."""
    counted = scored(frame)
    return dict(
        zip(counted.get_column("task_id").to_list(), counted.get_column(semantics).to_list())
    )


def pool_counts(frame: pl.DataFrame, semantics: str = "ex_bird") -> list[tuple[int, int]]:
    """``(n, c)`` per scored question: candidates judged, and how many were correct. A candidate
    recorded before ``semantics`` existed has no verdict under it and is not counted."""
    field = CANDIDATE_FIELDS[semantics]
    counts = []
    for pool in scored(frame).get_column("candidates").to_list():
        judged = [c.get(field) for c in pool or () if c.get(field) is not None]
        counts.append((len(judged), sum(judged)))
    return counts


def pass_at_k_curve(frame: pl.DataFrame, semantics: str = "ex_bird") -> dict[int, float]:
    """``{k: mean pass@k}`` for k = 1 .. the largest pool judged under ``semantics`` (empty when no
    candidate is)."""
    counts = pool_counts(frame, semantics)
    largest = max((n for n, _ in counts), default=0)
    return {
        k: sum(pass_at_k(n, c, min(k, n)) if n else 0.0 for n, c in counts) / len(counts)
        for k in range(1, largest + 1)
    }


def run_rate(frame: pl.DataFrame) -> float | None:
    """The share of scored questions whose answer executed without error (None: none scored)."""
    counted = scored(frame)
    if not counted.height:
        return None
    ran = pl.col("exec_hash").is_not_null() & pl.col("exec_error").is_null()
    return float(counted.select(ran.mean()).item())


def pool_rates(frame: pl.DataFrame) -> dict[str, float]:
    """Semantics -> the share of scored questions whose pool held a candidate right under it; a
    semantics under which no candidate was judged (a run graded before it) is left out."""
    rates = {}
    for semantics in SEMANTICS:
        counts = pool_counts(frame, semantics)
        if any(n for n, _ in counts):
            rates[semantics] = sum(c > 0 for _, c in counts) / len(counts)
    return rates


def _ex_aggregations() -> list[pl.Expr]:
    return [
        pl.len().alias("questions"),
        *(pl.col(s).cast(pl.Float64).mean().alias(s) for s in SEMANTICS),
    ]


def ex_by_difficulty(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per difficulty (plus ``all``): questions scored, EX under each semantics."""
    counted = scored(frame).with_columns(pl.col("difficulty").fill_null("unlabelled"))
    aggregations = _ex_aggregations()
    rank = {d: i for i, d in enumerate(DIFFICULTY_ORDER)}
    by_difficulty = (
        counted.group_by("difficulty")
        .agg(aggregations)
        .with_columns(pl.col("difficulty").replace_strict(rank, default=len(rank)).alias("_rank"))
        .sort("_rank", "difficulty")
        .drop("_rank")
    )
    overall = counted.select(pl.lit("all").alias("difficulty"), *aggregations)
    return pl.concat([by_difficulty, overall])


_BUCKET_OF = {total: sds_bucket(total) for total in range(36)}


def ex_by_sds(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per SDS bucket of the scored questions that carry an SDS total: questions, EX
    under each semantics; empty when none does (a benchmark that does not rate its questions)."""
    if "sds" not in frame.columns:
        return pl.DataFrame()
    rated = scored(frame).filter(pl.col("sds").is_not_null())
    if rated.is_empty():
        return pl.DataFrame()
    rank = {bucket: i for i, bucket in enumerate(SDS_BUCKETS)}
    return (
        rated.with_columns(pl.col("sds").replace_strict(_BUCKET_OF).alias("sds_bucket"))
        .group_by("sds_bucket")
        .agg(_ex_aggregations())
        .sort(pl.col("sds_bucket").replace_strict(rank))
    )


def ex_by_construct(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per construct of the scored questions that name one (``floor_construct``, the
    enterprise floor), by name: questions, EX under each semantics; empty when none does."""
    if "floor_construct" not in frame.columns:
        return pl.DataFrame()
    named = scored(frame).filter(pl.col("floor_construct").is_not_null())
    if named.is_empty():
        return pl.DataFrame()
    return (
        named.group_by("floor_construct")
        .agg(_ex_aggregations())
        .sort("floor_construct")
        .rename({"floor_construct": "construct"})
    )


def cost_by_difficulty(frame: pl.DataFrame) -> pl.DataFrame:
    """Per difficulty (``label``): mean tokens and cost per scored question, and EX (BIRD)."""
    return (
        scored(frame)
        .with_columns(pl.col("difficulty").fill_null("unlabelled"))
        .group_by("difficulty")
        .agg(
            (pl.col("prompt_tokens") + pl.col("completion_tokens"))
            .mean()
            .alias("tokens_per_question"),
            pl.col("cost_usd").mean().alias("cost_usd_per_question"),
            pl.col("ex_bird").cast(pl.Float64).mean(),
        )
        .rename({"difficulty": "label"})
    )


class ExRow(Frozen):
    """EX of one group of scored questions: a difficulty, an SDS bucket, a construct, or ``all``."""

    group: str
    questions: int
    ex_bird: float | None = None
    ex_spider: float | None = None
    ex_columns: float | None = None  # None for runs graded before column matching


class CostPoint(Frozen):
    """Per difficulty: mean tokens and dollars per scored question, and EX (BIRD)."""

    label: str
    tokens_per_question: float | None = None
    cost_usd_per_question: float | None = None
    ex_bird: float | None = None


class Accuracy(Frozen):
    """How right a run's answers are, computed by :func:`accuracy`."""

    scored: int = 0
    correct: int = 0  # scored questions right under BIRD semantics
    by_difficulty: tuple[ExRow, ...] = ()  # the last row is "all"
    by_sds: tuple[ExRow, ...] = ()  # for a benchmark that rates its questions on SDS
    by_construct: tuple[ExRow, ...] = ()  # for questions that name their construct (the floor)
    run_rate: float | None = None  # scored questions whose answer executed without error
    pool_rate: dict[str, float] = {}  # semantics -> scored questions whose pool held a right one
    pass_at_k: dict[int, float] = {}  # BIRD semantics; k = 1 .. the largest pool
    pass_at_k_spider: dict[int, float] = {}
    pass_at_k_columns: dict[int, float] = {}  # empty for runs graded before column matching
    r_ves: float | None = None
    ex_bird_degraded: float | None = None
    ex_bird_not_degraded: float | None = None
    cost_points: tuple[CostPoint, ...] = ()
    verdicts: dict[str, bool] = {}  # task id -> EX (BIRD) of each scored question, for pairing


def accuracy(frame: pl.DataFrame) -> Accuracy:
    """EX tables, pass@k curves, R-VES and each question's verdict of ``frame``'s questions."""
    counted = scored(frame)
    ex_when = {}
    for degraded in (True, False):
        part = counted.filter(pl.col("degraded") == degraded)
        ex_when[degraded] = (
            float(part.get_column("ex_bird").cast(pl.Float64).mean()) if part.height else None
        )
    return Accuracy(
        scored=counted.height,
        correct=int(counted.get_column("ex_bird").sum()) if counted.height else 0,
        by_difficulty=_ex_rows(ex_by_difficulty(frame), "difficulty"),
        by_sds=_ex_rows(ex_by_sds(frame), "sds_bucket"),
        by_construct=_ex_rows(ex_by_construct(frame), "construct"),
        run_rate=run_rate(frame),
        pool_rate=pool_rates(frame),
        pass_at_k=pass_at_k_curve(frame, SEMANTICS[0]),
        pass_at_k_spider=pass_at_k_curve(frame, SEMANTICS[1]),
        pass_at_k_columns=pass_at_k_curve(frame, SEMANTICS[2]),
        r_ves=(
            r_ves(counted.get_column("ves_reward").fill_null(0.0).to_list())
            if counted.height
            else None
        ),
        ex_bird_degraded=ex_when[True],
        ex_bird_not_degraded=ex_when[False],
        cost_points=tuple(
            CostPoint(**row) for row in cost_by_difficulty(frame).iter_rows(named=True)
        ),
        verdicts=question_verdicts(frame),
    )


_SHORT = {"ex_bird": "BIRD", "ex_spider": "Spider", "ex_columns": "columns"}


def rate_lines(acc: Accuracy) -> list[str]:
    """The run rate and the pool rates, a line each, where there are any.

    >>> acc = Accuracy(run_rate=0.9, pool_rate={"ex_bird": 0.5, "ex_columns": 0.75})
    >>> for line in rate_lines(acc):
    ...     print(line)
    run rate 0.900: answers that executed without error
    pool rate 0.500 (BIRD), 0.750 (columns): candidate pools that held a right answer
    """
    lines = []
    if acc.run_rate is not None:
        lines.append(f"run rate {acc.run_rate:.3f}: answers that executed without error")
    if acc.pool_rate:
        rates = ", ".join(f"{rate:.3f} ({_SHORT[s]})" for s, rate in acc.pool_rate.items())
        lines.append(f"pool rate {rates}: candidate pools that held a right answer")
    return lines


def _ex_rows(table: pl.DataFrame, group: str) -> tuple[ExRow, ...]:
    return tuple(
        ExRow(
            group=row[group],
            questions=row["questions"],
            ex_bird=row["ex_bird"],
            ex_spider=row["ex_spider"],
            ex_columns=row["ex_columns"],
        )
        for row in table.iter_rows(named=True)
    )
