"""Source: the database's own comments (``COMMENT ON TABLE`` / ``COMMENT ON COLUMN``, DuckDB's
PostgreSQL-style catalog comments, read from ``duckdb_tables()`` and ``duckdb_columns()``).

SQLite keeps no comments in its catalog (a ``--`` comment inside ``CREATE TABLE`` is part of the
DDL text every prompt already shows), so a SQLite database documents nothing here.

    read(claims_duckdb).column("members", "state")   # COMMENT ON COLUMN members.state IS '...'
    ──► ColumnDoc(description='State of residence', values='', label='')
"""

from __future__ import annotations

import logging
from contextlib import closing

import duckdb

from pipelines.contracts import DatabaseRef
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc, one_line

NAME = "comments"
log = logging.getLogger(__name__)

_TABLES = (
    "SELECT schema_name, table_name, comment FROM duckdb_tables() "
    "WHERE NOT internal AND database_name = current_database()"
)
_COLUMNS = (
    "SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
    "WHERE NOT internal AND database_name = current_database() AND comment IS NOT NULL"
)


def table_key(schema: str, table: str) -> str:
    """A DuckDB table's documentation key: lower-cased, ``schema.table`` outside ``main``."""
    return (table if schema == "main" else f"{schema}.{table}").lower()


def catalog_rows(db: DatabaseRef, what: str, *queries: str) -> list[list[tuple]] | None:
    """The rows of each catalog query on ``db``, a DuckDB database; None for another dialect or
    a file that cannot be read (logged, saying ``what`` was being read)."""
    if db.dialect != "duckdb":
        return None
    try:
        with closing(connect_readonly(db)) as conn:
            return [conn.execute(query).fetchall() for query in queries]
    except (DatabaseUnavailable, duckdb.Error) as exc:
        log.warning("cannot read the %s of %s: %s", what, db.path, exc)
        return None


def read(db: DatabaseRef) -> SchemaDocs:
    """Table and column comments of a DuckDB database (empty for SQLite or an unreadable file)."""
    found = catalog_rows(db, "comments", _TABLES, _COLUMNS)
    if found is None:
        return SchemaDocs()
    tables, columns = found
    docs: dict[str, TableDoc] = {}
    for schema, table, comment in tables:
        if one_line(comment):
            docs[table_key(schema, table)] = TableDoc(description=one_line(comment))
    for schema, table, column, comment in columns:
        if not one_line(comment):
            continue
        found = docs.get(table_key(schema, table), TableDoc())
        described = {**found.columns, column.lower(): ColumnDoc(description=one_line(comment))}
        docs[table_key(schema, table)] = found.model_copy(update={"columns": described})
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())
