from eval.sweep.grading import Grader
from pipelines.contracts import CandidateSQL, Prediction, Task


def prediction(task: Task, sql: str, pool: list[str] = ()) -> Prediction:
    candidates = tuple(CandidateSQL(sql=s, producer=f"p{i}") for i, s in enumerate(pool))
    return Prediction(task_id=task.task_id, sql=sql, candidates=candidates)


async def test_verdicts_and_candidate_correctness(clinic_db, fakes):
    task = fakes.make_tasks(clinic_db, 1)[0]
    grader = Grader(fakes.SQLiteExecutor(), ves_iterations=2)
    pool = [fakes.WRONG, task.gold_sql, "SELECT bad FROM member"]
    grade = await grader.grade(task, prediction(task, task.gold_sql, pool))
    assert (grade.ex_bird, grade.ex_spider) == (True, True)
    assert [c.correct_bird for c in grade.candidates] == [False, True, False]
    assert grade.candidates[2].error and grade.candidates[2].hash.startswith("ERR:")
    assert grade.ves_reward and grade.ves_reward > 0
    wrong = await grader.grade(task, prediction(task, fakes.WRONG))
    assert (wrong.ex_bird, wrong.ex_spider, wrong.ves_reward) == (False, False, 0.0)


async def test_spider_semantics_respect_order_by_while_bird_ignores_it(clinic_db, fakes):
    task = fakes.make_tasks(clinic_db, 3)[2]
    assert "ORDER BY" in task.gold_sql
    reversed_sql = "SELECT name FROM member ORDER BY age ASC"
    grader = Grader(fakes.SQLiteExecutor(), ves_iterations=1)
    grade = await grader.grade(task, prediction(task, reversed_sql, [reversed_sql, task.gold_sql]))
    assert (grade.ex_bird, grade.ex_spider) == (True, False)
    # same result hash (same bag of rows) but different order: each candidate judged on its own rows
    assert [(c.correct_bird, c.correct_spider) for c in grade.candidates] == [
        (True, False),
        (True, True),
    ]


async def test_spider_semantics_allow_duplicates_to_matter(clinic_db, fakes):
    task = Task(
        task_id="d", question="plans", db=clinic_db, gold_sql="SELECT DISTINCT plan FROM member"
    )
    grader = Grader(fakes.SQLiteExecutor(), ves_iterations=1)
    grade = await grader.grade(task, prediction(task, "SELECT plan FROM member"))
    assert (grade.ex_bird, grade.ex_spider) == (True, False)


async def test_column_matching_accepts_an_extra_column_both_ex_semantics_reject(clinic_db, fakes):
    task = Task(
        task_id="c", question="plans", db=clinic_db, gold_sql="SELECT DISTINCT plan FROM member"
    )
    grader = Grader(fakes.SQLiteExecutor(), ves_iterations=1)
    extra = await grader.grade(
        task, prediction(task, "SELECT plan, count(*) FROM member GROUP BY plan")
    )
    assert (extra.ex_bird, extra.ex_spider, extra.ex_columns) == (False, False, True)
    missing = await grader.grade(task, prediction(task, "SELECT count(*) FROM member"))
    assert missing.ex_columns is False


async def test_each_candidate_is_judged_by_column_matching_too(clinic_db, fakes):
    task = Task(
        task_id="c", question="plans", db=clinic_db, gold_sql="SELECT DISTINCT plan FROM member"
    )
    extra = "SELECT plan, count(*) FROM member GROUP BY plan"
    pool = [extra, "SELECT count(*) FROM member", task.gold_sql, "SELECT bad FROM member"]
    grade = await Grader(fakes.SQLiteExecutor(), ves_iterations=1).grade(
        task, prediction(task, extra, pool)
    )
    assert [(c.correct_bird, c.correct_columns) for c in grade.candidates] == [
        (False, True),
        (False, False),
        (True, True),
        (False, False),
    ]


async def test_failing_gold_is_reported_not_scored(clinic_db, fakes):
    task = Task(task_id="g", question="?", db=clinic_db, gold_sql="SELECT missing FROM member")
    grader = Grader(fakes.SQLiteExecutor(), ves_iterations=1)
    grade = await grader.grade(task, prediction(task, fakes.GOLD[0], [fakes.GOLD[0]]))
    assert grade.ex_bird is None and grade.ex_spider is None
    assert "missing" in grade.gold_error
    assert grade.candidates[0].correct_bird is None and grade.candidates[0].correct_columns is None


async def test_no_gold_means_no_verdict_but_hashes(clinic_db, fakes):
    task = Task(task_id="n", question="?", db=clinic_db)
    executor = fakes.SQLiteExecutor()
    known = await executor.execute(fakes.GOLD[1], clinic_db)
    pool = (CandidateSQL(sql=fakes.GOLD[1], producer="p", exec_result=known),)
    grader = Grader(executor, ves_iterations=1)
    grade = await grader.grade(task, Prediction(task_id="n", sql=fakes.GOLD[1], candidates=pool))
    assert grade.ex_bird is None and grade.exec_hash == known.hash
    assert (grade.candidates[0].hash, grade.candidates[0].correct_bird) == (known.hash, None)


async def test_empty_prediction_is_wrong(clinic_db, fakes):
    task = fakes.make_tasks(clinic_db, 1)[0]
    grade = await Grader(fakes.SQLiteExecutor(), ves_iterations=1).grade(task, prediction(task, ""))
    assert (grade.ex_bird, grade.ex_spider, grade.exec_hash) == (False, False, None)


async def test_known_candidate_results_are_not_executed_twice(clinic_db, fakes):
    task = fakes.make_tasks(clinic_db, 1)[0]
    base = fakes.SQLiteExecutor()
    known = await base.execute(task.gold_sql, clinic_db)
    pool = tuple(
        CandidateSQL(sql=task.gold_sql + " ", producer=f"p{i}", exec_result=known) for i in range(5)
    )
    calls = []

    class CountingExecutor:
        async def execute(self, sql, db):
            calls.append(sql)
            return await base.execute(sql, db)

    counting = CountingExecutor()
    grader = Grader(counting, ves_iterations=1)
    grade = await grader.grade(task, Prediction(task_id="x", sql=task.gold_sql, candidates=pool))
    assert all(c.correct_bird for c in grade.candidates)
    # prediction + gold + one timed pair for R-VES; none of the five same-hash candidates re-ran
    assert len(calls) == 4
