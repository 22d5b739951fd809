"""Fixture databases (one SQLite, one DuckDB, each alone in its folder) and the hostile corpus.

``hostile`` / ``hostile_sqlite`` / ``hostile_duckdb`` parametrise a test over the hostile
statements (all, or one dialect's). ``{dir}`` in a statement is the database's own folder, so a
statement that managed to create a file would show up in ``snapshot``.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from pipelines.contracts import DatabaseRef

SINGERS = [
    # id, name, country, age, rating, joined
    (1, "Joe Sharp", "Netherlands", 52, 4.5, "2014-03-01"),
    (2, "Timbaland  ", "United States", 32, 3.25, "2016-11-20"),
    (3, "Justin Brown", "France", 29, None, "2019-01-05"),
    (4, "Rose White", "France", 41, 4.0, None),
    (5, "John Nizinik", None, 43, 2.75, "2012-07-14"),
    (6, "Tribal King", "France", 25, 3.5, "2020-02-29"),
]
NUMBERS = 2_000  # a 4-way cross join of this is 1.6e13 rows: it never finishes


def _build_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE singer (id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER,
                             rating REAL, joined TEXT);
        CREATE TABLE numbers (n INTEGER);
        CREATE INDEX singer_age ON singer(age);
        """
    )
    conn.executemany("INSERT INTO singer VALUES (?, ?, ?, ?, ?, ?)", SINGERS)
    conn.executemany("INSERT INTO numbers VALUES (?)", [(n,) for n in range(NUMBERS)])
    conn.commit()
    conn.close()


def _build_duckdb(path: Path) -> None:
    conn = duckdb.connect(str(path))
    conn.execute(
        """
        CREATE TABLE singer (id INTEGER PRIMARY KEY, name VARCHAR, country VARCHAR, age INTEGER,
                             rating DECIMAL(6, 3), joined DATE, active BOOLEAN, photo BLOB,
                             tags VARCHAR[], seen TIMESTAMP)
        """
    )
    conn.executemany(
        "INSERT INTO singer VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                *row,
                row[0] % 2 == 0,
                bytes([row[0], 255]),
                ["pop", f"t{row[0]}"],
                f"2021-05-0{row[0]} 10:30:00",
            )
            for row in SINGERS
        ],
    )
    conn.execute(f"CREATE TABLE numbers AS SELECT range::INTEGER AS n FROM range({NUMBERS})")
    conn.close()


@pytest.fixture(scope="session")
def sqlite_ref(tmp_path_factory: pytest.TempPathFactory) -> DatabaseRef:
    path = tmp_path_factory.mktemp("sqlite_db") / "concert.sqlite"
    _build_sqlite(path)
    return DatabaseRef(db_id="concert", path=str(path), dialect="sqlite")


@pytest.fixture(scope="session")
def duckdb_ref(tmp_path_factory: pytest.TempPathFactory) -> DatabaseRef:
    path = tmp_path_factory.mktemp("duckdb_db") / "concert.duckdb"
    _build_duckdb(path)
    return DatabaseRef(db_id="concert", path=str(path), dialect="duckdb")


@pytest.fixture(params=["sqlite", "duckdb"])
def db_ref(request: pytest.FixtureRequest) -> DatabaseRef:
    """Each test using it runs once per engine."""
    return request.getfixturevalue(f"{request.param}_ref")


