"""Constructs read off a DuckDB query's parse."""

from __future__ import annotations

import pytest

from eval.sql_constructs import sql_constructs


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT count(*) FROM tickets WHERE stage = 'queued'", ()),
        ("SELECT t.display_id, UNNEST(t.tags) AS tag FROM tickets AS t", ("unnest",)),
        (
            "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(link) "
            "WHERE link.type = 'is_resolved_by'",
            ("unnest", "typed_link"),
        ),
        (
            "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(link) "
            "WHERE link.type IN ('blocks', 'is_blocked_by')",
            ("unnest", "typed_link"),
        ),
        # a link joined by target kind, or a tag filtered on its type, is no typed-link traversal
        (
            "SELECT count(*) FROM tickets AS t, UNNEST(t.links) AS u(link) "
            "WHERE link.target_type = 'issue'",
            ("unnest",),
        ),
        (
            "SELECT count(*) FROM tickets AS t, UNNEST(t.tags) AS u(tag) WHERE tag.type = 'topic'",
            ("unnest",),
        ),
        (
            "WITH m AS (SELECT month(created_at) AS m, count(*) AS n FROM issues GROUP BY 1) "
            "SELECT m, n - lag(n) OVER (ORDER BY m) FROM m",
            ("window", "cte"),
        ),
        ("SELECT 1 AS a UNION ALL SELECT 2", ("set_op",)),
        ("SELECT account_id FROM accounts EXCEPT SELECT account_id FROM rev_orgs", ("set_op",)),
    ],
)
def test_constructs(sql, expected):
    assert sql_constructs(sql) == expected
