"""What the adaptive pipeline keeps while it answers, and what it asks of a candidate or a bucket.

DatabaseSchema   read once per database: reference schema, schema words, the repairs
State            per question: steps taken and their cost, the step that answers, repair memos
null_only · nothing_found · has_rows   what an executed result shows
rated_hardness   Spider hardness of a SQL ("extra" when sqlglot cannot parse it)
fixable          the errored candidates left for the LLM fixer
"""

from __future__ import annotations

import time
from typing import NamedTuple

import sqlglot

from pipelines.agents.runtime import AgentRuntime
from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL, RetrievalSource, StepCost, Usage
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.repair.columns import ColumnRepair
from pipelines.repair.joins import JoinRepair
from pipelines.repair.quotes import QuoteRepair
from pipelines.repair.refinement import UNFIXABLE_ERRORS
from pipelines.repair.values import ValueRepair
from pipelines.schema.reference import ReferenceSchema
from pipelines.sql_hardness import Hardness, hardness_from_sql
from pipelines.task_run import TaskRun


class DatabaseSchema(NamedTuple):
    """What the pipeline reads of a database once: the reference schema (per table, for the
    focus), the schema's words (for question skeletons), the three repairs built on its view
    and join graph, and the dialect's quote repair."""

    reference: ReferenceSchema
    words: SchemaWords
    repair: ColumnRepair
    values: ValueRepair
    joins: JoinRepair
    quotes: QuoteRepair


class State:
    """Which steps ran, what each cost, and which step's pool holds the answer."""

    def __init__(self) -> None:
        self.steps: list[StepCost] = []
        self.answered_by = ""
        self.retrieval: tuple[RetrievalSource, ...] = ()
        self.repair: ColumnRepair | None = None
        self.rewritten: set[str] = set()  # errored SQLs the column repair rewrote
        self.values: ValueRepair | None = None
        self.joins: JoinRepair | None = None
        self.quotes: QuoteRepair | None = None
        self.grounded: dict[str, CandidateSQL | None] = {}  # empty-result SQL -> its rewrite
        self.out_of_time = False  # escalate_within_s passed and recorded in the trace
        self._open: tuple[str, Usage, float] | None = None

    def settle(self) -> None:
        """Without a step that reached a majority, the answer comes from the last step's pool."""
        self.answered_by = self.answered_by or (self.steps[-1].step if self.steps else "")

    def open_step(self, name: str, runtime: AgentRuntime) -> None:
        self._open = (name, runtime.usage, time.monotonic())

    def close_step(self, runtime: AgentRuntime) -> None:
        if self._open is None:
            return
        name, before, started = self._open
        self._open = None
        spent = runtime.usage
        self.steps.append(
            StepCost(
                step=name,
                calls=spent.calls - before.calls,
                prompt_tokens=spent.prompt_tokens - before.prompt_tokens,
                completion_tokens=spent.completion_tokens - before.completion_tokens,
                seconds=round(time.monotonic() - started, 3),
            )
        )


def null_only(bucket: Bucket) -> bool:
    """The bucket's result has rows, and every value in them is NULL."""
    result = bucket.representative.exec_result
    return (
        result is not None
        and result.ok
        and result.row_count > 0
        and all(v is None for row in result.rows for v in row)
    )


def nothing_found(candidate: CandidateSQL) -> bool:
    """No rows, or one row of zeros and NULLs: what aggregates over a filter that matched nothing give."""
    result = candidate.exec_result
    if result is None or not result.ok:
        return False
    return result.row_count == 0 or (
        result.row_count == 1 and all(v is None or v == 0 for v in result.rows[0])
    )


def has_rows(candidate: CandidateSQL) -> bool:
    result = candidate.exec_result
    return result is not None and result.ok and result.row_count > 0


def rated_hardness(sql: str) -> Hardness:
    """Spider hardness of a SQL; one sqlglot cannot parse rates "extra" (escalate when unsure)."""
    try:
        return hardness_from_sql(sql)
    except sqlglot.errors.SqlglotError:
        return "extra"


def fixable(run: TaskRun, state: State) -> list[CandidateSQL]:
    """Errored candidates for the LLM fixer: not fixed before, and not SQLs the column repair
    rewrote (their rewrite stands for them when it still fails)."""
    return [
        c
        for c in run.pool
        if not c.exec_result.ok
        and c.exec_result.error_kind not in UNFIXABLE_ERRORS
        and "fix" not in str(c.lineage)
        and c.sql not in state.rewritten
    ]
