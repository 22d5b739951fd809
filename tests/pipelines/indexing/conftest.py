"""Fixtures for the index tests: tiny SQLite databases, a tiny training set, index settings.

The embedding model loads once per test session (``embedder``); every test that builds an
index depends on it so the load is paid once.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from pipelines.contracts import DatabaseRef
from pipelines.indexing.settings import ExampleSettings, IndexSettings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")


@pytest.fixture(scope="session")
def embedder():
    from pipelines.indexing.embedder import load_model

    return load_model()


def make_sqlite(path: Path, script: str) -> DatabaseRef:
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    conn.close()
    return DatabaseRef(db_id=path.stem, path=str(path))


ZOO = """
CREATE TABLE keeper (keeper_id INTEGER PRIMARY KEY, name TEXT, email TEXT, badge_code TEXT);
CREATE TABLE animal (
    animal_id INTEGER PRIMARY KEY, species TEXT, nickname VARCHAR(30), keeperId TEXT,
    habitat TEXT, weight REAL
);
INSERT INTO keeper VALUES (1, 'Maria Sanchez', 'maria@zoo.org', 'K-1'), (2, 'Tom Baker', 'tom@zoo.org', 'K-2');
INSERT INTO animal VALUES
  (1, 'African Elephant', 'Jumbo', '1', 'savanna', 5400.0),
  (2, 'Bengal Tiger', 'Stripes', '2', 'rainforest', 220.0),
  (3, 'Emperor Penguin', 'Pingu', '2', 'antarctic ice', 23.0),
  (4, 'Bengal Tiger', 'Shere Khan', '1', 'rainforest', 250.0),
  (5, 'Red Panda', 'contact: zookeeper@example.com', '1', 'temperate forest', 5.0);
"""

NUMBERS_ONLY = """
CREATE TABLE reading (sensor INTEGER, value REAL, taken INTEGER);
INSERT INTO reading VALUES (1, 2.5, 100), (2, 3.5, 200);
"""


@pytest.fixture
def zoo_db(tmp_path: Path) -> DatabaseRef:
    return make_sqlite(tmp_path / "zoo.sqlite", ZOO)


@pytest.fixture(scope="session")
def zoo_index(tmp_path_factory, embedder) -> str:
    """An index root with the zoo database built once, for read-only retrieval tests."""
    from pipelines.indexing.builder.build import build_database

    base = tmp_path_factory.mktemp("zoo_index")
    db = make_sqlite(base / "zoo.sqlite", ZOO)
    settings = IndexSettings(root=str(base / "indexes"), executor="local")
    assert build_database(db, settings).status == "built"
    return settings.root


@pytest.fixture
def nested_duckdb(tmp_path: Path) -> DatabaseRef:
    """A DuckDB file with a STRUCT and a LIST of STRUCT column."""
    import duckdb

    path = tmp_path / "tickets.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute(
        "CREATE TABLE tickets (id INTEGER PRIMARY KEY, title VARCHAR, "
        "meta STRUCT(stage VARCHAR, owner_id VARCHAR), links STRUCT(kind VARCHAR, target VARCHAR)[])"
    )
    conn.execute(
        "INSERT INTO tickets VALUES "
        "(1, 'Login fails', {'stage': 'triage', 'owner_id': 'u1'}, "
        "[{'kind': 'blocks', 'target': 'Payment outage'}, {'kind': 'relates_to', 'target': 'Auth rewrite'}]), "
        "(2, 'Slow search', {'stage': 'resolved', 'owner_id': 'u2'}, [])"
    )
    conn.close()
    return DatabaseRef(db_id="tickets", path=str(path), dialect="duckdb")


@pytest.fixture
def numbers_db(tmp_path: Path) -> DatabaseRef:
    return make_sqlite(tmp_path / "numbers.sqlite", NUMBERS_ONLY)


TRAIN = [
    {"db_id": "pets", "question": "How many pets are there?", "query": "SELECT count(*) FROM pets"},
    {"db_id": "cars", "question": "How many cars are there?", "query": "SELECT count(*) FROM cars"},
    {
        "db_id": "cars",
        "question": 'What is the name of the car made by "Ford"?',
        "query": 'SELECT name FROM cars WHERE maker = "Ford"',
    },
    {
        "db_id": "pets",
        "question": "List the names of pets older than 3.",
        "query": "SELECT name FROM pets WHERE age > 3",
    },
    {
        "db_id": "songs",
        "question": "Show the title of the longest song.",
        "query": "SELECT title FROM songs ORDER BY length DESC LIMIT 1",
    },
]
TABLES = [
    {
        "db_id": "pets",
        "table_names_original": ["pets"],
        "table_names": ["pets"],
        "column_names_original": [[-1, "*"], [0, "name"], [0, "age"]],
        "column_names": [[-1, "*"], [0, "name"], [0, "age"]],
    },
    {
        "db_id": "cars",
        "table_names_original": ["cars"],
        "table_names": ["cars"],
        "column_names_original": [[-1, "*"], [0, "name"], [0, "maker"]],
        "column_names": [[-1, "*"], [0, "name"], [0, "maker"]],
    },
    {
        "db_id": "songs",
        "table_names_original": ["songs"],
        "table_names": ["songs"],
        "column_names_original": [[-1, "*"], [0, "title"], [0, "length"]],
        "column_names": [[-1, "*"], [0, "title"], [0, "length"]],
    },
]


@pytest.fixture
def train_files(tmp_path: Path) -> ExampleSettings:
    train, tables = tmp_path / "train.json", tmp_path / "tables.json"
    train.write_text(json.dumps(TRAIN))
    tables.write_text(json.dumps(TABLES))
    return ExampleSettings(train_file=str(train), tables_file=str(tables))


@pytest.fixture
def settings(tmp_path: Path, train_files: ExampleSettings) -> IndexSettings:
    return IndexSettings(root=str(tmp_path / "indexes"), executor="local", examples=train_files)
