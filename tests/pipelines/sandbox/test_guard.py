import json
from pathlib import Path

import pytest
from sqlglot import exp
from sqlglot.errors import ParseError

from core.config import load_config
from pipelines.sandbox import ReadOnlyViolation, check_read_only

SPIDER_DEV = Path(load_config().paths.benchmarks) / "spider" / "dev.json"

READ_QUERIES = [
    "SELECT name FROM singer WHERE age > 30",
    "select count(*) from singer;",
    "WITH older AS (SELECT * FROM singer WHERE age > 40) SELECT name FROM older",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
    "SELECT name FROM singer UNION SELECT country FROM singer",
    "SELECT id FROM singer INTERSECT SELECT id FROM singer WHERE age < 50",
    "SELECT id FROM singer EXCEPT SELECT id FROM singer WHERE age < 30",
    "VALUES (1, 'a'), (2, 'b')",
    "(SELECT name FROM singer)",
    "SELECT name, rank() OVER (PARTITION BY country ORDER BY age DESC) FROM singer",
    "SELECT 'DROP TABLE singer; DELETE FROM singer' AS harmless_text",
    "SELECT name FROM singer /* ; DROP TABLE singer */ -- ; DELETE FROM singer",
    "SELECT replace(name, 'a', 'b') FROM singer",
    "SELECT name FROM singer WHERE name GLOB 'J*'",
    'SELECT "update", "delete" FROM "insert"',
]


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("sql", READ_QUERIES)
def test_admits_one_read_query(sql, dialect):
    statement = check_read_only(sql, dialect)
    assert isinstance(statement.unnest(), (exp.Select, exp.SetOperation, exp.Values))


def test_admits_duckdb_from_first_syntax():
    assert isinstance(check_read_only("FROM singer SELECT name", "duckdb"), exp.Select)


def test_rejects_hostile(hostile):
    with pytest.raises(ReadOnlyViolation):
        check_read_only(hostile.render("/tmp/sandbox-guard-test"), hostile.dialect)


@pytest.mark.parametrize(
    ("sql", "dialect", "offender"),
    [
        ("DELETE FROM singer", "sqlite", "DELETE"),
        ("WITH x AS (SELECT 1) DELETE FROM singer", "sqlite", "DELETE"),
        ("WITH x AS (DELETE FROM singer RETURNING *) SELECT * FROM x", "duckdb", "DELETE"),
        ("SELECT * INTO copy FROM singer", "sqlite", "SELECT ... INTO"),
        ("SELECT 1; SELECT 2", "sqlite", "multiple statements"),
        ("VACUUM", "sqlite", "VACUUM"),
        ("-- note\nATTACH 'x.db' AS x", "sqlite", "ATTACH"),
        ("SELECT * FROM read_csv('/etc/passwd')", "duckdb", "function read_csv()"),
        ("SELECT upper(readfile('/etc/passwd'))", "sqlite", "function readfile()"),
        ("SELECT * FROM 'data/claims.parquet'", "duckdb", "file scan 'data/claims.parquet'"),
        ("EXPORT DATABASE 'out'", "duckdb", "EXPORT"),
    ],
)
def test_violation_names_the_offender(sql, dialect, offender):
    with pytest.raises(ReadOnlyViolation) as caught:
        check_read_only(sql, dialect)
    assert caught.value.offender == offender
    assert offender in str(caught.value)


@pytest.mark.parametrize("sql", ["SELEC name FROM singer", "SELECT * FROM", "SELECT (1"])
def test_unparsable_read_is_a_parse_error_not_a_violation(sql):
    with pytest.raises(ParseError):
        check_read_only(sql, "sqlite")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM (DELETE FROM singer RETURNING *)",  # sqlglot cannot parse it
        "SELECT (1; DROP TABLE singer",
        "FORCE INSTALL httpfs",
    ],
)
def test_unparsable_hostile_is_still_a_violation(sql):
    with pytest.raises(ReadOnlyViolation):
        check_read_only(sql, "sqlite")


def test_empty_sql_is_a_parse_error():
    with pytest.raises(ParseError):
        check_read_only("  -- nothing here\n", "sqlite")


def test_glob_is_blocked_only_where_it_lists_files():
    check_read_only("SELECT glob('J*', name) FROM singer", "sqlite")
    with pytest.raises(ReadOnlyViolation):
        check_read_only("SELECT * FROM glob('/*')", "duckdb")


def test_unknown_dialect_is_a_value_error():
    with pytest.raises(ValueError, match="mysql"):
        check_read_only("SELECT 1", "mysql")


@pytest.mark.skipif(not SPIDER_DEV.exists(), reason=f"Spider dev not found at {SPIDER_DEV}")
def test_spider_dev_gold_queries_pass_the_guard():
    golds = [example["query"] for example in json.loads(SPIDER_DEV.read_text())][::10]
    assert len(golds) > 100
    refused = []
    for sql in golds:
        try:
            check_read_only(sql, "sqlite")
        except ReadOnlyViolation as violation:
            refused.append((sql, str(violation)))
    assert refused == []
