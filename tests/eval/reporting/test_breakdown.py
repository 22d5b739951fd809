"""eval.reporting.breakdown: answered-by shares, step costs, family accuracy and losses from records."""

from __future__ import annotations

import polars as pl

from eval.reporting.breakdown import (
    breakdown,
    family,
    family_accuracy,
    losses,
    step_costs,
    step_shares,
)
from eval.sweep.records import CandidateRecord, QuestionRecord, records_to_table
from pipelines.contracts import StepCost


def record(
    i: int,
    *,
    right: bool,
    pool: list[tuple[str, bool | None, str | None]],
    answered_by: str,
    difficulty: str = "easy",
    steps: tuple[StepCost, ...] = (),
) -> QuestionRecord:
    return QuestionRecord(
        task_id=f"q{i}",
        position=i,
        benchmark="spider",
        db_id="db",
        difficulty=difficulty,
        question="?",
        gold_sql="SELECT 1",
        sql="SELECT 1",
        ex_bird=right,
        ex_spider=right,
        answered_by=answered_by,
        steps=steps,
        candidates=tuple(
            CandidateRecord(sql="s", producer=p, correct_bird=ok, correct_spider=ok, error=err)
            for p, ok, err in pool
        ),
    )


def frame() -> pl.DataFrame:
    return pl.from_arrow(
        records_to_table(
            [
                record(
                    0,
                    right=True,
                    answered_by="first_wave",
                    pool=[("first_wave/greedy", True, None), ("first_wave/T=0.8", True, None)],
                    steps=(StepCost(step="first_wave", calls=2, seconds=10.0),),
                ),
                record(
                    1,
                    right=False,
                    answered_by="fix",
                    difficulty="hard",
                    pool=[
                        ("first_wave/greedy", False, "no such column"),
                        ("first_wave/T=0.8", True, None),
                    ],
                    steps=(
                        StepCost(step="first_wave", calls=2, seconds=12.0),
                        StepCost(step="fix", calls=1, seconds=4.0),
                    ),
                ),
                record(
                    2,
                    right=False,
                    answered_by="widen",
                    difficulty="hard",
                    pool=[
                        ("first_wave/greedy", False, "no such table"),
                        ("widen/cells/T=1", False, None),
                    ],
                ),
                record(
                    3,
                    right=False,
                    answered_by="first_wave",
                    difficulty="hard",
                    pool=[("first_wave/greedy", False, None)],
                ),
            ]
        )
    )


def test_family_drops_only_the_temperature():
    assert family("first_wave/T=0.8") == "first_wave" and family("widen/cells/T=1") == "widen/cells"
    assert family("first_wave/greedy") == "first_wave/greedy"


def test_step_shares_and_costs():
    f = frame()
    assert step_shares(f) == {"first_wave": 0.5, "fix": 0.25, "widen": 0.25}
    costs = {r["step"]: r for r in step_costs(f).iter_rows(named=True)}
    assert costs["first_wave"]["questions"] == 2 and costs["first_wave"]["seconds"] == 11.0
    assert costs["fix"]["calls"] == 1.0


def test_family_accuracy_shows_a_worse_family():
    shares = {
        r["family"]: (r["samples"], r["right_share"])
        for r in family_accuracy(frame()).iter_rows(named=True)
    }
    assert shares["first_wave/greedy"] == (4, 0.25) and shares["first_wave"] == (2, 1.0)
    assert shares["widen/cells"] == (1, 0.0)


def test_losses_say_where_the_right_answer_was_lost():
    table = {r["difficulty"]: r for r in losses(frame()).iter_rows(named=True)}
    hard = table["hard"]
    assert (hard["questions"], hard["right"]) == (3, 0)
    assert (hard["not_selected"], hard["error_not_repaired"], hard["never_generated"]) == (1, 1, 1)
    assert table["all"]["pass_at_pool"] == 0.5


def test_breakdown_figures_are_flat_floats():
    metrics = breakdown(frame()).figures()
    assert metrics["answered_by/first_wave"] == 0.5 and metrics["loss/not_selected"] == 1.0
    assert metrics["family_right/first_wave"] == 1.0 and metrics["pass_at_pool"] == 0.5
    assert all(isinstance(v, float) for v in metrics.values())


def test_every_metric_name_is_one_mlflow_accepts():
    from mlflow.utils.validation import _validate_metric_name

    f = pl.from_arrow(
        records_to_table(
            [
                record(
                    0,
                    right=True,
                    answered_by="widen",
                    pool=[("widen/examples+cells/T=0.8", True, None)],
                )
            ]
        )
    )
    metrics = breakdown(f).figures()
    assert "family_right/widen/examples_cells" in metrics
    for name in metrics:
        _validate_metric_name(name)  # raises MlflowException on a refused character
