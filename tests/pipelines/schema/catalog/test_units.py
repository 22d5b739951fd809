"""The catalog's parts on their own: type normalisation, partition collapsing, sharing a nested
column's documentation among its sub-fields, vocabularies, column scores."""

from __future__ import annotations

import pytest

from pipelines.contracts import ColumnInfo, TableInfo
from pipelines.schema.catalog.model import ColumnNode
from pipelines.schema.catalog.normal_types import list_depth, normalise_type
from pipelines.schema.catalog.partitions import partition_groups
from pipelines.schema.catalog.scoring import score
from pipelines.schema.catalog.subfields import clauses, share
from pipelines.schema.catalog.vocabulary import Vocabulary, candidate_labels, vocabulary


@pytest.mark.parametrize(
    ("declared", "dialect", "expected"),
    [
        ('STRUCT(user_id VARCHAR, "role" VARCHAR)[]', "duckdb", "list<struct<user_id, role>>"),
        ("STRUCT(status VARCHAR, policy STRUCT(name VARCHAR))", "duckdb", "struct<status, policy>"),
        ("VARCHAR[]", "duckdb", "list<text>"),
        ("MAP(VARCHAR, INTEGER)", "duckdb", "map<text, integer>"),
        ("TIMESTAMP WITH TIME ZONE", "duckdb", "timestamp"),
        ("DECIMAL(10,2)", "duckdb", "decimal"),
        ("HUGEINT", "duckdb", "integer"),
        ("BOOLEAN", "duckdb", "boolean"),
        ("DATE", "duckdb", "date"),
        ("int(11)", "sqlite", "integer"),
        ("varchar2(20)", "sqlite", "text"),
        ("DATETIME", "sqlite", "timestamp"),
        ("bool", "sqlite", "boolean"),
        ("real", "sqlite", "decimal"),
        ("BLOB", "sqlite", "blob"),
        ("year", "sqlite", "decimal"),  # unknown to sqlglot: SQLite's NUMERIC affinity
        ("", "sqlite", "any"),  # no declared type: SQLite stores anything
    ],
)
def test_types_are_normalised_to_the_short_vocabulary(declared, dialect, expected):
    assert normalise_type(declared, dialect) == expected


def test_list_depth_counts_the_lists_a_path_enters():
    assert [list_depth(t) for t in ("text", "list<text>", "list<list<struct<a>>>")] == [0, 1, 2]


def _table(name: str, *columns: str) -> TableInfo:
    return TableInfo(name=name, columns=tuple(ColumnInfo(name=c, type="INT") for c in columns))


def _groups(*tables: TableInfo) -> dict[str, list[str]]:
    return {g.name: [t.name for t in g.tables] for g in partition_groups(tables)}


def test_date_and_number_suffixed_tables_with_the_same_columns_collapse():
    groups = _groups(
        _table("events_2024", "id", "kind", "at"),
        _table("users", "id"),
        _table("events_2023", "id", "kind", "at"),
        _table("sales_2024q1", "id", "amount"),
        _table("sales_2024q2", "id", "amount"),
        _table("log_20240101", "id", "line"),
        _table("log_20240102", "id", "line"),
    )
    assert groups == {
        "events": ["events_2023", "events_2024"],  # oldest first; first seen in catalog order
        "users": ["users"],
        "sales": ["sales_2024q1", "sales_2024q2"],
        "log": ["log_20240101", "log_20240102"],
    }


def test_a_suffix_alone_does_not_collapse():
    groups = _groups(
        _table("t1", "a", "b"),
        _table("t2", "c", "d"),  # other columns
        _table("stats_2024", "x"),  # alone
    )
    assert groups == {"t1": ["t1"], "t2": ["t2"], "stats_2024": ["stats_2024"]}


def test_the_stems_own_table_joins_its_partitions_or_keeps_its_name():
    alike = _groups(_table("orders", "id"), _table("orders_1", "id"), _table("orders_2", "id"))
    assert alike == {"orders": ["orders", "orders_1", "orders_2"]}
    other = _groups(_table("orders", "x"), _table("orders_1", "id"), _table("orders_2", "id"))
    assert other == {"orders": ["orders"], "orders_partitions": ["orders_1", "orders_2"]}


