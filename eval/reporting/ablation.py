"""The ablation table across an experiment's runs, from the metrics their MLflow runs logged.

MLflow runs of an experiment (tracking.experiment_runs) ──► ablation_table (polars)
    ──► write_experiment_report ──► ablation.md, ablation.csv, cost_vs_accuracy.png
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from eval.reporting.plots import plot_cost_vs_accuracy
from eval.reporting.report import markdown_table

ABLATION_COLUMNS = (
    "ex_bird",
    "ex_spider",
    "ex_columns",
    "r_ves",
    "calls_per_question",
    "tokens_per_question",
    "prompt_tokens_per_question",
    "completion_tokens_per_question",
    "cost_usd_per_question",
    "cost_usd_per_correct",
    "busy_s_per_question",
    "latency_mean_s",
    "latency_p50_s",
    "latency_p95_s",
    "pass_at_pool",
    "answered_by/first_wave",
    "answered_by/likelihood",
    "judge_correct",
    "judge_score_mean",
    "judge_agreement_ex",
    "judge_kappa_ex",
    "degraded_rate",
    "questions_scored",
    "retrieval_cells_share",
    "retrieval_examples_share",
)


def ablation_table(runs: pl.DataFrame, baseline: str = "full") -> pl.DataFrame:
    """One row per configuration: headline metrics, the largest pass@k, and ΔEX vs ``baseline``.

    ``runs`` has a ``run_name`` column and one column per metric (see ``tracking.experiment_runs``);
    when a configuration ran more than once, the latest run (first row) wins.
    """
    if runs.is_empty():
        raise ValueError("no runs to tabulate")
    runs = runs.unique(subset="run_name", keep="first", maintain_order=True)
    pass_columns = sorted(
        (c for c in runs.columns if c.startswith("pass_at_") and c[8:].isdigit()),
        key=lambda c: int(c[8:]),
    )
    priced = [c for c in runs.columns if c.startswith("cost_usd_per_") and "@" in c]
    columns = [c for c in ABLATION_COLUMNS if c in runs.columns] + priced + pass_columns[-1:]
    table = runs.select(pl.col("run_name").alias("configuration"), *columns)
    if "ex_bird" in table.columns and baseline in table.get_column("configuration").to_list():
        reference = table.filter(pl.col("configuration") == baseline).get_column("ex_bird")[0]
        table = table.with_columns((pl.col("ex_bird") - reference).alias(f"Δex_bird_vs_{baseline}"))
    return (
        table.sort("ex_bird", descending=True, nulls_last=True)
        if "ex_bird" in table.columns
        else table
    )


def write_experiment_report(table: pl.DataFrame, out_dir: Path, experiment: str) -> list[Path]:
    """``ablation.md``, ``ablation.csv`` and ``cost_vs_accuracy.png`` for an experiment."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv = out_dir / "ablation.csv"
    table.write_csv(csv)
    points = table.select(
        pl.col("configuration").alias("label"),
        *(
            pl.col(c)
            for c in ("tokens_per_question", "cost_usd_per_question", "ex_bird")
            if c in table.columns
        ),
    )
    plot = plot_cost_vs_accuracy(
        points, out_dir / "cost_vs_accuracy.png", f"{experiment}: cost vs accuracy"
    )
    md = out_dir / "ablation.md"
    md.write_text(
        f"# {experiment}\n\n{markdown_table(table)}\n\n![cost vs accuracy]({plot.name})\n",
        encoding="utf-8",
    )
    return [md, csv, plot]
