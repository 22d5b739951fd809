"""Where a run's answers come from and where its right answers were lost.

    predictions.parquet ──► step_shares        share of questions answered at each pipeline step
                        ──► step_costs         per step: questions that ran it, mean calls / tokens / seconds
                        ──► family_accuracy    per candidate family: samples, share right (a family that
                                               generates worse than the single-pass prompt shows here)
                        ──► losses             wrong answers by hardness: never generated, generated but
                                               not selected, errored and not repaired

A candidate's family is its producer without the sampling temperature
(``first_wave/T=0.8`` → ``first_wave``, ``widen/cells/T=1`` → ``widen/cells``).

On the predictions of a finished run of the adaptive pipeline:

    frame = RunStore.open(run_dir, identity).read()
    step_shares(frame)
    ──► {'first_wave': 0.71, 'fix': 0.08, 'widen': 0.14, 'tournament': 0.07}
"""

from __future__ import annotations

import re

import polars as pl

from core.types import Frozen

_TEMPERATURE = re.compile(r"/T=[0-9.]+$")
LOSSES = ("never_generated", "not_selected", "error_not_repaired")


def family(producer: str) -> str:
    return _TEMPERATURE.sub("", producer or "")


def _graded(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("ex_bird").is_not_null())


def step_shares(frame: pl.DataFrame) -> dict[str, float]:
    """``{step: share of graded questions whose answer came from that step's pool}``."""
    graded = _graded(frame)
    if graded.is_empty() or "answered_by" not in graded.columns:
        return {}
    counts = (
        graded.get_column("answered_by").fill_null("").replace("", "none").value_counts(sort=True)
    )
    return {
        row["answered_by"]: row["count"] / graded.height for row in counts.iter_rows(named=True)
    }


def step_costs(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per step: questions that ran it and its mean calls, tokens and seconds there."""
    if "steps" not in frame.columns:
        return pl.DataFrame()
    steps = frame.select(pl.col("steps").explode()).drop_nulls().unnest("steps")
    if steps.is_empty():
        return pl.DataFrame()
    return steps.group_by("step", maintain_order=True).agg(
        pl.len().alias("questions"),
        pl.col("calls").mean(),
        pl.col("prompt_tokens").mean(),
        pl.col("completion_tokens").mean(),
        pl.col("seconds").mean(),
    )


def family_accuracy(frame: pl.DataFrame, semantics: str = "correct_bird") -> pl.DataFrame:
    """One row per candidate family: samples judged and the share of them that are right."""
    rows = [
        {"family": family(c["producer"]), "right": bool(c[semantics])}
        for pool in _graded(frame).get_column("candidates").to_list()
        for c in pool or ()
        if c[semantics] is not None
    ]
    if not rows:
        return pl.DataFrame(
            schema={"family": pl.String, "samples": pl.UInt32, "right_share": pl.Float64}
        )
    return (
        pl.DataFrame(rows)
        .group_by("family")
        .agg(
            pl.len().alias("samples"), pl.col("right").cast(pl.Float64).mean().alias("right_share")
        )
        .sort("samples", descending=True)
    )


def loss_of(record: dict, semantics: str = "bird") -> str | None:
    """Why a graded question is wrong (None when it is right)."""
    if record[f"ex_{semantics}"]:
        return None
    pool = record["candidates"] or []
    if any(c[f"correct_{semantics}"] for c in pool):
        return "not_selected"
    if any(c["error"] for c in pool):
        return "error_not_repaired"
    return "never_generated"


def losses(frame: pl.DataFrame, semantics: str = "bird") -> pl.DataFrame:
    """Wrong answers per hardness level by where the right answer was lost, and pass@pool."""
    graded = _graded(frame)
    if graded.is_empty():
        return pl.DataFrame()
    records = graded.select("difficulty", f"ex_{semantics}", "candidates").to_dicts()
    table = pl.DataFrame(
        {
            "difficulty": [r["difficulty"] or "unlabelled" for r in records],
            "right": [bool(r[f"ex_{semantics}"]) for r in records],
            "in_pool": [
                any(c[f"correct_{semantics}"] for c in r["candidates"] or []) for r in records
            ],
            "loss": [loss_of(r, semantics) or "" for r in records],
        }
    )
    by = table.group_by("difficulty", maintain_order=True).agg(
        pl.len().alias("questions"),
        pl.col("right").sum().alias("right"),
        pl.col("in_pool").cast(pl.Float64).mean().alias("pass_at_pool"),
        *(pl.col("loss").eq(name).sum().alias(name) for name in LOSSES),
    )
    total = table.select(
        pl.lit("all").alias("difficulty"),
        pl.len().alias("questions"),
        pl.col("right").sum().alias("right"),
        pl.col("in_pool").cast(pl.Float64).mean().alias("pass_at_pool"),
        *(pl.col("loss").eq(name).sum().alias(name) for name in LOSSES),
    )
    return pl.concat([by, total], how="vertical_relaxed")


_NOT_IN_METRIC_NAMES = re.compile(r"[^0-9A-Za-z_\-. :/]")


def metric_name(text: str) -> str:
    """``text`` with every character MLflow refuses in a metric name replaced: ``widen/examples+cells``
    → ``widen/examples_cells``."""
    return _NOT_IN_METRIC_NAMES.sub("_", text)


class StepCostRow(Frozen):
    step: str
    questions: int
    calls: float
    prompt_tokens: float
    completion_tokens: float
    seconds: float


class FamilyRow(Frozen):
    family: str
    samples: int
    right_share: float


class LossRow(Frozen):
    difficulty: str
    questions: int
    right: int
    pass_at_pool: float
    never_generated: int
    not_selected: int
    error_not_repaired: int


class Breakdown(Frozen):
    """The tables above for one run; ``losses`` ends with the ``all`` row."""

    step_shares: dict[str, float] = {}
    step_costs: tuple[StepCostRow, ...] = ()
    families: tuple[FamilyRow, ...] = ()
    losses: tuple[LossRow, ...] = ()

    def figures(self) -> dict[str, float]:
        """MLflow-safe figures: ``answered_by/<step>``, ``family_right/<family>``, ``loss/<kind>``
        (counts, BIRD semantics) and ``pass_at_pool``."""
        figures = {f"answered_by/{step}": share for step, share in self.step_shares.items()}
        for row in self.families:
            figures[metric_name(f"family_right/{row.family}")] = row.right_share
        if self.losses:
            total = self.losses[-1]
            figures["pass_at_pool"] = total.pass_at_pool
            figures.update({f"loss/{name}": float(getattr(total, name)) for name in LOSSES})
        return figures


def breakdown(frame: pl.DataFrame) -> Breakdown:
    """Where ``frame``'s answers come from and where its right answers were lost."""
    if frame.height == 0:
        return Breakdown()
    return Breakdown(
        step_shares=step_shares(frame),
        step_costs=tuple(StepCostRow(**row) for row in step_costs(frame).iter_rows(named=True)),
        families=tuple(FamilyRow(**row) for row in family_accuracy(frame).iter_rows(named=True)),
        losses=tuple(LossRow(**row) for row in losses(frame).iter_rows(named=True)),
    )
