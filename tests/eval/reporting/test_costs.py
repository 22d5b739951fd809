import polars as pl
import pytest

from eval.reporting.ablation import ablation_table
from eval.reporting.costs import cost_lines, usd, with_reference_costs
from eval.reporting.report import write_run_report
from eval.reporting.result import run_result
from eval.sweep.records import QuestionRecord, records_to_table
from models.budget import Price
from models.config import ModelSettings

MINI = ("gpt-4.1-mini", Price(prompt_per_mtok=0.40, completion_per_mtok=1.60))
MODEL = ModelSettings(
    name="m",
    slots={"default": {"backend": "local", "model": "m", "price": {"per_hour": 0.0892}}},
)


def rec(i, ex, *, cost, busy_s, prompt=1000, completion=100):
    return QuestionRecord(
        task_id=f"t:{i}",
        position=i,
        benchmark="b",
        db_id="db",
        question="q",
        gold_sql="SELECT 1",
        sql="s",
        ex_bird=ex,
        ex_spider=ex,
        calls=1,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=cost,
        busy_s=busy_s,
    )


def frame(*records):
    return pl.from_arrow(records_to_table(list(records)))


def test_cost_per_correct_answer_is_the_total_over_the_right_answers():
    result = run_result(
        frame(
            rec(0, True, cost=0.02, busy_s=10.0),
            rec(1, False, cost=0.04, busy_s=20.0),
            rec(2, False, cost=0.06, busy_s=30.0),
        ),
        label="r",
        reference=MINI,
    )
    m = result.metrics()
    assert m["cost_usd_per_question"] == pytest.approx(0.04)
    assert m["cost_usd_per_correct"] == pytest.approx(0.12)  # all three paid for the one right
    assert m["busy_s_per_question"] == pytest.approx(20.0)
    assert m["ref_cost_usd_per_question"] == pytest.approx((1000 * 0.40 + 100 * 1.60) / 1e6)
    assert m["ref_cost_usd_per_correct"] == pytest.approx(3 * m["ref_cost_usd_per_question"])
    assert result.costs.reference.name == "gpt-4.1-mini"


def test_a_run_with_no_right_answer_says_so_instead_of_dividing_by_zero(tmp_path):
    none_right = frame(rec(0, False, cost=0.01, busy_s=1.0), rec(1, False, cost=0.03, busy_s=1.0))
    result = run_result(none_right, label="r", model=MODEL, reference=MINI)
    m = result.metrics()
    assert "cost_usd_per_correct" not in m and "ref_cost_usd_per_correct" not in m
    configured, hosted = cost_lines(result.costs, result.accuracy.scored)
    assert configured.startswith("$0.02/question, n/a (none correct)/correct at the configured")
    assert "(default $0.0892/h)" in configured and "model busy 1.0 s/question" in configured
    assert hosted.startswith("$0.00056/question, n/a (none correct)/correct with its tokens at")
    report = write_run_report(result, tmp_path)
    text = report[0].read_text()
    assert "## Cost" in text and f"- {configured}" in text and f"- {hosted}" in text


def test_usd_keeps_small_amounts_readable():
    assert [usd(0.000123456), usd(0.5), usd(1234.5), usd(None)] == [
        "$0.000123",
        "$0.5",
        "$1,234.50",
        "n/a",
    ]


def test_a_finished_run_is_priced_again_at_another_reference_from_its_token_metrics():
    runs = pl.DataFrame(
        {
            "run_name": ["adaptive", "single_pass"],
            "ex_bird": [0.5, 0.25],
            "prompt_tokens_per_question": [4000.0, 1000.0],
            "completion_tokens_per_question": [400.0, 100.0],
            "prompt_tokens_per_correct": [8000.0, None],  # single pass: none right
            "completion_tokens_per_correct": [800.0, None],
            "ref_cost_usd_per_question": [9.0, 9.0],  # logged at another reference: dropped
        }
    )
    sonnet = ("claude-sonnet-4", Price(prompt_per_mtok=3.0, completion_per_mtok=15.0))
    table = ablation_table(with_reference_costs(runs, sonnet), baseline="adaptive")
    assert "ref_cost_usd_per_question" not in table.columns
    per_question = table.get_column("cost_usd_per_question@claude-sonnet-4").to_list()
    assert per_question == pytest.approx([(4000 * 3 + 400 * 15) / 1e6, (1000 * 3 + 100 * 15) / 1e6])
    assert table.get_column("cost_usd_per_correct@claude-sonnet-4").to_list()[1] is None
    assert "cost_usd_per_question@" not in "".join(with_reference_costs(runs, None).columns)
