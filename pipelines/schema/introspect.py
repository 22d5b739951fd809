"""Read a live database (SQLite, DuckDB or PostgreSQL, read-only) into a SchemaView.

    DatabaseRef ──connect_readonly──► engine file (sqlite.py | duckdb.py | postgres.py)
        ──► tables, columns, keys, samples ──► + documentation (schema/documentation: YAML
            beside the file, DuckDB comments, tables.json descriptions, BIRD CSVs)
        ──► + inferred join keys (+ a server's function list: PostgreSQL) ──► SchemaView

    >>> view = introspect(db)  # db_id "concert_singer", path ".../concert_singer.sqlite"
    >>> [t.name for t in view.tables][:2]
    ['stadium', 'singer']

A missing, empty or corrupt file raises the sandbox's ``DatabaseUnavailable``; the database is
never written.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from types import ModuleType

import duckdb
import psycopg

from pipelines.contracts import ColumnInfo, DatabaseRef, SchemaView, TableInfo
from pipelines.sandbox import connect_readonly
from pipelines.sandbox.errors import DatabaseUnavailable
from pipelines.schema import duckdb as duckdb_engine
from pipelines.schema import postgres as postgres_engine
from pipelines.schema import sqlite as sqlite_engine
from pipelines.schema.documentation import SchemaDocs, TableDoc, load_documentation
from pipelines.schema.joins import infer_join_keys

ENGINES: dict[str, ModuleType] = {
    "sqlite": sqlite_engine,
    "duckdb": duckdb_engine,
    "postgres": postgres_engine,
}
# What a driver raises when the database turns out not to be one of its dialect, or a server
# stops answering.
DRIVER_ERRORS = (sqlite3.DatabaseError, duckdb.Error, psycopg.Error)


def engine_for(db: DatabaseRef) -> ModuleType:
    return ENGINES[db.dialect]


def _describe(column: ColumnInfo, doc: TableDoc) -> ColumnInfo:
    found = doc.columns.get(column.name.lower())
    text = (found.text() if found else "") or column.description
    children = tuple(_describe(child, doc) for child in column.children)
    return column.model_copy(update={"description": text or None, "children": children})


def _with_documentation(table: TableInfo, docs: SchemaDocs) -> TableInfo:
    found = docs.table(table.name)
    if found is None:
        return table
    return table.model_copy(
        update={
            "description": found.description or table.description,
            "columns": tuple(_describe(c, found) for c in table.columns),
        }
    )


def introspect(db: DatabaseRef, sample_values: int = 3, *, infer_joins: bool = True) -> SchemaView:
    """The database's tables, columns (nested ones expanded), keys and ``sample_values`` samples.

    ``foreign_keys`` holds the declared keys, plus inferred join keys (``inferred=True``) for
    table pairs without one when ``infer_joins``. ``functions`` is a PostgreSQL server's list of
    the functions the role may call; a file's engine is the one installed here, which the
    function checks ask themselves.
    """
    engine = engine_for(db)
    try:
        with closing(connect_readonly(db)) as conn:
            tables, declared = engine.read_schema(conn, samples=sample_values)
            functions = postgres_engine.read_functions(conn) if db.dialect == "postgres" else ()
    except DRIVER_ERRORS as exc:
        raise DatabaseUnavailable(db.path, f"cannot read schema: {exc}") from exc
    docs = load_documentation(db)
    tables = [_with_documentation(t, docs) for t in tables]
    fks = list(declared)
    if infer_joins:
        fks += infer_join_keys(tuple(tables), tuple(declared))
    return SchemaView(
        db_id=db.db_id,
        dialect=db.dialect,
        tables=tuple(tables),
        foreign_keys=tuple(fks),
        functions=functions,
    )
