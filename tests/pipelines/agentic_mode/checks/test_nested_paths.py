"""NestedPaths on the work-item DuckDB (links: a list of structs; sla: a struct of a struct):
what it reports, DuckDB refuses too; what it passes, DuckDB runs."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.agentic_mode.checks import NestedPaths, parse
from tests.pipelines.agentic_mode.conftest import findings_of, rows

STAGE = NestedPaths()


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT count(*) FROM tickets AS t WHERE t.links.type = 'blocks'",
            [("unnest_missing", "links")],
        ),
        ("SELECT links.display_id FROM tickets", [("unnest_missing", "links")]),
        (
            "WITH c AS (SELECT t.links FROM tickets AS t) SELECT count(*) FROM c WHERE c.links.type = 'blocks'",
            [("unnest_missing", "links")],
        ),
        (
            "SELECT link.typ FROM tickets AS t, UNNEST(t.links) AS u(link)",
            [("missing_subfield", "links.typ")],
        ),
        ("SELECT u.typ FROM tickets, UNNEST(links) AS u", [("missing_subfield", "links.typ")]),
        ("SELECT t.sla.state FROM tickets AS t", [("missing_subfield", "sla.state")]),
        ("SELECT t.sla.policy.nam FROM tickets AS t", [("missing_subfield", "sla.policy.nam")]),
        ("SELECT t.stage.name FROM tickets AS t", [("missing_subfield", "stage.name")]),
        (
            "SELECT len(list_filter(links, lambda x: x.typ = 'blocks')) FROM tickets",
            [("missing_subfield", "links.typ")],
        ),
    ],
)
def test_wrong_nested_paths_are_reported_and_the_engine_agrees(
    work_context, work_duckdb, sql, expected
):
    assert findings_of(STAGE, sql, work_context) == expected
    with pytest.raises(duckdb.Error):
        rows(work_duckdb, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT t.links[1].type, t.sla.policy.name, t.sla.status FROM tickets AS t",
        "SELECT unnest(t.links).type FROM tickets AS t",
        "SELECT link.type FROM tickets AS t, UNNEST(t.links) AS u(link) WHERE link.display_id LIKE 'ISS-%'",
        "SELECT u.type FROM tickets, UNNEST(links) AS u",
        "SELECT len(list_filter(links, lambda x: x.type = 'blocks')) FROM tickets",
        "WITH c AS (SELECT t.ticket_id, t.links FROM tickets AS t) "
        "SELECT c.ticket_id, link.type FROM c, UNNEST(c.links) AS u(link)",
    ],
)
def test_paths_through_elements_pass_and_run(work_context, work_duckdb, sql):
    assert findings_of(STAGE, sql, work_context) == []
    rows(work_duckdb, sql)


def test_a_missing_subfield_names_the_fields_there_are(work_context):
    def suggestion(sql):
        (finding,) = STAGE.check(parse(sql, work_context.index), work_context)
        return finding.suggestion

    assert suggestion("SELECT t.sla.state FROM tickets AS t") == "status"
    assert suggestion("SELECT t.sla.xyz FROM tickets AS t") == "status, policy"
    assert suggestion("SELECT link.typ FROM tickets AS t, UNNEST(t.links) AS u(link)") == "type"
