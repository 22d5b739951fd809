"""Benchmark sweeps on Ray: pipeline worker actors over a benchmark's tasks, resumable Parquet.

    with ray_session(SweepSettings.from_cfg(cfg).ray), sweep_services(cfg, sweep, storage) as (factory, sandbox):
        run_sweep(tasks, store=RunStore.open(run_dir, identity), factory=factory, sandbox=sandbox, config=sweep)

``eval.run.run_configuration`` wraps this with exports, the report and MLflow.

Names are resolved on first use (PEP 562): composing a config imports ``eval.sweep.config`` for
its defaults (``core.config.BASES``), and that must not load Ray.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CandidateRecord": "eval.sweep.records",
    "ConfiguredPipeline": "eval.sweep.services",
    "QuestionRecord": "eval.sweep.records",
    "RayInitSettings": "eval.sweep.config",
    "RunDirConflict": "eval.sweep.errors",
    "RunDirLocked": "eval.sweep.errors",
    "RunStore": "eval.sweep.store",
    "SharedStorage": "eval.sweep.storage",
    "StorageUnreachable": "eval.sweep.errors",
    "SweepSettings": "eval.sweep.config",
    "SweepError": "eval.sweep.errors",
    "SweepFailed": "eval.sweep.errors",
    "SweepInterrupted": "eval.sweep.errors",
    "SweepResult": "eval.sweep.driver",
    "SweepWorker": "eval.sweep.worker",
    "WorkerSettings": "eval.sweep.worker",
    "ray_session": "eval.sweep.session",
    "run_sweep": "eval.sweep.driver",
    "sweep_services": "eval.sweep.services",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'eval.sweep' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
