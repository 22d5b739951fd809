"""One configuration, end to end: sweep, then predictions, report and MLflow run.

    cfg ──► run dir (runs/<experiment>/<label>-<config hash>)   resumes whatever is there
        ──► ensure_indexes (L0 indexes of the databases this invocation runs, built when missing)
        ──► run_sweep (Ray Data over the benchmark's tasks; with eval.judge, each answer judged)
                                                               ──► predictions.parquet
        ──► exports/ (JSONL, official BIRD / Spider files), report/ (report.md + plots)
        ──► MLflow: params = flattened config, metrics, artifacts,
                    one trace per answered question (sweep.mlflow_traces) ──► RunOutcome

The run directory is named by a hash of the configuration's *content* (model, scaling,
benchmark, pipeline, seed, and the judge when one is on), so rerunning the same command resumes
the same directory, and changing any of those starts a fresh one. Resource shapes (``sweep``),
paths, the experiment and prices (``prices``, each slot's ``price``) are not part of the hash:
resuming on a bigger machine continues the same run, and a question keeps the cost it was
answered at. Nor is the
subset (``benchmark.limit/stride/offset``): predictions are per question, so a run grows —
``benchmark.limit=12`` first, the whole subset later, the first 12 never recomputed — and its
metrics, exports and report always cover exactly the questions of this invocation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import polars as pl
from mlflow.exceptions import MlflowException
from omegaconf import DictConfig, OmegaConf

from core.config import section
from core.types import Frozen
from eval.grading.exports import export_predictions
from eval.grading.judge import ConfiguredJudge
from eval.loaders import LoadedBenchmark
from eval.loaders.common import SUBSET_FIELDS
from eval.reporting.costs import reference_costs, slot_prices
from eval.reporting.report import (
    ex_by_difficulty,
    ex_by_sds,
    question_verdicts,
    run_metrics,
    write_run_report,
)
from eval.reporting.tracking import RunLog, TrackedRun, flatten, log_run, log_traces
from eval.settings import EvalSettings
from eval.sweep.config import SweepSettings
from eval.sweep.driver import SweepResult, run_sweep
from eval.sweep.grading import Executor
from eval.sweep.services import sweep_services
from eval.sweep.store import RunStore
from eval.sweep.worker import PipelineFactory
from models.budget import PriceList
from models.config import ModelSettings
from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder.ensure import RetrievalStatus, ensure_indexes
from eval.metrics.traces import derive_metrics
from pipelines.trace import ReasoningTrace, read_traces

log = logging.getLogger(__name__)

_NOT_IDENTITY = ("paths", "sweep", "experiment", "log_level", "serve", "prices")
# Beside those sections, keys that are not part of a run's identity: they may change when it
# resumes, so MLflow gets them as tags, not as (immutable) params.
_MUTABLE_PARAMS = (
    *(f"benchmark.{key}" for key in SUBSET_FIELDS),
    "model.response_cache",
)
_SLOT_PRICE = re.compile(r"model\.slots\.[^.]+\.price\.")


def _not_identity(cfg: DictConfig) -> tuple[str, ...]:
    # A judge adds its verdicts to every row, so a run with one is another run; without one the
    # eval section computes nothing and leaves the hash as it is.
    judged = OmegaConf.select(cfg, "eval.judge") is not None
    return _NOT_IDENTITY if judged else (*_NOT_IDENTITY, "eval")


def _mutable(key: str, not_identity: tuple[str, ...]) -> bool:
    return (
        key in _MUTABLE_PARAMS
        or key.split(".", 1)[0] in not_identity
        or _SLOT_PRICE.match(key) is not None
    )


Services = Callable[
    [DictConfig, SweepSettings, str | None],
    AbstractContextManager[tuple[PipelineFactory, Executor]],
]


class RunOutcome(Frozen):
    label: str
    run_dir: str
    sweep: SweepResult
    metrics: dict[str, float]
    ex_table: tuple[dict[str, Any], ...]  # EX by difficulty, last row "all"
    sds_table: tuple[dict[str, Any], ...] = ()  # EX by SDS bucket, for a benchmark that rates them
    report: str
    tracked: TrackedRun
    retrieval: str = ""  # the retrieval status line, e.g. "retrieval: off (examples: ...)"
    retrieval_expected: bool = False  # the configured pipeline retrieves (not single pass)
    pricing: str = ""  # the slots' prices, e.g. "default $0.0892/h"
    reference: str | None = None  # the hosted list price the run's tokens are also priced at
    verdicts: dict[str, bool] = {}  # task id -> EX (BIRD) of each scored question, for pairing
    task_ids: tuple[str, ...] = ()  # the questions of this invocation answered in the run dir
    # db id -> the settings the pipeline chose for it (Prediction.chosen)
    chosen: dict[str, str] = {}


def chosen_by_database(frame: pl.DataFrame) -> dict[str, str]:
    """db id -> the settings chosen for its questions (the latest answered question's, in
    benchmark order); databases whose questions recorded none are left out."""
    if "chosen" not in frame.columns:
        return {}
    rows = frame.select("db_id", "chosen").drop_nulls().filter(pl.col("chosen") != "")
    return dict(zip(rows["db_id"].to_list(), rows["chosen"].to_list()))


def config_identity(cfg: DictConfig) -> str:
    """Hash of what the configuration computes (not where or with how many actors)."""
    excluded = _not_identity(cfg)
    content = {
        k: v for k, v in OmegaConf.to_container(cfg, resolve=True).items() if k not in excluded
    }  # type: ignore[union-attr]
    content.get("pipeline", {}).pop("trace", None)  # where traces go is not what is computed
    cheatsheet = content.get("pipeline", {}).get("cheatsheet")
    if cheatsheet:  # where the learned rules are kept is not what is computed; whether they are is
        cheatsheet["root"] = cheatsheet.get("root") is not None
    for key in SUBSET_FIELDS:
        content.get("benchmark", {}).pop(key, None)
    content.get("model", {}).pop("response_cache", None)  # same requests, same distribution
    for slot in content.get("model", {}).get("slots", {}).values():
        slot.pop("price", None)  # what a call costs, not what it computes
    canonical = json.dumps(content, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def run_dir_for(cfg: DictConfig, label: str, identity: str) -> Path:
    explicit = OmegaConf.select(cfg, "sweep.run_dir")
    if explicit:
        return Path(explicit)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_")[:80] or "run"
    return Path(cfg.paths.runs) / str(cfg.experiment.name) / f"{slug}-{identity}"


def run_configuration(
    cfg: DictConfig,
    label: str,
    benchmark: LoadedBenchmark,
    *,
    services: Services = sweep_services,
    ensure: Callable[[DictConfig, list[DatabaseRef]], RetrievalStatus] = ensure_indexes,
) -> RunOutcome:
    """Run (or resume) ``cfg`` on ``benchmark``'s tasks and log it; Ray must be up.

    The L0 indexes of the databases of ``benchmark.tasks`` (the subset this invocation runs) are
    built first when missing or stale (``ensure``); what is off is said in the report and MLflow.
    """
    pricing = slot_prices(section(cfg, "model", ModelSettings))
    reference = section(cfg, "prices", PriceList).reference_price()
    evaluation = section(cfg, "eval", EvalSettings)
    judge = (
        ConfiguredJudge(OmegaConf.to_container(cfg.model, resolve=True), evaluation)  # type: ignore[arg-type]
        if evaluation.judge is not None
        else None
    )
    retrieval = ensure(cfg, [task.db for task in benchmark.tasks])
    sweep = SweepSettings.from_cfg(cfg)
    identity = config_identity(cfg)
    run_dir = run_dir_for(cfg, label, identity)
    store = RunStore.open(run_dir, {"config_hash": identity}, OmegaConf.to_yaml(cfg, resolve=True))
    store.write_skipped(benchmark.skipped)
    trace_dir = run_dir / "traces"
    with services(cfg, sweep, str(trace_dir)) as (factory, sandbox):
        result = run_sweep(
            benchmark.tasks,
            store=store,
            factory=factory,
            sandbox=sandbox,
            config=sweep,
            label=label,
            judge=judge,
        )
    in_scope = [task.task_id for task in benchmark.tasks]
    frame = store.compact().filter(pl.col("task_id").is_in(in_scope))
    traces = _latest_traces(trace_dir, frame)
    metrics = run_metrics(frame, skipped=len(benchmark.skipped)) | _trace_metrics(traces)
    if reference is not None:
        metrics |= reference_costs(metrics, reference[1])
    if result.answered:
        metrics["questions_per_minute"] = 60 * result.answered / result.elapsed_s
    exports = export_predictions(frame, benchmark, run_dir / "exports")
    report_files = write_run_report(
        frame,
        run_dir / "report",
        title=label,
        skipped=len(benchmark.skipped),
        retrieval=retrieval.summary(),
        retrieval_expected=bool(retrieval.needed),
        pricing=pricing,
        reference=reference,
    )
    flat = flatten(OmegaConf.to_container(cfg, resolve=True))  # type: ignore[arg-type]
    not_identity = _not_identity(cfg)
    chosen = chosen_by_database(frame)
    tracked = log_run(
        RunLog(
            tracking_uri=str(cfg.experiment.tracking_uri),
            experiment=str(cfg.experiment.name),
            run_name=label,
            run_key=identity,
            params={k: v for k, v in flat.items() if not _mutable(k, not_identity)},
            metrics=metrics,
            tags={
                "benchmark": str(cfg.benchmark.name),
                "run_dir": str(run_dir),
                # tags, not params: an index built later changes them when the run resumes
                "retrieval": retrieval.label,
                "retrieval.status": retrieval.summary(),
                **{f"chosen.{db}": settings for db, settings in chosen.items()},
                **{k: str(v) for k, v in flat.items() if _mutable(k, not_identity)},
            },
            artifacts={
                "predictions": (str(store.predictions_path), *map(str, exports)),
                "report": tuple(map(str, report_files)),
                "config": (str(run_dir / "config.yaml"), str(run_dir / "skipped.jsonl")),
                "traces": (str(trace_dir),),
            },
        )
    )
    if sweep.mlflow_traces and traces:
        answered_by = dict(zip(frame["task_id"].to_list(), frame["answered_by"].to_list()))
        try:
            written = log_traces(tracked, traces, answered_by)
        except MlflowException as exc:
            log.warning("MLflow took no traces (%s); sweep.mlflow_traces=false skips them", exc)
        else:
            log.info("%d question traces written to MLflow run %s", written, tracked.run_id)
    return RunOutcome(
        label=label,
        run_dir=str(run_dir),
        sweep=result,
        metrics=metrics,
        ex_table=tuple(ex_by_difficulty(frame).to_dicts()),
        sds_table=tuple(ex_by_sds(frame).to_dicts()),
        report=str(report_files[0]),
        tracked=tracked,
        retrieval=retrieval.summary(),
        retrieval_expected=bool(retrieval.needed),
        pricing=pricing,
        reference=reference[0] if reference else None,
        verdicts=question_verdicts(frame),
        chosen=chosen,
        task_ids=tuple(frame.get_column("task_id").to_list()),
    )


def _latest_traces(trace_dir: Path, frame: pl.DataFrame) -> list[ReasoningTrace]:
    """The trace of each question of ``frame``: the latest started when it was answered again."""
    answered = set(frame.get_column("task_id").to_list())
    latest: dict[str, ReasoningTrace] = {}
    for path in sorted(trace_dir.glob("**/traces.jsonl")):
        for trace in read_traces(path):
            known = latest.get(trace.task_id)
            if trace.task_id in answered and (
                known is None or trace.started_unix_s >= known.started_unix_s
            ):
                latest[trace.task_id] = trace
    return list(latest.values())


def _trace_metrics(traces: list[ReasoningTrace]) -> dict[str, float]:
    """Per-surface metrics of the traces of this run's answered questions."""
    if not traces:
        return {}
    derived = derive_metrics(traces).model_dump(exclude={"tasks"})
    return {f"trace/{name}": value for name, value in derived.items() if value is not None}
