"""Where column expressions of qualified queries point, on the work-item schema."""

from __future__ import annotations

import pytest
from sqlglot import exp

from pipelines.agentic_mode.checks import parse
from pipelines.agentic_mode.references import Ref


def first_projection(sql, context) -> Ref | None:
    parsed = parse(sql, context.index)
    projection = parsed.qualified.selects[0]
    return parsed.resolver.resolve(
        projection.this if isinstance(projection, exp.Alias) else projection
    )


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT STAGE FROM Tickets", Ref("tickets", "stage")),
        ("SELECT t.sla.policy.name FROM tickets AS t", Ref("tickets", "sla.policy.name")),
        ("SELECT t.links FROM tickets AS t", Ref("tickets", "links")),
        ("SELECT t.links[1] FROM tickets AS t", Ref("tickets", "links", element=True)),
        (
            "SELECT link FROM tickets AS t, UNNEST(t.links) AS u(link)",
            Ref("tickets", "links", element=True),
        ),
        (
            "SELECT link.type FROM tickets AS t, UNNEST(t.links) AS u(link)",
            Ref("tickets", "links.type"),
        ),
        (
            "SELECT u.display_id FROM tickets, UNNEST(links) AS u",
            Ref("tickets", "links.display_id"),
        ),
        (
            "WITH c AS (SELECT t.severity AS s FROM tickets AS t) SELECT c.s FROM c",
            Ref("tickets", "severity"),
        ),
        (
            "SELECT (SELECT max(u.display_name) FROM users AS u WHERE u.user_id = t.owner_id) FROM tickets AS t",
            None,  # an aggregate is no schema column
        ),
        ("SELECT 1 + 1", None),
        ("SELECT x.y FROM (SELECT 1 AS y) AS x", None),
        ("SELECT n FROM (SELECT count(*) AS n FROM tickets) AS x", None),
    ],
)
def test_references_resolve_to_schema_paths(work_context, sql, expected):
    assert first_projection(sql, work_context) == expected


def test_correlated_and_lambda_references(work_context):
    parsed = parse(
        "SELECT 1 FROM tickets AS t WHERE EXISTS (SELECT 1 FROM users AS u WHERE u.title = t.stage) "
        "AND len(list_filter(t.links, lambda x: x.type = 'blocks')) > 0",
        work_context.index,
    )
    found = {
        parsed.resolver.resolve(side)
        for eq in parsed.qualified.find_all(exp.EQ)
        for side in (eq.this,)
    }
    assert found == {Ref("users", "title"), Ref("tickets", "links.type")}
    outer = next(c for c in parsed.qualified.find_all(exp.Column) if c.name == "stage")
    assert parsed.resolver.resolve(outer) == Ref("tickets", "stage")
