from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from pipelines.contracts import DatabaseRef
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema import duckdb as duckdb_engine
from pipelines.schema import introspect


def _table(view, name):
    return next(t for t in view.tables if t.name == name)


def _column(table, name):
    return next(c for c in table.columns if c.name == name)


def test_sqlite_tables_columns_keys_and_counts(shop_db, shop_rows):
    view = introspect(shop_db)
    # no function list: the installed engine is asked, and the JSON is as before there was one
    assert view.functions == () and "functions" not in view.model_dump_json()
    assert [t.name for t in view.tables] == ["customer", "orders", "product", "order_line"]
    customer = _table(view, "customer")
    assert customer.row_count == len(shop_rows["customer"])
    assert [(c.name, c.type, c.primary_key) for c in customer.columns] == [
        ("customer_id", "INTEGER", True),
        ("name", "TEXT", False),
        ("city", "VARCHAR(40)", False),
        ("note", "TEXT", False),
    ]
    assert [c.name for c in _table(view, "order_line").columns if c.primary_key] == [
        "order_id",
        "product_id",
    ]
    declared = [fk for fk in view.foreign_keys if not fk.inferred]
    assert [(fk.table, fk.column, fk.ref_table, fk.ref_column) for fk in declared] == [
        ("orders", "customer_id", "customer", "customer_id")
    ]


def test_samples_are_distinct_real_values_and_skip_nulls(shop_db, shop_rows):
    view = introspect(shop_db, sample_values=2)
    status = _column(_table(view, "orders"), "status")
    assert len(status.samples) == 2 and set(status.samples) == {o[2] for o in shop_rows["orders"]}
    note = _column(_table(view, "customer"), "note")
    assert note.samples == ("pipe | in text",)  # the NULLs are not samples
    assert all(c.samples == () for c in introspect(shop_db, sample_values=0).tables[0].columns)


def test_inferred_join_keys_fill_in_where_none_declared(shop_db):
    view = introspect(shop_db)
    inferred = {
        (fk.table, fk.column, fk.ref_table, fk.ref_column)
        for fk in view.foreign_keys
        if fk.inferred
    }
    # order_line declares nothing: order_id matches orders' sole PK by name, product_id -> product.id.
    assert inferred == {
        ("order_line", "order_id", "orders", "order_id"),
        ("order_line", "product_id", "product", "id"),
    }
    assert introspect(shop_db, infer_joins=False).foreign_keys == tuple(
        f for f in view.foreign_keys if not f.inferred
    )


def test_descriptions_come_from_bird_csvs_in_any_encoding(shop_db, tmp_path):
    folder = tmp_path / "database_description"
    folder.mkdir()
    header = "original_column_name,column_name,column_description,data_format,value_description\n"
    (folder / "customer.csv").write_bytes(
        (
            header + "name,customer name,Full name of the café owner,text,\ncity,,home city,text,\n"
        ).encode("latin-1")
    )
    (folder / "orders.csv").write_bytes(
        ("\ufeff" + header + "status,,order state,text,open / shipped\n").encode("utf-8")
    )
    db = shop_db.model_copy(update={"description_dir": str(folder)})
    view = introspect(db)
    customer = _table(view, "customer")
    assert _column(customer, "name").description == "Full name of the café owner (customer name)"
    assert _column(customer, "city").description == "home city"
    assert _column(customer, "note").description is None
    assert (
        _column(_table(view, "orders"), "status").description
        == "order state; values: open / shipped"
    )


def test_missing_description_folder_means_no_descriptions(shop_db, tmp_path):
    view = introspect(shop_db.model_copy(update={"description_dir": str(tmp_path / "nope")}))
    assert all(c.description is None for t in view.tables for c in t.columns)


