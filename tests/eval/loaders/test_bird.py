"""BIRD loader: mini-dev questions from the shared data (no databases there), and a synthetic
BIRD layout with a database and its description CSVs."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from core.config import load_config
from eval.errors import BenchmarkDataError
from eval.loaders import BenchmarkSpec, load_benchmark

SHARED_BIRD = Path(load_config().paths.benchmarks) / "bird-minidev"
needs_bird = pytest.mark.skipif(
    not (SHARED_BIRD / "mini_dev_sqlite.json").is_file(),
    reason=f"shared BIRD mini-dev data not found at {SHARED_BIRD} "
    "(see ../shared/benchmarks/README.md)",
)


@needs_bird
def test_minidev_questions_all_skipped_without_databases():
    bench = load_benchmark(load_config(["benchmark=bird_minidev"]).benchmark)
    assert bench.total_questions == 500
    assert bench.tasks == ()
    assert len(bench.skipped) == 500
    assert len({s.db_id for s in bench.skipped}) == 11
    first = bench.skipped[0]
    assert first.task_id == "bird_minidev:0" and first.db_id == "debit_card_specializing"
    assert first.reason.startswith("database not found:")
    assert first.reason.endswith(
        "dev_databases/debit_card_specializing/debit_card_specializing.sqlite"
    )


def _bird_layout(
    root: Path, questions: list[dict], with_database: set[str], described: bool = True
) -> Path:
    (root / "mini_dev_sqlite.json").write_text(json.dumps(questions))
    (root / "dev_tables.json").write_text("[]")
    for db_id in with_database:
        folder = root / "dev_databases" / db_id
        folder.mkdir(parents=True)
        with sqlite3.connect(folder / f"{db_id}.sqlite") as conn:
            conn.execute("CREATE TABLE customers (CustomerID INTEGER, Currency TEXT)")
        if described:
            (folder / "database_description").mkdir()
            (folder / "database_description" / "customers.csv").write_text(
                "original_column_name,column_description\nCurrency,the currency\n"
            )
    return root


@needs_bird
def test_minidev_evidence_and_difficulty_reach_the_tasks(tmp_path):
    """The real mini-dev questions, with a stand-in database for two of their db_ids."""
    raw = json.loads((SHARED_BIRD / "mini_dev_sqlite.json").read_text())
    root = _bird_layout(tmp_path, raw, {"debit_card_specializing", "financial"})
    spec = BenchmarkSpec(name="bird_minidev", kind="bird", data_dir=str(root), split="mini_dev")
    bench = load_benchmark(spec)

    expected = [
        i for i, q in enumerate(raw) if q["db_id"] in {"debit_card_specializing", "financial"}
    ]
    assert [int(t.task_id.split(":")[1]) for t in bench.tasks] == expected
    assert len(bench.skipped) == 500 - len(expected)
    for task in bench.tasks:
        source = raw[int(task.task_id.split(":")[1])]
        assert (task.question, task.evidence, task.gold_sql, task.difficulty) == (
            source["question"],
            source["evidence"],
            source["SQL"],
            source["difficulty"],
        )
        assert task.db.description_dir is not None
        assert Path(task.db.description_dir, "customers.csv").is_file()
    assert set(Counter(t.difficulty for t in bench.tasks)) == {"simple", "moderate", "challenging"}
    assert bench.tables_file is not None


def test_description_dir_is_none_when_absent(tmp_path):
    qs = [
        {
            "question_id": 7,
            "db_id": "shop",
            "question": "q",
            "SQL": "SELECT 1",
            "difficulty": "simple",
        }
    ]
    root = _bird_layout(tmp_path, qs, {"shop"}, described=False)
    bench = load_benchmark(
        BenchmarkSpec(name="b", kind="bird", data_dir=str(root), split="mini_dev")
    )
    assert bench.tasks[0].db.description_dir is None
    assert bench.tasks[0].evidence == ""  # no evidence field → empty, not None


def test_dev_split_and_file_override(tmp_path):
    qs = [{"db_id": "shop", "question": "q", "SQL": "SELECT 1", "evidence": "e"}]
    root = _bird_layout(tmp_path, [], {"shop"})
    (root / "dev.json").write_text(json.dumps(qs))
    (root / "other.json").write_text(json.dumps(qs * 3))
    assert len(load_benchmark(BenchmarkSpec(name="b", kind="bird", data_dir=str(root))).tasks) == 1
    spec = BenchmarkSpec(name="b", kind="bird", data_dir=str(root), file="other.json", limit=2)
    assert [t.task_id for t in load_benchmark(spec).tasks] == ["b:0", "b:1"]


def test_bad_difficulty_and_missing_sql_are_typed_errors(tmp_path):
    spec = BenchmarkSpec(name="b", kind="bird", data_dir=str(tmp_path), split="mini_dev")
    _bird_layout(
        tmp_path, [{"db_id": "x", "question": "q", "SQL": "SELECT 1", "difficulty": "hard"}], set()
    )
    with pytest.raises(BenchmarkDataError, match="difficulty"):
        load_benchmark(spec)
    (tmp_path / "mini_dev_sqlite.json").write_text(json.dumps([{"db_id": "x", "question": "q"}]))
    with pytest.raises(BenchmarkDataError, match="'SQL'"):
        load_benchmark(spec)
