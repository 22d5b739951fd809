"""A run's Markdown report and plots, rendered from its result."""

import polars as pl

from eval.reporting.accuracy import ex_by_sds
from eval.reporting.report import write_run_report
from eval.reporting.result import run_result
from eval.reporting.retrieval import NO_RETRIEVAL, RetrievalUse
from eval.sweep.records import records_to_table


def test_ex_by_sds_bucket_only_where_questions_are_rated(frame, record, tmp_path):
    assert ex_by_sds(frame).is_empty()  # no SDS ratings: no table, no metrics, no section
    assert not any("sds" in name for name in run_result(frame, label="r").metrics())
    rated = pl.from_arrow(
        records_to_table(
            [
                record(0, True, "simple", [True], sds=12),
                record(1, False, "simple", [False], sds=13),
                record(2, True, "moderate", [True], sds=18),
                record(3, True, "challenging", [True], sds=30),
                record(4, None, "simple", [True], gold_error="no such table", sds=5),
            ]
        )
    )
    table = ex_by_sds(rated)
    assert table.get_column("sds_bucket").to_list() == ["0-12", "13-18", "19-35"]
    assert table.get_column("questions").to_list() == [1, 2, 1]  # the gold failure is not scored
    assert table.get_column("ex_bird").to_list() == [1.0, 0.5, 1.0]
    m = run_result(rated, label="r").metrics()
    assert (m["ex_bird/sds_0-12"], m["ex_bird/sds_13-18"], m["ex_spider/sds_19-35"]) == (1, 0.5, 1)
    text = write_run_report(run_result(rated, label="enterprise"), tmp_path)[0].read_text()
    assert "by SDS bucket" in text and "| 13-18 | 2 | 0.500 | 0.500 |" in text
    assert (
        "by SDS bucket"
        not in write_run_report(run_result(frame, label="spider"), tmp_path / "flat")[0].read_text()
    )


def test_run_report_writes_markdown_and_three_plots(frame, tmp_path):
    files = write_run_report(run_result(frame, label="single_pass", skipped=1), tmp_path)
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
    m = run_result(frame, label="r").metrics()
    assert (
        m["retrieval_cells_share"],
        m["retrieval_examples_share"],
        m["retrieval_none_share"],
    ) == (0.2, 0.4, 0.6)
    without = frame.with_columns(pl.lit([], dtype=pl.List(pl.String)).alias("retrieval"))
    assert run_result(without, label="r").metrics()["retrieval_none_share"] == 1.0
    status = "retrieval: off (examples: example source missing: /x/train_spider.json)"
    off = run_result(without, label="off", retrieval=RetrievalUse(status=status, expected=True))
    text = write_run_report(off, tmp_path)[0].read_text()
    assert f"- {status}" in text and f"**{NO_RETRIEVAL}**" in text
    single_pass = run_result(without, label="sp", retrieval=RetrievalUse(expected=False))
    single = write_run_report(single_pass, tmp_path / "single")[0].read_text()
    assert NO_RETRIEVAL not in single  # single pass retrieves nothing by design: no alarm


def test_the_report_shows_ex_by_construct_and_the_run_and_pool_rates(floor, frame, tmp_path):
    text = write_run_report(run_result(floor, label="enterprise"), tmp_path)[0].read_text()
    assert "## Execution accuracy by construct (floor questions)" in text
    assert "| hierarchy | 1 | 0.000 | 0.000 | 0.000 |" in text
    assert "| unnest | 2 | 0.500 | 0.500 | 1.000 |" in text
    assert "- run rate 0.750: answers that executed without error" in text
    assert "- pool rate 0.500 (BIRD), 0.500 (Spider), 0.750 (columns): candidate pools" in text
    flat = write_run_report(run_result(frame, label="spider"), tmp_path / "flat")[0].read_text()
    assert "by construct" not in flat and "- run rate 1.000" in flat
