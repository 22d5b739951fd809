"""The mutable state of one question while the orchestrator works on it.

TaskRun(task, recorder, runtime, scaling) ── pool of executed candidates, critiques by bucket,
                                             accumulated lessons, rendered schema views
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from models.errors import InvalidModelOutput
from pipelines.agents.errors import AgentOutputError
from pipelines.agents.render import clip
from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Context, Critique, LessonsBlock
from pipelines.contracts import CandidateSQL, ScalingSettings, Task
from pipelines.trace import TraceRecorder

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
