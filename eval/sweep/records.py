"""One row per answered question: what the sweep writes to Parquet and the report reads.

    Task ──► pipeline ──► Prediction ──► grade against gold ──► QuestionRecord ──► Parquet row

A record carries the chosen SQL and its verdicts under both EX semantics, the candidate pool
(result hash and per-candidate correctness, for pass@k), spend, latency and degradation, and the
Answer Correctness judge's verdict when one is on (``eval/grading/judge.py``). Verdicts are ``None`` when
the task has no gold SQL; the judge's are ``None`` when it is off or gave none (``judge_error``).
"""

from __future__ import annotations

import pyarrow as pa

from core.types import Frozen
from pipelines.contracts import StepCost


class CandidateRecord(Frozen):
    sql: str
    producer: str
    hash: str | None = None
    error: str | None = None
    correct_bird: bool | None = None
    correct_spider: bool | None = None
    correct_columns: bool | None = None  # column matching (eval/grading/column_matching.py)


class QuestionRecord(Frozen):
    task_id: str
    position: int  # the task's place in the benchmark subset (exports keep this order)
    benchmark: str
    db_id: str
    difficulty: str | None = None
    sds: int | None = None  # SDS total where the benchmark rates its questions (eval/sds.py)
    floor_construct: str | None = None  # the one construct the question exercises, if named
    question: str
    gold_sql: str | None = None
    sql: str
    producer: str = ""
    exec_hash: str | None = None
    exec_error: str | None = None
    ex_bird: bool | None = None
    ex_spider: bool | None = None
    ex_columns: bool | None = None
    ves_reward: float | None = None  # BIRD R-VES reward of this question (0 when wrong)
    gold_error: str | None = None  # the gold SQL failed: the question is reported, not scored
    candidates: tuple[CandidateRecord, ...] = ()
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0  # at the slots' prices when the question was answered
    busy_s: float = 0.0  # seconds the model slots were busy with the question's calls
    latency_s: float = 0.0
    degraded: bool = False
    degradation_reasons: tuple[str, ...] = ()
    error: str | None = None
    trace_path: str | None = None
    grading_error: str | None = None  # the sandbox failed while grading: verdicts unknown
    node_id: str = ""  # the Ray node whose worker answered (shows how work spread)
    answered_by: str = ""  # the pipeline step whose pool gave the answer (Prediction.answered_by)
    steps: tuple[StepCost, ...] = ()  # every step the pipeline ran on this question, with its cost
    retrieval: tuple[str, ...] = ()  # L0 retrievers that served the question ("cells", "examples")
    chosen: str = ""  # settings chosen for the question's database: "sample_rows=1, select=vote"
    judge_correct: bool | None = None  # the judge's verdict: the result answers the question
    judge_score: int | None = None  # its rubric score, 0-50
    judge_error: str | None = None  # why a judged question has no verdict
    judge_cost_usd: float = 0.0  # the judge's call, apart from the pipeline's cost


_CANDIDATE = pa.struct(
    [
        ("sql", pa.string()),
        ("producer", pa.string()),
        ("hash", pa.string()),
        ("error", pa.string()),
        ("correct_bird", pa.bool_()),
        ("correct_spider", pa.bool_()),
        ("correct_columns", pa.bool_()),
    ]
)

_STEP = pa.struct(
    [
        ("step", pa.string()),
        ("calls", pa.int64()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("seconds", pa.float64()),
    ]
)

# Explicit so every Parquet part has the same schema even when a column is all null.
RECORD_SCHEMA = pa.schema(
    [
        ("task_id", pa.string()),
        ("position", pa.int64()),
        ("benchmark", pa.string()),
        ("db_id", pa.string()),
        ("difficulty", pa.string()),
        ("sds", pa.int64()),
        ("floor_construct", pa.string()),
        ("question", pa.string()),
        ("gold_sql", pa.string()),
        ("sql", pa.string()),
        ("producer", pa.string()),
        ("exec_hash", pa.string()),
        ("exec_error", pa.string()),
        ("ex_bird", pa.bool_()),
        ("ex_spider", pa.bool_()),
        ("ex_columns", pa.bool_()),
        ("ves_reward", pa.float64()),
        ("gold_error", pa.string()),
        ("candidates", pa.list_(_CANDIDATE)),
        ("calls", pa.int64()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("cost_usd", pa.float64()),
        ("busy_s", pa.float64()),
        ("latency_s", pa.float64()),
        ("degraded", pa.bool_()),
        ("degradation_reasons", pa.list_(pa.string())),
        ("error", pa.string()),
        ("trace_path", pa.string()),
        ("grading_error", pa.string()),
        ("node_id", pa.string()),
        ("answered_by", pa.string()),
        ("steps", pa.list_(_STEP)),
        ("retrieval", pa.list_(pa.string())),
        ("chosen", pa.string()),
        ("judge_correct", pa.bool_()),
        ("judge_score", pa.int64()),
        ("judge_error", pa.string()),
        ("judge_cost_usd", pa.float64()),
    ]
)


def records_to_table(records: list[QuestionRecord]) -> pa.Table:
    return pa.Table.from_pylist(
        [r.model_dump(mode="python") for r in records], schema=RECORD_SCHEMA
    )
