"""A run's predictions in the files the official evaluation scripts read.

    predictions (polars, one row per question) + LoadedBenchmark ──► exports/
        predictions.jsonl                     {"task_id", "sql"} per line (any subset)
        Spider: pred.txt + gold.txt           one SQL per line, aligned with the gold file
        BIRD / demo: predict_<split>.json + gold.sql + difficulty.jsonl

A question without a prediction (not finished) is written as ``SELECT NULL`` so lines align.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from eval.grading.prediction_files import export_official, write_jsonl
from eval.loaders import LoadedBenchmark


def export_predictions(
    predictions: pl.DataFrame, benchmark: LoadedBenchmark, out_dir: Path
) -> list[Path]:
    """Write the JSONL and official-format files under ``out_dir``; returns them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    by_task = dict(
        zip(predictions.get_column("task_id").to_list(), predictions.get_column("sql").to_list())
    )
    jsonl = out_dir / "predictions.jsonl"
    write_jsonl(
        jsonl,
        {
            task.task_id: by_task[task.task_id]
            for task in benchmark.tasks
            if task.task_id in by_task
        },
    )
    return [jsonl, *export_official(benchmark, by_task, out_dir)]
