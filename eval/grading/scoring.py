"""Score predictions against a benchmark's gold SQL, by execution, in parallel.

    LoadedBenchmark + {task_id | index: sql}
        ──► one job per task: run gold and prediction in a read-only Sandbox (process pool)
        ──► QuestionVerdict(ex_bird, ex_spider, ex_columns, error, gold_error, ves_reward)
        ──► ScoreReport: overall, per-difficulty, (where rated) per-SDS-bucket and (where named)
            per-construct EX under the three semantics (+ R-VES)

A question whose gold query fails is reported in ``gold_failures`` and left out of every
EX denominator; a task with no prediction counts as wrong (``error="no prediction"``), unless
``partial`` asks to score only the tasks that have one (the report says so: ``partial``,
``left_out``).

    >>> from eval.loaders import BenchmarkSpec, load_benchmark
    >>> bench = load_benchmark(BenchmarkSpec(name="spider_dev", kind="spider", data_dir=spider_dir))
    >>> len(bench.tasks)
    2
    >>> preds = {"spider_dev:0": "SELECT count(*) FROM singer"}
    >>> report = score_predictions(bench, preds, workers=1)
    >>> report.overall.ex_bird, report.missing_predictions   # one right, the other missing
    (0.5, 1)
"""

from __future__ import annotations

import multiprocessing
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

from pydantic import Field

from core.types import Frozen
from eval.grading.column_matching import ex_columns
from eval.grading.prediction_files import resolve_key
from eval.loaders import LoadedBenchmark, task_index
from eval.metrics import ex_bird, ex_spider, order_matters, r_ves, time_ratio, ves_reward
from eval.sds import SDS_BUCKETS, sds_bucket
from pipelines.contracts import DatabaseRef, Difficulty, ExecutionResult, SkippedTask
from pipelines.sandbox import Sandbox, SandboxError
from pipelines.sandbox.sandbox import ENGINES

# Scoring needs whole result sets (BIRD compares set(pred) == set(gold)); this cap only stops
# a runaway prediction from exhausting memory, and a truncated result is scored wrong.
SCORING_ROW_CAP = 1_000_000
BIRD_TIMEOUT_S = 30.0  # BIRD's official per-query limit
NO_PREDICTION = "no prediction"
DIFFICULTY_ORDER = ("easy", "medium", "hard", "extra", "simple", "moderate", "challenging")
UNLABELLED = "unlabelled"


class QuestionVerdict(Frozen):
    """How one prediction fared. ``ex_*`` are False when the gold query failed."""

    task_id: str
    index: int  # position in the benchmark's question file
    db_id: str
    difficulty: Difficulty | None
    sds: int | None = None  # the question's SDS total, where its benchmark rates it
    floor_construct: str | None = None  # the one construct it exercises, where one is named
    sql: str | None  # the prediction; None when there was none
    ex_bird: bool
    ex_spider: bool
    ex_columns: bool  # column matching (eval/grading/column_matching.py)
    error: str | None = None  # the prediction's error, or "no prediction"
    error_kind: str | None = None
    gold_error: str | None = None
    ves_reward: float | None = None  # R-VES reward, when timing was asked for


class ExecutionVerdicts(Frozen):
    """One executed prediction against its executed gold, under the three semantics."""

    ex_bird: bool
    ex_spider: bool
    ex_columns: bool


def execution_verdicts(
    pred: ExecutionResult, gold: ExecutionResult, gold_sql: str
) -> ExecutionVerdicts:
    """EX BIRD, EX Spider and column matching of ``pred`` against ``gold`` (both run already).

    An error or a result truncated at the row cap is wrong under all three.

        >>> pred = ExecutionResult(rows=((7, "Ann", 3),), row_count=1, hash="p")
        >>> gold = ExecutionResult(rows=(("Ann", 3),), row_count=1, hash="g")
        >>> verdicts = execution_verdicts(pred, gold, "SELECT name, count(*) FROM t GROUP BY name")
        >>> verdicts.ex_bird, verdicts.ex_spider, verdicts.ex_columns   # an extra id column
        (False, False, True)
    """
    return ExecutionVerdicts(
        ex_bird=ex_bird(pred, gold),
        ex_spider=pred.ok
        and not pred.truncated
        and not gold.truncated
        and ex_spider(pred.rows, gold.rows, order_matters(gold_sql)),
        ex_columns=ex_columns(pred, gold, gold_sql),
    )


class GroupScore(Frozen):
    """EX of one group of questions (all, one difficulty, one SDS bucket, one construct) whose
    gold query runs."""

    group: str
    count: int
    ex_bird: float
    ex_spider: float
    ex_columns: float
    r_ves: float | None = None


