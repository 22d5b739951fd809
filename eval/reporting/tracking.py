"""MLflow logging: one run per configuration, found again by its key so a resumed sweep updates it.

    log_run(RunLog(tracking_uri="sqlite:///runs/mlflow.db", experiment="ablation",
                   run_name="no_icl", run_key=<config hash>, params=configuration.params,
                   metrics=result.metrics(),
                   artifacts={"predictions": [parquet, predict_dev.json], "report": [...]}))
      ──► experiment (created with its artifacts beside the SQLite file) ──► run ──► TrackedRun
    log_traces(tracked, traces, answered_by)   ──► one MLflow trace per question, in that run:
      root span "task <task_id>" (question, db, chosen SQL, answered_by) ─┬─ span per AgentEvent
                                                                          └─ ... (timing, tokens)
    experiment_runs("sqlite:///runs/mlflow.db", "ablation") ──► polars frame, newest run first

Any tracking URI works (an ``http://`` MLflow server too); MLflow 3.17 refuses a bare file store,
hence SQLite by default.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mlflow
import polars as pl
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from mlflow.utils.time import get_current_time_millis
from pydantic import Field

from core.types import Frozen
from eval.errors import EvalError
from pipelines.trace import ReasoningTrace

RUN_KEY_TAG = "scale_analytics.run_key"
TASK_ID_TAG = "scale_analytics.task_id"  # on each MLflow trace: the question it traces
TRACE_HASH_TAG = "scale_analytics.trace_hash"  # which ReasoningTrace it was written from
_BATCH = 100  # MLflow's limit of params per log_batch call
# A new SQLite backend announces its table creation and migrations at INFO on stderr: noise in
# a run's output (make demo's first run printed two such lines between its progress bars).
logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)


class ExperimentNotFound(EvalError):
    """No MLflow experiment of that name at the tracking URI."""


class RunLog(Frozen):
    """Everything logged for one configuration."""

    tracking_uri: str
    experiment: str
    run_name: str
    run_key: str  # identity of the configuration: the same key reuses the same MLflow run
    params: dict[str, str] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)
    tags: dict[str, str] = Field(default_factory=dict)
    artifacts: dict[str, tuple[str, ...]] = Field(
        default_factory=dict
    )  # artifact dir -> local files


class TrackedRun(Frozen):
    run_id: str
    experiment_id: str
    tracking_uri: str
    artifact_uri: str


def default_artifact_location(tracking_uri: str) -> str | None:
    """Beside a local SQLite store (``runs/mlartifacts``); the server's choice otherwise."""
    if not tracking_uri.startswith("sqlite:///"):
        return None
    db_path = Path(tracking_uri.removeprefix("sqlite:///"))
    return (db_path.parent.resolve() / "mlartifacts").as_uri()


