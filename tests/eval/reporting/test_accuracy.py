"""Which questions EX counts, EX by difficulty and construct, the run and pool rates, pass@k over
the candidate pools under each semantics."""

import polars as pl
import pytest

from eval.metrics import pass_at_k
from eval.reporting.accuracy import (
    accuracy,
    ex_by_construct,
    ex_by_difficulty,
    pass_at_k_curve,
    pool_rates,
    run_rate,
)
from eval.sweep.records import records_to_table


def test_ex_counts_scored_questions_only_and_splits_by_difficulty(frame):
    table = ex_by_difficulty(frame)
    assert table.get_column("difficulty").to_list() == ["simple", "challenging", "all"]
    assert table.get_column("questions").to_list() == [2, 2, 4]
    assert table.get_column("ex_bird").to_list() == [0.5, 0.5, 0.5]
    assert table.get_column("ex_spider").to_list() == [0.5, 0.0, 0.25]


def test_pass_at_k_uses_each_pool_and_caps_k_at_its_size(frame):
    curve = pass_at_k_curve(frame)
    assert list(curve) == [1, 2, 3, 4]
    expected_k2 = (pass_at_k(4, 2, 2) + pass_at_k(4, 1, 2) + pass_at_k(2, 1, 2) + 0.0) / 4
    assert curve[2] == pytest.approx(expected_k2)
    assert curve[4] == pytest.approx((1 + 1 + 1 + 0) / 4)  # the 2-candidate pool counts as pass@2
    assert curve[1] == pytest.approx((0.5 + 0.25 + 0.5 + 0) / 4)


def test_a_run_graded_before_column_matching_reports_it_unknown(frame):
    old = frame.drop("ex_columns") if "ex_columns" in frame.columns else frame
    table = ex_by_difficulty(old)
    assert table.get_column("ex_columns").null_count() == table.height
    assert table.get_column("ex_bird").to_list() == [0.5, 0.5, 0.5]


def test_pass_at_k_under_column_matching_reads_each_candidates_own_verdict(record):
    frame = pl.from_arrow(
        records_to_table(
            [
                record(0, False, "simple", [False, False], pool_columns=[True, False]),
                record(1, False, "simple", [False, False], pool_columns=[False, False]),
            ]
        )
    )
    assert pass_at_k_curve(frame, "ex_bird") == {1: 0.0, 2: 0.0}
    assert pass_at_k_curve(frame, "ex_columns") == {1: 0.25, 2: 0.5}


def test_pools_recorded_before_column_matching_have_no_curve_under_it(frame):
    """A candidate without a correct_columns field (an old predictions file) is not judged."""
    pools = frame.get_column("candidates").to_list()
    old = frame.with_columns(
        pl.Series(
            "candidates",
            [[{k: v for k, v in c.items() if k != "correct_columns"} for c in p] for p in pools],
        )
    )
    assert "correct_columns" not in old.schema["candidates"].inner.to_schema()
    assert pass_at_k_curve(old, "ex_columns") == {}
    assert pass_at_k_curve(old, "ex_bird") == pass_at_k_curve(frame, "ex_bird")


def test_ex_by_construct_counts_the_scored_questions_that_name_one(floor, frame):
    table = ex_by_construct(floor)
    assert table.get_column("construct").to_list() == ["hierarchy", "unnest"]
    assert table.get_column("questions").to_list() == [1, 2]  # the gold failure is not scored
    assert table.get_column("ex_bird").to_list() == [0.0, 0.5]
    assert table.get_column("ex_columns").to_list() == [0.0, 1.0]
    assert ex_by_construct(frame).is_empty()  # no question names a construct
    assert ex_by_construct(floor.drop("floor_construct")).is_empty()  # recorded before the field


def test_run_rate_and_pool_rates_differ_from_ex(floor):
    acc = accuracy(floor)
    assert (acc.scored, acc.correct) == (4, 1)  # EX (BIRD) 0.25
    assert run_rate(floor) == acc.run_rate == 0.75  # question 2 failed to execute
    assert acc.pool_rate == pool_rates(floor)
    assert acc.pool_rate == {"ex_bird": 0.5, "ex_spider": 0.5, "ex_columns": 0.75}
    assert acc.pass_at_k_columns[2] == pytest.approx(0.75)


def test_a_run_recorded_before_column_matching_has_no_pool_rate_under_it(frame):
    assert set(pool_rates(frame)) == {"ex_bird", "ex_spider"}  # its candidates carry no verdict
    assert pool_rates(frame)["ex_bird"] == 0.75
    assert run_rate(frame.head(0)) is None
