"""``scale-analytics report [key=value ...]``: the ablation table and cost-accuracy plot.

    scale-analytics report experiment=ablation           # runs of `eval experiment=ablation`
    scale-analytics report experiment=ablation experiment.tracking_uri=http://127.0.0.1:5000
    scale-analytics report experiment=demo prices.reference=claude-sonnet-4   # another list price

The experiment is the composed config's, chosen as in ``eval`` (``experiment=NAME``, or
``experiment.name=NAME``; one of them is required), so its ``tracking_uri`` and ``baseline`` are
the ones its runs used.
Reads the experiment's finished MLflow runs (latest per configuration), prices each one's tokens
at ``prices.reference`` (a hosted model's list price, ``conf/prices/default.yaml``; null: none)
beside its configured cost, puts a paired bootstrap interval on each configuration's EX
difference from the baseline (over the questions both answered, from their stored predictions:
``eval.reporting.compare``), prints the table and writes
``<paths.runs>/<experiment.name>/report/{ablation.md,ablation.csv,cost_vs_accuracy.png}``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from mlflow.exceptions import MlflowException
from omegaconf import OmegaConf
from rich.console import Console
from rich.table import Table

from core.cli_errors import fail, user_errors
from core.config import load_config, section
from eval.errors import EvalError
from eval.reporting.ablation import ablation_table, write_experiment_report
from eval.reporting.compare import interval_label, paired_intervals, stored_verdicts
from eval.reporting.costs import with_reference_costs
from eval.reporting.tracking import experiment_runs
from models.budget import PriceList


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    console = Console(
        width=None if sys.stdout.isatty() else 200
    )  # logs and pipes: no 80-column wrap
    try:
        cfg = load_config(argv)  # an argument that is not key=value: Hydra refuses it, as in eval
        if not any(o.lstrip("+~").startswith("experiment") for o in argv):
            raise EvalError("which experiment? experiment=NAME, e.g. experiment=ablation")
        experiment = str(cfg.experiment.name)
        reference = section(cfg, "prices", PriceList).reference_price()
        runs = experiment_runs(str(cfg.experiment.tracking_uri), experiment)
        if runs.is_empty():
            print(
                f"scale-analytics report: experiment {experiment!r} has no finished runs",
                file=sys.stderr,
            )
            return 2
        baseline = OmegaConf.select(cfg, "experiment.baseline") or "full"
        table = with_intervals(
            ablation_table(with_reference_costs(runs, reference), baseline=baseline), runs, baseline
        )
        files = write_experiment_report(
            table, Path(cfg.paths.runs) / experiment / "report", experiment
        )
    except (
        EvalError,
        MlflowException,
        *user_errors(),
    ) as exc:  # e.g. a tracking URI that names no store
        return fail("scale-analytics report", exc)
    shown = Table(title=f"{experiment}: {table.height} configurations")
    for column in table.columns:
        shown.add_column(column, justify="left" if column == "configuration" else "right")
    for row in table.iter_rows(named=True):
        shown.add_row(*(_cell(column, value) for column, value in row.items()))
    console.print(shown)
    for path in files:
        console.print(f"wrote {path}")
    return 0


def with_intervals(table: pl.DataFrame, runs: pl.DataFrame, baseline: str) -> pl.DataFrame:
    """``table`` with each configuration's paired EX difference from ``baseline`` and its 95 %
    interval (``+0.057 [−0.030, +0.140] n=108``), where both runs' predictions are here."""
    latest = runs.unique(subset="run_name", keep="first", maintain_order=True)
    verdicts = {
        name: found
        for name, run_dir in zip(latest.get_column("run_name"), latest.get_column("run_dir"))
        if (found := stored_verdicts(run_dir)) is not None
    }
    intervals = paired_intervals(verdicts, baseline)
    if not intervals:
        return table
    shown = {name: f"{ci} n={ci.n}" for name, ci in intervals.items()}
    return table.with_columns(
        pl.col("configuration")
        .replace_strict(shown, default=None, return_dtype=pl.String)
        .alias(interval_label(baseline))
    )


def _cell(column: str, value: object) -> str:
    if value is None:  # a cost per correct answer of a run with none correct has no value
        return "n/a" if "per_correct" in column else "–"
    if isinstance(value, float):
        return f"{value:.3g}" if column.startswith("cost_usd") else f"{value:.3f}"
    return str(value)
