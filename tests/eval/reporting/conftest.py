"""A small run's predictions: two difficulties, candidate pools, retrieval, a gold failure.
``columns`` and ``pool_columns`` give the column-matching verdicts (None: graded before it)."""

import polars as pl
import pytest

from eval.sweep.records import CandidateRecord, QuestionRecord, records_to_table


def rec(
    i,
    ex,
    difficulty,
    pool,
    *,
    spider=None,
    tokens=100,
    degraded=False,
    gold_error=None,
    latency=1.0,
    retrieval=(),
    sds=None,
    construct=None,
    columns=None,
    pool_columns=None,
    exec_error=None,
):
    return QuestionRecord(
        retrieval=retrieval,
        sds=sds,
        floor_construct=construct,
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question="q",
        sql="s",
        difficulty=difficulty,
        ex_bird=ex,
        ex_spider=ex if spider is None else spider,
        ex_columns=columns,
        exec_hash="ERR:x" if exec_error else "h",
        exec_error=exec_error,
        ves_reward=1.0 if ex else 0.0,
        gold_error=gold_error,
        candidates=tuple(
            CandidateRecord(
                sql="c", producer="p", correct_bird=c, correct_spider=c, correct_columns=col
            )
            for c, col in zip(pool, pool_columns or [None] * len(pool), strict=True)
        ),
        calls=2,
        prompt_tokens=tokens,
        completion_tokens=10,
        cost_usd=0.0,
        latency_s=latency,
        degraded=degraded,
    )


@pytest.fixture
def record():
    return rec


@pytest.fixture
def frame():
    records = [
        rec(
            0,
            True,
            "simple",
            [True, True, False, False],
            latency=1.0,
            retrieval=("cells", "examples"),
        ),
        rec(
            1,
            False,
            "simple",
            [False, False, False, True],
            spider=False,
            latency=2.0,
            retrieval=("examples",),
        ),
        rec(2, True, "challenging", [True, False], spider=False, tokens=300, latency=3.0),
        rec(3, False, "challenging", [], degraded=True, latency=10.0),
        rec(
            4, None, "simple", [True], gold_error="no such table", latency=1.0
        ),  # reported, not scored
    ]
    return pl.from_arrow(records_to_table(records))


@pytest.fixture
def floor():
    """Floor questions where EX, the run rate and the pool rates differ: one right (BIRD), one
    right by column matching only, one that fails to execute, one whose pool held the answer, and
    a gold failure (not scored)."""
    records = [
        rec(0, True, "simple", [True], construct="unnest", columns=True, pool_columns=[True]),
        rec(
            1,
            False,
            "simple",
            [False, False],
            construct="unnest",
            columns=True,
            pool_columns=[True, False],
        ),
        rec(
            2,
            False,
            "moderate",
            [False],
            construct="hierarchy",
            columns=False,
            pool_columns=[False],
            exec_error="Binder Error: no column plan",
        ),
        rec(3, False, "simple", [False, True], columns=False, pool_columns=[False, True]),
        rec(4, None, "simple", [True], construct="hierarchy", gold_error="no such table"),
    ]
    return pl.from_arrow(records_to_table(records))
