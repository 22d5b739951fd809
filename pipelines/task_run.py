"""The mutable state of one question while a pipeline works on it.

TaskRun(task, recorder, runtime, scaling) ── pool of executed candidates, critiques by bucket,
                                             accumulated lessons, rendered schema views, what
                                             the prompt gave up to fit (PromptFit), the steps
                                             taken (StepLog), why nothing was answered

    run = TaskRun.start(task, client=client, executor=executor, scaling=scaling, call_cap=12)
    chosen = await within_limits(run, "orchestrator", search(run))  # None: out of time or budget
    prediction, trace = run.conclude(sinks, chosen=chosen)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from core.types import Usage
from models.budget import TokenBudget
from models.errors import BudgetExceeded, InvalidModelOutput
from pipelines.agents.errors import AgentOutputError, CallCapExceeded
from pipelines.agents.render import clip
from pipelines.agents.runtime import AgentRuntime, ModelClientLike, SQLExecutor
from pipelines.agents.types import Context, Critique, LessonsBlock
from pipelines.contracts import CandidateSQL, Prediction, RetrievalSource, StepCost, Task
from pipelines.prompt_fit import PromptFit
from pipelines.strategies.scaling import StrategyScaling
from pipelines.trace import ReasoningTrace, SafeSink, TraceRecorder, conclude

T = TypeVar("T")


class StepLog:
    """Which steps of a question ran, what each cost, and which step's pool holds the answer.

    run.steps.open("fix"); ...; run.steps.close()   # one StepCost: calls, tokens, seconds
    """

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.taken: list[StepCost] = []
        self.answered_by = ""
        self._open: tuple[str, Usage, float] | None = None

    def settle(self) -> None:
        """Without a step that reached a majority, the answer comes from the last step's pool."""
        self.answered_by = self.answered_by or (self.taken[-1].step if self.taken else "")

    def open(self, name: str) -> None:
        self._open = (name, self.runtime.usage, time.monotonic())

    def close(self) -> None:
        if self._open is None:
            return
        name, before, started = self._open
        self._open = None
        spent = self.runtime.usage
        self.taken.append(
            StepCost(
                step=name,
                calls=spent.calls - before.calls,
                prompt_tokens=spent.prompt_tokens - before.prompt_tokens,
                completion_tokens=spent.completion_tokens - before.completion_tokens,
                seconds=round(time.monotonic() - started, 3),
            )
        )


@dataclass
class TaskRun:
    task: Task
    recorder: TraceRecorder
    runtime: AgentRuntime
    scaling: StrategyScaling
    light: str = ""  # the light schema view as prompts see it
    ddl: str = ""  # the DDL view
    # where the question's generation prompt stands on what it gives up to fit the model's
    # context (pipelines/prompt_fit.py); a strategy showing the reference schema sets its ladder
    fit: PromptFit = field(default_factory=PromptFit.help_only)
    context: Context = Context()
    pool: list[CandidateSQL] = field(default_factory=list)  # every executed candidate
    # executed candidates of a synthesis wave still running: the pool takes them, in job order,
    # when the wave ends; a global timeout mid-wave still answers from them
    staged: list[CandidateSQL] = field(default_factory=list)
    critiques: dict[str, Critique] = field(default_factory=dict)  # by bucket hash
    lessons: LessonsBlock = LessonsBlock()
    started: float = field(default_factory=time.monotonic)  # for the prediction's latency
    steps: StepLog = field(init=False)
    retrieval: tuple[RetrievalSource, ...] = ()  # the L0 retrievers that served the question
    failure: str | None = None  # why no SQL could be produced, when none was

    def __post_init__(self) -> None:
        self.steps = StepLog(self.runtime)

    @classmethod
    def start(
        cls,
        task: Task,
        *,
        client: ModelClientLike,
        executor: SQLExecutor,
        scaling: StrategyScaling,
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
        self, sinks: Sequence[SafeSink], *, chosen: CandidateSQL | None
    ) -> tuple[Prediction, ReasoningTrace]:
        """The Prediction for ``chosen`` over the pool, with the steps taken and the retrievers
        that served, and its trace, written to ``sinks`` (:func:`pipelines.trace.conclude`);
        ``failure`` is the error when nothing was chosen."""
        return conclude(
            self.task.task_id,
            self.recorder,
            sinks,
            chosen=chosen,
            candidates=self.pool,
            usage=self.runtime.usage,
            started=self.started,
            failure=self.failure or "no candidate SQL was produced",
            gold_sql=self.task.gold_sql,
            answered_by=self.steps.answered_by if chosen else "",
            steps=tuple(self.steps.taken),
            retrieval=self.retrieval,
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
    a degradation (``global_timeout`` / ``budget_exceeded`` at ``stage``) and as the run's
    failure, and answers ``None``: the caller answers from the pool."""
    limit_s = run.scaling.global_timeout_s
    try:
        async with asyncio.timeout(limit_s):
            return await search
    except TimeoutError:
        run.failure = f"global timeout of {limit_s:g}s"
        run.recorder.decide(
            "global_timeout", stage, degradation=True, limit_s=limit_s, candidates=len(run.pool)
        )
    except (BudgetExceeded, CallCapExceeded) as exc:
        run.failure = describe(exc)
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
