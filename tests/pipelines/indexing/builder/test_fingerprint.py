from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.indexing.builder.fingerprint import fingerprint
from pipelines.sandbox.errors import DatabaseUnavailable


def _write(db: DatabaseRef, sql: str) -> None:
    with sqlite3.connect(db.path) as conn:
        conn.execute(sql)
    conn.close()


@pytest.mark.parametrize("mode", ["stat", "content"])
def test_unchanged_database_same_fingerprint(zoo_db, mode):
    assert fingerprint(zoo_db, mode) == fingerprint(zoo_db, mode)


@pytest.mark.parametrize("mode", ["stat", "content"])
def test_data_change_moves_the_fingerprint_but_not_the_schema_hash(zoo_db, mode):
    before = fingerprint(zoo_db, mode)
    _write(zoo_db, "INSERT INTO keeper VALUES (3, 'New Keeper', NULL, 'K-3')")
    after = fingerprint(zoo_db, mode)
    assert after.digest != before.digest
    assert after.schema_hash == before.schema_hash


def test_schema_change_moves_the_schema_hash(zoo_db):
    before = fingerprint(zoo_db)
    _write(zoo_db, "CREATE TABLE extra (x TEXT)")
    assert fingerprint(zoo_db).schema_hash != before.schema_hash


def test_touch_moves_stat_but_not_content(zoo_db, tmp_path):
    stat, content = fingerprint(zoo_db, "stat"), fingerprint(zoo_db, "content")
    st = os.stat(zoo_db.path)
    os.utime(zoo_db.path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert fingerprint(zoo_db, "stat") != stat
    assert fingerprint(zoo_db, "content") == content
    copy = tmp_path / "copy" / "zoo.sqlite"
    copy.parent.mkdir()
    shutil.copyfile(zoo_db.path, copy)
    assert (
        fingerprint(zoo_db.model_copy(update={"path": str(copy)}), "content").digest
        == content.digest
    )


def test_settings_are_part_of_the_fingerprint(zoo_db):
    assert fingerprint(zoo_db, settings="a").digest != fingerprint(zoo_db, settings="b").digest


def test_corrupt_file_is_unavailable(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"junk" * 1000)
    with pytest.raises(DatabaseUnavailable):
        fingerprint(DatabaseRef(db_id="junk", path=str(path)))
