from __future__ import annotations

import duckdb

from pipelines.schema.documentation import comments


def test_duckdb_table_and_column_comments(tickets_db):
    conn = duckdb.connect(tickets_db.path)
    conn.execute("COMMENT ON TABLE users IS 'people who own tickets'")
    conn.close()
    docs = comments.read(tickets_db)
    assert docs.sources == ("comments",)
    assert docs.column("tickets", "title").description == "one-line summary"
    assert docs.table("users").description == "people who own tickets"
    assert docs.column("tickets", "owner_id") is None


def test_sqlite_and_unreadable_files_document_nothing(shop_db, tickets_db, tmp_path):
    assert not comments.read(shop_db)
    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(b"not a database")
    assert not comments.read(tickets_db.model_copy(update={"path": str(broken)}))
