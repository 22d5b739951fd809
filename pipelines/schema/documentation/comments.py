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


def _name(schema: str, table: str) -> str:
    return (table if schema == "main" else f"{schema}.{table}").lower()


def read(db: DatabaseRef) -> SchemaDocs:
    """Table and column comments of a DuckDB database (empty for SQLite or an unreadable file)."""
    if db.dialect != "duckdb":
        return SchemaDocs()
    try:
        with closing(connect_readonly(db)) as conn:
            tables = conn.execute(_TABLES).fetchall()
            columns = conn.execute(_COLUMNS).fetchall()
    except (DatabaseUnavailable, duckdb.Error) as exc:
        log.warning("cannot read the comments of %s: %s", db.path, exc)
        return SchemaDocs()
    docs: dict[str, TableDoc] = {}
    for schema, table, comment in tables:
        if one_line(comment):
            docs[_name(schema, table)] = TableDoc(description=one_line(comment))
    for schema, table, column, comment in columns:
        if not one_line(comment):
            continue
        found = docs.get(_name(schema, table), TableDoc())
        described = {**found.columns, column.lower(): ColumnDoc(description=one_line(comment))}
        docs[_name(schema, table)] = found.model_copy(update={"columns": described})
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())
