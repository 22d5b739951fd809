"""Benchmark sweeps on Ray: pipeline worker actors over a benchmark's tasks, resumable Parquet.

    with ray_session(SweepConfig.from_cfg(cfg).ray), sweep_services(cfg, sweep, trace_dir) as (factory, sandbox):
        run_sweep(tasks, store=RunStore.open(run_dir, identity), factory=factory, sandbox=sandbox, config=sweep)

``eval.run.run_configuration`` wraps this with exports, the report and MLflow.
"""

from eval.sweep.config import RayInitConfig, SweepConfig
from eval.sweep.driver import SweepResult, run_sweep
from eval.sweep.errors import RunDirConflict, RunDirLocked, SweepError, SweepFailed, SweepInterrupted
from eval.sweep.records import CandidateRecord, QuestionRecord
from eval.sweep.services import ConfiguredPipeline, sweep_services
from eval.sweep.session import ray_session
from eval.sweep.store import RunStore
from eval.sweep.worker import SweepWorker, WorkerSettings

__all__ = [
    "CandidateRecord", "ConfiguredPipeline", "QuestionRecord", "RayInitConfig", "RunDirConflict", "RunDirLocked", "RunStore",
    "SweepConfig", "SweepError", "SweepFailed", "SweepInterrupted", "SweepResult", "SweepWorker", "WorkerSettings",
    "ray_session", "run_sweep", "sweep_services",
]
