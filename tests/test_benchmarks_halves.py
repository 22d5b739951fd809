"""A run's figures per half of a split benchmark (benchmarks/bench_halves.py): the halves, and a
half's run and pool rates and EX by construct."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl

from eval.sweep.records import CandidateRecord, QuestionRecord, records_to_table

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("bench_halves", _BENCH / "bench_halves.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_halves_follow_the_task_index_not_the_run_position():
    frame = pl.DataFrame(
        {
            "task_id": ["b:0", "b:2", "b:1", "b:3", "b:5"],
            "position": [0, 1, 0, 1, 2],  # each invocation numbers its own subset
            "ex_bird": [True, False, True, True, False],
        }
    )
    parts = bench.halves(frame, 2)
    assert sorted(parts) == ["held-out", "tuning"]
    assert parts["tuning"]["task_id"].to_list() == ["b:0", "b:2"]
    assert parts["held-out"]["ex_bird"].to_list() == [True, True, False]


def _floor_record(i, bird, columns, construct, pool, exec_error=None):
    return QuestionRecord(
        task_id=f"b:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question="q",
        sql="s",
        difficulty="simple",
        floor_construct=construct,
        exec_hash="h",
        exec_error=exec_error,
        ex_bird=bird,
        ex_spider=bird,
        ex_columns=columns,
        candidates=tuple(
            CandidateRecord(
                sql="c", producer="p", correct_bird=b, correct_spider=b, correct_columns=c
            )
            for b, c in pool
        ),
        latency_s=1.0,
    )


def test_a_half_shows_its_run_and_pool_rates_and_ex_by_construct():
    frame = pl.from_arrow(
        records_to_table(
            [
                _floor_record(0, True, True, "unnest", [(True, True)]),
                _floor_record(1, False, True, "unnest", [(False, True)]),
                _floor_record(2, False, False, "hierarchy", [(False, False)], "Binder Error"),
                _floor_record(3, False, False, None, [(True, True)]),
            ]
        )
    )
    text = "\n".join(bench.describe("all", frame, None))
    assert "EX 0.250 (1/4)" in text
    assert "run rate 0.750: answers that executed without error" in text
    assert "pool rate 0.500 (BIRD), 0.500 (Spider), 0.750 (columns)" in text
    assert (
        "by construct, right under BIRD / columns: hierarchy 0 / 0 of 1, unnest 1 / 2 of 2" in text
    )
    assert "by construct" not in "\n".join(
        bench.describe("old", frame.drop("floor_construct"), None)
    )
