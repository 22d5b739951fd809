import json

import polars as pl
import pytest

from core.config import load_config
from eval.grading.judge import (
    AnswerJudge,
    ConfiguredJudge,
    JudgeError,
    JudgeSlotMissing,
    judge_lines,
    judge_metrics,
    parse_verdict,
)
from eval.settings import EvalSettings
from eval.sweep.records import QuestionRecord, records_to_table
from models.budget import Price
from pipelines.contracts import DatabaseRef, ExecutionResult, Task

SETTINGS = EvalSettings(judge="default", judge_preview_rows=2)
TASK = Task(
    task_id="t:0",
    question="Which members are on the gold plan?",
    evidence="gold plan refers to plan = 'gold'",
    db=DatabaseRef(db_id="clinic", path="/nowhere.sqlite"),
)
ROWS = ExecutionResult(rows=(("Ann",), ("Cy",), ("Flo",)), columns=("name",), row_count=3, hash="h")


def verdict(correct, score, reason="ok"):
    return json.dumps({"reason": reason, "score": score, "correct": correct})


def test_a_verdict_is_read_from_the_reply_even_amid_other_text():
    assert parse_verdict(verdict(True, 50)) == (True, 50)
    assert parse_verdict("Sure.\n```json\n" + verdict(False, 12) + "\n```") == (False, 12)
    for garbage in ("I think it is right", '{"score": 70, "correct": true}', '{"correct": "maybe"'):
        with pytest.raises(JudgeError):
            parse_verdict(garbage)


async def test_the_judge_sees_question_sql_and_result_preview_and_is_priced(judge_client):
    client, model = judge_client(lambda prompt: verdict(True, 46), Price(per_hour=36.0))
    judged = await AnswerJudge(client, SETTINGS).judge(TASK, "SELECT name FROM member", ROWS)
    assert (judged.correct, judged.score, judged.error) == (True, 46, None)
    assert judged.usage.cost_usd == pytest.approx(36.0 * 2.0 / 3600)  # 2 s of the slot's hour
    (prompt,) = model.prompts
    assert TASK.question in prompt and "Evidence: gold plan" in prompt
    assert "SELECT name FROM member" in prompt and "SQLite" in prompt
    assert "3 rows (name): Ann; Cy …" in prompt  # two preview rows, and the row count


async def test_a_garbage_reply_is_recorded_as_no_verdict_not_raised(judge_client):
    client, _ = judge_client(lambda prompt: "the answer looks fine to me")
    judged = await AnswerJudge(client, SETTINGS).judge(TASK, "SELECT name FROM member", ROWS)
    assert judged.correct is None and judged.score is None
    assert judged.error.startswith("InvalidModelOutput")  # off the JSON schema: a typed error


async def test_an_answer_without_a_result_is_wrong_without_asking(judge_client):
    client, model = judge_client(lambda prompt: verdict(True, 50))
    judge = AnswerJudge(client, SETTINGS)
    failed = ExecutionResult(error="no such column: nam", hash="ERR:1")
    for sql, result in (("SELECT nam FROM member", failed), ("", None)):
        judged = await judge.judge(TASK, sql, result)
        assert (judged.correct, judged.score) == (False, 0)
    assert model.prompts == []


def test_the_judge_is_built_on_a_slot_of_the_model_config():
    model = dict(load_config(["model=replay"]).model)
    with pytest.raises(JudgeSlotMissing, match="slots: \\['default'\\]"):
        ConfiguredJudge(model, EvalSettings(judge="strong"))
    judge = ConfiguredJudge(model, EvalSettings(judge="default"))()
    assert isinstance(judge, AnswerJudge)


def record(i, ex, judged, score=None, error=None, cost=0.0):
    return QuestionRecord(
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question="q",
        sql="s",
        ex_bird=ex,
        ex_spider=ex,
        judge_correct=judged,
        judge_score=score,
        judge_error=error,
        judge_cost_usd=cost,
    )


def test_a_runs_verdicts_are_aggregated_with_their_agreement_with_ex():
    frame = pl.from_arrow(
        records_to_table(
            [
                record(0, True, True, 45, cost=0.002),
                record(1, True, False, 20, cost=0.002),
                record(2, False, False, 5, cost=0.002),
                record(3, False, False, 10, cost=0.002),
                record(4, None, True, 40, cost=0.002),  # no gold: no EX to agree with
                record(5, True, None, error="JudgeError: no JSON object", cost=0.002),
            ]
        )
    )
    m = judge_metrics(frame)
    assert (m["judge_verdicts"], m["judge_no_verdict"], m["judge_ex_pairs"]) == (5, 1, 4)
    assert m["judge_correct"] == pytest.approx(2 / 5) and m["judge_score_mean"] == 24
    assert m["judge_agreement_ex"] == pytest.approx(3 / 4)
    # observed 0.75, chance 0.5*0.25 + 0.5*0.75 = 0.5: kappa 0.5
    assert m["judge_kappa_ex"] == pytest.approx(0.5)
    assert m["judge_cost_usd_per_question"] == pytest.approx(0.002)
    assert judge_lines(m) == [
        "answer correctness 0.400 over 5 verdicts, mean score 24.0/50; 1 without a verdict",
        "agrees with EX on 75% of 4 questions, Cohen's κ 0.50",
    ]
    unjudged = pl.from_arrow(records_to_table([record(0, True, None)]))
    assert judge_metrics(unjudged) == {} and judge_lines({}) == []
    assert judge_lines({"judge_verdicts": 0, "judge_no_verdict": 3}) == [
        "no verdict on any of the 3 questions judged"
    ]
