"""Source: the database's own comments (``COMMENT ON TABLE`` / ``COMMENT ON COLUMN``): DuckDB's,
read from ``duckdb_tables()`` and ``duckdb_columns()``; PostgreSQL's, from ``pg_description``.

SQLite keeps no comments in its catalog (a ``--`` comment inside ``CREATE TABLE`` is part of the
DDL text every prompt already shows), so a SQLite database documents nothing here.

    read(claims_duckdb).column("members", "state")   # COMMENT ON COLUMN members.state IS '...'
    ──► ColumnDoc(description='State of residence', values='', label='')
"""

from __future__ import annotations

import logging
from contextlib import closing

from pipelines.contracts import DatabaseRef
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema import postgres
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


# dialect -> (table comments, column comments): rows (schema, table, comment) and
# (schema, table, column, comment)
QUERIES = {
    "duckdb": (_TABLES, _COLUMNS),
    "postgres": (postgres.TABLE_COMMENTS_SQL, postgres.COLUMN_COMMENTS_SQL),
}
# The schema whose tables are named without it.
DEFAULT_SCHEMAS = {"duckdb": "main", "postgres": postgres.DEFAULT_SCHEMA}


def table_key(schema: str, table: str, dialect: str = "duckdb") -> str:
    """A table's documentation key: lower-cased, ``schema.table`` outside the default schema."""
    return (table if schema == DEFAULT_SCHEMAS[dialect] else f"{schema}.{table}").lower()


def catalog_rows(db: DatabaseRef, what: str, *queries: str) -> list[list[tuple]] | None:
    """The rows of each catalog query on ``db``; None for a database that cannot be read
    (logged, saying ``what`` was being read)."""
    from pipelines.schema.introspect import DRIVER_ERRORS

    try:
        with closing(connect_readonly(db)) as conn:
            return [conn.execute(query).fetchall() for query in queries]
    except (DatabaseUnavailable, *DRIVER_ERRORS) as exc:
        log.warning("cannot read the %s of %s: %s", what, db.path, exc)
        return None


def read(db: DatabaseRef) -> SchemaDocs:
    """Table and column comments of a DuckDB or PostgreSQL database (empty for SQLite or an
    unreadable database)."""
    if db.dialect not in QUERIES:
        return SchemaDocs()
    found = catalog_rows(db, "comments", *QUERIES[db.dialect])
    if found is None:
        return SchemaDocs()
    tables, columns = found
    docs: dict[str, TableDoc] = {}
    for schema, table, comment in tables:
        if one_line(comment):
            docs[table_key(schema, table, db.dialect)] = TableDoc(description=one_line(comment))
    for schema, table, column, comment in columns:
        if not one_line(comment):
            continue
        found = docs.get(table_key(schema, table, db.dialect), TableDoc())
        described = {**found.columns, column.lower(): ColumnDoc(description=one_line(comment))}
        docs[table_key(schema, table, db.dialect)] = found.model_copy(update={"columns": described})
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())
