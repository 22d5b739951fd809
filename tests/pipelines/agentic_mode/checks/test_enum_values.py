"""EnumValues on the work-item DuckDB: a comparison with a value outside the documented
vocabulary runs and finds nothing, which is why it is blocked before it runs."""

from __future__ import annotations

import pytest

from pipelines.agentic_mode.checks import EnumValues, parse
from tests.pipelines.agentic_mode.conftest import findings_of, rows

STAGE = EnumValues()
UNNESTED = "FROM tickets AS t, UNNEST(t.links) AS u(link)"


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("SELECT count(*) FROM tickets WHERE stage = 'open'", "open"),
        ("SELECT count(*) FROM tickets WHERE 'Queued' = stage", "Queued"),
        ("SELECT count(*) FROM tickets WHERE stage IN ('queued', 'in_progress')", "in_progress"),
        ("SELECT count(*) FROM tickets WHERE lower(severity) = 'HIGH'", "HIGH"),
        (f"SELECT count(*) {UNNESTED} WHERE link.type = 'blocked_by'", "blocked_by"),
        (
            "SELECT count(*) FROM tickets WHERE len(list_filter(links, lambda x: x.type = 'fixes')) > 0",
            "fixes",
        ),
        ("SELECT count(*) FROM tickets AS t WHERE t.sla.status = 'stopped'", "stopped"),
        ("SELECT sum(CASE severity WHEN 'urgent' THEN 1 ELSE 0 END) FROM tickets", "urgent"),
        (
            "WITH c AS (SELECT t.stage FROM tickets AS t) SELECT count(*) FROM c WHERE c.stage = 'done'",
            "done",
        ),
    ],
)
def test_values_outside_the_vocabulary_are_reported(work_context, work_duckdb, sql, value):
    assert findings_of(STAGE, sql, work_context) == [("enum_value_outside_vocabulary", value)]
    # it runs, and the value matches nothing: the same answer as a value no row can hold
    assert rows(work_duckdb, sql)[1] == rows(work_duckdb, sql.replace(f"'{value}'", "'-'"))[1]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) FROM tickets WHERE stage <> 'resolved' AND severity IN ('blocker', 'high')",
        "SELECT count(*) FROM tickets WHERE lower(stage) = 'queued' OR upper(severity) = 'HIGH'",
        "SELECT count(*) FROM tickets WHERE title = 'Typo'",
        f"SELECT count(*) {UNNESTED} WHERE link.type = 'resolves' AND link.display_id = 'ISS-2'",
        "SELECT count(*) FROM tickets AS t WHERE t.sla.status = 'paused'",
    ],
)
def test_documented_values_pass(work_context, work_duckdb, sql):
    assert findings_of(STAGE, sql, work_context) == []
    _, found = rows(work_duckdb, sql)
    assert found != [(0,)]


def test_the_finding_offers_the_closest_labels(work_context):
    def suggestion(sql):
        (finding,) = STAGE.check(parse(sql, work_context.index), work_context)
        return finding.suggestion

    assert suggestion("SELECT 1 FROM tickets WHERE stage = 'in_progress'") == "work_in_progress"
    assert suggestion("SELECT 1 FROM tickets WHERE stage = 'Queued'") == "queued"
    # nothing close: the whole (short) vocabulary
    assert (
        suggestion("SELECT 1 FROM tickets WHERE stage = 'xyz'")
        == "queued, work_in_progress, resolved"
    )
