"""The labels documentation names: listed ones and candidates in a description, per sub-field of
a nested column; and the vocabularies of real schema documentation: the enterprise schema's
COMMENT ON text (top-level and nested sub-fields), the small work-item DuckDB, and a dbt
``accepted_values`` test in a YAML file beside a SQLite database."""

from __future__ import annotations

import re

from eval.enterprise import vocabulary as v
from eval.enterprise.schema import TABLES
from pipelines.contracts import ColumnInfo
from pipelines.schema import introspect
from pipelines.schema.documentation.vocabulary import (
    Labels,
    column_labels,
    labels,
    value_note,
    vocabularies,
)


def test_candidates_are_quoted_words_and_value_note_items():
    assert labels("Tier. One of: 'gold' = top; \"silver\"; the customer's tier").candidates == (
        "gold",
        "silver",
    )
    assert labels("State; values: one of OH, PA, WV").candidates == ("OH", "PA", "WV")
    assert labels("Sex; values: M: male; F: female").candidates == ("M", "F")


def test_listed_labels_are_a_list_with_meanings_or_accepted_values():
    listing = "Stage. One of: 'open' = new; 'done' = closed (e.g. 'wontfix' = not done)."
    assert labels(listing).listed == ("open", "done")  # the example ends the list
    assert labels("State; values: one of OH, PA, WV").listed == ("OH", "PA", "WV")
    for unlisted in ("Sex; values: M: male; F: female", "Short summary, e.g. 'Login fails'"):
        assert labels(unlisted).listed == (), unlisted


def test_the_value_note_is_what_follows_values():
    assert value_note("State of residence; values: Two-letter code") == " Two-letter code"
    assert value_note("State of residence") == ""


def _struct(description: str, *children: ColumnInfo) -> ColumnInfo:
    return ColumnInfo(name="links", type="STRUCT", description=description, children=children)


def test_a_sub_field_lists_what_the_clauses_about_it_list_and_its_own_description_wins():
    doc = (
        "Links. type is one of: 'blocks' = it blocks; 'resolves' = it resolves. "
        "display_id is the target's key (e.g. 'ISS-1')."
    )
    found = column_labels(
        _struct(
            doc,
            ColumnInfo(name="links.type", type="VARCHAR"),
            ColumnInfo(name="links.display_id", type="VARCHAR"),
            ColumnInfo(name="links.kind", type="VARCHAR", description="One of: 'hard' = strict."),
        )
    )
    every = ("blocks", "resolves", "ISS-1")
    assert found["links.type"] == Labels(listed=("blocks", "resolves"), candidates=every)
    assert found["links.display_id"] == Labels(listed=(), candidates=every)
    assert found["links.kind"] == Labels(listed=("hard",), candidates=("hard", *every))


def test_enterprise_vocabularies_are_the_generators_own(enterprise_view):
    found = vocabularies(enterprise_view)
    expected = {
        "tickets.stage": v.TICKET_STAGES,
        "tickets.severity": v.SEVERITIES,
        "issues.priority": v.PRIORITIES,
        "users.title": v.USER_TITLES,
        "tickets.links.type": v.LINK_TYPES,
        "issues.links.target_type": v.LINK_TARGET_TYPES,
        "accounts.tags.type": v.TAG_TYPES,
        "accounts.tags.source": v.TAG_SOURCES,
        "tickets.owned_by.role": v.ITEM_OWNER_ROLES,
        "accounts.owned_by.role": v.ACCOUNT_OWNER_ROLES,
        "tickets.sla_tracker.status": v.SLA_TRACKER_STATUSES,
    }
    for path, vocabulary in expected.items():
        assert found[path] == v.labels(vocabulary), path


def test_every_listed_enterprise_vocabulary_is_found_and_nothing_else(enterprise_view):
    found = vocabularies(enterprise_view)
    # a comment that lists labels with their meanings ('x' = ...) after a colon
    listing = {
        f"{t.name}.{c.name}"
        for t in TABLES
        for c in t.columns
        if re.search(r":\s*'[^']+' =", c.comment)
    }
    assert {path.split(".")[0] + "." + path.split(".")[1] for path in found} == listing
    # examples in prose are no vocabulary: 'YYYY.Q' (e.g. '2025.3' = third quarter of 2025)
    assert not any(path.startswith("enhancements.target_release") for path in found)
    assert not any(path.endswith("tags.name") for path in found)


def test_the_work_fixture_vocabularies(work_view):
    found = vocabularies(work_view)
    assert found == {
        "tickets.stage": ("queued", "work_in_progress", "resolved"),
        "tickets.severity": ("blocker", "high", "low"),
        "tickets.links.type": ("blocks", "is_blocked_by", "resolves"),
        "tickets.sla.status": ("running", "paused"),
    }


def test_dbt_accepted_values_are_a_vocabulary(flat_sqlite, tmp_path):
    (tmp_path / "schema.yml").write_text(
        """
models:
  - name: tickets
    columns:
      - name: severity
        description: Impact on the customer
        data_tests:
          - accepted_values:
              values: [blocker, high, low]
      - name: title
        description: Short summary, e.g. 'Login fails'
""",
        encoding="utf-8",
    )
    found = vocabularies(introspect(flat_sqlite, 0))
    assert found == {"tickets.severity": ("blocker", "high", "low")}
