"""The mutable state of one question while a pipeline works on it.

TaskRun(task, recorder, runtime, scaling) ── pool of executed candidates, critiques by bucket,
                                             accumulated lessons, rendered schema views

    run = TaskRun.start(task, client=client, executor=executor, scaling=scaling, call_cap=12)
    chosen = await within_limits(run, "orchestrator", search(run))  # None: out of time or budget
    prediction, trace = run.conclude(sinks, chosen=chosen)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from models.budget import TokenBudget
from models.errors import BudgetExceeded, InvalidModelOutput
from pipelines.agents.errors import AgentOutputError, CallCapExceeded
from pipelines.agents.render import clip
from pipelines.agents.runtime import AgentRuntime, ModelClientLike, SQLExecutor
from pipelines.agents.types import Context, Critique, LessonsBlock
from pipelines.contracts import CandidateSQL, Prediction, ScalingSettings, Task
from pipelines.trace import ReasoningTrace, SafeSink, TraceRecorder, conclude

T = TypeVar("T")


@dataclass
class TaskRun:
    task: Task
    recorder: TraceRecorder
    runtime: AgentRuntime
    scaling: ScalingSettings
    light: str = ""  # the light schema view as prompts see it
    ddl: str = ""  # the DDL view
    context: Context = Context()
    pool: list[CandidateSQL] = field(default_factory=list)  # every executed candidate
    # executed candidates of a synthesis wave still running: the pool takes them, in job order,
    # when the wave ends; a global timeout mid-wave still answers from them
    staged: list[CandidateSQL] = field(default_factory=list)
    critiques: dict[str, Critique] = field(default_factory=dict)  # by bucket hash
    lessons: LessonsBlock = LessonsBlock()
    started: float = field(default_factory=time.monotonic)  # for the prediction's latency

    @classmethod
    def start(
        cls,
        task: Task,
        *,
        client: ModelClientLike,
        executor: SQLExecutor,
        scaling: ScalingSettings,
        call_cap: int,
        model_name: str = "",
    ) -> TaskRun:
        """A fresh run of ``task``: its recorder, and a runtime held to ``scaling.token_budget``
        tokens and ``call_cap`` model calls."""
        recorder = TraceRecorder(task.task_id, task.question, task.db.db_id)
        runtime = AgentRuntime(
            client=client,
            executor=executor,
            recorder=recorder,
            budget=TokenBudget(max_tokens=scaling.token_budget),
            call_cap=call_cap,
            model_name=model_name,
        )
        return cls(task=task, recorder=recorder, runtime=runtime, scaling=scaling)

    def conclude(
        self,
        sinks: Sequence[SafeSink],
        *,
        chosen: CandidateSQL | None,
        failure: str | None = None,
        **fields: Any,
    ) -> tuple[Prediction, ReasoningTrace]:
        """The Prediction for ``chosen`` over the pool and its trace, written to ``sinks``
        (:func:`pipelines.trace.conclude`); ``failure`` is the error when nothing was chosen."""
        return conclude(
            self.task.task_id,
            self.recorder,
            sinks,
            chosen=chosen,
            candidates=self.pool,
            usage=self.runtime.usage,
            started=self.started,
            failure=failure or "no candidate SQL was produced",
            gold_sql=self.task.gold_sql,
            **fields,
        )

    def add(self, candidates: Sequence[CandidateSQL]) -> None:
        self.pool += candidates
        self.recorder.candidates += candidates

    def end_wave(self, executed: Sequence[CandidateSQL]) -> None:
        """A synthesis wave finished: its candidates join the pool in job order."""
        self.staged.clear()
        self.add(executed)

    def salvage(self) -> None:
        """Move whatever a cut-off synthesis wave finished into the pool."""
        self.end_wave(list(self.staged))

    async def execute_all(
        self, candidates: Sequence[CandidateSQL], agent: str = "sandbox"
    ) -> list[CandidateSQL]:
        """The candidates with their execution results (all at once; not added to the pool)."""
        results = await asyncio.gather(
            *(self.runtime.execute(c.sql, self.task.db, agent=agent) for c in candidates)
        )
        return [c.model_copy(update={"exec_result": r}) for c, r in zip(candidates, results)]


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Like ``asyncio.gather``, but the first error cancels the siblings (no orphaned LLM calls
    after the budget ran out) and is raised as itself, not as an ExceptionGroup."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(aw) for aw in aws]
    except BaseExceptionGroup as errors:
        raise errors.exceptions[0] from None
    return [t.result() for t in tasks]


async def within_limits(
    run: TaskRun, stage: str, search: Awaitable[CandidateSQL | None]
) -> CandidateSQL | None:
    """``search`` under the run's global timeout. Running out of time or of budget is recorded as
    a degradation (``global_timeout`` / ``budget_exceeded`` at ``stage``) and answers ``None``: the
    caller answers from the pool."""
    limit_s = run.scaling.global_timeout_s
    try:
        async with asyncio.timeout(limit_s):
            return await search
    except TimeoutError:
        run.recorder.decide(
            "global_timeout", stage, degradation=True, limit_s=limit_s, candidates=len(run.pool)
        )
    except (BudgetExceeded, CallCapExceeded) as exc:
        run.recorder.decide(
            "budget_exceeded",
            stage,
            degradation=True,
            reason=str(exc),
            tokens=run.runtime.usage.total_tokens,
            calls=run.runtime.calls,
        )
    return None


def describe(exc: BaseException) -> str:
    return clip(f"{type(exc).__name__}: {exc}", 200)


def record_failure(
    run: TaskRun, step: str, stage: str, exc: BaseException, **features: str
) -> None:
    """A step raised. A reply the model got wrong (no SQL, bad JSON) is noted as ``<step>_unusable``;
    anything else (model down, timeout, context too long, a bug) degrades the task: ``<step>_failed``.
    The fallback is the same either way; only the second counts in ``degraded_rate``."""
    if isinstance(exc, (InvalidModelOutput, AgentOutputError)):
        run.recorder.decide(f"{step}_unusable", stage, error=describe(exc), **features)
    else:
        run.recorder.decide(
            f"{step}_failed", stage, degradation=True, error=describe(exc), **features
        )
