from __future__ import annotations

from contextlib import closing

import pytest

from pipelines.contracts import ColumnInfo, TableInfo
from pipelines.indexing.cell_values.cells import (
    column_skip_reason,
    extract_cell_values,
    value_skip_reason,
)
from pipelines.indexing.settings import CellSettings
from pipelines.sandbox import connect_readonly
from pipelines.schema import introspect
from pipelines.schema.introspect import engine_for


@pytest.mark.parametrize(
    "name, primary_key, reason",
    [
        ("species", False, None),
        ("keeper_id", False, "id-like name"),
        ("ID", False, "id-like name"),
        ("keeperId", False, "id-like name"),
        ("customerID", False, "id-like name"),
        ("Customer ID", False, "id-like name"),
        ("paid", False, None),  # ends in "id" but is a word
        ("valid", False, None),
        ("uuid", False, "id-like name"),
        ("name", True, "primary key"),
        ("contact_email", False, "email column"),
        ("tags.display_id", False, "id-like name"),  # nested leaf: judged by its last part
    ],
)
def test_column_rules(name, primary_key, reason):
    column = ColumnInfo(name=name, type="TEXT", primary_key=primary_key)
    table = TableInfo(name="t", columns=(column, ColumnInfo(name="other", type="TEXT")))
    assert column_skip_reason(column, table, CellSettings()) == reason


def test_part_of_a_composite_key_is_a_value_column():
    code = ColumnInfo(name="CountryCode", type="TEXT", primary_key=True)
    language = ColumnInfo(name="Language", type="TEXT", primary_key=True)
    table = TableInfo(name="countrylanguage", columns=(code, language))
    assert column_skip_reason(language, table, CellSettings()) is None


def test_primary_keys_can_be_kept_by_setting():
    column = ColumnInfo(name="code", type="TEXT", primary_key=True)
    table = TableInfo(name="t", columns=(column,))
    assert column_skip_reason(column, table, CellSettings(skip_primary_keys=False)) is None


@pytest.mark.parametrize(
    "value, reason",
    [
        ("Bengal Tiger", None),
        ("   ", "blank"),
        ("x" * 257, "too long"),
        ("someone@example.com", "email"),
        ("contact: someone@example.com", None),  # text that mentions an address is still text
        ("123e4567-e89b-12d3-a456-426614174000", "uuid"),
        ("2024-10-22", "date or time"),
        ("2024-10-22 13:45:00", "date or time"),
        ("216-201-3124", "number-like"),
        ("1992", "number-like"),
        ("Z00.00", None),
        ("10 mg", None),
        ("Route 66", None),
    ],
)
def test_value_rules(value, reason):
    assert value_skip_reason(value, CellSettings()) == reason


@pytest.mark.parametrize("value", ["2024-10-22", "1992"])
def test_dates_and_numbers_can_be_kept(value):
    assert value_skip_reason(value, CellSettings(skip_dates_and_numbers=False)) is None


def _extract(db, settings=None):
    settings = settings or CellSettings()
    view = introspect(db)
    with closing(connect_readonly(db)) as conn:
        return extract_cell_values(conn, engine_for(db), view, settings)


def test_extraction_keeps_text_drops_keys_ids_and_emails(zoo_db):
    result = _extract(zoo_db)
    found = {(v.table, v.column) for v in result.values}
    assert found == {
        ("keeper", "name"),
        ("keeper", "badge_code"),
        ("animal", "species"),
        ("animal", "nickname"),
        ("animal", "habitat"),
    }
    assert dict(result.skipped_columns) == {
        "keeper.email": "email column",
        "animal.keeperId": "id-like name",
    }
    species = [v.value for v in result.values if v.column == "species"]
    assert species[0] == "Bengal Tiger"  # most frequent first, and distinct
    assert len(species) == len(set(species)) == 4


def test_cap_per_column_keeps_most_frequent(zoo_db):
    result = _extract(zoo_db, CellSettings(max_values_per_column=1))
    per_column = {}
    for v in result.values:
        per_column.setdefault((v.table, v.column), []).append(v.value)
    assert all(len(vs) == 1 for vs in per_column.values())
    assert per_column[("animal", "habitat")] == ["rainforest"]


def test_non_utf8_and_long_values_are_skipped_and_counted(tmp_path):
    import sqlite3

    from pipelines.contracts import DatabaseRef

    path = tmp_path / "dirty.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (label TEXT)")
        conn.execute(
            "INSERT INTO t VALUES ('clean'), (CAST(X'4361FF6521' AS TEXT)), (?), ('')", ("y" * 300,)
        )
    conn.close()
    result = _extract(DatabaseRef(db_id="dirty", path=str(path)))
    assert [v.value for v in result.values] == ["clean"]
    assert dict(result.skipped_values) == {
        "not UTF-8": 1
    }  # long and empty ones never leave the query


def test_table_without_text_columns_yields_nothing(numbers_db):
    result = _extract(numbers_db)
    assert result.values == () and result.skipped_columns == ()
