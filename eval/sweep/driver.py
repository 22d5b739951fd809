"""Run a pipeline over a benchmark's tasks with Ray Data, streaming rows into a run directory.

    tasks ─(skip finished)─► ray.data.from_items (one block per question)
          ─► map_batches(SweepWorker, compute=ActorPoolStrategy(size=workers,
                         max_concurrent_calls_per_actor=in_flight))
          ─► iter_rows (as questions finish) ─► PartWriter (Parquet parts) + progress bar

One block per question makes each finished question its own output, so rows reach the run
directory as they finish, not when a batch does. Ray Data spreads the worker actors over the
cluster's nodes (its default ``SPREAD`` strategy).

With ``sweep.retry`` (``errors`` / ``degraded``), finished questions whose row that policy names
are answered again, and with ``sweep.rerun`` the questions it names; the new row replaces the
old one (the run directory keeps the last row).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence

import polars as pl
import ray
import ray.data
from ray.data.exceptions import UserCodeException

from core.types import Frozen
from eval.sweep.config import DATABASE_UNAVAILABLE, STORAGE_UNREACHABLE, Retry, SweepSettings
from eval.sweep.errors import SweepFailed, SweepInterrupted, UnknownRerun
from eval.sweep.grading import Executor
from eval.sweep.progress import SweepProgress
from eval.sweep.records import QuestionRecord
from eval.sweep.store import RunStore
from eval.sweep.worker import JudgeFactory, PipelineFactory, SweepWorker, WorkerSettings
from pipelines.contracts import Task


class SweepResult(Frozen):
    run_dir: str
    total: int  # runnable questions of the subset
    resumed: int  # finished by an earlier invocation, not run again
    answered: int  # answered by this invocation
    retried: int = 0  # finished earlier, answered again under ``sweep.retry``
    left: int = 0  # left to a rerun: ``sweep.budget_s`` was spent
    elapsed_s: float

    @property
    def pace_s(self) -> float | None:
        """Seconds per question answered by this invocation."""
        return self.elapsed_s / self.answered if self.answered else None


def answered_before(done: pl.DataFrame, tasks: Sequence[Task], finished: set[str]) -> pl.DataFrame:
    """The rows of ``done`` that answer this subset's finished questions: a run directory may
    hold others (the other half of a split benchmark), which are not this sweep's progress."""
    kept = [task.task_id for task in tasks if task.task_id in finished]
    return done.filter(pl.col("task_id").is_in(kept))


def run_sweep(
    tasks: Sequence[Task],
    *,
    store: RunStore,
    factory: PipelineFactory,
    sandbox: Executor,
    config: SweepSettings,
    label: str = "eval",
    on_record: Callable[[QuestionRecord], None] | None = None,
    judge: JudgeFactory | None = None,
) -> SweepResult:
    """Answer every task not yet in ``store``; Ray must be initialised (see ``ray_session``).

    ``judge`` builds, in each worker, the Answer Correctness judge of every answer (None: off).

    With ``config.budget_s``, the sweep ends early when one more answer would end past the
    budget (``SweepSettings``); the result says how many questions it ``left``.

    ``on_record`` sees each record after it is buffered (tests use it to interrupt a sweep).
    Ctrl-C flushes what finished and raises :class:`SweepInterrupted`; a failure Ray gives up
    on (a worker crashing past its restarts) flushes likewise and raises :class:`SweepFailed`.
    """
    started = time.perf_counter()
    done = store.read()
    unknown = sorted(set(config.rerun) - {task.task_id for task in tasks})
    if unknown:
        raise UnknownRerun(
            f"sweep.rerun names {len(unknown)} question(s) this run does not cover: "
            f"{', '.join(unknown[:5])}"
        )
    redo = to_retry(done, config.retry) | (set(config.rerun) & set(done["task_id"].to_list()))
    finished = set(done.get_column("task_id").to_list()) - redo
    pending = [
        (position, task) for position, task in enumerate(tasks) if task.task_id not in finished
    ]
    retried = sum(task.task_id in redo for _, task in pending)
    resumed = len(tasks) - len(pending)
    answered = 0
    if pending:
        rows = _dataset(pending, factory, sandbox, config, judge).iter_rows()
        previous = answered_before(done, tasks, finished)
        progress = SweepProgress(
            len(tasks), label, previous=previous, enabled=config.progress, budget_s=config.budget_s
        )
        try:
            with progress, store.writer(config.flush_every, config.flush_within_s) as out:
                for row in rows:
                    record = QuestionRecord.model_validate_json(row["record"])
                    out.add(record)
                    answered += 1
                    progress.advance(record)
                    if on_record is not None:
                        on_record(record)
                    if _spent(config, time.perf_counter() - started, answered, resumed):
                        break  # the rows' generator closes: Ray Data stops its workers
        except KeyboardInterrupt:
            raise SweepInterrupted(str(store.run_dir), resumed + answered, len(tasks)) from None
        except (ray.exceptions.RayError, UserCodeException) as exc:
            raise SweepFailed(str(store.run_dir), resumed + answered, len(tasks), exc) from exc
    return SweepResult(
        run_dir=str(store.run_dir),
        total=len(tasks),
        resumed=resumed,
        answered=answered,
        retried=retried,
        left=len(pending) - answered,
        elapsed_s=time.perf_counter() - started,
    )


def _spent(config: SweepSettings, elapsed_s: float, answered: int, resumed: int) -> bool:
    """Whether the budget forbids another question: one more at this invocation's pace would
    end past it."""
    if config.budget_s is None:
        return False
    return elapsed_s + elapsed_s / answered > config.budget_s


def to_retry(done: pl.DataFrame, policy: Retry) -> set[str]:
    """Task ids of finished rows that ``policy`` answers again (see ``eval.sweep.config.Retry``)."""
    if policy == "none" or done.is_empty():
        return set()
    reasons = pl.col("degradation_reasons").list
    redo = (
        pl.col("grading_error").is_not_null()
        | reasons.contains("pipeline_error")
        | reasons.contains(DATABASE_UNAVAILABLE)
        | reasons.contains(STORAGE_UNREACHABLE)
    )
    if policy == "degraded":
        redo = redo | pl.col("degraded")
    return set(done.filter(redo).get_column("task_id").to_list())


def _dataset(
    pending: list[tuple[int, Task]],
    factory: PipelineFactory,
    sandbox: Executor,
    config: SweepSettings,
    judge: JudgeFactory | None,
) -> ray.data.Dataset:
    items = [{"position": position, "task": task.model_dump_json()} for position, task in pending]
    settings = WorkerSettings(
        question_timeout_s=config.question_timeout_s, ves_iterations=config.ves_iterations
    )
    with warnings.catch_warnings():
        # Actor restart bounds are only reachable through the (deprecated) remote-args kwargs.
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
        return ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            SweepWorker,
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(
                size=min(config.workers, len(items)),
                max_concurrent_calls_per_actor=config.in_flight,
            ),
            fn_constructor_kwargs={
                "factory": factory,
                "sandbox": sandbox,
                "settings": settings,
                "judge": judge,
            },
            num_cpus=config.worker_num_cpus,
            num_gpus=config.worker_num_gpus or None,
            max_restarts=config.max_restarts,
            max_task_retries=config.max_task_retries,
        )
