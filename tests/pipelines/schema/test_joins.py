from __future__ import annotations

import pytest

from pipelines.contracts import ColumnInfo, ForeignKey, SchemaView, TableInfo
from pipelines.schema import infer_join_keys, join_graph


def _table(name: str, *columns: tuple[str, str, bool]) -> TableInfo:
    return TableInfo(
        name=name, columns=tuple(ColumnInfo(name=n, type=t, primary_key=pk) for n, t, pk in columns)
    )


SINGER = _table("singer", ("Singer_ID", "INT", True), ("Name", "TEXT", False))
CONCERT = _table("concert", ("concert_ID", "INT", True), ("Name", "TEXT", False))
SIC = _table("singer_in_concert", ("concert_ID", "INT", True), ("Singer_ID", "TEXT", True))
CITY = _table("cities", ("id", "INTEGER", True), ("name", "TEXT", False))
PERSON = _table(
    "person", ("id", "INTEGER", True), ("city_id", "INTEGER", False), ("name", "TEXT", False)
)
NOTE = _table("note", ("id", "INTEGER", True), ("person_id", "TEXT", False))


@pytest.mark.parametrize(
    "tables, expected",
    [
        # same name as another table's sole PK; Singer_ID is TEXT here vs INT in singer: no edge
        ((SINGER, CONCERT, SIC), {("singer_in_concert", "concert_ID", "concert")}),
        # <table>_id -> table.id, plural table name
        ((CITY, PERSON), {("person", "city_id", "cities")}),
        # <table>_id with an incompatible type (TEXT -> INTEGER) is not a join key
        ((PERSON, NOTE), set()),
        # generic names (id, name) never match on their own
        ((CITY, _table("town", ("id", "INTEGER", True), ("name", "TEXT", False))), set()),
    ],
)
def test_inference_rules(tables, expected):
    got = {(fk.table, fk.column, fk.ref_table) for fk in infer_join_keys(tables)}
    assert got == expected
    assert all(fk.inferred for fk in infer_join_keys(tables))


def test_declared_pairs_are_not_inferred_again():
    declared = (
        ForeignKey(
            table="singer_in_concert",
            column="concert_ID",
            ref_table="concert",
            ref_column="concert_ID",
        ),
    )
    assert infer_join_keys((SINGER, CONCERT, SIC), declared) == []


def test_join_graph_is_idempotent_and_finds_paths():
    view = SchemaView(
        db_id="x",
        dialect="sqlite",
        tables=(
            CITY,
            PERSON,
            _table("pet", ("id", "INTEGER", True), ("person_id", "INTEGER", False)),
        ),
    )
    graph = join_graph(view)
    assert join_graph(view.model_copy(update={"foreign_keys": graph.edges})) == graph
    path = graph.path("pet", "cities")
    assert [(e.table, e.ref_table) for e in path] == [("pet", "person"), ("person", "cities")]
    assert graph.path("pet", "pet") == ()
    lonely = SchemaView(
        db_id="y", dialect="sqlite", tables=(CITY, _table("x", ("v", "TEXT", False)))
    )
    assert join_graph(lonely).path("cities", "x") is None
