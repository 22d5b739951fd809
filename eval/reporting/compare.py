"""Configurations compared question by question: EX differences with paired bootstrap intervals.

    {configuration: {task_id: ex_bird}} ──► paired_intervals(verdicts, baseline)
        ──► {configuration: DiffCI}   e.g. no_fixer: −0.028 [−0.065, +0.000] over 108 questions

Each configuration is compared with the baseline over the questions both scored (2,000
resamples of those questions, seed 0, 95 %: ``eval.metrics.bootstrap``). The eval summary takes
the verdicts from the runs it just made, ``scale-analytics report`` from each run's
``predictions.parquet`` (the MLflow run's ``run_dir`` tag).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from eval.metrics.bootstrap import DiffCI, paired_difference
from eval.reporting.accuracy import question_verdicts
from eval.sweep.store import PREDICTIONS


def paired_intervals(
    verdicts: Mapping[str, Mapping[str, bool]], baseline: str
) -> dict[str, DiffCI]:
    """Each configuration but ``baseline`` against it; one sharing no question with it is left out."""
    reference = verdicts.get(baseline)
    if reference is None:
        return {}
    intervals = {}
    for name, mine in verdicts.items():
        ci = paired_difference(mine, reference) if name != baseline else None
        if ci is not None:
            intervals[name] = ci
    return intervals


def pair_differences(
    verdicts: Mapping[str, Mapping[str, bool]], pairs: Sequence[tuple[str, str]]
) -> list[DiffCI | None]:
    """ΔEX of each ``(measured, reference)`` pair of configurations over the questions both
    scored (None when they share none)."""
    return [paired_difference(verdicts[measured], verdicts[ref]) for measured, ref in pairs]


def stored_verdicts(run_dir: str | None) -> dict[str, bool] | None:
    """The verdicts of a run directory's stored predictions; None when it is not here."""
    path = Path(run_dir) / PREDICTIONS if run_dir else None
    if path is None or not path.is_file():
        return None
    return question_verdicts(pl.read_parquet(path))


def interval_label(baseline: str) -> str:
    return f"Δex_bird_vs_{baseline} [95% CI]"
