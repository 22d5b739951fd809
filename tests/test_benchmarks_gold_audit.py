"""The gold audit (benchmarks/gold_audit.py): a defect counts only when its faithful SQL runs and
is graded wrong against the gold; every listed defect holds on the shared Spider databases."""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from core.config import load_config
from eval.loaders import load_benchmark

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("gold_audit", _BENCH / "gold_audit.py")
assert _spec and _spec.loader
audit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(audit)

SHARED_SPIDER = Path(load_config().paths.benchmarks) / "spider"


@pytest.fixture
def spider(tmp_path: Path) -> Path:
    """A Spider-like folder with one database: two airports, one stored with a trailing space."""
    folder = tmp_path / "spider" / "database" / "air"
    folder.mkdir(parents=True)
    with sqlite3.connect(folder / "air.sqlite") as con:
        con.execute("CREATE TABLE airports (name TEXT, city TEXT)")
        con.executemany("INSERT INTO airports VALUES (?, ?)", [("Alton ", "A"), ("Bray", "B")])
    return tmp_path / "spider"


QUESTIONS = pl.DataFrame(
    {
        "task_id": ["q:1", "q:2", "q:3"],
        "db_id": ["air"] * 3,
        "gold_sql": [
            "SELECT city FROM airports WHERE name = 'Alton'",  # finds nothing: the stored name has a space
            "SELECT city FROM airports WHERE name = 'Bray'",
            "SELECT city FROM airports WHERE name = 'Bray'",
        ],
    }
)


def test_only_a_faithful_sql_graded_wrong_confirms_a_defect(spider):
    defects = (
        audit.Defect(
            "q:1", "trailing space", "SELECT city FROM airports WHERE trim(name) = 'Alton'"
        ),
        audit.Defect("q:2", "not a defect", "SELECT city FROM airports WHERE name LIKE 'Bra%'"),
        audit.Defect("q:3", "faithful SQL errs", "SELECT town FROM airports"),
        audit.Defect("q:9", "not in the run", "SELECT 1"),
    )
    found = audit.confirmed(QUESTIONS, spider, defects)
    assert [d.task_id for d in found] == ["q:1"]


def test_accuracy_leaves_the_defects_out_of_the_audited_share():
    frame = pl.DataFrame(
        {"task_id": ["q:1", "q:2", "q:3", "q:4"], "ex_bird": [False, True, True, None]}
    )
    assert audit.accuracy(frame, {"q:1"}) == audit.Accuracy(
        right=2, graded=3, audited_right=2, audited=2
    )
    assert audit.accuracy(frame, set()) == audit.Accuracy(
        right=2, graded=3, audited_right=2, audited=3
    )


@pytest.mark.skipif(
    not (SHARED_SPIDER / "dev.json").is_file(),
    reason="shared Spider data not beside the repository",
)
def test_every_listed_defect_holds_on_the_spider_databases(tmp_path):
    tasks = load_benchmark(load_config(["benchmark=spider_dev_sub9"]).benchmark).tasks
    questions = pl.DataFrame(
        {
            "task_id": [t.task_id for t in tasks],
            "db_id": [t.db.db_id for t in tasks],
            "gold_sql": [t.gold_sql for t in tasks],
        }
    )
    found = audit.confirmed(questions, SHARED_SPIDER)
    assert [d.task_id for d in found] == [d.task_id for d in audit.DEFECTS]

    run = tmp_path / "run"
    run.mkdir()
    right = {d.task_id for d in audit.DEFECTS[:2]}  # two defect questions answered "right"
    questions.with_columns(
        ex_bird=pl.col("task_id").is_in(sorted(right)) | (pl.col("task_id") == tasks[1].task_id)
    ).write_parquet(run / "predictions.parquet")
    out = subprocess.run(
        [sys.executable, str(_BENCH / "gold_audit.py"), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    audited = len(tasks) - len(audit.DEFECTS)
    assert f"  3/{len(tasks)}" in out and f"  1/{audited}" in out and "2/12" in out
