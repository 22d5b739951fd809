"""The stop-rule re-vote (benchmarks/bench_stop_rules.py): a question stops on its first wave's
majority only when the rule says so; otherwise the whole pool votes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import polars as pl

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("bench_stop_rules", _BENCH / "bench_stop_rules.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def cand(producer: str, h: str, right: bool, error: str | None = None) -> dict:
    return {"sql": h, "producer": producer, "hash": h, "error": error, "correct_bird": right}


GREEDY, SAMPLE, WIDEN = "first_wave/greedy", "first_wave/T=0.8", "widen/plain/T=0.8"
# First wave 3 wrong of 5 (one errored), widening brings 4 right: only a strict rule widens it.
SPLIT = [
    cand(GREEDY, "w", False),
    cand(SAMPLE, "w", False),
    cand(SAMPLE, "w", False),
    cand(SAMPLE, "r", True),
    cand(SAMPLE, "e", False, error="no such column: x"),
    *[cand(WIDEN, "r", True)] * 4,
]
# A unanimous first wave that is right: every rule stops on it.
UNANIMOUS = [cand(GREEDY, "r", True), *[cand(SAMPLE, "r", True)] * 4]


def test_a_loose_rule_stops_on_the_wrong_first_wave_majority_a_strict_one_widens():
    assert bench.revote([SPLIT, UNANIMOUS], min_votes=3, share=0.6) == (1, 0)
    assert bench.revote([SPLIT, UNANIMOUS], min_votes=4, share=0.6) == (2, 1)
    assert bench.revote([SPLIT, UNANIMOUS], min_votes=3, share=1.0) == (2, 1)


def test_ties_go_to_the_greedy_candidates_bucket_and_errors_do_not_vote():
    tie = [cand(SAMPLE, "r", True), cand(GREEDY, "w", False)]
    assert bench.majority_is_right(tie) is False
    assert bench.majority_is_right([cand(GREEDY, "e", True, error="boom")]) is False


def test_the_script_prints_one_row_per_rule(tmp_path):
    run = tmp_path / "no_early_stop-x"
    run.mkdir()
    pl.DataFrame(
        {
            "task_id": ["t:0", "t:1"],
            "position": [0, 1],
            "candidates": [SPLIT, UNANIMOUS],
            "ex_bird": [True, True],
        }
    ).write_parquet(run / "predictions.parquet")
    out = subprocess.run(
        [
            sys.executable,
            str(_BENCH / "bench_stop_rules.py"),
            str(run),
            "--min-votes",
            "3",
            "4",
            "--share",
            "0.6",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "no_early_stop-x: 2 questions, 2 right as run"
    assert [line.split() for line in out[2:]] == [
        ["3", "0.60", "1", "0.500", "0"],
        ["4", "0.60", "2", "1.000", "1"],
    ]
