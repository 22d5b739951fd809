"""One configuration, end to end: sweep, then predictions, report and MLflow run.

    Configuration ──► run dir (runs/<experiment>/<label>-<config hash>)   resumes whatever is there
        ──► ensure_indexes (L0 indexes of the databases this invocation runs, built when missing;
            a URI storage: those published there that this driver has no copy of, fetched first)
        ──► SharedStorage: the live indexes, trace and cheatsheet directories every worker must
            reach on the run's storage (paths.storage); a worker that cannot fails its questions.
            A URI storage: the run directory fetched when this driver lacks it, the live indexes
            published; after the sweep the workers' traces fetched, then the run directory and
            MLflow's store published (eval/sweep/storage.py)
        ──► run_sweep (Ray Data over the benchmark's tasks; with eval.judge, each answer judged)
                                                               ──► predictions.parquet
        ──► run_result: every figure of the run, once ──► RunResult
        ──► exports/ (JSONL, official BIRD / Spider files), report/ (report.md + plots)
        ──► MLflow: params = flattened config, metrics, artifacts,
                    one trace per answered question (sweep.mlflow_traces) ──► RunOutcome

What makes a run's identity (its directory and MLflow run) is said in ``eval.experiments``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import polars as pl
from mlflow.exceptions import MlflowException
from omegaconf import DictConfig, OmegaConf

from core.types import Frozen
from eval.experiments import Configuration
from eval.grading.exports import export_predictions
from eval.grading.judge import ConfiguredJudge
from eval.loaders import LoadedBenchmark
from eval.metrics.traces import latest_traces
from eval.reporting.report import write_run_report
from eval.reporting.result import RunResult, run_result
from eval.reporting.retrieval import RetrievalUse
from eval.reporting.tracking import RunLog, TrackedRun, log_run, log_traces
from eval.sweep.cheatsheets import learned_root
from eval.sweep.config import STORAGE_UNREACHABLE, SweepSettings
from eval.sweep.driver import SweepResult, run_sweep
from eval.sweep.grading import Executor
from eval.sweep.services import sweep_services
from eval.sweep.storage import SharedStorage
from eval.sweep.store import RunStore
from eval.sweep.worker import PipelineFactory
from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder.ensure import RetrievalStatus, ensure_indexes, retrieval_needs

log = logging.getLogger(__name__)

Services = Callable[
    [DictConfig, SweepSettings, SharedStorage | None],
    AbstractContextManager[tuple[PipelineFactory, Executor]],
]


class RunOutcome(Frozen):
    """What one configuration's run produced, and where it is."""

    run_dir: str
    sweep: SweepResult
    result: RunResult
    report: str
    tracked: TrackedRun


def shared_storage(cfg: DictConfig, retrieval: RetrievalStatus, trace_dir: Path) -> SharedStorage:
    """What the run's workers must reach: the indexes live for this run, and the trace and
    cheatsheet directories, made here first (a worker never makes one: it would be its own).
    With a URI storage these are paths of the working copy, published there by this driver."""
    directories = [trace_dir]
    if (sheets := learned_root(cfg)) is not None:
        directories.append(Path(sheets))
    for directory in directories:
        directory.mkdir(parents=True, exist_ok=True)
    return SharedStorage(
        storage=str(cfg.paths.storage),
        working=str(cfg.paths.working),
        traces=str(trace_dir),
        indexes=retrieval.live_pointers(str(cfg.pipeline.index.root)),
        directories=tuple(map(str, directories)),
    )


def _wanted_indexes(cfg: DictConfig, dbs: list[DatabaseRef]) -> tuple[str, ...]:
    """The manifests of the indexes the configured pipeline queries for ``dbs``, live or not."""
    needs = retrieval_needs(cfg)
    if not (needs.cells or needs.examples):
        return ()
    cells = tuple({db.db_id: db for db in dbs}) if needs.cells else ()
    wanted = RetrievalStatus(cells=cells, examples=needs.examples)
    return wanted.live_pointers(str(cfg.pipeline.index.root))


def _sqlite_store(tracking_uri: str, storage: SharedStorage) -> Path | None:
    """MLflow's SQLite file when it lies in a URI storage's working copy (published with the
    run); None for a server's store, or one kept elsewhere."""
    if not (storage.remote and tracking_uri.startswith("sqlite:///")):
        return None
    path = Path(tracking_uri.removeprefix("sqlite:///"))
    return path if storage.holds(path) else None


def _say_unreachable(frame: pl.DataFrame) -> None:
    """One line for the questions failed because their worker's node could not reach storage."""
    failed = frame.filter(pl.col("degradation_reasons").list.contains(STORAGE_UNREACHABLE))
    if not failed.is_empty():
        log.error(
            "%d of %d questions were not answered: %s",
            failed.height,
            frame.height,
            failed.get_column("error").first(),
        )


