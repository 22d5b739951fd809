"""The selector benchmark's pairs (benchmarks/bench_selector.py): one decisive pair per question,
the largest right bucket against the largest wrong one, with their results from the traces."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import polars as pl

from pipelines.contracts import CandidateSQL, DatabaseRef, ExecutionResult, Task
from pipelines.trace import ReasoningTrace

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(_BENCH))  # the script imports its sibling _load
_spec = importlib.util.spec_from_file_location("bench_selector", _BENCH / "bench_selector.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_selector"] = bench
_spec.loader.exec_module(bench)


def _candidate(sql: str, h: str, right: bool, error: str | None = None) -> dict:
    return {
        "sql": sql,
        "producer": "first_wave/T=0.8",
        "hash": h,
        "error": error,
        "correct_bird": right,
        "correct_spider": right,
    }


def _run(tmp_path: Path, name: str, questions: dict[str, list[dict]]) -> Path:
    run = tmp_path / name
    (run / "traces").mkdir(parents=True)
    trace = run / "traces" / "traces.jsonl"
    with trace.open("w") as f:
        for task_id, cands in questions.items():
            record = ReasoningTrace(
                task_id=task_id,
                question=f"q {task_id}",
                db_id="d",
                candidates=tuple(
                    CandidateSQL(
                        sql=c["sql"],
                        producer=c["producer"],
                        exec_result=ExecutionResult(
                            rows=((1,),), columns=("n",), row_count=1, hash=c["hash"]
                        ),
                    )
                    for c in cands
                ),
            )
            f.write(record.model_dump_json() + "\n")
    pl.DataFrame(
        {
            "task_id": list(questions),
            "candidates": list(questions.values()),
            "trace_path": [f"{trace}#{t}" for t in questions],
        }
    ).write_parquet(run / "predictions.parquet")
    return run


def _tasks(*ids: str) -> dict[str, Task]:
    db = DatabaseRef(db_id="d", path="/nonexistent.sqlite")
    return {i: Task(task_id=i, question=f"q {i}", db=db) for i in ids}


def test_a_pair_is_the_largest_right_bucket_against_the_largest_wrong_one(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        "a",
        {
            "q1": [
                _candidate("SELECT 1", "h1", True),
                _candidate("SELECT 2", "h2", False),
                _candidate("SELECT 2 ", "h2", False),
                _candidate("SELECT 3", "h3", False),
                _candidate("SELECT x", "ERR:1", False, error="no such column"),
                _candidate("SELECT x", "ERR:1", False, error="no such column"),
                _candidate("SELECT x", "ERR:1", False, error="no such column"),
            ],
            "all_right": [_candidate("SELECT 1", "h1", True), _candidate("SELECT 1", "h1", True)],
            "all_wrong": [_candidate("SELECT 2", "h2", False)],
        },
    )
    pairs = bench.decisive_pairs([run], _tasks("q1", "all_right", "all_wrong"))
    assert [p.task.task_id for p in pairs] == ["q1"]
    assert pairs[0].right["sql"] == "SELECT 1"
    assert pairs[0].wrong["sql"] == "SELECT 2"  # two votes beat one; the errors are no answer
    assert pairs[0].wrong["result"].hash == "h2"


def test_one_pair_per_question_from_the_first_run_that_has_one(tmp_path: Path) -> None:
    first = _run(tmp_path, "a", {"q1": [_candidate("SELECT 1", "h1", True)]})
    second = _run(
        tmp_path,
        "b",
        {"q1": [_candidate("SELECT 1", "h1", True), _candidate("SELECT 9", "h9", False)]},
    )
    third = _run(
        tmp_path,
        "c",
        {"q1": [_candidate("SELECT 1", "h1", True), _candidate("SELECT 8", "h8", False)]},
    )
    pairs = bench.decisive_pairs([first, second, third], _tasks("q1"))
    assert len(pairs) == 1 and pairs[0].wrong["sql"] == "SELECT 9"


def test_questions_outside_the_benchmark_give_no_pair(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        "a",
        {"q1": [_candidate("SELECT 1", "h1", True), _candidate("SELECT 2", "h2", False)]},
    )
    assert bench.decisive_pairs([run], _tasks("other")) == []
