"""The demo tests' fixtures over the session's one demo build (``demo``, tests/conftest.py)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from eval.demo import DemoBenchmarkPaths


def content_hash(database: Path) -> str:
    """SHA-256 over every row of every table (in primary-key order), independent of file layout."""
    digest = hashlib.sha256()
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        for table in tables:
            digest.update(table.encode())
            for row in con.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
                digest.update(repr(row).encode())
    finally:
        con.close()
    return digest.hexdigest()


@pytest.fixture(scope="session")
def hash_content():
    return content_hash


@pytest.fixture(scope="session")
def demo_hash(demo: DemoBenchmarkPaths) -> str:
    return content_hash(demo.database)


@pytest.fixture
def ro(demo: DemoBenchmarkPaths):
    con = sqlite3.connect(f"file:{demo.database}?mode=ro", uri=True)
    yield con
    con.close()
