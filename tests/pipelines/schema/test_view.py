from __future__ import annotations

import pytest

from pipelines.schema import (
    UnknownSchemaObject,
    introspect,
    render_ddl,
    restrict,
    token_size,
    view_token_size,
)


def test_restrict_keeps_named_tables_and_columns_plus_join_keys(shop_db):
    view = introspect(shop_db)
    small = restrict(view, tables=["CUSTOMER"], columns=["orders.status"])
    assert [t.name for t in small.tables] == ["customer", "orders"]
    assert [c.name for c in small.tables[0].columns] == [c.name for c in view.tables[0].columns]
    # status was asked for; order_id (PK) and customer_id (join key to customer) keep the join writable
    assert [c.name for c in small.tables[1].columns] == ["order_id", "customer_id", "status"]
    assert [(fk.table, fk.ref_table) for fk in small.foreign_keys] == [("orders", "customer")]


def test_restrict_without_keys_keeps_only_what_was_named(shop_db):
    small = restrict(introspect(shop_db), columns=["orders.status"], keep_keys=False)
    assert [(t.name, [c.name for c in t.columns]) for t in small.tables] == [("orders", ["status"])]
    assert small.foreign_keys == ()


def test_restrict_nested_sub_field(tickets_db):
    small = restrict(
        introspect(tickets_db), columns=["tickets.meta.origin.region"], keep_keys=False
    )
    (meta,) = small.tables[0].columns
    assert meta.name == "meta"
    assert [c.name for c in meta.children] == ["meta.origin"]
    assert [c.name for c in meta.children[0].children] == ["meta.origin.region"]


@pytest.mark.parametrize(
    "tables, columns", [(["nope"], []), ([], ["orders.nope"]), ([], ["nope.status"])]
)
def test_restrict_unknown_names_raise(shop_db, tables, columns):
    with pytest.raises(UnknownSchemaObject):
        restrict(introspect(shop_db), tables=tables, columns=columns)


def test_token_size_estimate_tracks_length(shop_db):
    view = introspect(shop_db)
    small = restrict(view, tables=["product"])
    assert token_size("") == 0 and token_size("abc") == 1 and token_size("abcd") == 2
    assert token_size("zip 45251") == 5 + 2  # a digit is a token (Qwen splits numbers into digits)
    assert 0 < view_token_size(small) < view_token_size(view)
    assert view_token_size(view, "ddl") == token_size(render_ddl(view))
