"""Per-surface metrics over a run's reasoning traces."""

import pytest

from eval.metrics.traces import derive_metrics
from pipelines.agents.types import RevisionDelta
from pipelines.trace import AgentEvent, ReasoningTrace


def event(surface, ok):
    return AgentEvent(
        name="x", surface=surface, task_id="t", start_unix_s=0.0, duration_s=0.1, ok=ok
    )


def test_derived_metrics():
    traces = [
        ReasoningTrace(
            task_id="1",
            question="q",
            db_id="d",
            degraded=True,
            retrieval_precision=1.0,
            events=(
                event("operational", True),
                event("operational", False),
                event("cognitive", False),
            ),
            revisions=(RevisionDelta(bucket_hash="b", before_hash="b", after_hash="c"),),
        ),
        ReasoningTrace(
            task_id="2",
            question="q",
            db_id="d",
            retrieval_precision=0.0,
            events=(event("operational", True),),
            revisions=(
                RevisionDelta(bucket_hash="b", before_hash="b", after_hash="b"),
                RevisionDelta(bucket_hash="b", before_hash="b", after_hash=None),
            ),
        ),
    ]
    m = derive_metrics(traces)
    assert m.tool_call_success_rate == pytest.approx(2 / 3)
    assert (
        m.retrieval_precision == 0.5
        and m.critic_adherence_rate == pytest.approx(1 / 3)
        and m.degraded_rate == 0.5
    )
    assert derive_metrics([]).degraded_rate is None


def test_only_measured_rates_become_mlflow_figures():
    trace = ReasoningTrace(
        task_id="1", question="q", db_id="d", events=(event("operational", True),)
    )
    assert derive_metrics([trace]).figures() == {
        "trace/tool_call_success_rate": 1.0,
        "trace/degraded_rate": 0.0,
    }