@pytest.mark.parametrize(
    "content",
    [b"this is not a database, just text" * 100, b"SQLite format 3\x00" + b"\x00" * 50],
    ids=["text-file", "truncated-header"],
)
def test_corrupt_file_raises_database_unavailable(tmp_path, content):
    path = tmp_path / "bad.sqlite"
    path.write_bytes(content)
    with pytest.raises(DatabaseUnavailable):
        introspect(DatabaseRef(db_id="bad", path=str(path)))
    assert path.read_bytes() == content  # never written


def test_missing_file_raises_and_is_not_created(tmp_path):
    path = tmp_path / "missing.sqlite"
    with pytest.raises(DatabaseUnavailable):
        introspect(DatabaseRef(db_id="missing", path=str(path)))
    assert not path.exists()


def test_empty_database_has_no_tables(tmp_path):
    path = tmp_path / "empty.sqlite"
    sqlite3.connect(path).execute("PRAGMA user_version = 1").connection.close()
    view = introspect(DatabaseRef(db_id="empty", path=str(path)))
    assert view.tables == () and view.foreign_keys == ()


def test_non_utf8_bytes_in_samples_do_not_break_introspection(tmp_path):
    path = tmp_path / "latin.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (name TEXT)")
        conn.execute("INSERT INTO t VALUES (CAST(X'4361FF6521' AS TEXT))")  # 'Ca\xffe!'
    conn.close()
    view = introspect(DatabaseRef(db_id="latin", path=str(path)))
    assert view.tables[0].columns[0].samples == ("Ca\ufffde!",)


def test_duckdb_nested_columns_are_expanded_with_sub_fields(tickets_db):
    view = introspect(tickets_db)
    tickets = _table(view, "tickets")
    meta = _column(tickets, "meta")
    assert [c.name for c in meta.children] == ["meta.stage", "meta.score", "meta.origin"]
    origin = meta.children[2]
    assert [(c.name, c.type) for c in origin.children] == [
        ("meta.origin.channel", "VARCHAR"),
        ("meta.origin.region", "VARCHAR"),
    ]
    links = _column(tickets, "links")
    assert links.type.endswith("[]")
    assert {c.name for c in links.children} == {"links.type", "links.display_id"}
    # Sub-fields of a LIST of STRUCT are sampled across list elements.
    link_types = next(c for c in links.children if c.name == "links.type")
    assert (
        set(link_types.samples) <= {"blocks", "relates_to", "resolves"}
        and len(link_types.samples) == 3
    )
    assert _column(tickets, "title").description == "one-line summary"
    assert [(fk.table, fk.column, fk.ref_table, fk.inferred) for fk in view.foreign_keys] == [
        ("tickets", "owner_id", "users", False)
    ]


def test_duckdb_text_leaves_reach_into_structs_and_lists(tickets_db):
    view = introspect(tickets_db)
    tickets = _table(view, "tickets")
    leaves = duckdb_engine.text_columns(tickets)
    assert set(leaves) == {
        "title",
        "meta.stage",
        "meta.origin.channel",
        "meta.origin.region",
        "links.type",
        "links.display_id",
        "labels",
    }
    conn = connect_readonly(tickets_db)
    try:
        ids = list(
            duckdb_engine.distinct_text_values(
                conn, tickets, "links.display_id", limit=10, max_chars=256
            )
        )
        labels = list(
            duckdb_engine.distinct_text_values(conn, tickets, "labels", limit=2, max_chars=256)
        )
    finally:
        conn.close()
    assert sorted(ids) == ["ISS-1", "ISS-2", "ISS-3"]
    assert len(labels) == 2 and set(labels) <= {"auth", "p1", "search"}


def test_duckdb_file_is_opened_read_only(tickets_db):
    before = Path(tickets_db.path).read_bytes()
    introspect(tickets_db)
    assert Path(tickets_db.path).read_bytes() == before
    conn = duckdb.connect(tickets_db.path)  # still a healthy database, not locked by us
    assert conn.execute("SELECT count(*) FROM tickets").fetchone() == (2,)
    conn.close()
