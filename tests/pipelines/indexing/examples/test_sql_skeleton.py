from __future__ import annotations

import pytest

from pipelines.indexing.examples.sql_skeleton import sql_skeleton, string_literals


@pytest.mark.parametrize(
    "a, b",
    [
        ("SELECT count(*) FROM singer", "select COUNT(*) from   concert"),
        (
            "SELECT name FROM singer WHERE country = 'France'",
            'SELECT title FROM song WHERE genre = "pop"',
        ),
        (
            "SELECT T1.a FROM x AS T1 JOIN y AS T2 ON T1.id = T2.id WHERE T2.v > 3 LIMIT 1",
            "SELECT T2.b FROM p AS T2 JOIN q AS T1 ON T2.k = T1.k WHERE T1.w > 10 LIMIT 5",
        ),
    ],
)
def test_same_structure_same_skeleton(a, b):
    assert sql_skeleton(a) == sql_skeleton(b) is not None


@pytest.mark.parametrize(
    "a, b",
    [
        ("SELECT name FROM singer WHERE age > 30", "SELECT name FROM singer WHERE age < 30"),
        ("SELECT name FROM singer", "SELECT DISTINCT name FROM singer"),
        ("SELECT count(*) FROM singer", "SELECT max(age) FROM singer"),
        (
            "SELECT a FROM t WHERE b = c",
            "SELECT a FROM t WHERE b = 'c'",
        ),  # a join-like compare is not a filter
    ],
)
def test_different_structure_different_skeleton(a, b):
    assert sql_skeleton(a) != sql_skeleton(b)


def test_unparsable_sql_has_no_skeleton():
    assert sql_skeleton("SELECT FROM WHERE (((") is None


def test_string_literals_handle_both_quote_styles_and_like():
    sql = "SELECT a FROM t WHERE name = \"O'Brien\" AND city LIKE '%York%' AND n = 3 AND z = 'x'"
    assert sorted(string_literals(sql)) == sorted(["O'Brien", "York", "x"])
    assert string_literals("not sql (((") == []