class ScoreReport(Frozen):
    benchmark: str
    kind: str
    split: str
    scored: int  # questions counted in EX: a task whose gold query ran
    overall: GroupScore
    by_difficulty: tuple[GroupScore, ...]
    by_sds: tuple[GroupScore, ...] = ()  # per SDS bucket, for a benchmark that rates its questions
    by_construct: tuple[GroupScore, ...] = ()  # per construct, for questions that name one
    gold_failures: tuple[QuestionVerdict, ...]
    missing_predictions: int
    ignored_predictions: int  # predictions for questions outside the loaded tasks
    partial: bool = False  # only the tasks with a prediction were scored
    left_out: int = 0  # partial: loaded tasks without a prediction, in no EX denominator
    skipped: tuple[SkippedTask, ...]  # questions whose database is missing
    verdicts: tuple[
        QuestionVerdict, ...
    ]  # every scored task (every loaded one unless partial), in task order
    workers: int
    wall_s: float = Field(ge=0)


class _Job(Frozen):
    task_id: str
    db: DatabaseRef
    gold_db: DatabaseRef
    gold_sql: str
    pred_sql: str | None
    timeout_s: float
    ves_iterations: int


class _Outcome(Frozen):
    task_id: str
    ex_bird: bool
    ex_spider: bool
    ex_columns: bool
    error: str | None
    error_kind: str | None
    gold_error: str | None
    ves_reward: float | None