def _client(tracking_uri: str) -> MlflowClient:
    if tracking_uri.startswith("sqlite:///"):
        Path(tracking_uri.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    return MlflowClient(tracking_uri=tracking_uri)


def _experiment_id(client: MlflowClient, name: str, tracking_uri: str) -> str:
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    return client.create_experiment(name, artifact_location=default_artifact_location(tracking_uri))


def _chunks(items: list[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(items), _BATCH):
        yield items[start : start + _BATCH]


def log_run(log: RunLog) -> TrackedRun:
    """Create (or reopen, by ``run_key``) the configuration's run and log everything to it."""
    client = _client(log.tracking_uri)
    experiment_id = _experiment_id(client, log.experiment, log.tracking_uri)
    existing = client.search_runs(
        [experiment_id], filter_string=f"tags.`{RUN_KEY_TAG}` = '{log.run_key}'", max_results=1
    )
    tags = {RUN_KEY_TAG: log.run_key, **log.tags}
    if existing:
        run = client.get_run(existing[0].info.run_id)
        client.update_run(run.info.run_id, status="RUNNING")
    else:
        run = client.create_run(experiment_id, run_name=log.run_name, tags=tags)
    run_id = run.info.run_id
    logged = run.data.params
    params = [Param(k, v) for k, v in log.params.items() if logged.get(k) != v]
    now = get_current_time_millis()
    metrics = [Metric(k, float(v), now, 0) for k, v in log.metrics.items()]
    for chunk in _chunks(params):
        client.log_batch(run_id, params=chunk)
    for chunk in _chunks(metrics):
        client.log_batch(run_id, metrics=chunk)
    client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
    for artifact_dir, paths in log.artifacts.items():
        for path in map(Path, paths):
            if path.is_dir():
                client.log_artifacts(run_id, str(path), artifact_dir)
            elif path.exists():
                client.log_artifact(run_id, str(path), artifact_dir)
    client.set_terminated(run_id, status="FINISHED")
    return TrackedRun(
        run_id=run_id,
        experiment_id=experiment_id,
        tracking_uri=log.tracking_uri,
        artifact_uri=client.get_run(run_id).info.artifact_uri,
    )


def experiment_runs(tracking_uri: str, experiment: str) -> pl.DataFrame:
    """Finished runs of ``experiment``, newest first: run_name, run_id, run_dir (where its
    predictions are, when the run was made here) and one column per metric."""
    client = _client(tracking_uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise ExperimentNotFound(f"no MLflow experiment named {experiment!r} at {tracking_uri}")
    runs = client.search_runs(
        [found.experiment_id],
        filter_string="attributes.status = 'FINISHED'",
        order_by=["attributes.start_time DESC"],
        max_results=10_000,
    )
    rows = [
        {
            "run_name": run.info.run_name,
            "run_id": run.info.run_id,
            "run_dir": run.data.tags.get("run_dir"),
            **run.data.metrics,
        }
        for run in runs
    ]
    if not rows:
        return pl.DataFrame(
            schema={"run_name": pl.String, "run_id": pl.String, "run_dir": pl.String}
        )
    return pl.DataFrame(rows, infer_schema_length=None)


# --- traces ---------------------------------------------------------------------------------

_SPAN_TYPES = {"cognitive": "LLM", "operational": "TOOL", "contextual": "RETRIEVER"}
# MLflow's documented export knobs, applied while the traces are written unless already set: one
# export worker and large span batches, so writers do not queue on a SQLite store's single lock
# (108 traces of 11 spans: about 4 s instead of 8).
_EXPORT_ENV = {
    "MLFLOW_ASYNC_TRACE_LOGGING_MAX_WORKERS": "1",
    "MLFLOW_ASYNC_TRACE_LOGGING_MAX_SPAN_BATCH_SIZE": "512",
}


def log_traces(
    tracked: TrackedRun,
    traces: Sequence[ReasoningTrace],
    answered_by: Mapping[str, str] | None = None,
) -> int:
    """Write each question's trace into ``tracked``'s run as an MLflow trace; return how many.

    A question already logged from the same trace is skipped, so a resumed sweep adds only its
    new questions; one answered again (``sweep.retry``) has its old MLflow trace replaced.
    ``answered_by``: task id -> the pipeline step that gave the answer (``Prediction.answered_by``).

        log_traces(tracked, read_traces("runs/x/traces/ab12cd34/traces.jsonl"))   # -> 12
    """
    client = _client(tracked.tracking_uri)
    logged = _logged_traces(client, tracked)
    todo: list[tuple[ReasoningTrace, str]] = []
    stale: list[str] = []
    for trace in traces:
        digest = hashlib.sha256(trace.model_dump_json().encode()).hexdigest()[:16]
        previous = logged.get(trace.task_id)
        if previous is not None and previous[1] == digest:
            continue
        if previous is not None:
            stale.append(previous[0])
        todo.append((trace, digest))
    for chunk in _chunks(stale):
        client.delete_traces(tracked.experiment_id, trace_ids=chunk)
    if todo:
        with _tracing_into(tracked.tracking_uri):
            for trace, digest in todo:
                by = (answered_by or {}).get(trace.task_id) or ""
                _write_trace(client, tracked, trace, digest, by)
    return len(todo)


def _logged_traces(client: MlflowClient, tracked: TrackedRun) -> dict[str, tuple[str, str]]:
    """task id -> (MLflow trace id, trace hash) of the traces already in the run."""
    found: dict[str, tuple[str, str]] = {}
    token = None
    while True:
        page = client.search_traces(
            locations=[tracked.experiment_id],
            run_id=tracked.run_id,
            include_spans=False,
            max_results=500,
            page_token=token,
        )
        for trace in page:
            if task_id := trace.info.tags.get(TASK_ID_TAG):
                found[task_id] = (trace.info.trace_id, trace.info.tags.get(TRACE_HASH_TAG, ""))
        token = page.token
        if not token:
            return found


@contextmanager
def _tracing_into(tracking_uri: str) -> Iterator[None]:
    """MLflow's tracer exports to the global tracking URI: point it at ``tracking_uri`` while the
    traces are written, wait for the export, then put back what was there."""
    previous = mlflow.get_tracking_uri() if mlflow.is_tracking_uri_set() else None
    added = [key for key in _EXPORT_ENV if key not in os.environ]
    os.environ.update({key: _EXPORT_ENV[key] for key in added})
    mlflow.set_tracking_uri(tracking_uri)
    try:
        yield
    finally:
        mlflow.flush_trace_async_logging()
        mlflow.set_tracking_uri(previous)
        for key in added:
            os.environ.pop(key, None)


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _write_trace(
    client: MlflowClient, tracked: TrackedRun, trace: ReasoningTrace, digest: str, answered_by: str
) -> None:
    """Root span = the question; one child span per agent call, at the times it ran."""
    event_starts = [e.start_unix_s for e in trace.events]
    started = trace.started_unix_s or min(event_starts, default=time.time() - trace.latency_s)
    ended = max([started + trace.latency_s, *(e.start_unix_s + e.duration_s for e in trace.events)])
    root = client.start_trace(
        name=f"task {trace.task_id}",
        span_type="CHAIN",
        inputs={"question": trace.question, "db_id": trace.db_id},
        attributes={
            TASK_ID_TAG: trace.task_id,
            "scale_analytics.db_id": trace.db_id,
            "scale_analytics.chosen_sql": trace.chosen_sql,
            "scale_analytics.chosen_producer": trace.chosen_producer,
            "scale_analytics.answered_by": answered_by,
            "scale_analytics.candidates": len(trace.candidates),
            "scale_analytics.degraded": trace.degraded,
            "scale_analytics.degradation_reasons": list(trace.degradation_reasons),
            "scale_analytics.decisions": [d.label for d in trace.decisions],
            "scale_analytics.route_tier": trace.route.tier if trace.route else "",
            "scale_analytics.calls": trace.usage.calls,
            "scale_analytics.prompt_tokens": trace.usage.prompt_tokens,
            "scale_analytics.completion_tokens": trace.usage.completion_tokens,
            "scale_analytics.latency_s": trace.latency_s,
        },
        tags={TASK_ID_TAG: trace.task_id, TRACE_HASH_TAG: digest},
        experiment_id=tracked.experiment_id,
        start_time_ns=_ns(started),
        run_id=tracked.run_id,
    )
    for event in trace.events:
        span = client.start_span(
            event.name,
            trace_id=root.trace_id,
            parent_id=root.span_id,
            span_type=_SPAN_TYPES[event.surface],
            attributes={
                **{k: v for k, v in event.attributes.items() if v is not None},
                "scale_analytics.surface": event.surface,
            },
            start_time_ns=_ns(event.start_unix_s),
        )
        client.end_span(
            root.trace_id,
            span.span_id,
            status="OK" if event.ok else "ERROR",
            end_time_ns=_ns(event.start_unix_s + event.duration_s),
        )
    client.end_trace(
        root.trace_id,
        outputs={"sql": trace.chosen_sql},
        status="OK" if trace.chosen_sql else "ERROR",
        end_time_ns=_ns(ended),
    )
