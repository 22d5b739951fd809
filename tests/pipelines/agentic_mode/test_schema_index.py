"""The checkers' index of a schema view."""

from __future__ import annotations

from pipelines.agentic_mode.schema_index import SchemaIndex, data_type
from pipelines.contracts import ColumnInfo, SchemaView, TableInfo


def test_lookups_ignore_case_and_follow_dotted_paths(work_view):
    index = SchemaIndex.from_view(work_view)
    assert index.table("TICKETS").name == "tickets"
    assert index.column("Tickets", "SLA.Policy.Target_Minutes").type == "INTEGER"
    assert index.column("tickets", "sla.nothing") is None
    assert index.column("nowhere", "stage") is None
    assert index.is_list(index.column("tickets", "links"))
    assert not index.is_list(index.column("tickets", "sla"))
    assert index.vocabulary("TICKETS", "Links.Type") == ("blocks", "is_blocked_by", "resolves")


def test_types_sqlglot_cannot_read_are_unknown():
    assert data_type("", "sqlite").this == data_type("UNKNOWN", "sqlite").this
    assert data_type("INT(", "sqlite").this == data_type("UNKNOWN", "sqlite").this
    assert data_type("my type", "sqlite").this == data_type("UNKNOWN", "sqlite").this
    assert data_type("VARCHAR(40)", "sqlite").is_type("varchar")


def test_tables_of_another_schema_stay_out_of_sqlglots_schema():
    view = SchemaView(
        db_id="x",
        dialect="duckdb",
        tables=(
            TableInfo(name="t", columns=(ColumnInfo(name="a", type="INTEGER"),)),
            TableInfo(name="staging.t", columns=(ColumnInfo(name="b", type="INTEGER"),)),
        ),
    )
    index = SchemaIndex.from_view(view)
    assert index.table("staging.t") is not None
    assert set(index.sqlglot_schema.mapping) == {"t"}