def score_predictions(
    benchmark: LoadedBenchmark,
    predictions: Mapping[str | int, str],
    *,
    workers: int = 1,
    sandbox_timeout_s: float = BIRD_TIMEOUT_S,
    ves_iterations: int = 0,
    partial: bool = False,
) -> ScoreReport:
    """Execute every task's gold and predicted SQL and score them under the three EX semantics.

    ``predictions`` keys are task ids (``"spider_dev:3"``) or question indexes (``3`` / ``"3"``).
    ``workers > 1`` runs questions in a process pool, each worker with its own Sandbox;
    ``ves_iterations > 0`` also times correct predictions for R-VES; ``partial`` scores only
    the tasks that have a prediction.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if ves_iterations < 0:
        raise ValueError(f"ves_iterations must be >= 0, got {ves_iterations}")
    by_index = {resolve_key(key, benchmark): sql for key, sql in predictions.items()}
    task_indexes = {task_index(t.task_id) for t in benchmark.tasks}
    tasks = [t for t in benchmark.tasks if not partial or task_index(t.task_id) in by_index]
    jobs = [
        _Job(
            task_id=t.task_id,
            db=t.db,
            gold_db=t.gold_database,
            gold_sql=t.gold_sql or "",
            pred_sql=by_index.get(task_index(t.task_id)),
            timeout_s=sandbox_timeout_s,
            ves_iterations=ves_iterations,
        )
        for t in tasks
    ]
    started = time.perf_counter()
    outcomes = _run(jobs, workers, sandbox_timeout_s)
    wall_s = time.perf_counter() - started

    verdicts = tuple(
        QuestionVerdict(
            task_id=task.task_id,
            index=task_index(task.task_id),
            db_id=task.db.db_id,
            difficulty=task.difficulty,
            sds=task.sds,
            floor_construct=task.floor_construct,
            sql=job.pred_sql,
            **outcome.model_dump(exclude={"task_id"}),
        )
        for task, job, outcome in zip(tasks, jobs, outcomes, strict=True)
    )
    counted = [v for v in verdicts if v.gold_error is None]
    groups: dict[str, list[QuestionVerdict]] = defaultdict(list)
    for verdict in counted:
        groups[verdict.difficulty or UNLABELLED].append(verdict)
    order = {name: i for i, name in enumerate(DIFFICULTY_ORDER)}
    buckets: dict[str, list[QuestionVerdict]] = defaultdict(list)
    constructs: dict[str, list[QuestionVerdict]] = defaultdict(list)
    for verdict in counted:
        if verdict.sds is not None:
            buckets[sds_bucket(verdict.sds)].append(verdict)
        if verdict.floor_construct is not None:
            constructs[verdict.floor_construct].append(verdict)
    return ScoreReport(
        benchmark=benchmark.name,
        kind=benchmark.kind,
        split=benchmark.split,
        scored=len(counted),
        overall=_group_score("all", counted, ves_iterations > 0),
        by_difficulty=tuple(
            _group_score(name, groups[name], ves_iterations > 0)
            for name in sorted(groups, key=lambda g: order.get(g, len(order)))
        ),
        by_sds=tuple(
            _group_score(f"SDS {name}", buckets[name], ves_iterations > 0)
            for name in SDS_BUCKETS
            if buckets[name]
        ),
        by_construct=tuple(
            _group_score(f"construct {name}", constructs[name], ves_iterations > 0)
            for name in sorted(constructs)
        ),
        gold_failures=tuple(v for v in verdicts if v.gold_error is not None),
        missing_predictions=sum(job.pred_sql is None for job in jobs),
        ignored_predictions=len(set(by_index) - task_indexes),
        partial=partial,
        left_out=len(benchmark.tasks) - len(tasks),
        skipped=benchmark.skipped,
        verdicts=verdicts,
        workers=workers,
        wall_s=wall_s,
    )


def _group_score(name: str, verdicts: Sequence[QuestionVerdict], with_ves: bool) -> GroupScore:
    n = len(verdicts)
    return GroupScore(
        group=name,
        count=n,
        ex_bird=sum(v.ex_bird for v in verdicts) / n if n else 0.0,
        ex_spider=sum(v.ex_spider for v in verdicts) / n if n else 0.0,
        ex_columns=sum(v.ex_columns for v in verdicts) / n if n else 0.0,
        r_ves=r_ves([v.ves_reward or 0.0 for v in verdicts]) if with_ves else None,
    )


# --- execution (in this process or in pool workers) -------------------------------------------

_sandbox: Sandbox | None = None


def _init_worker(timeout_s: float) -> None:
    global _sandbox
    _sandbox = Sandbox(timeout_s=timeout_s, row_cap=SCORING_ROW_CAP)


def _run(jobs: list[_Job], workers: int, timeout_s: float) -> list[_Outcome]:
    if workers == 1 or len(jobs) <= 1:
        _init_worker(timeout_s)
        return [_score_job(job) for job in jobs]
    # forkserver, not fork: the caller may hold threads (Ray, asyncio) whose locks a fork would
    # copy mid-use. The server imports this module once; each worker is a cheap fork of it.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    chunk = max(1, min(16, len(jobs) // (workers * 4)))
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(timeout_s,)
    ) as pool:
        return list(pool.map(_score_job, jobs, chunksize=chunk))


def _score_job(job: _Job) -> _Outcome:
    assert _sandbox is not None, "worker sandbox not initialised"
    gold = _sandbox.execute(job.gold_sql, job.gold_db)
    if job.pred_sql is None:
        return _outcome(job, gold_error=gold.error, error=NO_PREDICTION, error_kind="missing")
    pred = _sandbox.execute(job.pred_sql, job.db)
    if not gold.ok:
        return _outcome(job, gold_error=gold.error, error=pred.error, error_kind=pred.error_kind)
    verdicts = execution_verdicts(pred, gold, job.gold_sql)
    reward = None
    if job.ves_iterations:
        reward = ves_reward(_time_ratio(job) if verdicts.ex_bird else None)
    error = pred.error or ("result exceeds the scoring row cap" if pred.truncated else None)
    return _outcome(
        job,
        **verdicts.model_dump(),
        error=error,
        error_kind=pred.error_kind or ("truncated" if pred.truncated else None),
        gold_error="gold result exceeds the scoring row cap" if gold.truncated else None,
        ves_reward=reward,
    )


def _outcome(job: _Job, **fields: object) -> _Outcome:
    base: dict[str, object] = {
        "ex_bird": False,
        "ex_spider": False,
        "ex_columns": False,
        "error": None,
        "error_kind": None,
        "gold_error": None,
        "ves_reward": None,
    }
    return _Outcome(task_id=job.task_id, **{**base, **fields})


def _time_ratio(job: _Job) -> float | None:
    """Gold/pred time ratio over alternating runs (BIRD's R-VES timing); None if a run fails.

    Timed on the bare read-only engine (still ``mode=ro`` with a timeout), not through
    ``Sandbox.execute``: the guard's parse would add the same milliseconds to both sides and
    pull every ratio towards 1. The prediction already passed the guard when it was scored.
    """
    assert job.pred_sql is not None
    engine = ENGINES[job.db.dialect][0](job.db.path)
    gold_s: list[float] = []
    pred_s: list[float] = []
    try:
        for _ in range(job.ves_iterations):
            for sql, sink in ((job.pred_sql, pred_s), (job.gold_sql, gold_s)):
                started = time.perf_counter()
                engine.run(sql, timeout_s=job.timeout_s, row_cap=SCORING_ROW_CAP)
                sink.append(max(time.perf_counter() - started, 1e-9))
    except SandboxError:
        return None
    finally:
        engine.close()
    return time_ratio(gold_s, pred_s)
