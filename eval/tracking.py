"""MLflow logging: one run per configuration, found again by its key so a resumed sweep updates it.

    log_run(RunLog(tracking_uri="sqlite:///runs/mlflow.db", experiment="ablation",
                   run_name="no_icl", run_key=<config hash>, params=flatten(cfg), metrics=…,
                   artifacts={"predictions": [parquet, predict_dev.json], "report": [...]}))
      ──► experiment (created with its artifacts beside the SQLite file) ──► run ──► TrackedRun
    experiment_runs("sqlite:///runs/mlflow.db", "ablation") ──► polars frame, newest run first

Any tracking URI works (an ``http://`` MLflow server too); MLflow 3.17 refuses a bare file store,
hence SQLite by default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
from mlflow.entities import Metric, Param, RunTag
from mlflow.tracking import MlflowClient
from mlflow.utils.time import get_current_time_millis
from pydantic import Field

from core.types import Frozen
from eval.errors import EvalError

RUN_KEY_TAG = "scale_analytics.run_key"
_BATCH = 100  # MLflow's limit of params per log_batch call
_PARAM_VALUE_LIMIT = 6000


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


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"scaling.k_icl": "2", ...}``: a nested config as MLflow params (lists stay one value).

    >>> flatten({"scaling": {"k_icl": 2, "icl_strategies": ["direct", "cot"]}})
    {'scaling.k_icl': '2', 'scaling.icl_strategies': "['direct', 'cot']"}
    """
    flat: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = str(value)[:_PARAM_VALUE_LIMIT]
    return flat


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
    """Finished runs of ``experiment``, newest first: run_name, run_id, and one column per metric."""
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
        {"run_name": run.info.run_name, "run_id": run.info.run_id, **run.data.metrics}
        for run in runs
    ]
    if not rows:
        return pl.DataFrame(schema={"run_name": pl.String, "run_id": pl.String})
    return pl.DataFrame(rows, infer_schema_length=None)