def test_clauses_keep_a_vocabulary_and_its_meanings_together():
    text = (
        "SLA clocks. status is one of: 'running' = open; counting; 'paused' = waiting. "
        "policy.name names the policy (e.g. 'Premier'; or 'Basic')."
    )
    assert clauses(text, ["status", "policy.name"]) == [
        "SLA clocks.",
        "status is one of: 'running' = open; counting; 'paused' = waiting.",
        "policy.name names the policy (e.g. 'Premier'; or 'Basic').",
    ]


def test_a_clause_goes_to_its_subject_or_to_what_holds_every_field_it_names():
    doc = (
        "SLA clocks of the ticket. status is one of: 'running' = counting. policy.name names "
        "the row whose targets apply. policy.targets.first_response and "
        "policy.targets.resolution each hold target_minutes and breached."
    )
    paths = [
        "status",
        "policy",
        "policy.name",
        "policy.targets",
        "policy.targets.first_response",
        "policy.targets.first_response.breached",
        "policy.targets.resolution",
        "policy.targets.resolution.breached",
    ]
    shared = share(doc, paths)
    assert shared[""] == "SLA clocks of the ticket."
    assert shared["status"].startswith("status is one of")
    assert shared["policy.name"].startswith("policy.name names")  # not policy, not targets
    assert shared["policy.targets"].startswith("policy.targets.first_response and")
    assert "policy" not in shared


def test_documented_labels_come_from_quotes_and_value_notes():
    assert candidate_labels("Tier. One of: 'gold' = top; \"silver\"; the customer's tier") == [
        "gold",
        "silver",
    ]
    assert candidate_labels("State; values: one of OH, PA, WV") == ["OH", "PA", "WV"]
    assert candidate_labels("Sex; values: M: male; F: female") == ["M", "F"]


def test_a_documented_vocabulary_keeps_the_documentation_order_and_says_if_complete():
    doc = "One of: 'blocker' = down; 'high' = broken; 'medium' = slow; 'low' = cosmetic."
    found = vocabulary(doc, ["low", "high", "other"], max_values=30, rows=100)
    assert found == Vocabulary(values=("high", "low"), source="documented", complete=False)


def test_quoted_examples_are_not_a_vocabulary():
    doc = "The label (e.g. 'billing')."
    seen = ["billing", "login", "sso", "api"]
    assert vocabulary(doc, seen, max_values=30, rows=100).source == "observed"
    assert vocabulary(doc, seen * 10, max_values=30, rows=100) is None  # too many values


def test_keys_and_unrepeated_values_get_no_observed_vocabulary():
    assert vocabulary("", ["a", "b"], max_values=30, rows=100, observable=False) is None
    assert vocabulary("", ["a", "b", "c"], max_values=30, rows=4) is None
    assert vocabulary("", ["a", "b"], max_values=30, rows=4).values == ("a", "b")


def _column(name: str, type_: str, **fields) -> ColumnNode:
    return ColumnNode(path=name, name=name, type=type_, **fields)


def test_scores_favour_keys_vocabularies_nesting_and_time_over_free_text_and_bare_ids():
    values = Vocabulary(values=("a", "b"), source="documented", complete=True)
    nested = _column(
        "links",
        "list<struct<type, display_id>>",
        children=(
            _column("links[].type", "text", vocabulary=values),
            _column("links[].display_id", "text"),
        ),
    )
    columns = {
        "key": _column("id", "integer", primary_key=True),
        "enum": _column("stage", "text", vocabulary=values),
        "nested": nested,
        "time": _column("created_at", "timestamp"),
        "text": _column("title", "text"),
        "bare id": _column("external_id", "text"),
    }
    scores = {k: score(c, {"links[].display_id"})[0] for k, c in columns.items()}
    assert scores["nested"] > scores["key"] == scores["enum"] > scores["time"] > 0
    assert scores["bare id"] < scores["text"] < 0
    assert score(nested, {"links[].display_id"})[1] == ("nested", "join", "values")
