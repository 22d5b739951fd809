"""The catalog's parts on their own: type normalisation, partition collapsing, vocabularies, column
scores."""

from __future__ import annotations

import pytest

from pipelines.contracts import ColumnInfo, TableInfo
from pipelines.schema.catalog.model import ColumnNode
from pipelines.schema.catalog.normal_types import list_depth, normalise_type
from pipelines.schema.catalog.partitions import partition_groups
from pipelines.schema.catalog.scoring import score
from pipelines.schema.catalog.vocabulary import Vocabulary, vocabulary
from pipelines.schema.documentation.vocabulary import labels


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


def test_a_documented_vocabulary_keeps_the_documentation_order_and_says_if_complete():
    doc = "One of: 'blocker' = down; 'high' = broken; 'medium' = slow; 'low' = cosmetic."
    found = vocabulary(labels(doc).candidates, ["low", "high", "other"], max_values=30, rows=100)
    assert found == Vocabulary(values=("high", "low"), source="documented", complete=False)


def test_quoted_examples_are_not_a_vocabulary():
    named = labels("The label (e.g. 'billing').").candidates
    seen = ["billing", "login", "sso", "api"]
    assert vocabulary(named, seen, max_values=30, rows=100).source == "observed"
    assert vocabulary(named, seen * 10, max_values=30, rows=100) is None  # too many values


def test_keys_and_unrepeated_values_get_no_observed_vocabulary():
    assert vocabulary((), ["a", "b"], max_values=30, rows=100, observable=False) is None
    assert vocabulary((), ["a", "b", "c"], max_values=30, rows=4) is None
    assert vocabulary((), ["a", "b"], max_values=30, rows=4).values == ("a", "b")


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
