"""A run's figures per half of a split benchmark (benchmarks/bench_halves.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl

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
