"""``scale-analytics report [key=value ...]``: the ablation table and cost-accuracy plot.

    scale-analytics report experiment=ablation           # runs of `eval experiment=ablation`
    scale-analytics report experiment=ablation experiment.tracking_uri=http://127.0.0.1:5000
    scale-analytics report experiment=demo prices.reference=claude-sonnet-4   # another list price

The experiment is the composed config's, chosen as in ``eval`` (``experiment=NAME``, or
``experiment.name=NAME``; one of them is required), so its ``tracking_uri`` and ``baseline`` are
the ones its runs used.
Reads the experiment's finished MLflow runs (latest per configuration), prices each one's tokens
at ``prices.reference`` (a hosted model's list price, ``conf/prices/default.yaml``; null: none)
beside its configured cost, prints the table and writes
``<paths.runs>/<experiment.name>/report/{ablation.md,ablation.csv,cost_vs_accuracy.png}``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mlflow.exceptions import MlflowException
from omegaconf import OmegaConf
from rich.console import Console
from rich.table import Table

from core.cli_errors import fail, user_errors
from core.config import load_config, section
from eval.costs import with_reference_costs
from eval.errors import EvalError
from eval.report import ablation_table, write_experiment_report
from eval.tracking import experiment_runs
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
        table = ablation_table(with_reference_costs(runs, reference), baseline=baseline)
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


def _cell(column: str, value: object) -> str:
    if value is None:  # a cost per correct answer of a run with none correct has no value
        return "n/a" if "per_correct" in column else "–"
    if isinstance(value, float):
        return f"{value:.3g}" if column.startswith("cost_usd") else f"{value:.3f}"
    return str(value)