def snapshot(db: DatabaseRef) -> tuple[str, tuple[str, ...]]:
    """sha256 of the database file and every path in its folder."""
    path = Path(db.path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, tuple(sorted(str(p.relative_to(path.parent)) for p in path.parent.rglob("*")))


@pytest.fixture
def take_snapshot():
    return snapshot


@dataclass(frozen=True)
class Hostile:
    dialect: str
    sql: str
    # True when the statement would change the database file if an engine ran it unguarded.
    writes: bool = False

    def render(self, db_dir: str) -> str:
        return self.sql.replace("{dir}", db_dir)

    @property
    def id(self) -> str:
        return f"{self.dialect}:{self.sql[:60]}"


_WRITES_BOTH = [
    "INSERT INTO singer (id, name) VALUES (99, 'Mallory')",
    "INSERT INTO singer SELECT * FROM singer",
    "UPDATE singer SET age = 0",
    "UPDATE singer SET name = name || '!' RETURNING name",
    "DELETE FROM singer",
    "DELETE FROM singer WHERE id = 1 RETURNING *",
    "DROP TABLE singer",
    "DROP TABLE IF EXISTS numbers",
    "ALTER TABLE singer ADD COLUMN evil INTEGER",
    "ALTER TABLE singer RENAME TO singer_old",
    "CREATE TABLE evil (a INTEGER)",
    "CREATE TABLE evil AS SELECT * FROM singer",
    "CREATE VIEW evil AS SELECT 1 AS a",
    "CREATE INDEX evil ON singer(name)",
    "WITH x AS (SELECT 1) DELETE FROM singer",
    "WITH x AS (SELECT 1 AS a) INSERT INTO numbers SELECT a FROM x",
    "WITH x AS (SELECT 1) UPDATE singer SET age = 1",
    "SELECT 1; DELETE FROM singer",
    "SELECT name FROM singer WHERE id IN (SELECT id FROM singer); DROP TABLE singer",
    "-- harmless comment\nDROP TABLE singer",
    "/* SELECT */ DELETE FROM singer",
    "INSERT OR REPLACE INTO singer (id, name) VALUES (1, 'Mallory')",
]

_OTHER_BOTH = [
    "SELECT 1; SELECT 2",
    "SELECT * INTO singer_copy FROM singer",
    "CREATE TEMP TABLE scratch AS SELECT 1 AS a",
    "BEGIN TRANSACTION",
    "SELECT * FROM (DELETE FROM singer RETURNING *)",
    "EXPLAIN SELECT 1",
    "SELECT load_extension('{dir}/evil.so')",
]

HOSTILE: list[Hostile] = [
    *(Hostile(d, sql, writes=True) for d in ("sqlite", "duckdb") for sql in _WRITES_BOTH),
    *(Hostile(d, sql) for d in ("sqlite", "duckdb") for sql in _OTHER_BOTH),
    # SQLite
    Hostile("sqlite", "REPLACE INTO singer (id, name) VALUES (1, 'Mallory')", writes=True),
    Hostile(
        "sqlite",
        "CREATE TRIGGER evil AFTER INSERT ON singer BEGIN DELETE FROM singer; END",
        writes=True,
    ),
    Hostile("sqlite", "DROP INDEX singer_age", writes=True),
    Hostile("sqlite", "VACUUM", writes=True),
    Hostile("sqlite", "ANALYZE", writes=True),
    Hostile("sqlite", "PRAGMA user_version = 7", writes=True),
    Hostile("sqlite", "PRAGMA journal_mode = WAL", writes=True),
    Hostile("sqlite", "PRAGMA writable_schema = ON", writes=True),
    Hostile("sqlite", "VACUUM INTO '{dir}/copy.sqlite'"),
    Hostile("sqlite", "ATTACH DATABASE '{dir}/evil.sqlite' AS evil"),
    Hostile("sqlite", "ATTACH ':memory:' AS scratch"),
    Hostile("sqlite", "DETACH DATABASE main"),
    Hostile("sqlite", "PRAGMA query_only = OFF"),
    Hostile("sqlite", "PRAGMA table_info(singer)"),
    Hostile("sqlite", "REINDEX"),
    Hostile("sqlite", "SAVEPOINT s1"),
    Hostile("sqlite", "SELECT readfile('/etc/passwd')"),
    Hostile("sqlite", "SELECT writefile('{dir}/owned.txt', 'owned')"),
    Hostile("sqlite", "SELECT edit('text', 'vi')"),
    Hostile("sqlite", "SELECT fts3_tokenizer('simple')"),
    Hostile("sqlite", "SELECT name FROM singer UNION SELECT readfile('/etc/hostname')"),
    Hostile("sqlite", "EXPORT DATABASE '{dir}/export'"),
    # DuckDB
    Hostile("duckdb", "TRUNCATE singer", writes=True),
    Hostile("duckdb", "CREATE MACRO evil() AS 1", writes=True),
    Hostile("duckdb", "CREATE SEQUENCE evil_seq", writes=True),
    Hostile("duckdb", "INSERT INTO singer BY NAME SELECT 99 AS id", writes=True),
    Hostile(
        "duckdb",
        "MERGE INTO numbers USING (SELECT 1 AS n) AS s ON numbers.n = s.n WHEN MATCHED THEN DELETE",
        writes=True,
    ),
    Hostile("duckdb", "COPY singer TO '{dir}/out.csv'"),
    Hostile("duckdb", "COPY (SELECT 1) TO '{dir}/out.parquet' (FORMAT parquet)"),
    Hostile("duckdb", "COPY numbers FROM '{dir}/in.csv'", writes=True),
    Hostile("duckdb", "EXPORT DATABASE '{dir}/export'"),
    Hostile("duckdb", "IMPORT DATABASE '{dir}/export'", writes=True),
    Hostile("duckdb", "INSTALL httpfs"),
    Hostile("duckdb", "FORCE INSTALL httpfs"),
    Hostile("duckdb", "LOAD httpfs"),
    Hostile("duckdb", "SET enable_external_access = true"),
    Hostile("duckdb", "SET threads = 1"),
    Hostile("duckdb", "RESET threads"),
    Hostile("duckdb", "SET VARIABLE evil = 1"),
    Hostile("duckdb", "CALL pragma_version()"),
    Hostile("duckdb", "PRAGMA enable_profiling"),
    Hostile("duckdb", "CHECKPOINT"),
    Hostile("duckdb", "VACUUM"),
    Hostile("duckdb", "USE memory"),
    Hostile("duckdb", "ATTACH '{dir}/evil.duckdb' AS evil"),
    Hostile("duckdb", "ATTACH ':memory:' AS scratch"),
    Hostile("duckdb", "DETACH DATABASE IF EXISTS concert"),
    Hostile("duckdb", "CREATE SECRET evil (TYPE s3, KEY_ID 'k', SECRET 's')"),
    Hostile("duckdb", "SELECT nextval('evil_seq')"),
    Hostile("duckdb", "SELECT * FROM read_csv('/etc/passwd')"),
    Hostile("duckdb", "SELECT * FROM read_csv_auto('/etc/passwd')"),
    Hostile("duckdb", "SELECT * FROM '/etc/passwd'"),
    Hostile("duckdb", "SELECT * FROM 'data.csv'"),
    Hostile("duckdb", "SELECT * FROM read_parquet('{dir}/x.parquet')"),
    Hostile("duckdb", "SELECT * FROM parquet_scan('{dir}/x.parquet')"),
    Hostile("duckdb", "SELECT * FROM read_json_auto('{dir}/x.json')"),
    Hostile("duckdb", "SELECT * FROM read_text('/etc/hostname')"),
    Hostile("duckdb", "SELECT * FROM read_blob('/etc/hostname')"),
    Hostile("duckdb", "SELECT * FROM glob('/*')"),
    Hostile("duckdb", "SELECT * FROM sniff_csv('/etc/passwd')"),
    Hostile("duckdb", "SELECT getenv('HOME')"),
    Hostile("duckdb", "SELECT * FROM query('SELECT 42')"),
    Hostile("duckdb", "SELECT * FROM query_table('singer')"),
    Hostile("duckdb", "SELECT * FROM duckdb_secrets()"),
    Hostile("duckdb", "SELECT * FROM sqlite_scan('{dir}/x.sqlite', 't')"),
    Hostile(
        "duckdb", "SELECT name FROM singer WHERE id IN (SELECT 1 FROM read_csv('/etc/passwd'))"
    ),
    Hostile("duckdb", "SELECT 1 UNION ALL SELECT count(*) FROM read_text('/etc/hostname')"),
    Hostile("duckdb", "SUMMARIZE singer"),
    Hostile("duckdb", "DESCRIBE singer"),
    Hostile("duckdb", "SHOW TABLES"),
]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name, cases in (
        ("hostile", HOSTILE),
        ("hostile_sqlite", [h for h in HOSTILE if h.dialect == "sqlite"]),
        ("hostile_duckdb", [h for h in HOSTILE if h.dialect == "duckdb"]),
    ):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, cases, ids=[h.id for h in cases])
