"""Per-surface metrics over the reasoning traces of a run's answered questions.

traces.jsonl ──► latest_traces (one per answered question) ──► derive_metrics ──► TraceMetrics
                                                 (MLflow: trace/tool_call_success_rate, ...)

>>> from pipelines.trace import ReasoningTrace, read_traces
>>> derive_metrics([ReasoningTrace(task_id="t", question="q", db_id="d", degraded=True)]).figures()
{'trace/degraded_rate': 1.0}
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from core.types import Frozen
from pipelines.trace import ReasoningTrace, read_traces


class TraceMetrics(Frozen):
    """Per-surface metrics over many traces (None when nothing was measured)."""

    tasks: int
    tool_call_success_rate: float | None  # operational events that succeeded
    retrieval_precision: float | None  # mean over tasks with gold and cell hits
    # edits after a "needs change" critique that changed the result
    critic_adherence_rate: float | None
    degraded_rate: float | None

    def figures(self) -> dict[str, float]:
        """The measured rates under their MLflow names (``trace/degraded_rate``, ...)."""
        rates = self.model_dump(exclude={"tasks"})
        return {f"trace/{name}": value for name, value in rates.items() if value is not None}


def derive_metrics(traces: Sequence[ReasoningTrace]) -> TraceMetrics:
    def rate(hits: int, total: int) -> float | None:
        return hits / total if total else None

    operational = [e for t in traces for e in t.events if e.surface == "operational"]
    precisions = [t.retrieval_precision for t in traces if t.retrieval_precision is not None]
    revisions = [r for t in traces for r in t.revisions]
    return TraceMetrics(
        tasks=len(traces),
        tool_call_success_rate=rate(sum(e.ok for e in operational), len(operational)),
        retrieval_precision=sum(precisions) / len(precisions) if precisions else None,
        critic_adherence_rate=rate(sum(r.adhered for r in revisions), len(revisions)),
        degraded_rate=rate(sum(t.degraded for t in traces), len(traces)),
    )


def latest_traces(
    paths: Iterable[str | os.PathLike[str]], answered: set[str]
) -> list[ReasoningTrace]:
    """The trace of each ``answered`` question in the ``traces.jsonl`` files at ``paths``: the
    latest started when it was answered again."""
    latest: dict[str, ReasoningTrace] = {}
    for path in sorted(paths):
        for trace in read_traces(path):
            known = latest.get(trace.task_id)
            if trace.task_id in answered and (
                known is None or trace.started_unix_s >= known.started_unix_s
            ):
                latest[trace.task_id] = trace
    return list(latest.values())
