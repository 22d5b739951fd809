"""The ablation table across runs, from the metric names runs log."""

import polars as pl
import pytest

from eval.reporting.ablation import ablation_table, write_experiment_report
from eval.reporting.result import run_result


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
    metrics = run_result(frame, label="full").metrics()
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
