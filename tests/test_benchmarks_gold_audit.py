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
from pipelines.contracts import DatabaseRef, Task

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("gold_audit", _BENCH / "gold_audit.py")
assert _spec and _spec.loader
audit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(audit)

SHARED_SPIDER = Path(load_config().paths.benchmarks) / "spider"


@pytest.fixture
def tasks(tmp_path: Path) -> list[Task]:
    """Three questions on one database of two airports, one stored with a trailing space."""
    path = tmp_path / "air.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE airports (name TEXT, city TEXT)")
        con.executemany("INSERT INTO airports VALUES (?, ?)", [("Alton ", "A"), ("Bray", "B")])
    db = DatabaseRef(db_id="air", dialect="sqlite", path=str(path))
    golds = [
        "SELECT city FROM airports WHERE name = 'Alton'",  # nothing: the stored name has a space
        "SELECT city FROM airports WHERE name = 'Bray'",
        "SELECT city FROM airports WHERE name = 'Bray'",
    ]
    return [
        Task(task_id=f"q:{i}", question="Which city?", db=db, gold_sql=gold)
        for i, gold in enumerate(golds, start=1)
    ]


def test_only_a_faithful_sql_graded_wrong_confirms_a_defect(tasks):
    defects = (
        audit.Defect(
            "q:1", "trailing space", "SELECT city FROM airports WHERE trim(name) = 'Alton'"
        ),
        audit.Defect("q:2", "not a defect", "SELECT city FROM airports WHERE name LIKE 'Bra%'"),
        audit.Defect("q:3", "faithful SQL errs", "SELECT town FROM airports"),
        audit.Defect("q:9", "not in the run", "SELECT 1"),
    )
    found = audit.confirmed(tasks, defects)
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
    found = audit.confirmed(tasks)
    assert [d.task_id for d in found] == [d.task_id for d in audit.DEFECTS]

    run = tmp_path / "run"
    run.mkdir()
    right = {d.task_id for d in audit.DEFECTS[:2]}  # two defect questions answered "right"
    ids = [t.task_id for t in tasks]
    pl.DataFrame(
        {"task_id": ids, "ex_bird": [i in right or i == ids[1] for i in ids]}
    ).write_parquet(run / "predictions.parquet")
    out = subprocess.run(
        [sys.executable, str(_BENCH / "gold_audit.py"), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    audited = len(tasks) - len(audit.DEFECTS)
    assert f"  3/{len(tasks)}" in out and f"  1/{audited}" in out
    assert f"{len(right)}/{len(audit.DEFECTS)}" in out
