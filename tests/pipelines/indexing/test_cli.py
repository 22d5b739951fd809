from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from eval.cli.index_cli import main
from pipelines.indexing.store import VersionedStore

pytestmark = pytest.mark.usefixtures("embedder")


@pytest.fixture
def spider_like(tmp_path: Path, zoo_db, numbers_db) -> Path:
    """A Spider-layout benchmark: two databases, one question each, plus one with a missing db."""
    root = tmp_path / "bench"
    for db in (zoo_db, numbers_db):
        target = root / "database" / db.db_id / f"{db.db_id}.sqlite"
        target.parent.mkdir(parents=True)
        shutil.copyfile(db.path, target)
    questions = [
        {
            "db_id": "zoo",
            "question": "How many tigers?",
            "query": "SELECT count(*) FROM animal WHERE species = 'Bengal Tiger'",
        },
        {"db_id": "numbers", "question": "Max value?", "query": "SELECT max(value) FROM reading"},
        {"db_id": "gone", "question": "Anything?", "query": "SELECT 1"},
    ]
    (root / "dev.json").write_text(json.dumps(questions))
    (root / "tables.json").write_text("[]")
    return root


def _args(bench: Path, settings) -> list[str]:
    return [
        "benchmark=spider_dev",
        f"benchmark.data_dir={bench}",
        f"pipeline.index.root={settings.root}",
        "pipeline.index.executor=local",
        f"pipeline.index.examples.train_file={settings.examples.train_file}",
        f"pipeline.index.examples.tables_file={settings.examples.tables_file}",
    ]


def test_index_command_builds_then_rebuilds_nothing_then_only_the_changed_db(
    spider_like, settings, capsys
):
    assert main(_args(spider_like, settings)) == 0
    out = capsys.readouterr()
    assert "3 built" in out.err and "database missing: gone" in out.err
    zoo = VersionedStore(settings.root, "databases", "zoo").current()
    assert main(_args(spider_like, settings)) == 0
    assert "3 unchanged" in capsys.readouterr().err
    with sqlite3.connect(spider_like / "database" / "numbers" / "numbers.sqlite") as conn:
        conn.execute("INSERT INTO reading VALUES (9, 9.5, 900)")
    conn.close()
    assert main(_args(spider_like, settings)) == 0
    assert "1 built, 2 unchanged" in capsys.readouterr().err
    assert VersionedStore(settings.root, "databases", "zoo").current() == zoo


def test_index_command_fails_when_a_database_is_corrupt(spider_like, settings, capsys):
    (spider_like / "database" / "numbers" / "numbers.sqlite").write_bytes(b"garbage" * 100)
    assert main(_args(spider_like, settings)) == 1
    assert "1 failed" in capsys.readouterr().err


def test_index_command_reports_which_columns_the_documentation_describes(
    spider_like, settings, capsys
):
    (spider_like / "tables.json").write_text(
        json.dumps(
            [
                {
                    "db_id": "zoo",
                    "table_names_original": ["animal"],
                    "column_names_original": [[-1, "*"], [0, "species"]],
                    "column_descriptions": ["", "common name of the species"],
                }
            ]
        )
    )
    assert main(_args(spider_like, settings)) == 0
    out = capsys.readouterr().out
    documentation = out[out.index("Schema documentation") :].splitlines()
    (zoo,) = [line for line in documentation if "│ zoo" in line]
    assert "1/" in zoo and "tables_json" in zoo
    (numbers,) = [line for line in documentation if "│ numbers" in line]
    assert "0/" in numbers and "none" in numbers
