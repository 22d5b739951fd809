"""The likelihood benchmark's rules (benchmarks/bench_likelihood.py), on scored pools: no model."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import polars as pl

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(_BENCH))  # the script imports its sibling _load
_spec = importlib.util.spec_from_file_location("bench_likelihood", _BENCH / "bench_likelihood.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def cand(sql: str, h: str, right: bool, producer: str = "first_wave/T=0.8", error=None) -> dict:
    return {"sql": sql, "producer": producer, "hash": h, "error": error, "correct_bird": right}


# Three votes for a wrong answer the model finds unlikely, two for a right one it finds likely.
POOL = [
    cand("SELECT a", "w", False, producer="first_wave/greedy"),
    cand("SELECT a", "w", False),
    cand("SELECT a ", "w", False),
    cand("SELECT b", "r", True),
    cand("SELECT b", "r", True),
    cand("SELECT c", "e", False, error="no such column: c"),
]
SCORES = {"SELECT a": (-9.0, 3), "SELECT a ": (-12.0, 3), "SELECT b": (-1.5, 3)}


def test_the_vote_picks_the_majority_and_likelihood_rules_the_likely_answer():
    picks = bench.right_picks([(POOL, SCORES)])
    assert picks["vote (ties: greedy)"] == 0
    assert picks["max sum log-prob"] == 1 and picks["max mean log-prob"] == 1
    assert picks["votes + mean log-prob"] == 1  # 2 - 0.5 against 3 - 3


def test_a_bucket_keeps_its_best_scored_sql_and_errors_are_not_buckets():
    pool = {b["right"]: b for b in bench.buckets(POOL, SCORES)}
    assert set(pool) == {True, False} and pool[False]["votes"] == 3 and pool[False]["greedy"]
    assert pool[False]["sum"] == -9.0 and pool[False]["mean"] == -3.0


def test_only_questions_with_a_right_and_a_wrong_result_are_contested():
    frame = pl.DataFrame(
        {
            "task_id": ["a", "b", "c"],
            "candidates": [POOL, POOL[:3], [*POOL[3:5], POOL[5]]],
        }
    )
    assert [r["task_id"] for r in bench.contested(frame)] == ["a"]
