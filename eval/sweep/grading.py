"""Grade one prediction against its task's gold SQL by executing both in the sandbox.

    Task.gold_sql ─┐
                   ├─ sandbox.execute ──► ex_bird, ex_spider, ex_columns, R-VES reward
    Prediction.sql ┘
    Prediction.candidates ──► one execution per distinct result hash ──► correctness per candidate
                                                                          under the three semantics

The chosen SQL is re-executed rather than trusting the pipeline's ``exec_result`` (which may
hold only a preview); candidates with the same result hash share a verdict, so each distinct
result is executed once. A gold query that fails leaves the verdicts ``None`` and is reported.
"""

from __future__ import annotations

from typing import Protocol

from core.types import Frozen
from eval.grading.column_matching import ex_columns
from eval.metrics import ex_bird, ex_spider, order_matters, time_ratio, ves_reward
from eval.sweep.records import CandidateRecord
from pipelines.contracts import CandidateSQL, DatabaseRef, ExecutionResult, Prediction, Task

_MIN_SECONDS = 1e-6  # a query the clock cannot see still has a positive duration
Verdicts = tuple[bool, bool, bool]  # EX under BIRD, Spider and column matching


class Executor(Protocol):
    """What grading needs of the sandbox (``SandboxPool`` / ``LocalSandboxPool``)."""

    async def execute(self, sql: str, db: DatabaseRef) -> ExecutionResult: ...


class Grade(Frozen):
    exec_hash: str | None = None
    exec_error: str | None = None
    ex_bird: bool | None = None
    ex_spider: bool | None = None
    ex_columns: bool | None = None  # column matching (eval/grading/column_matching.py)
    ves_reward: float | None = None
    gold_error: str | None = None
    candidates: tuple[CandidateRecord, ...] = ()


class Grader:
    """Scores predictions of one sandbox; ``ves_iterations`` timed runs per correct answer.

    >>> import asyncio
    >>> from pipelines.sandbox import LocalSandboxPool
    >>> task = Task(task_id="spider_dev:0", question="How many singers do we have?", db=db,
    ...             gold_sql="SELECT count(*) FROM singer")
    >>> wrong = CandidateSQL(sql="SELECT count(*) FROM concert", producer="icl/direct")
    >>> prediction = Prediction(task_id=task.task_id, sql="SELECT count(Singer_ID) FROM singer",
    ...                         candidates=(wrong,))
    >>> pool = LocalSandboxPool.create(size=1)
    >>> grade = asyncio.run(Grader(pool, ves_iterations=3).grade(task, prediction))
    >>> grade.ex_bird, grade.candidates[0].correct_bird, grade.candidates[0].correct_columns
    (True, False, False)
    >>> pool.close()
    """

    def __init__(self, sandbox: Executor, ves_iterations: int) -> None:
        self._sandbox = sandbox
        self._ves_iterations = ves_iterations

    async def grade(self, task: Task, prediction: Prediction) -> Grade:
        pred = await self._sandbox.execute(prediction.sql, task.db) if prediction.sql else None
        exec_fields = {
            "exec_hash": pred.hash if pred else None,
            "exec_error": pred.error if pred else None,
        }
        if not task.gold_sql:
            candidates = tuple(_candidate(c, None, None) for c in prediction.candidates)
            return Grade(**exec_fields, candidates=candidates)
        gold = await self._sandbox.execute(task.gold_sql, task.gold_database)
        if not gold.ok:
            candidates = tuple(_candidate(c, None, None) for c in prediction.candidates)
            return Grade(**exec_fields, gold_error=gold.error, candidates=candidates)

        ordered = order_matters(task.gold_sql)
        verdicts: dict[object, Verdicts] = {}

        def judge(result: ExecutionResult) -> Verdicts:
            # Equal hashes mean equal bags of rows; under ORDER BY the row order matters too.
            key = (result.hash, result.rows) if ordered and result.ok else result.hash
            if key not in verdicts:
                complete = result.ok and not result.truncated and not gold.truncated
                spider = complete and ex_spider(result.rows, gold.rows, order_matters=ordered)
                columns = complete and ex_columns(result, gold, task.gold_sql)
                verdicts[key] = (ex_bird(result, gold), spider, columns)
            return verdicts[key]

        bird, spider, columns = judge(pred) if pred else (False, False, False)
        results: dict[str, ExecutionResult] = {}  # sql -> result, so duplicates run once
        if pred:
            results[prediction.sql] = pred
        candidates = []
        for candidate in prediction.candidates:
            result = await self._candidate_result(candidate, task.db, results, reuse=not ordered)
            candidates.append(_candidate(candidate, result, judge(result) if result else None))
        reward = await self._ves_reward(task, prediction.sql) if bird else 0.0
        return Grade(
            **exec_fields,
            ex_bird=bird,
            ex_spider=spider,
            ex_columns=columns,
            ves_reward=reward,
            candidates=tuple(candidates),
        )

    async def _candidate_result(
        self,
        candidate: CandidateSQL,
        db: DatabaseRef,
        results: dict[str, ExecutionResult],
        reuse: bool,
    ) -> ExecutionResult | None:
        """The candidate's full result: an error or an already-seen hash is reused as is."""
        known = candidate.exec_result
        if known is not None and not known.ok:
            return known
        if candidate.sql in results:
            return results[candidate.sql]
        if reuse and known is not None and any(r.hash == known.hash for r in results.values()):
            return known
        if not candidate.sql:
            return known
        results[candidate.sql] = await self._sandbox.execute(candidate.sql, db)
        return results[candidate.sql]

    async def _ves_reward(self, task: Task, sql: str) -> float:
        """BIRD's reward from alternating timed runs of the gold and the predicted query."""
        gold_s, pred_s = [], []
        for _ in range(self._ves_iterations):
            gold = await self._sandbox.execute(task.gold_sql or "", task.gold_database)
            pred = await self._sandbox.execute(sql, task.db)
            gold_s.append(max(gold.elapsed_ms / 1000, _MIN_SECONDS))
            pred_s.append(max(pred.elapsed_ms / 1000, _MIN_SECONDS))
        return ves_reward(time_ratio(gold_s, pred_s))


def _candidate(
    candidate: CandidateSQL, result: ExecutionResult | None, verdict: Verdicts | None
) -> CandidateRecord:
    result = result or candidate.exec_result
    return CandidateRecord(
        sql=candidate.sql,
        producer=candidate.producer,
        hash=result.hash if result else None,
        error=result.error if result else None,
        correct_bird=verdict[0] if verdict else None,
        correct_spider=verdict[1] if verdict else None,
        correct_columns=verdict[2] if verdict else None,
    )