def run_configuration(
    configuration: Configuration,
    benchmark: LoadedBenchmark,
    *,
    services: Services = sweep_services,
    ensure: Callable[[DictConfig, list[DatabaseRef]], RetrievalStatus] = ensure_indexes,
) -> RunOutcome:
    """Run (or resume) ``configuration`` on ``benchmark``'s tasks and log it; Ray must be up.

    The L0 indexes of the databases of ``benchmark.tasks`` (the subset this invocation runs) are
    built first when missing or stale (``ensure``); what is off is said in the report and MLflow.
    """
    cfg, label, run_dir = configuration.cfg, configuration.label, Path(configuration.run_dir)
    dbs = [task.db for task in benchmark.tasks]
    published = SharedStorage(storage=str(cfg.paths.storage), working=str(cfg.paths.working))
    published.adopt_indexes(_wanted_indexes(cfg, dbs))
    retrieval = ensure(cfg, dbs)
    trace_dir = run_dir / "traces"
    storage = shared_storage(cfg, retrieval, trace_dir)
    if not (run_dir / "run.json").exists():
        storage.fetch(run_dir)  # a run this driver lacks resumes from the storage's copy
    store = RunStore.open(
        run_dir, {"config_hash": configuration.identity}, OmegaConf.to_yaml(cfg, resolve=True)
    )
    store.write_skipped(benchmark.skipped)
    storage.publish_indexes()
    judge = (
        ConfiguredJudge(configuration.config["model"], configuration.evaluation)
        if configuration.evaluation.judge is not None
        else None
    )
    with services(cfg, configuration.sweep, storage) as (factory, sandbox):
        sweep = run_sweep(
            benchmark.tasks,
            store=store,
            factory=factory,
            sandbox=sandbox,
            config=configuration.sweep,
            label=label,
            judge=judge,
        )
    in_scope = [task.task_id for task in benchmark.tasks]
    frame = store.compact().filter(pl.col("task_id").is_in(in_scope))
    _say_unreachable(frame)
    storage.fetch(trace_dir)  # what workers on other nodes published
    traces = latest_traces(trace_dir.glob("**/traces.jsonl"), set(frame["task_id"].to_list()))
    result = run_result(
        frame,
        label=label,
        skipped=len(benchmark.skipped),
        traces=traces,
        retrieval=RetrievalUse(status=retrieval.summary(), expected=bool(retrieval.needed)),
        model=configuration.model,
        reference=configuration.prices.reference_price(),
        answered=sweep.answered,
        elapsed_s=sweep.elapsed_s,
    )
    exports = export_predictions(frame, benchmark, run_dir / "exports")
    report_files = write_run_report(result, run_dir / "report")
    mlflow_db = _sqlite_store(configuration.tracking_uri, storage)
    if mlflow_db is not None and not mlflow_db.exists():
        storage.fetch(mlflow_db)  # the runs logged before, by a driver elsewhere
    tracked = log_run(
        RunLog(
            tracking_uri=configuration.tracking_uri,
            experiment=configuration.experiment,
            run_name=label,
            run_key=configuration.identity,
            params=configuration.params,
            metrics=result.metrics(),
            tags={
                "benchmark": str(configuration.config["benchmark"]["name"]),
                "run_dir": str(run_dir),
                # tags, not params: an index built later changes them when the run resumes
                "retrieval": retrieval.label,
                "retrieval.status": retrieval.summary(),
                **{f"chosen.{db}": settings for db, settings in result.chosen.items()},
                **configuration.mutable_params,
            },
            artifacts={
                "predictions": (str(store.predictions_path), *map(str, exports)),
                "report": tuple(map(str, report_files)),
                "config": (str(run_dir / "config.yaml"), str(run_dir / "skipped.jsonl")),
                "traces": (str(trace_dir),),
            },
        )
    )
    if configuration.sweep.mlflow_traces and traces:
        answered_by = dict(zip(frame["task_id"].to_list(), frame["answered_by"].to_list()))
        try:
            written = log_traces(tracked, traces, answered_by)
        except MlflowException as exc:
            log.warning("MLflow took no traces (%s); sweep.mlflow_traces=false skips them", exc)
        else:
            log.info("%d question traces written to MLflow run %s", written, tracked.run_id)
    storage.publish(run_dir)
    if mlflow_db is not None:
        storage.publish(mlflow_db)
        artifacts = Path(tracked.artifact_uri.removeprefix("file://"))
        if storage.holds(artifacts):
            storage.publish(artifacts)
    return RunOutcome(
        run_dir=str(run_dir),
        sweep=sweep,
        result=result,
        report=str(report_files[0]),
        tracked=tracked,
    )
