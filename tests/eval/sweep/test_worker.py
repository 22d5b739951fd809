import json
import time

import pytest

from eval.grading.judge import AnswerJudge
from eval.settings import EvalSettings
from eval.sweep.records import QuestionRecord
from eval.sweep.worker import SweepWorker, WorkerSettings
from models.budget import Price


def batch(tasks, start=0):
    return {
        "position": list(range(start, start + len(tasks))),
        "task": [t.model_dump_json() for t in tasks],
    }


async def run(worker, tasks):
    out = await worker(batch(tasks))
    return [QuestionRecord.model_validate_json(raw) for raw in out["record"]]


async def test_a_batch_is_answered_graded_and_recorded(clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 4)
    tasks[0] = tasks[0].model_copy(update={"sds": 17})  # a question its benchmark rates on SDS
    tasks[1] = tasks[1].model_copy(update={"floor_construct": "unnest"})  # a floor question
    settings = WorkerSettings(question_timeout_s=5, ves_iterations=1)
    worker = SweepWorker(fakes.ScriptedPipeline(), fakes.SQLiteExecutor(), settings)
    records = await run(worker, tasks)
    assert [r.task_id for r in records] == [t.task_id for t in tasks]
    assert [r.sds for r in records] == [17, None, None, None]
    assert [r.floor_construct for r in records] == [None, "unnest", None, None]
    assert [r.ex_bird for r in records] == [True, False, True, False]
    first = records[0]
    assert first.position == 0 and first.difficulty == "simple" and first.db_id == "clinic"
    assert [c.correct_bird for c in first.candidates] == [True, False, True, False]
    assert first.prompt_tokens == 100 and first.calls == 4 and not first.degraded


async def test_questions_of_a_batch_run_concurrently(clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 8)
    settings = WorkerSettings(question_timeout_s=5, ves_iterations=1)
    worker = SweepWorker(fakes.ScriptedPipeline(delay_s=0.3), fakes.SQLiteExecutor(), settings)
    started = time.perf_counter()
    await run(worker, tasks)
    assert time.perf_counter() - started < 8 * 0.3 / 2


async def test_a_hung_or_failing_question_becomes_a_degraded_record(clinic_db, fakes):
    tasks = fakes.make_tasks(clinic_db, 3)
    pipeline = fakes.ScriptedPipeline(hang="fake:1", fail="fake:2")
    worker = SweepWorker(
        pipeline, fakes.SQLiteExecutor(), WorkerSettings(question_timeout_s=0.5, ves_iterations=1)
    )
    started = time.perf_counter()
    ok, hung, failed = await run(worker, tasks)
    assert time.perf_counter() - started < 3
    assert not ok.degraded and ok.ex_bird
    assert (
        hung.degraded
        and hung.degradation_reasons == ("question_timeout",)
        and hung.ex_bird is False
    )
    assert failed.degraded and "model actor died" in failed.error and failed.sql == ""


async def test_a_broken_sandbox_leaves_the_verdict_unknown(clinic_db, fakes):
    class BrokenSandbox:
        async def execute(self, sql, db):
            raise ConnectionError("sandbox actor gone")

    settings = WorkerSettings(question_timeout_s=5, ves_iterations=1)
    worker = SweepWorker(fakes.ScriptedPipeline(), BrokenSandbox(), settings)
    (record,) = await run(worker, fakes.make_tasks(clinic_db, 1))
    assert record.ex_bird is None and "sandbox actor gone" in record.grading_error
    assert record.sql  # the answer itself is kept


async def test_each_answer_is_judged_once_graded_and_a_failing_judge_keeps_the_answer(
    clinic_db, fakes, judge_client
):
    def reply(prompt):  # accepts an answer unless it returned the silver members
        wrong = fakes.WRONG in prompt
        return json.dumps({"reason": "", "score": 12 if wrong else 44, "correct": not wrong})

    client, model = judge_client(reply, Price(prompt_per_mtok=1.0))
    settings = WorkerSettings(question_timeout_s=5, ves_iterations=1)
    tasks = fakes.make_tasks(clinic_db, 2)
    judged = SweepWorker(
        fakes.ScriptedPipeline(),
        fakes.SQLiteExecutor(),
        settings,
        judge=lambda: AnswerJudge(client, EvalSettings(judge="default")),
    )
    right, wrong = await run(judged, tasks)
    assert (right.ex_bird, right.judge_correct, right.judge_score) == (True, True, 44)
    assert (wrong.ex_bird, wrong.judge_correct, wrong.judge_score) == (False, False, 12)
    assert right.judge_cost_usd == pytest.approx(1000 / 1e6) and right.cost_usd == 0.001
    assert "Ann" in model.prompts[0]  # the judge saw the answer's rows (executed for it)

    def broken():
        raise ConnectionError("judge model gone")

    failing = SweepWorker(fakes.ScriptedPipeline(), fakes.SQLiteExecutor(), settings, judge=broken)
    (record,) = await run(failing, tasks[:1])
    assert record.ex_bird and record.sql and record.judge_correct is None
    assert record.judge_error == "ConnectionError: judge model gone"
    (unjudged,) = await run(
        SweepWorker(fakes.ScriptedPipeline(), fakes.SQLiteExecutor(), settings), tasks[:1]
    )
    assert unjudged.judge_correct is None and unjudged.judge_error is None


class CheckedFactory:
    """A factory that checks the run's storage first, as ``ConfiguredPipeline`` does."""

    def __init__(self, storage, pipeline):
        self.storage, self.pipeline, self.calls = storage, pipeline, 0

    def __call__(self):
        self.calls += 1
        self.storage.check()
        return self.pipeline


async def test_a_worker_that_cannot_reach_the_runs_storage_fails_each_question_naming_the_path(
    clinic_db, fakes, tmp_path
):
    import polars as pl

    from eval.sweep.driver import to_retry
    from eval.sweep.records import records_to_table
    from eval.sweep.storage import SharedStorage

    (tmp_path / "traces").mkdir()
    missing = tmp_path / "indexes" / "databases" / "clinic" / "CURRENT.json"
    storage = SharedStorage(
        storage=str(tmp_path), indexes=(str(missing),), directories=(str(tmp_path / "traces"),)
    )
    tasks = fakes.make_tasks(clinic_db, 3)
    settings = WorkerSettings(question_timeout_s=5, ves_iterations=1)
    factory = CheckedFactory(storage, fakes.ScriptedPipeline())
    records = await run(SweepWorker(factory, fakes.SQLiteExecutor(), settings), tasks)
    assert factory.calls == 1  # checked once per worker, not per question
    assert [r.degradation_reasons for r in records] == [("storage_unreachable",)] * 3
    assert all(r.sql == "" and not r.retrieval and not r.ex_bird for r in records)
    assert records[0].error == (
        f"StorageUnreachable: node local cannot reach {missing} on the run's storage "
        f"(paths.storage={tmp_path}): mount that storage at the same path on every node, or set "
        "paths.storage to storage every node reaches"
    )
    assert records[0].gold_error is None  # the gold still ran: the question counts, wrong
    frame = pl.from_arrow(records_to_table(records))
    assert to_retry(frame, "errors") == {t.task_id for t in tasks}  # a rerun answers them

    missing.parent.mkdir(parents=True)
    missing.write_text("{}")  # the storage reached: the same worker setup answers
    factory = CheckedFactory(storage, fakes.ScriptedPipeline())
    records = await run(SweepWorker(factory, fakes.SQLiteExecutor(), settings), tasks)
    assert not any(r.degraded for r in records)
