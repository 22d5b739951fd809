"""One full-scale enterprise build per test session (a few seconds), shared read-only by the
enterprise tests, and a helper that hashes a database's content independently of its file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from eval.enterprise import EnterprisePaths, build_enterprise
from eval.enterprise.schema import TABLES


def content_hash(database: Path) -> str:
    """SHA-256 over every row of every table, in primary-key order."""
    digest = hashlib.sha256()
    con = duckdb.connect(str(database), read_only=True)
    try:
        for table in TABLES:
            digest.update(table.name.encode())
            keys = ", ".join(table.primary_key)
            for row in con.execute(f"SELECT * FROM {table.name} ORDER BY {keys}").fetchall():
                digest.update(repr(row).encode())
    finally:
        con.close()
    return digest.hexdigest()


@pytest.fixture(scope="session")
def hash_content():
    return content_hash


@pytest.fixture(scope="session")
def enterprise(tmp_path_factory: pytest.TempPathFactory) -> EnterprisePaths:
    return build_enterprise(tmp_path_factory.mktemp("enterprise"))


@pytest.fixture
def ro(enterprise: EnterprisePaths):
    con = duckdb.connect(str(enterprise.database), read_only=True)
    yield con
    con.close()
