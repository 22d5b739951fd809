"""What the adaptive pipeline keeps while it answers, and what it asks of a candidate or a bucket.

DatabaseSchema   read once per database: reference schema, schema words, the repairs
State            per question: the repairs' memos, the latency budget passed
null_only · nothing_found · has_rows   what an executed result shows
rated_hardness   Spider hardness of a SQL ("extra" when sqlglot cannot parse it)
fixable          the errored candidates left for the LLM fixer
vote             the largest answer, ties to rows, then to the greedy candidate's
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import sqlglot

from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.repair.columns import ColumnRepair
from pipelines.repair.joins import JoinRepair
from pipelines.repair.quotes import QuoteRepair
from pipelines.repair.refinement import UNFIXABLE_ERRORS
from pipelines.repair.values import ValueRepair
from pipelines.schema.reference import ReferenceSchema
from pipelines.sql_hardness import Hardness, hardness_from_sql
from pipelines.task_run import TaskRun

FIRST_WAVE = "first_wave"


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
    """What the repairs of one question remember: the schema's repairs, the SQLs they rewrote or
    grounded, and whether the latency budget has passed."""

    def __init__(self) -> None:
        self.repair: ColumnRepair | None = None
        self.rewritten: set[str] = set()  # errored SQLs the column repair rewrote
        self.values: ValueRepair | None = None
        self.joins: JoinRepair | None = None
        self.quotes: QuoteRepair | None = None
        self.grounded: dict[str, CandidateSQL | None] = {}  # empty-result SQL -> its rewrite
        self.out_of_time = False  # escalate_within_s passed and recorded in the trace


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


def vote(run: TaskRun, buckets: Sequence[Bucket]) -> CandidateSQL | None:
    """Largest non-error bucket; ties: one with rows before an empty one, then the greedy one's.

    An empty result that most candidates agree on stands: questions whose answer is no rows are
    common, and a lone non-empty SQL beside a large empty bucket is more often the wrong one.
    """
    if not buckets:
        return None
    field = [b for b in buckets if not b.error] or list(buckets)
    greedy = f"{FIRST_WAVE}/greedy"
    ranked = sorted(
        field, key=lambda b: (-b.size, b.empty, greedy not in {c.producer for c in b.members})
    )
    if not run.recorder.ranking:
        run.recorder.ranking = tuple(b.hash for b in ranked)
    return ranked[0].representative
