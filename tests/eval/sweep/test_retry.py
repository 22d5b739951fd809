"""Which finished rows ``sweep.retry`` answers again, and grading errors in EX (never dropped)."""

import polars as pl
import pytest

from eval.reporting.accuracy import ex_by_difficulty
from eval.reporting.result import run_result
from eval.sweep.config import SweepSettings
from eval.sweep.driver import to_retry
from eval.sweep.progress import SweepProgress
from eval.sweep.records import QuestionRecord, records_to_table


def row(
    i: int,
    *,
    ex: bool | None = True,
    reasons: tuple[str, ...] = (),
    grading_error: str | None = None,
    gold: str | None = "SELECT 1",
) -> QuestionRecord:
    return QuestionRecord(
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question="q",
        sql="SELECT 1",
        gold_sql=gold,
        ex_bird=ex,
        ex_spider=ex,
        degraded=bool(reasons),
        degradation_reasons=reasons,
        grading_error=grading_error,
    )


ROWS = [
    row(0),
    row(1, ex=False, reasons=("question_timeout",)),
    row(2, ex=False, reasons=("global_timeout",)),
    row(3, ex=None, grading_error="RayActorError: sandbox actor gone"),
    row(4, ex=False, reasons=("pipeline_error",)),
    row(5, ex=True, reasons=("selector_failed",)),
    row(6, ex=False),
]


@pytest.fixture
def frame() -> pl.DataFrame:
    return pl.from_arrow(records_to_table(ROWS))


def test_retry_policies(frame):
    assert to_retry(frame, "none") == set()
    assert to_retry(frame, "errors") == {"t:3", "t:4"}
    assert to_retry(frame, "degraded") == {"t:1", "t:2", "t:3", "t:4", "t:5"}
    assert to_retry(frame.clear(), "degraded") == set()


def test_retry_is_configured_and_off_by_default():
    assert SweepSettings().retry == "none"
    assert SweepSettings.from_cfg({"sweep": {"retry": "degraded"}}).retry == "degraded"
    with pytest.raises(ValueError):
        SweepSettings(retry="everything")


def test_a_grading_error_counts_wrong_in_ex_and_is_reported(frame):
    metrics = run_result(frame, label="r").metrics()
    assert metrics["grading_errors"] == 1
    assert metrics["questions_scored"] == 7  # the ungraded question stays in the denominator
    assert metrics["ex_bird"] == pytest.approx(2 / 7)
    assert ex_by_difficulty(frame).row(-1, named=True)["questions"] == 7


def test_an_ungraded_question_without_gold_sql_is_not_scored():
    frame = pl.from_arrow(
        records_to_table([row(0), row(1, ex=None, grading_error="boom", gold=None)])
    )
    assert run_result(frame, label="r").accuracy.scored == 1


def test_the_progress_bar_counts_grading_errors_like_the_report(frame):
    bar = SweepProgress(10, "x", previous=frame, enabled=False)
    assert bar.ex_so_far == pytest.approx(2 / 7)
    bar.advance(row(7, ex=None, grading_error="boom"))
    assert bar.ex_so_far == pytest.approx(2 / 8)


def test_an_answer_the_database_could_not_run_is_retried_as_an_error():
    """A server down mid-run: the question's answer failed with ``database_unavailable``, which
    marks it degraded, and a rerun with ``sweep.retry=errors`` answers it again."""
    from eval.sweep.worker import _unavailable_database
    from pipelines.contracts import ExecutionResult, Prediction

    down = ExecutionResult(
        error="database unavailable: PostgreSQL server unavailable (connection refused)",
        error_kind="database_unavailable",
        hash="ERR:x",
    )
    marked = _unavailable_database(Prediction(task_id="t:1", sql="SELECT 1", exec_result=down))
    assert marked.degraded and marked.degradation_reasons == ("database_unavailable",)
    wrong = ExecutionResult(error="no such column: x", error_kind="sql_error", hash="ERR:y")
    kept = Prediction(task_id="t:2", sql="SELECT x", exec_result=wrong)
    assert _unavailable_database(kept) is kept
    frame = pl.from_arrow(
        records_to_table([row(0), row(1, ex=False, reasons=marked.degradation_reasons)])
    )
    assert to_retry(frame, "errors") == {"t:1"}
