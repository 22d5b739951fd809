"""DuckDB: read tables, keys, comments and sample values, expanding nested columns.

    conn ──► duckdb_tables / duckdb_columns / duckdb_constraints ──► [TableInfo], [ForeignKey]

A STRUCT column (or LIST/ARRAY of STRUCT, at any depth) becomes a ColumnInfo whose
``children`` are its sub-fields, named ``parent.child``; sub-fields are sampled and indexed
through ``UNNEST`` and ``struct_extract``, so ``tags STRUCT(label VARCHAR)[]`` yields the
leaf ``tags.label`` with values from every list element. Tables outside the ``main`` schema
are named ``schema.table``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb

from pipelines.contracts import ColumnInfo, ForeignKey, TableInfo

SAMPLE_CHARS = 60
LIST_TYPES = ("list", "array")
TEXT_TYPES = ("varchar", "enum")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _table_sql(name: str) -> str:
    schema, dot, table = name.partition(".")
    return f"{quote(schema)}.{quote(table)}" if dot else quote(name)


def _string_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _element(sql_type: Any) -> Any:
    """The scalar or struct type under any number of LIST/ARRAY wrappers."""
    while sql_type.id in LIST_TYPES:
        sql_type = sql_type.children[0][1]
    return sql_type


def leaf_query(table: TableInfo, path: str) -> tuple[str, str, Any]:
    """``(FROM source, expression, type)`` that enumerates every value at a dotted column path.

    Lists are unnested in a subquery at each level, so a path through ``LIST of STRUCT``
    yields one row per list element.
    """
    top, *fields = path.split(".")
    column = next((c for c in table.columns if c.name == top), None)
    if column is None:
        raise KeyError(f"{table.name} has no column {top!r}")
    source, expr, sql_type = _table_sql(table.name), quote(top), duckdb.sqltype(column.type)

    def unnest() -> None:
        nonlocal source, expr, sql_type
        while sql_type.id in LIST_TYPES:
            source = f"(SELECT UNNEST({expr}) AS v FROM {source})"
            expr, sql_type = "v", sql_type.children[0][1]

    unnest()
    for field in fields:
        children = dict(sql_type.children) if sql_type.id == "struct" else {}
        if field not in children:
            raise KeyError(f"{table.name}.{path}: {field!r} is not a sub-field")
        expr, sql_type = f"struct_extract({expr}, {_string_literal(field)})", children[field]
        unnest()
    return source, expr, sql_type


def _sample(text: Any) -> str:
    text = str(text)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def sample_values(conn: Any, table: TableInfo, path: str, n: int) -> tuple[str, ...]:
    if n <= 0:
        return ()
    source, expr, _ = leaf_query(table, path)
    rows = conn.execute(
        f"SELECT DISTINCT x FROM (SELECT {expr} AS x FROM {source}) WHERE x IS NOT NULL LIMIT ?",
        (n,),
    ).fetchall()
    return tuple(_sample(row[0]) for row in rows)


def _columns(name: str, sql_type: Any, comments: dict[str, str], pks: set[str]) -> ColumnInfo:
    element = _element(sql_type)
    children = ()
    if element.id == "struct":
        children = tuple(
            _columns(f"{name}.{field}", field_type, comments, pks)
            for field, field_type in element.children
        )
    return ColumnInfo(
        name=name,
        type=str(sql_type),
        description=comments.get(name) or None,
        primary_key=name in pks,
        children=children,
    )


def subfield_paths(type_text: str) -> tuple[str, ...]:
    """The dotted paths below a column of DuckDB type ``type_text``, at every depth, depth first
    (``STRUCT(a INT, b STRUCT(c INT))[]`` -> ``('a', 'b', 'b.c')``); ``()`` for a flat type."""
    found: list[str] = []

    def walk(sql_type: Any, prefix: str) -> None:
        element = _element(sql_type)
        if element.id != "struct":
            return
        for field, field_type in element.children:
            found.append(prefix + field)
            walk(field_type, f"{prefix}{field}.")

    try:
        walk(duckdb.sqltype(type_text), "")
    except duckdb.Error:  # a type this DuckDB cannot parse documents no sub-fields
        return ()
    return tuple(found)


def _with_samples(conn: Any, table: TableInfo, column: ColumnInfo, n: int) -> ColumnInfo:
    if column.children:  # a struct is shown through its sub-fields' samples
        kids = tuple(_with_samples(conn, table, child, n) for child in column.children)
        return column.model_copy(update={"children": kids})
    return column.model_copy(update={"samples": sample_values(conn, table, column.name, n)})


def table_names(conn: Any) -> list[tuple[str, str | None]]:
    rows = conn.execute(
        "SELECT schema_name, table_name, comment FROM duckdb_tables() "
        "WHERE NOT internal AND database_name = current_database() ORDER BY table_oid"
    ).fetchall()
    return [
        (table if schema == "main" else f"{schema}.{table}", comment)
        for schema, table, comment in rows
    ]


def _constraints(conn: Any) -> list[tuple[str, str, list[str], str | None, list[str]]]:
    rows = conn.execute(
        "SELECT schema_name, table_name, constraint_type, constraint_column_names, "
        "referenced_table, referenced_column_names FROM duckdb_constraints() "
        "WHERE database_name = current_database() AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')"
    ).fetchall()
    out = []
    for schema, table, kind, columns, ref_table, ref_columns in rows:
        name = table if schema == "main" else f"{schema}.{table}"
        out.append((name, kind, list(columns or []), ref_table, list(ref_columns or [])))
    return out


def read_schema(conn: Any, *, samples: int) -> tuple[list[TableInfo], list[ForeignKey]]:
    constraints = _constraints(conn)
    column_rows = conn.execute(
        "SELECT schema_name, table_name, column_name, data_type, comment FROM duckdb_columns() "
        "WHERE NOT internal AND database_name = current_database() ORDER BY table_oid, column_index"
    ).fetchall()
    tables: list[TableInfo] = []
    for name, comment in table_names(conn):
        pks = {
            c
            for t, kind, cols, _, _ in constraints
            if t == name and kind == "PRIMARY KEY"
            for c in cols
        }
        rows = [r for r in column_rows if (r[1] if r[0] == "main" else f"{r[0]}.{r[1]}") == name]
        comments = {r[2]: r[4] for r in rows if r[4]}
        columns = tuple(_columns(r[2], duckdb.sqltype(r[3]), comments, pks) for r in rows)
        (row_count,) = conn.execute(f"SELECT COUNT(*) FROM {_table_sql(name)}").fetchone()
        table = TableInfo(
            name=name, columns=columns, description=comment or None, row_count=row_count
        )
        columns = tuple(_with_samples(conn, table, c, samples) for c in columns)
        tables.append(table.model_copy(update={"columns": columns}))
    fks = [
        ForeignKey(table=t, column=col, ref_table=ref_table, ref_column=ref_col)
        for t, kind, cols, ref_table, ref_cols in constraints
        if kind == "FOREIGN KEY" and ref_table
        for col, ref_col in zip(cols, ref_cols)
    ]
    return tables, fks


def _leaves(column: ColumnInfo) -> Iterator[ColumnInfo]:
    if column.children:
        for child in column.children:
            yield from _leaves(child)
    else:
        yield column


def text_columns(table: TableInfo) -> list[str]:
    """Dotted paths of every VARCHAR/ENUM leaf, including those inside STRUCTs and LISTs."""
    return [
        leaf.name
        for column in table.columns
        for leaf in _leaves(column)
        if _element(duckdb.sqltype(leaf.type)).id in TEXT_TYPES
    ]


def distinct_text_values(
    conn: Any, table: TableInfo, column: str, *, limit: int, max_chars: int
) -> Iterator[str]:
    """Distinct values at a text leaf, most frequent first, at most ``limit``."""
    source, expr, _ = leaf_query(table, column)
    cursor = conn.execute(
        f"SELECT x, COUNT(*) AS n FROM (SELECT CAST({expr} AS VARCHAR) AS x FROM {source}) "
        f"WHERE x IS NOT NULL AND length(x) BETWEEN 1 AND ? GROUP BY x ORDER BY n DESC, x LIMIT ?",
        (max_chars, limit),
    )
    for value, _count in cursor.fetchall():
        yield value
