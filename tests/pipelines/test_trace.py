"""ReasoningTrace, its recorder and sinks."""

from __future__ import annotations

import logging
import time

from core.types import Usage
from pipelines.agents.types import Context, FixAttempt
from pipelines.contracts import CellHit, Prediction
from pipelines.trace import (
    AgentEvent,
    JsonlTraceSink,
    ReasoningTrace,
    SafeSink,
    TraceRecorder,
    read_traces,
    retrieval_precision,
)


def event(surface, ok):
    return AgentEvent(
        name="x", surface=surface, task_id="t", start_unix_s=0.0, duration_s=0.1, ok=ok
    )


def test_recorder_freezes_decisions_and_degradation():
    before = time.time()
    rec = TraceRecorder("t", "q", "db")
    assert before <= rec.freeze().started_unix_s <= time.time()  # wall clock, for MLflow spans
    rec.decide("router.widen", "router", tier="wide")
    assert not rec.freeze().degraded
    rec.decide("selector_failed", "l3", degradation=True, failed=2)
    trace = rec.freeze(Prediction(task_id="t", sql="SELECT 1", usage=Usage(calls=3)))
    assert trace.degraded and trace.degradation_reasons == ("selector_failed",)
    assert trace.chosen_sql == "SELECT 1" and trace.usage.calls == 3


def test_recent_fixes_are_per_generator_family():
    rec = TraceRecorder("t", "q", "db")
    rec.fixes += [
        FixAttempt(
            producer="icl/cot/T=0.2",
            pass_no=1,
            error_before="e",
            sql_before="a",
            sql_after="b",
            error_after="e2",
        ),
        FixAttempt(
            producer="reasoning/T=0.2", pass_no=1, error_before="e", sql_before="a", sql_after="c"
        ),
    ]
    assert [f.sql_after for f in rec.recent_fixes("icl/cot/T=1")] == ["b"]


def test_retrieval_precision_against_gold():
    hits = (
        CellHit(table="t", column="c", value="France", score=1, source="vector"),
        CellHit(table="t", column="c", value="Spain", score=1, source="vector"),
    )
    assert retrieval_precision(Context(cell_hits=hits), "SELECT * FROM t WHERE c = 'France'") == 0.5
    assert retrieval_precision(Context(cell_hits=hits), None) is None
    assert retrieval_precision(Context(), "SELECT 1") is None


def test_jsonl_round_trip(tmp_path):
    sink = JsonlTraceSink(tmp_path / "deep" / "dir")
    trace = ReasoningTrace(task_id="t", question="q", db_id="d", events=(event("cognitive", True),))
    sink.write(trace)
    sink.write(trace)
    assert read_traces(sink.traces_path) == [trace, trace]
    assert len(sink.events_path.read_text().splitlines()) == 2


def test_safe_sink_warns_once_and_keeps_going(caplog):
    class Broken:
        calls = 0

        def write(self, trace):
            Broken.calls += 1
            raise ConnectionError("tracking server unreachable")

        def close(self):
            raise ConnectionError("still unreachable")

    sink = SafeSink(Broken())
    trace = ReasoningTrace(task_id="t", question="q", db_id="d")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            sink.write(trace)
        sink.close()
    assert Broken.calls == 3 and sink.failures == 3
    assert len([r for r in caplog.records if "unreachable" in r.getMessage()]) == 1
