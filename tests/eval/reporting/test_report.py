import math

import polars as pl
import pytest

from eval.metrics import pass_at_k
from eval.reporting.report import (
    NO_RETRIEVAL,
    ablation_table,
    ex_by_difficulty,
    ex_by_sds,
    pass_at_k_curve,
    run_metrics,
    write_experiment_report,
    write_run_report,
)
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
):
    return QuestionRecord(
        retrieval=retrieval,
        sds=sds,
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question="q",
        sql="s",
        difficulty=difficulty,
        ex_bird=ex,
        ex_spider=ex if spider is None else spider,
        ves_reward=1.0 if ex else 0.0,
        gold_error=gold_error,
        candidates=tuple(
            CandidateRecord(sql="c", producer="p", correct_bird=c, correct_spider=c) for c in pool
        ),
        calls=2,
        prompt_tokens=tokens,
        completion_tokens=10,
        cost_usd=0.0,
        latency_s=latency,
        degraded=degraded,
    )


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


def test_ex_counts_scored_questions_only_and_splits_by_difficulty(frame):
    table = ex_by_difficulty(frame)
    assert table.get_column("difficulty").to_list() == ["simple", "challenging", "all"]
    assert table.get_column("questions").to_list() == [2, 2, 4]
    assert table.get_column("ex_bird").to_list() == [0.5, 0.5, 0.5]
    assert table.get_column("ex_spider").to_list() == [0.5, 0.0, 0.25]


def test_ex_by_sds_bucket_only_where_questions_are_rated(frame, tmp_path):
    assert ex_by_sds(frame).is_empty()  # no SDS ratings: no table, no metrics, no section
    assert not any("sds" in name for name in run_metrics(frame))
    rated = pl.from_arrow(
        records_to_table(
            [
                rec(0, True, "simple", [True], sds=12),
                rec(1, False, "simple", [False], sds=13),
                rec(2, True, "moderate", [True], sds=18),
                rec(3, True, "challenging", [True], sds=30),
                rec(4, None, "simple", [True], gold_error="no such table", sds=5),
            ]
        )
    )
    table = ex_by_sds(rated)
    assert table.get_column("sds_bucket").to_list() == ["0-12", "13-18", "19-35"]
    assert table.get_column("questions").to_list() == [1, 2, 1]  # the gold failure is not scored
    assert table.get_column("ex_bird").to_list() == [1.0, 0.5, 1.0]
    m = run_metrics(rated)
    assert (m["ex_bird/sds_0-12"], m["ex_bird/sds_13-18"], m["ex_spider/sds_19-35"]) == (1, 0.5, 1)
    text = write_run_report(rated, tmp_path, "enterprise")[0].read_text()
    assert "by SDS bucket" in text and "| 13-18 | 2 | 0.500 | 0.500 |" in text
    assert (
        "by SDS bucket" not in write_run_report(frame, tmp_path / "flat", "spider")[0].read_text()
    )


def test_pass_at_k_uses_each_pool_and_caps_k_at_its_size(frame):
    curve = pass_at_k_curve(frame)
    assert list(curve) == [1, 2, 3, 4]
    expected_k2 = (pass_at_k(4, 2, 2) + pass_at_k(4, 1, 2) + pass_at_k(2, 1, 2) + 0.0) / 4
    assert curve[2] == pytest.approx(expected_k2)
    assert curve[4] == pytest.approx((1 + 1 + 1 + 0) / 4)  # the 2-candidate pool counts as pass@2
    assert curve[1] == pytest.approx((0.5 + 0.25 + 0.5 + 0) / 4)


