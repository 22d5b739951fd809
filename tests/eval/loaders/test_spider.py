"""Spider loader: on the shared Spider data when present, and on small synthetic layouts."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from core.config import load_config
from eval.errors import BenchmarkDataError
from eval.loaders import BenchmarkSpec, load_benchmark, task_index
from eval.loaders.spider_hardness import hardness_from_parse
from pipelines.sql_hardness import hardness_from_sql

SHARED_SPIDER = Path(load_config().paths.benchmarks) / "spider"
needs_spider = pytest.mark.skipif(
    not (SHARED_SPIDER / "dev.json").is_file(),
    reason=f"shared Spider data not found at {SHARED_SPIDER} (see ../shared/benchmarks/README.md)",
)


@needs_spider
def test_dev_loads_with_wta_1_skipped():
    bench = load_benchmark(load_config(["benchmark=spider_dev"]).benchmark)
    assert bench.total_questions == 1034
    assert len(bench.tasks) + len(bench.skipped) == 1034
    assert len(bench.skipped) == 62
    assert {s.db_id for s in bench.skipped} == {"wta_1"}
    assert all(
        "database not found" in s.reason and "wta_1.sqlite" in s.reason for s in bench.skipped
    )
    assert all(Path(t.db.path).is_file() for t in bench.tasks)
    assert bench.tables_file is not None and bench.tables_file.endswith("tables.json")

    first = bench.tasks[0]
    assert (first.task_id, first.db.db_id, first.gold_sql) == (
        "spider_dev:0",
        "concert_singer",
        "SELECT count(*) FROM singer",
    )
    assert first.difficulty == "easy"
    assert {t.difficulty for t in bench.tasks} == {"easy", "medium", "hard", "extra"}
    # ids are positions in dev.json, so they are unique and skip exactly the wta_1 positions
    raw = json.loads((SHARED_SPIDER / "dev.json").read_text())
    assert all(raw[task_index(t.task_id)]["question"] == t.question for t in bench.tasks)


@needs_spider
def test_stride_subset_is_every_ninth_question_whose_database_exists():
    full = load_benchmark(load_config(["benchmark=spider_dev"]).benchmark)
    sub = load_benchmark(load_config(["benchmark=spider_dev_sub9"]).benchmark)
    assert [t.task_id for t in sub.tasks] == [t.task_id for t in full.tasks[::9]]
    assert len(sub.tasks) == 108
    # the hardness mix of this subset, on which docs/benchmarks.md's Spider figures are measured
    assert Counter(t.difficulty for t in sub.tasks) == {
        "easy": 31,
        "medium": 42,
        "hard": 16,
        "extra": 19,
    }

    shifted = load_benchmark(
        load_config(
            [
                "benchmark=spider_dev",
                "benchmark.offset=3",
                "benchmark.stride=100",
                "benchmark.limit=4",
            ]
        ).benchmark
    )
    assert [t.task_id for t in shifted.tasks] == [t.task_id for t in full.tasks[3::100][:4]]


@needs_spider
def test_train_split_gets_hardness_without_a_parse():
    overrides = ["benchmark=spider_dev", "benchmark.split=train", "benchmark.stride=50"]
    bench = load_benchmark(load_config(overrides).benchmark)
    assert bench.total_questions == 7000
    assert len(bench.tasks) == -(-(7000 - len(bench.skipped)) // 50)
    assert all(t.difficulty in {"easy", "medium", "hard", "extra"} for t in bench.tasks)
    # baseball_1 and soccer_1 databases are absent here
    assert {s.db_id for s in bench.skipped} <= {"baseball_1", "soccer_1"}
    assert bench.skipped


@needs_spider
def test_sqlglot_hardness_agrees_with_the_official_parse_on_dev():
    raw = json.loads((SHARED_SPIDER / "dev.json").read_text())
    disagreements = [
        (i, r["query"])
        for i, r in enumerate(raw)
        if hardness_from_sql(r["query"]) != hardness_from_parse(r["sql"])
    ]
    assert disagreements == []


# --- synthetic layouts -------------------------------------------------------------------------


def _spider_layout(root: Path, questions: list[dict], databases: list[str]) -> Path:
    (root / "dev.json").write_text(json.dumps(questions))
    for db_id in databases:
        folder = root / "database" / db_id
        folder.mkdir(parents=True)
        with sqlite3.connect(folder / f"{db_id}.sqlite") as conn:
            conn.execute("CREATE TABLE t (a INTEGER)")
    return root


def _spec(root: Path, **extra) -> BenchmarkSpec:
    return BenchmarkSpec(name="tiny", kind="spider", data_dir=str(root), **extra)


def test_missing_database_is_skipped_not_fatal(tmp_path):
    qs = [
        {"db_id": "here", "question": "q0", "query": "SELECT a FROM t"},
        {"db_id": "gone", "question": "q1", "query": "SELECT a FROM t"},
        {"db_id": "here", "question": "q2", "query": "SELECT count(*) FROM t"},
    ]
    bench = load_benchmark(_spec(_spider_layout(tmp_path, qs, ["here"])))
    assert [t.task_id for t in bench.tasks] == ["tiny:0", "tiny:2"]
    assert [(s.task_id, s.db_id) for s in bench.skipped] == [("tiny:1", "gone")]
    assert bench.tables_file is None  # no tables.json in this layout


def test_stride_counts_only_questions_with_a_database(tmp_path):
    qs = [
        {"db_id": "gone" if i % 2 else "here", "question": f"q{i}", "query": "SELECT 1"}
        for i in range(10)
    ]
    bench = load_benchmark(
        _spec(_spider_layout(tmp_path, qs, ["here"]), stride=2, offset=1, limit=2)
    )
    # existing: 0,2,4,6,8 → [1::2] = 2,6 → limit 2
    assert [t.task_id for t in bench.tasks] == ["tiny:2", "tiny:6"]


def test_unparsable_gold_still_loads_without_hardness(tmp_path):
    qs = [{"db_id": "here", "question": "q", "query": "SELEC nonsense (("}]
    bench = load_benchmark(_spec(_spider_layout(tmp_path, qs, ["here"])))
    assert bench.tasks[0].difficulty is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "JSON list"),
        ('[{"db_id": "x", "question": "q"}]', "'query'"),
    ],
)
def test_bad_question_files_raise_typed_errors(tmp_path, content, message):
    if content is not None:
        (tmp_path / "dev.json").write_text(content)
    with pytest.raises(BenchmarkDataError, match=message):
        load_benchmark(_spec(tmp_path))


def test_unknown_split_and_extra_keys_are_rejected(tmp_path):
    with pytest.raises(BenchmarkDataError, match="unknown Spider split"):
        load_benchmark(_spec(tmp_path, split="validation"))
    with pytest.raises(ValueError):
        load_benchmark({"name": "x", "kind": "spider", "data_dir": str(tmp_path), "strid": 2})
