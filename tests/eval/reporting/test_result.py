"""A run's figures, computed once, under the names MLflow has always logged them."""

import math

import pytest

from eval.reporting.result import run_result


def test_run_metrics(frame):
    result = run_result(frame, label="r", skipped=7)
    assert result.overall.ex_bird == 0.5 and max(result.accuracy.pass_at_k) == 4
    m = result.metrics()
    assert (m["questions"], m["questions_scored"], m["gold_errors"], m["skipped"]) == (5, 4, 1, 7)
    assert m["ex_bird"] == 0.5 and m["ex_bird/challenging"] == 0.5 and m["ex_spider"] == 0.25
    assert m["tokens_per_question"] == pytest.approx((110 * 3 + 310 + 110) / 5)
    assert m["tokens_per_correct"] == pytest.approx((110 * 3 + 310 + 110) / 2)
    assert m["latency_p50_s"] == 2.0 and m["latency_p95_s"] > 3.0
    assert m["degraded_rate"] == pytest.approx(0.2) and m["reduced_prompts"] == 0.0
    assert m["ex_bird/degraded"] == 0.0 and m["ex_bird/not_degraded"] == pytest.approx(2 / 3)
    assert m["r_ves"] == pytest.approx(50.0)
    assert m["pass_at_4"] == pytest.approx(0.75)
    assert all(isinstance(v, float) and not math.isnan(v) for v in m.values())


def test_constructs_run_and_pool_rates_are_figures(floor, frame):
    m = run_result(floor, label="floor").metrics()
    assert (m["ex_bird/construct_unnest"], m["ex_columns/construct_unnest"]) == (0.5, 1.0)
    assert m["ex_bird/construct_hierarchy"] == 0.0
    assert m["run_rate"] == 0.75 and m["ex_bird"] == 0.25
    assert (m["pool_rate/ex_bird"], m["pool_rate/ex_columns"]) == (0.5, 0.75)
    assert m["pass_at_columns_2"] == pytest.approx(0.75)
    old = run_result(frame, label="old").metrics()  # no constructs, candidates without columns
    assert not any("construct" in name or "columns" in name for name in old)
    assert old["run_rate"] == 1.0 and old["pool_rate/ex_bird"] == 0.75


def test_questions_answered_with_a_reduced_prompt_are_counted(record):
    import polars as pl

    from eval.sweep.records import records_to_table

    reduced = ("prompt.reduced", "prompt.reduced")  # stepped down twice: one question
    records = [
        record(0, True, "simple", [True]).model_copy(
            update={"degraded": True, "degradation_reasons": reduced}
        ),
        record(1, False, "simple", [False], degraded=True).model_copy(
            update={"degradation_reasons": ("generator_failed",)}
        ),
        record(2, True, "simple", [True]),
    ]
    result = run_result(pl.from_arrow(records_to_table(records)), label="r")
    assert result.reduced_prompts == 1 and result.metrics()["reduced_prompts"] == 1.0
