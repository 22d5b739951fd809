"""Schema introspection of a real PostgreSQL database (``tests/conftest.py``: ``typed``)."""

from __future__ import annotations

import asyncio
from contextlib import closing

import pytest

from pipelines.indexing.builder.fingerprint import schema_hash
from pipelines.sandbox import LocalSandboxPool, connect_readonly
from pipelines.schema import introspect, reference_schema
from pipelines.schema import postgres as engine
from pipelines.schema.documentation import load_documentation


@pytest.fixture(scope="module")
def typed(postgres):
    return postgres.ref("typed")


def test_tables_columns_keys_and_comments(typed):
    view = introspect(typed)
    assert view.dialect == "postgres"
    tables = {t.name: t for t in view.tables}
    assert list(tables) == ["members", "claims", "billing.invoices"]
    members = {c.name: c for c in tables["members"].columns}
    assert members["member_id"].primary_key and members["member_id"].type == "integer"
    assert members["plan"].type == "character varying(20)"
    assert members["tags"].type == "text[]" and set(members["tags"].samples) == {"vip", "north"}
    assert members["profile"].type == "jsonb" and members["profile"].samples
    home = {c.name: c for c in members["home"].children}  # a composite type's fields
    assert members["home"].type == "address" and list(home) == ["home.street", "home.city"]
    assert set(home["home.city"].samples) == {"Springfield", "Shelbyville"}
    assert tables["members"].description == "People covered by a plan"
    assert tables["members"].row_count == 3
    claims = {c.name: c for c in tables["claims"].columns}
    assert claims["status"].type == "claim_status"
    assert claims["amount"].description.startswith("Billed amount in US dollars")
    assert tables["billing.invoices"].description == "One invoice per paid claim"
    declared = {(f.table, f.column, f.ref_table, f.ref_column) for f in view.foreign_keys}
    assert ("claims", "member_id", "members", "member_id") in declared
    assert ("billing.invoices", "claim_id", "claims", "claim_id") in declared


def test_enum_types_and_check_lists_are_vocabularies(typed):
    docs = load_documentation(typed)
    assert {"comments", "enum_types"} <= set(docs.sources)
    assert docs.column("claims", "status").values == "one of submitted, approved, denied"
    assert docs.column("members", "plan").values == "one of bronze, silver, gold"
    assert docs.column("members", "plan").description == "Coverage tier"


@pytest.mark.parametrize(
    "definition, expected",
    [
        ("CHECK ((plan = ANY (ARRAY['a'::text, 'b'::text])))", [("plan", ("a", "b"))]),
        (
            "CHECK (((plan)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[])))",
            [("plan", ("a", "b"))],
        ),
        ("CHECK ((amount > (0)::numeric))", []),
    ],
)
def test_check_value_lists(definition, expected):
    assert list(engine.check_value_lists(definition)) == expected


def test_the_reference_prompt_names_schemas_and_shows_notes(typed):
    pool = LocalSandboxPool.create(size=2, timeout_s=10)
    try:
        reference = asyncio.run(reference_schema(pool, typed))
    finally:
        pool.close()
    text = reference.text()
    assert "CREATE TABLE billing.invoices (" in text
    assert "FOREIGN KEY (member_id) REFERENCES members(member_id)" in text
    assert "status: values: one of submitted, approved, denied" in text
    assert "SELECT * FROM billing.invoices LIMIT 3;" in text
    assert [b.name for b in reference.tables] == ["members", "claims", "billing.invoices"]


def test_cell_values_read_text_columns_array_elements_and_fields(typed):
    view = introspect(typed, sample_values=0)
    members = next(t for t in view.tables if t.name == "members")
    assert engine.text_columns(members) == ["full_name", "plan", "tags"]
    with closing(connect_readonly(typed)) as conn:
        tags = list(engine.distinct_text_values(conn, members, "tags", limit=10, max_chars=50))
        cities = set(engine.distinct_text_values(conn, members, "home.city", limit=9, max_chars=50))
    assert tags == ["north", "vip"]  # most frequent first
    assert cities == {"Springfield", "Shelbyville"}


def test_the_schema_hash_follows_the_catalog(postgres, typed):
    before = schema_hash(typed)
    assert schema_hash(typed) == before
    with postgres.admin("typed") as conn:
        conn.execute("ALTER TABLE members ADD COLUMN nickname text")
    try:
        assert schema_hash(typed) != before
    finally:
        with postgres.admin("typed") as conn:
            conn.execute("ALTER TABLE members DROP COLUMN nickname")


def test_the_functions_are_those_the_server_lets_the_role_call(typed):
    functions = introspect(typed, 0).functions
    assert list(functions) == sorted(set(functions))
    # PostgreSQL's own, aggregates, the database's, and the grammar's forms
    known = {"to_char", "generate_series", "string_agg", "fiscal_year", "coalesce", "cast"}
    assert known <= set(functions)
    # DuckDB's, and the database's own that the reader may not execute
    assert not {"list_aggregate", "epoch_ms", "payroll_key"} & set(functions)
