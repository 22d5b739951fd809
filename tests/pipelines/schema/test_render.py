from __future__ import annotations

import sqlite3

import duckdb

from pipelines.contracts import ColumnInfo, ForeignKey, SchemaView, TableInfo
from pipelines.schema import introspect, render_ddl, render_light


def _catalog(conn: sqlite3.Connection) -> dict:
    out = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
        cols = [(r[1], r[2], r[5] > 0) for r in conn.execute(f'PRAGMA table_info("{name}")')]
        fks = sorted((r[3], r[2], r[4]) for r in conn.execute(f'PRAGMA foreign_key_list("{name}")'))
        out[name] = (cols, fks)
    return out


def test_ddl_round_trips_through_sqlite(shop_db):
    """The DDL view, comments and all, rebuilds the same tables, types, keys and FKs."""
    view = introspect(shop_db)
    rebuilt = sqlite3.connect(":memory:")
    rebuilt.executescript(render_ddl(view))
    original = sqlite3.connect(shop_db.path)
    assert _catalog(rebuilt) == _catalog(original)


def test_ddl_of_nested_duckdb_schema_executes_in_duckdb(tickets_db):
    view = introspect(tickets_db)
    ddl = render_ddl(view)
    assert "--   meta.origin.channel VARCHAR" in ddl
    conn = duckdb.connect(":memory:")
    conn.execute(ddl)
    types = dict(
        conn.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name='tickets'"
        ).fetchall()
    )
    assert types["links"] == next(c.type for c in view.tables[1].columns if c.name == "links")


def test_ddl_comments_carry_descriptions_and_inferred_joins():
    view = SchemaView(
        db_id="x",
        dialect="sqlite",
        tables=(
            TableInfo(
                name="a",
                columns=(
                    ColumnInfo(name="id", type="INT", primary_key=True, description="the\nkey"),
                ),
            ),
            TableInfo(
                name="group", columns=(ColumnInfo(name="a_id", type="INT", samples=("1", "2")),)
            ),
        ),
        foreign_keys=(
            ForeignKey(table="group", column="a_id", ref_table="a", ref_column="id", inferred=True),
        ),
    )
    ddl = render_ddl(view)
    assert "id INT, -- the key" in ddl  # newline folded: a comment never spills onto a code line
    assert 'CREATE TABLE "group"' in ddl  # reserved word quoted
    assert "FOREIGN KEY" not in ddl  # an inferred key is not a constraint of the database
    assert "-- join key (inferred): group.a_id -> a.id" in ddl
    conn = sqlite3.connect(":memory:")
    conn.executescript(ddl)


def test_light_view_is_one_markdown_table_per_table(shop_db):
    view = introspect(shop_db)
    text = render_light(view)
    sections = text.split("\n\n")
    assert len(sections) == len(view.tables)
    for table, section in zip(view.tables, sections):
        lines = section.splitlines()
        assert lines[0] == f"## {table.name} ({table.row_count} rows)"
        rows = [line for line in lines if line.startswith("| ") and not line.startswith("| column")]
        assert len(rows) == len(table.columns)
        # every row has exactly 4 cells: a '|' inside a value is escaped
        assert all(line.replace("\\|", "").count("|") == 5 for line in rows)
    assert "orders.customer_id -> customer.customer_id" in text
    assert "order_line.product_id -> product.id (inferred)" in text


def test_light_view_lists_nested_sub_fields(tickets_db):
    text = render_light(introspect(tickets_db))
    assert "| links.display_id | VARCHAR |" in text
    assert "| meta.origin.region | VARCHAR |" in text
