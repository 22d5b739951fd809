"""Spider hardness of SQL text (pipelines/sql_hardness.py); its agreement with the official
parse on all of Spider dev is checked where the loader labels questions (tests/eval/loaders)."""

from __future__ import annotations

import pytest
import sqlglot

from pipelines.sql_hardness import HARDNESS, classify, hardness_from_sql


@pytest.mark.parametrize(
    ("sql", "hardness"),
    [
        ("SELECT count(*) FROM singer", "easy"),
        ("SELECT name FROM singer WHERE age > 30", "easy"),
        ("SELECT name, age FROM singer WHERE age > 30", "medium"),
        ("SELECT name FROM singer WHERE age > 30 ORDER BY age LIMIT 1", "hard"),
        ("SELECT name FROM singer WHERE age > 30 OR country = 'US' ORDER BY age LIMIT 1", "extra"),
        ("SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)", "hard"),
        ("SELECT a FROM t UNION SELECT b FROM u", "hard"),
        (
            (
                "SELECT T1.name, count(*) FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id "
                "GROUP BY T1.id HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 3"
            ),
            "extra",
        ),
    ],
)
def test_hardness_rules_by_hand(sql, hardness):
    assert hardness_from_sql(sql) == hardness


def test_hardness_levels_are_ordered_easiest_first():
    assert [classify(c1, 0, 0) for c1 in (0, 2, 3, 4)] == list(HARDNESS)


def test_sql_sqlglot_cannot_read_is_a_parse_error():
    with pytest.raises(sqlglot.errors.ParseError):
        hardness_from_sql("SELECT FROM WHERE (")
