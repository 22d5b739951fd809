"""Execution accuracy of a run's predictions: which questions count, EX by difficulty and SDS
bucket, pass@k over the candidate pools, and each question's verdict for paired comparisons.

EX is the share of *scored* questions answered correctly. A question whose gold SQL failed is
counted apart (``gold_errors``); one that could not be graded (the sandbox failed) stays in the
denominator as wrong and is counted in ``grading_errors`` (``sweep.retry=errors`` answers it again).
pass@k uses the unbiased estimator over each question's candidate pool; a question with fewer
than k candidates contributes pass@n (all its samples), one with none contributes 0.

On the predictions of a finished run:

    frame = RunStore.open(run_dir, identity).read()
    ex_by_difficulty(frame)  ──►  difficulty | questions | ex_bird | ex_spider, last row "all"
"""

from __future__ import annotations

import polars as pl

from eval.metrics import pass_at_k
from eval.sds import SDS_BUCKETS, sds_bucket

SEMANTICS = ("ex_bird", "ex_spider")
DIFFICULTY_ORDER = ("simple", "moderate", "challenging", "easy", "medium", "hard", "extra")


def scored(frame: pl.DataFrame) -> pl.DataFrame:
    """The questions EX counts: graded ones, and ungraded ones with gold SQL, as wrong (their
    verdict is unknown, and leaving them out would raise EX by whatever made grading fail)."""
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
    """``(n, c)`` per scored question: candidates judged, and how many were correct."""
    field = "correct_bird" if semantics == "ex_bird" else "correct_spider"
    counts = []
    for pool in scored(frame).get_column("candidates").to_list():
        judged = [c[field] for c in pool or () if c[field] is not None]
        counts.append((len(judged), sum(judged)))
    return counts


def pass_at_k_curve(frame: pl.DataFrame, semantics: str = "ex_bird") -> dict[int, float]:
    """``{k: mean pass@k}`` for k = 1 .. the largest pool (empty when no question has a pool)."""
    counts = pool_counts(frame, semantics)
    largest = max((n for n, _ in counts), default=0)
    return {
        k: sum(pass_at_k(n, c, min(k, n)) if n else 0.0 for n, c in counts) / len(counts)
        for k in range(1, largest + 1)
    }


def ex_by_difficulty(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per difficulty (plus ``all``): questions scored, EX under both semantics."""
    counted = scored(frame).with_columns(pl.col("difficulty").fill_null("unlabelled"))
    aggregations = [
        pl.len().alias("questions"),
        *(pl.col(s).cast(pl.Float64).mean().alias(s) for s in SEMANTICS),
    ]
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
    under both semantics; empty when none does (a benchmark that does not rate its questions)."""
    if "sds" not in frame.columns:
        return pl.DataFrame()
    rated = scored(frame).filter(pl.col("sds").is_not_null())
    if rated.is_empty():
        return pl.DataFrame()
    rank = {bucket: i for i, bucket in enumerate(SDS_BUCKETS)}
    return (
        rated.with_columns(pl.col("sds").replace_strict(_BUCKET_OF).alias("sds_bucket"))
        .group_by("sds_bucket")
        .agg(
            pl.len().alias("questions"),
            *(pl.col(s).cast(pl.Float64).mean().alias(s) for s in SEMANTICS),
        )
        .sort(pl.col("sds_bucket").replace_strict(rank))
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
