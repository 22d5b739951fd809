"""What the adaptive pipeline keeps while it answers, and what it asks of a candidate or a bucket.

DatabaseSchema   read once per database: reference schema, schema words, the repairs' schema
State            per question: its repair rounds, the latency budget passed
null_only        what an executed bucket shows
rated_hardness   Spider hardness of a SQL ("extra" when sqlglot cannot parse it)
fixable          the errored candidates left for the LLM fixer
vote             the largest answer, ties to rows, then to the greedy candidate's
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import sqlglot

from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agents.types import Bucket
from pipelines.contracts import CandidateSQL
from pipelines.indexing.examples.question_skeleton import SchemaWords
from pipelines.repair.refinement import UNFIXABLE_ERRORS
from pipelines.repair.rounds import RepairRounds
from pipelines.schema.reference import ReferenceSchema
from pipelines.sql_hardness import Hardness, hardness_from_sql
from pipelines.task_run import TaskRun

FIRST_WAVE = "first_wave"


class DatabaseSchema(NamedTuple):
    """What the pipeline reads of a database once: the reference schema (per table, for the
    focus), the schema's words (for question skeletons), and the schema the repairs read (its
    view and join graph)."""

    reference: ReferenceSchema
    words: SchemaWords
    index: SchemaIndex


class State:
    """What one question keeps: its repair rounds (what they rewrote and grounded), and whether
    the latency budget has passed."""

    def __init__(self) -> None:
        self.repairs: RepairRounds | None = None  # set once the schema is read
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


def rated_hardness(sql: str) -> Hardness:
    """Spider hardness of a SQL; one sqlglot cannot parse rates "extra" (escalate when unsure)."""
    try:
        return hardness_from_sql(sql)
    except sqlglot.errors.SqlglotError:
        return "extra"


def fixable(run: TaskRun, state: State) -> list[CandidateSQL]:
    """Errored candidates for the LLM fixer: not fixed before, and not SQLs the repairs of an
    error rewrote (their rewrite stands for them when it still fails)."""
    rewritten = state.repairs.rewritten if state.repairs is not None else set()
    return [
        c
        for c in run.pool
        if not c.exec_result.ok
        and c.exec_result.error_kind not in UNFIXABLE_ERRORS
        and "fix" not in str(c.lineage)
        and c.sql not in rewritten
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
