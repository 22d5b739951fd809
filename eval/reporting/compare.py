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

from eval.metrics.bootstrap import DiffCI, paired_difference
from eval.reporting.accuracy import question_verdicts
from eval.sweep.store import read_predictions


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
    """The verdicts of a run directory's finished questions; None when it holds none here."""
    if not run_dir:
        return None
    try:
        return question_verdicts(read_predictions(run_dir))
    except FileNotFoundError:
        return None


def interval_label(baseline: str) -> str:
    return f"Δex_bird_vs_{baseline} [95% CI]"
