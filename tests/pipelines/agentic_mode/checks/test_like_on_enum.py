"""LikeOnEnum on the work-item DuckDB, and the LIKE matching it names candidates with."""

from __future__ import annotations

import pytest

from pipelines.agentic_mode.checks import LikeOnEnum, parse
from pipelines.agentic_mode.checks.like_on_enum import like_matches
from tests.pipelines.agentic_mode.conftest import findings_of

STAGE = LikeOnEnum()


@pytest.mark.parametrize(
    ("sql", "candidates"),
    [
        ("SELECT 1 FROM tickets WHERE stage LIKE '%progress%'", "work_in_progress"),
        ("SELECT 1 FROM tickets WHERE stage ILIKE 'Q%'", "queued"),
        ("SELECT 1 FROM tickets WHERE stage LIKE 'Q%'", "queued, work_in_progress, resolved"),
        (
            "SELECT 1 FROM tickets WHERE stage NOT LIKE '%open%'",
            "queued, work_in_progress, resolved",
        ),
        (
            "SELECT 1 FROM tickets AS t, UNNEST(t.links) AS u(l) WHERE l.type LIKE '%block%'",
            "blocks, is_blocked_by",
        ),
        ("SELECT 1 FROM tickets WHERE lower(severity) LIKE 'hi%'", "high"),
    ],
)
def test_like_on_a_documented_column_is_reported(work_context, sql, candidates):
    (finding,) = STAGE.check(parse(sql, work_context.index), work_context)
    assert finding.error_class == "like_on_enum"
    assert finding.suggestion == candidates


def test_like_on_free_text_passes(work_context):
    assert (
        findings_of(STAGE, "SELECT 1 FROM tickets WHERE title LIKE '%login%'", work_context) == []
    )


@pytest.mark.parametrize(
    ("pattern", "label", "ignore_case", "expected"),
    [
        ("%progress%", "work_in_progress", False, True),
        ("Q%", "queued", False, False),
        ("Q%", "queued", True, True),
        ("_locks", "blocks", False, True),
        ("a.b%", "axb", False, False),  # a regex character is a plain one in LIKE
        ("a.b%", "a.bc", False, True),
    ],
)
def test_like_matching(pattern, label, ignore_case, expected):
    assert like_matches(pattern, label, ignore_case=ignore_case) is expected
