"""Enterprise loader: builds the work-item benchmark on first use, then reads its question file;
every task is a DuckDB question carrying its SDS total and, on a floor question, its construct."""

from __future__ import annotations

import pytest

from core.config import load_config
from eval.enterprise import load_questions
from eval.loaders import BenchmarkSpec, load_benchmark


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("enterprise"))


def test_builds_then_loads_every_question_with_its_sds(data_dir):
    spec = BenchmarkSpec(name="enterprise_demo", kind="enterprise", data_dir=data_dir)
    bench = load_benchmark(spec)
    questions = load_questions()
    assert bench.skipped == () and len(bench.tasks) == bench.total_questions == len(questions)
    assert {(t.db.db_id, t.db.dialect) for t in bench.tasks} == {("workitems", "duckdb")}
    assert [t.sds for t in bench.tasks] == [q.sds_total for q in questions]
    assert [t.difficulty for t in bench.tasks] == [q.difficulty for q in questions]
    assert [t.floor_construct for t in bench.tasks] == [q.floor_construct for q in questions]
    assert sum(t.floor_construct is not None for t in bench.tasks) == 36  # the floor
    assert bench.tasks[3].task_id == "enterprise_demo:3" and bench.tables_file is None
    assert load_benchmark(spec).tasks == bench.tasks  # the second load reuses the build


def test_the_halves_are_the_even_and_odd_positions(data_dir):
    overrides = [
        "benchmark=enterprise_demo",
        f"benchmark.data_dir={data_dir}",
        "benchmark.stride=2",
    ]
    tuning = load_benchmark(load_config([*overrides, "benchmark.offset=0"]).benchmark)
    held_out = load_benchmark(load_config([*overrides, "benchmark.offset=1"]).benchmark)
    indexes = [int(t.task_id.rsplit(":", 1)[1]) for t in (*tuning.tasks, *held_out.tasks)]
    assert sorted(indexes) == list(range(len(load_questions())))
    assert all(i % 2 == 0 for i in indexes[: len(tuning.tasks)])
