"""The response agent: numbers checked against the result, the template read off the SQL."""

from __future__ import annotations

import pytest

from pipelines.contracts import ExecutionResult
from serve.engine import confidence_of
from serve.explain import Answered, ResponseAgent, grounded, numbers_in, template_explanation
from tests.serve.conftest import FakeModel, explanation_json

AVG = ExecutionResult(
    rows=(("France", 40.5), ("USA", 29.0)), columns=("country", "avg_age"), row_count=2, hash="h"
)
SQL = "SELECT country, AVG(age) FROM singer WHERE age > 20 GROUP BY country ORDER BY 2 DESC LIMIT 2"

ASKED = Answered(question="Average age by country?", sql=SQL, result=AVG)


def test_numbers_in_text():
    assert numbers_in("1,234.5 rows in 2014, -3 and 7.") == ["1,234.5", "2014", "-3", "7"]


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("French singers average 40.5 years, Americans 29.", True),
        ("French singers average about 41 years.", True),  # 40.5 rounded
        ("Only singers older than 20 count; 2 countries are listed.", True),  # SQL, row count
        ("French singers average 44 years.", False),
        ("There are 1,000 singers.", False),
    ],
)
def test_grounded(text, ok):
    assert grounded(text, SQL, AVG) is ok


def test_template_reads_aggregate_filter_grouping_order_and_limit():
    text, assumptions = template_explanation(SQL, AVG)
    assert text == (
        "The result has 2 rows. It averages values from singer, keeping rows where age > 20, "
        "per country, ordered by 2 DESC, keeping the first 2."
    )
    assert assumptions == ("The question's condition is read as age > 20.",)
    assert grounded(text, SQL, AVG) and all(grounded(a, SQL, AVG) for a in assumptions)


def test_template_names_joins_as_assumptions():
    sql = "SELECT s.name FROM singer s JOIN concert c ON s.singer_id = c.singer_id WHERE c.year = 2014"
    result = ExecutionResult(rows=(("Joe",),), columns=("name",), row_count=1, hash="h")
    text, assumptions = template_explanation(sql, result)
    assert text.startswith("The answer is Joe. It lists rows of concert, singer")
    assert "concert AS c is joined on s.singer_id = c.singer_id." in assumptions


async def test_the_agent_keeps_a_grounded_answer_and_drops_an_ungrounded_one():
    good = FakeModel("", explanation_json("France leads with 40.5.", ["age is in years"]))
    said = await ResponseAgent(good).explain(ASKED)
    assert said.source == "model" and said.text == "France leads with 40.5."
    assert said.usage.calls == 1
    bad = FakeModel("", explanation_json("France leads with 40.5.", ["ages above 30 only"]))
    fallback = await ResponseAgent(bad).explain(ASKED)
    assert fallback.source == "template" and fallback.fallback_reason == "ungrounded"


async def test_the_agent_falls_back_on_unparsable_output():
    agent = ResponseAgent(FakeModel("", "not json"))
    said = await agent.explain(ASKED)
    assert said.source == "template" and said.fallback_reason == "model_failed:JSONDecodeError"


def test_confidence_rises_with_agreement_and_candidates():
    assert confidence_of("a", ["a"]) == 0.5
    assert (
        confidence_of("a", ["a", "b"])
        < confidence_of("a", ["a", "a"])
        < confidence_of("a", ["a"] * 5)
    )
    assert confidence_of("a", []) == 0.0
