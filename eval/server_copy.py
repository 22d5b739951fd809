"""Copy a benchmark's database file into a PostgreSQL database, so the benchmark can be answered
from a server.

    copy_to_server(claims_sqlite_ref, "postgresql://owner@db:5432/claims")
    ──► CREATE DATABASE claims (when missing) ──► per table, in the file's catalog order:
        DROP TABLE IF EXISTS … CASCADE; the file's CREATE TABLE transpiled by sqlglot;
        COPY … FROM STDIN; COMMENT ON TABLE / COLUMN from the file's documentation
    ──► ANALYZE ──► CopyReport(tables, rows)

Everything after CREATE DATABASE runs in one transaction: the database holds the old copy or
the new one, never half. The role in the URI must be able to create tables there (the
sandbox's read-only role cannot); grant SELECT to the reading role afterwards (docs/postgres.md).
"""

from __future__ import annotations

from contextlib import closing

import psycopg
import sqlglot
from psycopg import sql

from core.types import Frozen
from eval.errors import EvalError
from pipelines.contracts import DatabaseRef
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.postgres import database_name, redacted
from pipelines.schema import introspect
from pipelines.schema.documentation import TableDoc, load_documentation
from pipelines.schema.reference import CATALOG_SQL


class ServerCopyError(EvalError):
    """The database could not be copied into the server."""


class CopyReport(Frozen):
    location: str  # without a password
    tables: tuple[str, ...]
    rows: int


def _ensure_database(location: str) -> None:
    info = psycopg.conninfo.conninfo_to_dict(location)
    name = database_name(location)
    maintenance = psycopg.conninfo.make_conninfo(**{**info, "dbname": "postgres"})
    with psycopg.connect(maintenance, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _server_ddl(ddl: str, dialect: str) -> str:
    return sqlglot.transpile(ddl, read=dialect, write="postgres")[0]


def copy_to_server(source: DatabaseRef, location: str) -> CopyReport:
    """Copy ``source`` (a SQLite or DuckDB file) into the database ``location`` names."""
    if source.dialect == "postgres":
        raise ServerCopyError(f"{source.path} is already a server database")
    view = introspect(source, sample_values=0, infer_joins=False)
    docs = load_documentation(source)
    try:
        _ensure_database(location)
        rows = 0
        with closing(connect_readonly(source)) as reader, psycopg.connect(location) as conn:
            ddl = dict(reader.execute(CATALOG_SQL[source.dialect]).fetchall())
            for table in reversed(view.tables):  # the referencing tables first
                conn.execute(
                    sql.SQL("DROP TABLE IF EXISTS {} CASCADE").format(sql.Identifier(table.name))
                )
            for table in view.tables:
                conn.execute(_server_ddl(ddl[table.name], source.dialect))
                name = sql.Identifier(table.name)
                columns = sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns)
                copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(name, columns)
                quoted = ", ".join('"' + c.name.replace('"', '""') + '"' for c in table.columns)
                cursor = reader.execute(f'SELECT {quoted} FROM "{table.name}"')
                with conn.cursor().copy(copy_sql) as copy:
                    for row in cursor.fetchall():
                        copy.write_row(row)
                        rows += 1
                _comment(conn, table.name, docs.table(table.name))
            conn.execute("ANALYZE")
    except (psycopg.Error, sqlglot.errors.SqlglotError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        message = f"cannot copy {source.db_id} into {redacted(location)}: {first}"
        raise ServerCopyError(message) from error
    return CopyReport(
        location=redacted(location), tables=tuple(t.name for t in view.tables), rows=rows
    )


def _comment(conn: psycopg.Connection, table: str, doc: TableDoc | None) -> None:
    """The file's documentation of ``table`` as the server's own comments (descriptions)."""
    if doc is None:
        return
    name = sql.Identifier(table)
    if doc.description:
        conn.execute(
            sql.SQL("COMMENT ON TABLE {} IS {}").format(name, sql.Literal(doc.description))
        )
    columns = {
        row[0].lower(): row[0]
        for row in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0",
            (sql.Identifier(table).as_string(conn),),
        ).fetchall()
    }
    for key, column_doc in doc.columns.items():
        if column_doc.description and key in columns:
            target = sql.SQL("{}.{}").format(name, sql.Identifier(columns[key]))
            conn.execute(
                sql.SQL("COMMENT ON COLUMN {} IS {}").format(
                    target, sql.Literal(column_doc.description)
                )
            )
