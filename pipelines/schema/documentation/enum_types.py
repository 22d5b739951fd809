"""Source: the value lists of ``ENUM`` columns — the type itself is a vocabulary — and, in
PostgreSQL, of CHECK constraints that hold a column to a list (``status IN ('open', 'closed')``).

A column (or a sub-field of a nested one, named by its dotted path) whose type is an ``ENUM``
gets the type's labels as its value note, in the form dbt's ``accepted_values`` take
(``one of sad, ok``), which the vocabulary reader lists (``documentation/vocabulary.py``).
SQLite has no ENUM type: a SQLite database documents nothing here.

    read(db).column("t", "mood")           # mood ENUM('sad', 'ok')
    ──► ColumnDoc(description='', values='one of sad, ok', label='')
    read(db).column("t", "visits.mood")    # visits STRUCT(mood ENUM('sad', 'ok'), n INT)[]
    ──► ColumnDoc(description='', values='one of sad, ok', label='')
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb

from pipelines.contracts import DatabaseRef
from pipelines.schema import postgres
from pipelines.schema.documentation.comments import catalog_rows, table_key
from pipelines.schema.documentation.model import ColumnDoc, SchemaDocs, TableDoc

NAME = "enum_types"

_COLUMNS = (
    "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
    "WHERE NOT internal AND database_name = current_database() AND data_type LIKE '%ENUM(%'"
)


def enum_labels(sql_type: Any, path: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(path, labels)`` of every ENUM at or below ``path`` in a parsed DuckDB type, through
    lists and structs."""
    while sql_type.id in ("list", "array"):
        sql_type = sql_type.children[0][1]
    if sql_type.id == "enum":
        yield path, tuple(str(label) for label in sql_type.children[0][1])
    elif sql_type.id == "struct":
        for field, field_type in sql_type.children:
            yield from enum_labels(field_type, f"{path}.{field}")


def _value_note(values: tuple[str, ...]) -> ColumnDoc:
    return ColumnDoc(values="one of " + ", ".join(values))


def _read_postgres(db: DatabaseRef) -> SchemaDocs:
    found = catalog_rows(
        db, "value lists", postgres.ENUM_COLUMNS_SQL, postgres.CHECK_CONSTRAINTS_SQL
    )
    if found is None:
        return SchemaDocs()
    enums, checks = found
    lists = {(table_key(s, t, "postgres"), c.lower()): tuple(v) for s, t, c, v in enums}
    for schema, table, definition in checks:
        for column, values in postgres.check_value_lists(definition):
            lists.setdefault((table_key(schema, table, "postgres"), column.lower()), values)
    docs: dict[str, TableDoc] = {}
    for (name, column), values in lists.items():
        found_doc = docs.get(name, TableDoc())
        columns = {**found_doc.columns, column: _value_note(values)}
        docs[name] = found_doc.model_copy(update={"columns": columns})
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())


def read(db: DatabaseRef) -> SchemaDocs:
    """The ENUM columns (and sub-fields) of a DuckDB or PostgreSQL database, each with its
    labels, and a PostgreSQL database's CHECK value lists."""
    if db.dialect == "postgres":
        return _read_postgres(db)
    if db.dialect != "duckdb":
        return SchemaDocs()
    found = catalog_rows(db, "column types", _COLUMNS)
    if found is None:
        return SchemaDocs()
    docs: dict[str, TableDoc] = {}
    for schema, table, column, data_type in found[0]:
        name = table_key(schema, table)
        found = docs.get(name, TableDoc())
        columns = dict(found.columns)
        for path, labels in enum_labels(duckdb.sqltype(data_type), column.lower()):
            if labels:
                columns[path] = _value_note(labels)
        if columns:
            docs[name] = found.model_copy(update={"columns": columns})
    return SchemaDocs(tables=docs, sources=(NAME,) if docs else ())
