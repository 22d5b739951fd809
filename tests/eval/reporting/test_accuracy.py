"""Which questions EX counts, EX by difficulty, pass@k over the candidate pools."""

import pytest

from eval.metrics import pass_at_k
from eval.reporting.accuracy import ex_by_difficulty, pass_at_k_curve


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
