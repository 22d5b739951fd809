"""Every pair of configurations under each EX semantics (benchmarks/bench_pairs.py): compared
over the questions both scored, the interval marked where it excludes 0."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl

from eval.sweep.records import QuestionRecord, records_to_table

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("bench_pairs", _BENCH / "bench_pairs.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _run(verdicts: dict[int, tuple[bool, bool]]) -> pl.DataFrame:
    """A run's predictions: question index -> (EX BIRD, EX columns)."""
    records = [
        QuestionRecord(
            task_id=f"b:{i}",
            position=i,
            benchmark="b",
            db_id="db",
            question="q",
            gold_sql="SELECT 1",
            sql="s",
            ex_bird=bird,
            ex_spider=bird,
            ex_columns=columns,
            latency_s=1.0,
        )
        for i, (bird, columns) in verdicts.items()
    ]
    return pl.from_arrow(records_to_table(records))


def test_pairs_compare_the_shared_questions_under_each_semantics():
    right_everywhere = _run({i: (True, True) for i in range(40)})
    right_by_columns = _run({i: (False, i < 30) for i in range(40)})
    fewer = _run({i: (False, False) for i in range(10)})

    rows = bench.pair_rows({"a": right_everywhere, "b": right_by_columns, "c": fewer})

    cells = {row.split(" | ")[0].lstrip("| "): row.strip("| ").split(" | ") for row in rows}
    assert [cells[pair][1] for pair in ("a − b", "a − c", "b − c")] == ["40", "10", "10"]
    bird, spider, columns = cells["a − b"][2:]
    assert bird == spider == "+1.000 [+1.000, +1.000] *"
    assert columns.startswith("+0.250 [") and columns.endswith("] *")  # 10 of 40 apart
    assert cells["b − c"][2] == "+0.000 [+0.000, +0.000]"  # both wrong on every shared one
    assert cells["b − c"][4] == "+1.000 [+1.000, +1.000] *"


def test_the_questions_each_answers_alone_are_listed_in_index_order():
    first = _run({0: (True, True), 2: (False, False), 10: (True, True), 11: (True, True)})
    second = _run({0: (True, True), 2: (True, True), 10: (False, False), 11: (False, False)})

    lines = bench.differing({"pg": first, "sqlite": second})

    assert lines == ["right in pg only (2): b:10, b:11", "right in sqlite only (1): b:2"]
