"""What the agentic mode's checks found, read from traces (benchmarks/bench_agentic_findings.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import polars as pl

from pipelines.trace import TraceRecorder

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(_BENCH))  # the script imports bench_halves beside it
_spec = importlib.util.spec_from_file_location(
    "bench_agentic_findings", _BENCH / "bench_agentic_findings.py"
)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def decisions(task_id: str, *steps: tuple) -> list[dict]:
    recorder = TraceRecorder(task_id, "q", "claims")
    for label, stage, features in steps:
        recorder.decide(label, stage, **features)
    return [d.model_dump() for d in recorder.freeze().decisions]


def test_findings_are_counted_where_they_were_caught_and_cleared_by_the_next_attempt():
    traces = {
        "c:0": decisions(
            "c:0",
            (
                "agentic.repair_in_place",
                "attempt_1",
                {"error_class": "unnest_missing", "source": "nested_paths"},
            ),
            ("agentic.rewrite", "attempt_2", {"rewriter": "identifier_casing"}),
            ("agentic.accept", "attempt_2", {"rows": 1}),
        ),
        "c:2": decisions(
            "c:2",
            (
                "agentic.repair_in_place",
                "attempt_1",
                {"error_class": "column_not_found", "source": "sqlite"},
            ),
            (
                "agentic.repair_in_place",
                "attempt_2",
                {"error_class": "column_not_found", "source": "sqlite"},
            ),
            ("agentic.fallback_last", "attempt_2", {}),
        ),
        "c:4": decisions("c:4", ("agentic.accept", "attempt_1", {"rows": 3})),
    }
    frame = pl.DataFrame({"task_id": ["c:0", "c:2", "c:4"], "ex_bird": [True, False, True]})

    text = "\n".join(bench.summarise(frame, traces))

    assert "accepted, first attempt: 1/1" in text
    assert "accepted after repairs: 1/1" in text
    assert "fallback: 0/1" in text
    assert "errors caught before execution 1, by the engine 2 (catch rate 0.33)" in text
    assert "unnest_missing | before execution | 1 | 1 | 0" in text
    assert "column_not_found | engine | 2 | 0 | 1" in text  # met again, then the last attempt
    assert "identifier_casing 1 (1 questions)" in text


def test_a_finding_source_names_where_it_was_caught():
    assert bench.where("duckdb") == "engine"
    assert bench.where("result") == "result"
    assert bench.where("plan_verifier") == "verifier"
    assert bench.where("semantic_validator") == "validator"
    assert bench.where("list_column_tables") == "before execution"
