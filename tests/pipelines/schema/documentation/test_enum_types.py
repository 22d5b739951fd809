from __future__ import annotations

import duckdb

from pipelines.contracts import DatabaseRef
from pipelines.schema.documentation import enum_types, load_documentation
from pipelines.schema.documentation.vocabulary import labels


def _db(tmp_path) -> DatabaseRef:
    path = tmp_path / "moods.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TYPE mood AS ENUM ('sad', 'ok', 'it''s fine')")
    conn.execute(
        "CREATE TABLE visits (id INTEGER, mood mood, level ENUM('low', 'high'), "
        "notes STRUCT(author VARCHAR, tone mood)[], plain VARCHAR)"
    )
    conn.execute("COMMENT ON COLUMN visits.level IS 'How urgent the visit was.'")
    conn.close()
    return DatabaseRef(db_id="moods", path=str(path), dialect="duckdb")


def test_enum_columns_and_sub_fields_get_their_labels(tmp_path):
    docs = enum_types.read(_db(tmp_path))
    assert docs.sources == ("enum_types",)
    assert docs.column("visits", "mood").values == "one of sad, ok, it's fine"
    assert docs.column("visits", "notes.tone").values == "one of sad, ok, it's fine"
    assert docs.column("visits", "plain") is None and docs.column("visits", "notes") is None
    assert labels(f"values: {docs.column('visits', 'level').values}").listed == ("low", "high")


def test_a_comment_and_the_enum_type_merge_field_by_field(tmp_path, shop_db):
    level = load_documentation(_db(tmp_path)).column("visits", "level")
    assert (level.description, level.values) == ("How urgent the visit was.", "one of low, high")
    assert not enum_types.read(shop_db)  # SQLite has no ENUM type