def test_run_metrics(frame):
    m = run_metrics(frame, skipped=7)
    assert (m["questions"], m["questions_scored"], m["gold_errors"], m["skipped"]) == (5, 4, 1, 7)
    assert m["ex_bird"] == 0.5 and m["ex_bird/challenging"] == 0.5 and m["ex_spider"] == 0.25
    assert m["tokens_per_question"] == pytest.approx((110 * 3 + 310 + 110) / 5)
    assert m["tokens_per_correct"] == pytest.approx((110 * 3 + 310 + 110) / 2)
    assert m["latency_p50_s"] == 2.0 and m["latency_p95_s"] > 3.0
    assert m["degraded_rate"] == pytest.approx(0.2)
    assert m["ex_bird/degraded"] == 0.0 and m["ex_bird/not_degraded"] == pytest.approx(2 / 3)
    assert m["r_ves"] == pytest.approx(50.0)
    assert m["pass_at_4"] == pytest.approx(0.75)
    assert all(isinstance(v, float) and not math.isnan(v) for v in m.values())


def test_run_report_writes_markdown_and_three_plots(frame, tmp_path):
    files = write_run_report(frame, tmp_path, "single_pass", skipped=1)
    assert [f.name for f in files] == [
        "report.md",
        "ex_by_difficulty.png",
        "pass_at_k.png",
        "cost_vs_accuracy.png",
    ]
    assert all(f.stat().st_size > 1000 for f in files[1:])
    text = files[0].read_text()
    assert "| challenging | 2 | 0.500 | 0.000 |" in text and "pass_at_4" in text
    assert "cells 20%, examples 40% of questions answered with them; none 60%" in text
    assert NO_RETRIEVAL not in text


def test_retrieval_shares_and_a_loud_line_when_no_question_used_retrieval(frame, tmp_path):
    m = run_metrics(frame)
    assert (
        m["retrieval_cells_share"],
        m["retrieval_examples_share"],
        m["retrieval_none_share"],
    ) == (0.2, 0.4, 0.6)
    without = frame.with_columns(pl.lit([], dtype=pl.List(pl.String)).alias("retrieval"))
    assert run_metrics(without)["retrieval_none_share"] == 1.0
    status = "retrieval: off (examples: example source missing: /x/train_spider.json)"
    text = write_run_report(without, tmp_path, "off", retrieval=status)[0].read_text()
    assert f"- {status}" in text and f"**{NO_RETRIEVAL}**" in text
    single = write_run_report(without, tmp_path / "single", "sp", retrieval_expected=False)[
        0
    ].read_text()
    assert NO_RETRIEVAL not in single  # single pass retrieves nothing by design: no alarm


def test_ablation_table_keeps_the_latest_run_and_measures_against_full(tmp_path):
    runs = pl.DataFrame(
        {
            "run_name": [
                "no_icl",
                "full",
                "single_pass",
                "full",
            ],  # newest first; the old "full" is dropped
            "ex_bird": [0.6, 0.7, 0.5, 0.1],
            "ex_spider": [0.6, 0.68, 0.5, 0.1],
            "tokens_per_question": [5000.0, 9000.0, 800.0, 1.0],
            "pass_at_2": [0.7, 0.8, None, 0.1],
            "pass_at_10": [0.75, 0.85, None, 0.1],
        }
    )
    table = ablation_table(runs)
    assert table.get_column("configuration").to_list() == ["full", "no_icl", "single_pass"]
    assert table.get_column("Δex_bird_vs_full").to_list() == pytest.approx([0.0, -0.1, -0.2])
    assert "pass_at_10" in table.columns and "pass_at_2" not in table.columns
    files = write_experiment_report(table, tmp_path, "ablation")
    assert [f.name for f in files] == ["ablation.md", "ablation.csv", "cost_vs_accuracy.png"]
    assert pl.read_csv(files[1]).height == 3


def test_the_ablation_table_reads_the_metric_names_runs_log(frame):
    metrics = run_metrics(frame)
    runs = pl.DataFrame([{"run_name": "full", **metrics}, {"run_name": "single_pass", **metrics}])
    table = ablation_table(runs)
    for column in (
        "ex_bird",
        "ex_spider",
        "r_ves",
        "calls_per_question",
        "tokens_per_question",
        "cost_usd_per_question",
        "latency_p50_s",
        "latency_p95_s",
        "degraded_rate",
        "pass_at_4",
    ):
        assert column in table.columns
