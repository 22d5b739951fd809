import polars as pl

from eval.cli.report_cli import with_intervals
from eval.reporting.compare import interval_label, paired_intervals, stored_verdicts
from eval.sweep.records import QuestionRecord, records_to_table
from eval.sweep.store import PREDICTIONS


def store(run_dir, verdicts):
    records = [
        QuestionRecord(
            task_id=task_id,
            position=i,
            benchmark="b",
            db_id="db",
            question="q",
            gold_sql="SELECT 1",
            sql="s",
            ex_bird=right,
            ex_spider=right,
        )
        for i, (task_id, right) in enumerate(verdicts.items())
    ]
    run_dir.mkdir(parents=True)
    pl.from_arrow(records_to_table(records)).write_parquet(run_dir / PREDICTIONS)
    return str(run_dir)


def test_each_configuration_is_compared_with_the_baseline_over_shared_questions():
    verdicts = {
        "full": {"a": True, "b": True, "c": False},
        "no_icl": {"a": True, "b": False, "c": False, "d": True},  # d: not asked of full
        "elsewhere": {"z": True},  # no question in common: no interval
    }
    intervals = paired_intervals(verdicts, "full")
    assert set(intervals) == {"no_icl"}
    assert intervals["no_icl"].n == 3 and intervals["no_icl"].diff < 0
    assert paired_intervals(verdicts, "missing_baseline") == {}


def test_the_report_reads_each_runs_stored_predictions_for_the_interval(tmp_path):
    questions = [f"q{i}" for i in range(30)]
    runs = pl.DataFrame(
        {
            "run_name": ["no_fixer", "adaptive", "remote"],
            "run_dir": [
                store(tmp_path / "a", {q: i < 10 for i, q in enumerate(questions)}),
                store(tmp_path / "b", {q: i < 20 for i, q in enumerate(questions)}),
                None,  # logged elsewhere: no predictions here
            ],
        }
    )
    assert stored_verdicts(str(tmp_path / "nothing")) is None
    table = pl.DataFrame({"configuration": ["adaptive", "no_fixer", "remote"]})
    shown = with_intervals(table, runs, "adaptive").get_column(interval_label("adaptive"))
    assert shown[0] is None and shown[2] is None
    assert shown[1].startswith("\N{MINUS SIGN}0.333 [\N{MINUS SIGN}") and shown[1].endswith("n=30")
