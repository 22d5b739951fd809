"""Small on-disk benchmarks for the scoring and CLI tests (built in tmp_path, never shared data)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

SINGERS = [
    (1, "Ann", "France", 30),
    (2, "Bob", "France", 41),
    (3, "Cid", "Spain", 25),
    (4, "Dee", "Chile", 41),
]

# (question, gold SQL); Spider hardness comes from the loader.
QUESTIONS = [
    ("How many singers?", "SELECT count(*) FROM singer"),
    ("Names by age, oldest first.", "SELECT name FROM singer ORDER BY age DESC, name"),
    ("Countries of singers.", "SELECT country FROM singer"),
    ("Name and age of singers over 26.", "SELECT name, age FROM singer WHERE age > 26"),
    ("Average age.", "SELECT avg(age) FROM singer"),
    ("Broken gold.", "SELECT no_such_column FROM singer"),
]


def _database(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER)"
        )
        conn.executemany("INSERT INTO singer VALUES (?, ?, ?, ?)", SINGERS)
    conn.close()


@pytest.fixture
def tiny_spider(tmp_path: Path) -> Path:
    """Spider layout: dev.json with QUESTIONS on db ``music`` plus one on a missing db."""
    root = tmp_path / "spider"
    records = [{"db_id": "music", "question": q, "query": sql} for q, sql in QUESTIONS]
    records.append({"db_id": "absent_db", "question": "Lost?", "query": "SELECT 1"})
    root.mkdir()
    (root / "dev.json").write_text(json.dumps(records))
    _database(root / "database" / "music" / "music.sqlite")
    return root


@pytest.fixture
def tiny_bird(tmp_path: Path) -> Path:
    """BIRD mini-dev layout with the same questions, evidence and BIRD difficulties."""
    root = tmp_path / "bird"
    levels = ["simple", "moderate", "challenging"]
    records = [
        {
            "question_id": 100 + i,
            "db_id": "music",
            "question": q,
            "evidence": "",
            "SQL": sql,
            "difficulty": levels[i % 3],
        }
        for i, (q, sql) in enumerate(QUESTIONS)
    ]
    root.mkdir()
    (root / "mini_dev_sqlite.json").write_text(json.dumps(records))
    _database(root / "dev_databases" / "music" / "music.sqlite")
    return root
