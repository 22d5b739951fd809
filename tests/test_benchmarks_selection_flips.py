"""Which step turned a right greedy answer wrong (benchmarks/bench_selection_flips.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import polars as pl

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location(
    "bench_selection_flips", _BENCH / "bench_selection_flips.py"
)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def cand(producer: str, right: bool) -> dict:
    return {"sql": "s", "producer": producer, "hash": "h", "error": None, "correct_bird": right}


GREEDY, SAMPLE = "first_wave/greedy", "first_wave/T=0.8"
ROWS = [
    # greedy right, the likelihood picked a wrong one: lost
    {"answered_by": "likelihood", "ex_bird": False, "candidates": [cand(GREEDY, True)]},
    # greedy wrong, the widening's majority right: won
    {
        "answered_by": "widen",
        "ex_bird": True,
        "candidates": [cand(GREEDY, False), cand(SAMPLE, True)],
    },
    # first wave right as greedy: kept
    {"answered_by": "first_wave", "ex_bird": True, "candidates": [cand(GREEDY, True)]},
    # both wrong, nothing right in the pool
    {"answered_by": "likelihood", "ex_bird": False, "candidates": [cand(GREEDY, False)]},
]


def test_each_step_counts_what_it_kept_lost_and_won():
    by_step = bench.flips(pl.DataFrame(ROWS))
    assert by_step["likelihood"]["lost"] == 1 and by_step["likelihood"]["both wrong"] == 1
    assert by_step["widen"]["won"] == 1 and by_step["widen"]["in pool"] == 1
    assert by_step["first_wave"]["kept"] == 1
    assert by_step["likelihood"]["in pool"] == 1


def test_the_script_prints_a_row_per_step(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    pl.DataFrame(
        [{"task_id": f"t:{i}", "position": i, **row} for i, row in enumerate(ROWS)]
    ).write_parquet(run / "predictions.parquet")
    out = subprocess.run(
        [sys.executable, str(_BENCH / "bench_selection_flips.py"), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (likelihood,) = [line for line in out.splitlines() if line.startswith("likelihood")]
    assert likelihood.split()[1:] == ["2", "0", "0", "1", "0", "1", "1"]
