"""The pipeline worker: a Ray Data UDF that answers and grades questions, many at once.

    {"position", "task"} rows ──► SweepWorker (one per actor) ──► {"record": QuestionRecord JSON}
                                    │ pipeline.answer(task)   (model actors shared by all workers)
                                    │ Grader.grade(...)       (sandbox actors shared by all workers)
                                    └ judge.judge(...)        (with eval.judge: eval/grading/judge.py)

Ray Data runs an async ``__call__`` on one event loop per actor and, with
``max_concurrent_calls_per_actor=in_flight``, keeps that many questions in flight per worker.
A question that raises or outlives ``question_timeout_s`` becomes a degraded record rather
than failing the sweep, and so does every question of a worker whose node cannot reach the
run's storage (``storage_unreachable``, the error naming the path: it would answer without the
indexes and keep its traces where the driver never reads them). Only a crash of the worker
process itself reaches Ray, which restarts the actor and retries its questions (bounded by
``max_restarts`` / ``max_task_retries``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import Field

from core.types import Frozen
from eval.grading.judge import JudgeVerdict
from eval.sweep.config import DATABASE_UNAVAILABLE, STORAGE_UNREACHABLE
from eval.sweep.errors import StorageUnreachable
from eval.sweep.grading import Executor, Grade, Grader
from eval.sweep.records import QuestionRecord
from pipelines.contracts import ExecutionResult, Prediction, Task
from pipelines.pipeline import Pipeline

PipelineFactory = Callable[[], Pipeline]


class Judge(Protocol):
    async def judge(self, task: Task, sql: str, result: ExecutionResult | None) -> JudgeVerdict: ...


JudgeFactory = Callable[[], Judge]


class WorkerSettings(Frozen):
    question_timeout_s: float = Field(gt=0)
    ves_iterations: int = Field(ge=1)


class SweepWorker:
    """One per worker actor; builds its pipeline on first use, inside the actor's event loop.

    With a pipeline factory whose pipelines call a model:

        settings = WorkerSettings(question_timeout_s=60, ves_iterations=1)
        worker = SweepWorker(factory, sandbox, settings)
        out = await worker({"position": [0], "task": [task.model_dump_json()]})
        QuestionRecord.model_validate_json(out["record"][0]).ex_bird  ──►  True
    """

    def __init__(
        self,
        factory: PipelineFactory,
        sandbox: Executor,
        settings: WorkerSettings,
        judge: JudgeFactory | None = None,
    ) -> None:
        self._factory = factory
        self._sandbox = sandbox
        self._grader = Grader(sandbox, settings.ves_iterations)
        self._timeout_s = settings.question_timeout_s
        self._pipeline: Pipeline | None = None
        self._unreachable: StorageUnreachable | None = None
        self._judge_factory = judge
        self._judge: Judge | None = None
        self._node_id = _current_node_id()

    async def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        if self._pipeline is None and self._unreachable is None:
            try:
                self._pipeline = self._factory()
            except StorageUnreachable as exc:
                self._unreachable = exc
        pairs = zip(batch["position"], batch["task"], strict=True)
        records = await asyncio.gather(
            *(self._answer(int(position), Task.model_validate_json(raw)) for position, raw in pairs)
        )
        return {"record": [record.model_dump_json() for record in records]}

    async def _answer(self, position: int, task: Task) -> QuestionRecord:
        started = time.perf_counter()
        try:
            prediction = await asyncio.wait_for(self._answered(task), self._timeout_s)
        except StorageUnreachable as exc:
            prediction = _failed(task, STORAGE_UNREACHABLE, f"{type(exc).__name__}: {exc}")
        except TimeoutError:
            prediction = _failed(
                task, "question_timeout", f"no answer within {self._timeout_s:g} s"
            )
        except Exception as exc:  # noqa: BLE001 - one question's failure must not end the sweep
            prediction = _failed(task, "pipeline_error", f"{type(exc).__name__}: {exc}")
        prediction = _unavailable_database(prediction)
        latency_s = prediction.latency_s or time.perf_counter() - started
        grading_error = None
        try:
            grade = await asyncio.wait_for(self._grader.grade(task, prediction), self._timeout_s)
        except Exception as exc:  # noqa: BLE001 - an unreachable sandbox leaves the verdict unknown
            grade, grading_error = Grade(), f"{type(exc).__name__}: {exc}"
        verdict = await self._judged(task, prediction) if self._judge_factory else None
        record = _record(position, task, prediction, grade, latency_s, grading_error, self._node_id)
        if verdict is None:
            return record
        return record.model_copy(
            update={
                "judge_correct": verdict.correct,
                "judge_score": verdict.score,
                "judge_error": verdict.error,
                "judge_cost_usd": verdict.usage.cost_usd,
            }
        )

    async def _answered(self, task: Task) -> Prediction:
        if self._unreachable is not None:
            raise self._unreachable
        assert self._pipeline is not None
        return await self._pipeline.answer(task)

    async def _judged(self, task: Task, prediction: Prediction) -> JudgeVerdict:
        """The judge's verdict on the answer, seeing the result the pipeline chose it by."""
        assert self._judge_factory is not None
        try:
            if self._judge is None:
                self._judge = self._judge_factory()
            result = prediction.exec_result
            if prediction.sql and result is None:
                result = await self._sandbox.execute(prediction.sql, task.db)
            return await asyncio.wait_for(
                self._judge.judge(task, prediction.sql, result), self._timeout_s
            )
        except Exception as exc:  # noqa: BLE001 - a failed judgement is no verdict, not a lost answer
            return JudgeVerdict(error=f"{type(exc).__name__}: {exc}")


def _unavailable_database(prediction: Prediction) -> Prediction:
    """``prediction`` marked degraded (``database_unavailable``) when its answer could not run
    because the database could not be reached (a server down or restarting): a rerun with
    ``sweep.retry=errors`` answers it again."""
    result = prediction.exec_result
    if result is None or result.error_kind != DATABASE_UNAVAILABLE:
        return prediction
    reasons = (*prediction.degradation_reasons, DATABASE_UNAVAILABLE)
    return prediction.model_copy(update={"degraded": True, "degradation_reasons": reasons})


def _failed(task: Task, reason: str, message: str) -> Prediction:
    return Prediction(
        task_id=task.task_id, sql="", degraded=True, degradation_reasons=(reason,), error=message
    )


def _record(
    position: int,
    task: Task,
    prediction: Prediction,
    grade: Grade,
    latency_s: float,
    grading_error: str | None,
    node_id: str,
) -> QuestionRecord:
    usage = prediction.usage
    return QuestionRecord(
        task_id=task.task_id,
        position=position,
        benchmark=task.benchmark,
        db_id=task.db.db_id,
        difficulty=task.difficulty,
        sds=task.sds,
        floor_construct=task.floor_construct,
        question=task.question,
        gold_sql=task.gold_sql,
        sql=prediction.sql,
        producer=prediction.producer,
        **grade.model_dump(),
        calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cost_usd=usage.cost_usd,
        busy_s=usage.busy_s,
        latency_s=latency_s,
        degraded=prediction.degraded,
        degradation_reasons=prediction.degradation_reasons,
        error=prediction.error,
        trace_path=prediction.trace_path,
        grading_error=grading_error,
        node_id=node_id,
        answered_by=prediction.answered_by,
        steps=prediction.steps,
        retrieval=prediction.retrieval,
        chosen=", ".join(map(str, prediction.chosen)),
    )


def _current_node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
