"""Resource shapes of a sweep, validated from the ``sweep`` config group (``conf/sweep/``).

>>> SweepSettings().workers, SweepSettings().in_flight
(1, 4)
>>> SweepSettings.from_cfg({"sweep": {"workers": 4, "ray": {"address": "auto"}}}).ray.address
'auto'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from core.config import section
from core.types import Frozen


class RayInitSettings(Frozen):
    """How the driver reaches Ray: start a local one (``address=None``) or join a cluster."""

    address: str | None = None  # None: start a local Ray (never join one); "auto", ray://…: join
    num_cpus: int | None = 2  # only when starting a local Ray
    num_gpus: int | None = None
    include_dashboard: bool = False


TIMEOUT_GRACE_S = 60.0

# Which finished questions a resumed sweep answers again (``sweep.retry``):
#   none      none: a finished row is final
#   errors    rows without a verdict because something failed around the model: grading raised
#             (``grading_error``), the pipeline did (degradation reason ``pipeline_error``), the
#             database could not be reached (``database_unavailable``: a server down), or the
#             worker's node could not reach the run's storage (``storage_unreachable``)
#   degraded  those, and every degraded row: timed out (``question_timeout``, ``global_timeout``),
#             over budget, or answered after a failed step
Retry = Literal["none", "errors", "degraded"]
DATABASE_UNAVAILABLE = "database_unavailable"  # the sandbox's error kind, and the reason
STORAGE_UNREACHABLE = "storage_unreachable"  # the reason of a question failed by StorageUnreachable


class SweepSettings(Frozen):
    """Pool sizes, per-actor resources, concurrency and fault bounds of one sweep.

    The defaults fit a 2-core laptop: one pipeline worker answering several questions at once,
    sharing the model actor and a small sandbox pool (``conf/sweep/cluster.yaml``: a cluster).
    """

    ray: RayInitSettings = RayInitSettings()
    workers: int = Field(default=1, ge=1)  # pipeline worker actors (ActorPoolStrategy size)
    # Fractional: workers mostly await the model and the sandbox.
    worker_num_cpus: float = Field(default=0.25, gt=0)
    worker_num_gpus: float = Field(default=0.0, ge=0)
    in_flight: int = Field(default=4, ge=1)  # questions each worker answers concurrently
    sandbox_actors: int = Field(default=2, ge=1)
    sandbox_num_cpus: float = Field(default=0.25, gt=0)
    # Wall clock per question before it is recorded degraded: a question never hangs the sweep.
    question_timeout_s: float = Field(default=600, gt=0)
    # A crashed worker actor is restarted at most max_restarts times, and its questions retried
    # at most max_task_retries times.
    max_restarts: int = Field(default=2, ge=0)
    max_task_retries: int = Field(default=2, ge=0)
    # Timed runs of gold and prediction per correct question (R-VES).
    ves_iterations: int = Field(default=3, ge=1)
    # Rows buffered before a Parquet part is written (Ctrl-C flushes them), and the seconds after
    # a write past which the next row is written at once: a stop that cannot flush (a hard stop,
    # a killed driver) loses at most that long of answers, and slow questions are each saved.
    flush_every: int = Field(default=8, ge=1)
    flush_within_s: float = Field(default=30.0, ge=0)
    run_dir: str | None = None  # None: ${paths.runs}/<experiment>/<run label>-<config hash>
    progress: bool = True
    # Seconds of answering: the sweep ends after the answer past which one more, at this
    # invocation's pace, would end beyond them; the rest (a question already started then too)
    # is left for a rerun. null: no budget. The budget binds on every machine: where it fits
    # fewer than ``min_questions`` (the fewest a comparison should rest on), the run says what
    # they would take here instead of running past it.
    budget_s: float | None = Field(default=None, gt=0)
    min_questions: int = Field(default=1, ge=1)
    retry: Retry = "none"
    # Task ids a resumed sweep answers again whatever their row holds: the questions a change
    # to the code decides differently (with model.replay_latency, at the pace they ran live).
    rerun: tuple[str, ...] = ()
    mlflow_traces: bool = Field(
        default=True,
        description="Write each answered question's trace into the MLflow run as an MLflow trace "
        "(``mlflow.search_traces``); false: only the JSONL under ``<run_dir>/traces``.",
    )

    @classmethod
    def from_cfg(cls, cfg: Mapping[str, Any] | None) -> SweepSettings:
        """Read ``cfg.sweep`` (absent → the defaults).

        The question timeout is a backstop behind the pipeline's own ``scaling.global_timeout_s``
        (which answers with the best candidate so far): it is raised to leave that answer
        ``TIMEOUT_GRACE_S`` to arrive, or a slow CPU run would lose every candidate it made.
        """
        config = section(cfg, "sweep", cls)
        scaling = cfg.get("scaling") if cfg is not None else None
        pipeline_timeout = scaling.get("global_timeout_s") if scaling is not None else None
        if pipeline_timeout and config.question_timeout_s < pipeline_timeout + TIMEOUT_GRACE_S:
            config = config.model_copy(
                update={"question_timeout_s": pipeline_timeout + TIMEOUT_GRACE_S}
            )
        return config
