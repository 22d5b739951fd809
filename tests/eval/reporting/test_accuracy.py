"""Which questions EX counts, EX by difficulty, pass@k over the candidate pools under each
semantics."""

import polars as pl
import pytest

from eval.metrics import pass_at_k
from eval.reporting.accuracy import ex_by_difficulty, pass_at_k_curve
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
