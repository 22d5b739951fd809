"""Calls by name as written, and the engine probe."""

from __future__ import annotations

import pytest
import sqlglot

from pipelines.agentic_mode.functions import calls, has_function


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        (
            "SELECT IFF(a > 1, 1, 0), if(b, 1, 0), string_agg(c, ','), SUBSTRING(d, 1, 2) FROM t",
            "duckdb",
            [
                ("IFF", "IFF(a > 1, 1, 0)"),
                ("if", "if(b, 1, 0)"),
                ("string_agg", "string_agg(c, ',')"),
                ("SUBSTRING", "SUBSTRING(d, 1, 2)"),
            ],
        ),
        (
            "SELECT coalesce(nvl(a, 0), 1) FROM t",
            "sqlite",
            [("coalesce", "coalesce(nvl(a, 0), 1)"), ("nvl", "nvl(a, 0)")],
        ),
        ("SELECT CASE WHEN a THEN 1 END, CURRENT_DATE, EXTRACT(year FROM d) FROM t", "duckdb", []),
        ("SELECT IF((a > 1), 1, 0) FROM t", "duckdb", []),  # no argument starts with a name
    ],
)
def test_calls_are_named_as_written(sql, dialect, expected):
    tree = sqlglot.parse_one(sql, read=dialect)
    assert [(c.name, c.text) for c in calls(tree, sql, dialect)] == expected


@pytest.mark.parametrize("name", ["x) FROM t; --", "sqlite_version() + ", "", "1abc"])
def test_only_names_are_probed(name):
    assert has_function("sqlite", name) is False
    assert has_function("duckdb", name) is False
