"""PostgreSQL: read tables, keys, comments, value lists and sample values from the catalog.

    conn ──► pg_class / pg_attribute / pg_constraint / pg_description / pg_enum
         ──► [TableInfo], [ForeignKey]; comments; ENUM labels and CHECK (… IN (…)) lists

Tables the role may read, in every schema but the server's own; a table outside ``public`` is
named ``schema.table``. A column's type is PostgreSQL's own spelling (``format_type``): an
ENUM column shows its type's name, and its labels come as the column's value list
(``enum_types``), as do the values a CHECK constraint allows (``col IN ('a', 'b')``, which the
server keeps as ``col = ANY (ARRAY[…])``; read back with sqlglot). A text array
(``text[]``) is sampled and indexed element by element. A column of a composite type is a
ColumnInfo whose ``children`` are its fields, named ``parent.field`` (``home.city``), read as
``(home).city``, at any depth.

Cell values read at most ``SCAN_ROWS`` rows of a column and samples ``SAMPLE_SCAN_ROWS``: a
warehouse table is never scanned whole for them. Row counts are the planner's (``reltuples``) once a table has
been analyzed, else ``count(*)``.

The functions a query may call (``read_functions``) are the server's: those in ``pg_proc``
(aggregates and window functions included, an extension's and the user's too) that the role may
execute in a schema it may use, and the keywords the grammar reads as calls of its own
(``COALESCE``, ``CAST``, ``TRIM``), at most ``FUNCTION_ROWS`` names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import sqlglot
from sqlglot import exp

from pipelines.contracts import ColumnInfo, ForeignKey, TableInfo

SAMPLE_CHARS = 60
SCAN_ROWS = 1_000_000
SAMPLE_SCAN_ROWS = 1_000
FUNCTION_ROWS = 100_000  # a server has a few thousand function names; extensions add hundreds
DEFAULT_SCHEMA = "public"
TEXT_TYPES = re.compile(r"^(text|character varying|character|name|citext)\b")

_USER_TABLE = (
    "c.relkind IN ('r', 'p') AND NOT c.relispartition "
    "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%' "
    "AND has_table_privilege(c.oid, 'SELECT')"
)
_DISPLAY_NAME = f"CASE WHEN n.nspname = '{DEFAULT_SCHEMA}' THEN c.relname ELSE n.nspname || '.' || c.relname END"
_CATALOG_ORDER = f"n.nspname <> '{DEFAULT_SCHEMA}', n.nspname, c.oid"

TABLES_SQL = f"""
SELECT c.oid, {_DISPLAY_NAME}, obj_description(c.oid, 'pg_class'), c.reltuples
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE {_USER_TABLE} ORDER BY {_CATALOG_ORDER}
"""
_COLUMNS_SQL = """
SELECT a.attrelid, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod),
       col_description(a.attrelid, a.attnum), t.typrelid
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = ANY(%s) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""
# The fields of composite types (by the type's pg_class oid), any depth of them.
_FIELDS_SQL = """
WITH RECURSIVE fields(owner) AS (
  SELECT unnest(%s::oid[])
  UNION
  SELECT t.typrelid FROM fields f JOIN pg_attribute a ON a.attrelid = f.owner
  JOIN pg_type t ON t.oid = a.atttypid WHERE t.typrelid <> 0 AND a.attnum > 0
)
SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), t.typrelid
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid IN (SELECT owner FROM fields) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""
_KEYS_SQL = """
SELECT conrelid, contype, conkey, confrelid, confkey FROM pg_constraint
WHERE contype IN ('p', 'f') AND conrelid = ANY(%s) ORDER BY conrelid, conname
"""
# (display name, DDL) per table, in catalog order: the reference prompt's CREATE TABLEs.
DDL_SQL = f"""
SELECT {_DISPLAY_NAME},
  'CREATE TABLE ' || CASE WHEN n.nspname = '{DEFAULT_SCHEMA}' THEN quote_ident(c.relname)
                     ELSE quote_ident(n.nspname) || '.' || quote_ident(c.relname) END
  || E' (\\n  ' || (
    SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                      || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                      E',\\n  ' ORDER BY a.attnum)
    FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
  || coalesce((
    SELECT string_agg(E',\\n  ' || pg_get_constraintdef(k.oid), ''
                      ORDER BY array_position(ARRAY['p', 'f', 'u', 'c'], k.contype::text), k.conname)
    FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype IN ('p', 'f', 'u', 'c')), '')
  || E'\\n);'
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE {_USER_TABLE} ORDER BY {_CATALOG_ORDER}
"""
# Lower-cased names a query may call: functions (not procedures, which only CALL runs) the role
# may execute, and the keywords of the column-name and reserved classes, which the grammar turns
# into calls pg_proc does not hold (COALESCE, GREATEST, TRIM, CAST, CURRENT_TIMESTAMP(p)).
FUNCTIONS_SQL = """
SELECT name FROM (
  SELECT lower(p.proname) AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE p.prokind <> 'p' AND has_schema_privilege(n.oid, 'USAGE')
    AND has_function_privilege(p.oid, 'EXECUTE')
  UNION
  SELECT word FROM pg_get_keywords() WHERE catcode IN ('C', 'R')
) AS f ORDER BY name LIMIT %s
"""
# Documentation rows in the shapes ``documentation/comments.py`` reads.
TABLE_COMMENTS_SQL = f"""
SELECT n.nspname, c.relname, obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE {_USER_TABLE} AND obj_description(c.oid, 'pg_class') IS NOT NULL
"""
COLUMN_COMMENTS_SQL = f"""
SELECT n.nspname, c.relname, a.attname, col_description(c.oid, a.attnum)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE {_USER_TABLE} AND col_description(c.oid, a.attnum) IS NOT NULL
"""
# ENUM columns (or arrays of an ENUM) with the type's labels in their order.
ENUM_COLUMNS_SQL = f"""
SELECT n.nspname, c.relname, a.attname,
       array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_enum e ON e.enumtypid = CASE WHEN t.typelem <> 0 THEN t.typelem ELSE t.oid END
WHERE {_USER_TABLE}
GROUP BY n.nspname, c.relname, a.attname
"""
CHECK_CONSTRAINTS_SQL = f"""
SELECT n.nspname, c.relname, pg_get_constraintdef(k.oid)
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE k.contype = 'c' AND {_USER_TABLE}
"""


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_sql(name: str) -> str:
    """A display name (``table`` or ``schema.table``) as SQL."""
    schema, dot, table = name.partition(".")
    return f"{quote(schema)}.{quote(table)}" if dot else quote(name)


def _sample(text: Any) -> str:
    text = str(text)
    return text if len(text) <= SAMPLE_CHARS else text[: SAMPLE_CHARS - 1] + "…"


def _find(columns: tuple[ColumnInfo, ...], name: str) -> ColumnInfo | None:
    return next((c for c in columns if c.name == name), None)


def leaf_query(table: TableInfo, path: str, rows: int = SCAN_ROWS) -> tuple[str, str, str]:
    """``(FROM source, expression, type)`` enumerating the non-null values at a column path
    (``home.city``: a composite's field), at most ``rows`` rows read; a one-dimensional array is
    unnested (one row per element)."""
    top, *fields = path.split(".")
    column = _find(table.columns, top)
    if column is None:
        raise KeyError(f"{table.name} has no column {top!r}")
    name = quote(top)
    for depth, field in enumerate(fields, start=1):
        column = _find(column.children, ".".join([top, *fields[:depth]]))
        if column is None:
            raise KeyError(f"{table.name}.{path}: {field!r} is not a field")
        name = f"({name}).{quote(field)}"
    scan = (
        f"(SELECT {name} AS v FROM {table_sql(table.name)} WHERE {name} IS NOT NULL "
        f"LIMIT {rows}) AS s"
    )
    if column.type.endswith("[]"):
        return f"(SELECT unnest(v) AS v FROM {scan}) AS e", "v", column.type[:-2]
    return scan, "v", column.type


def sample_values(conn: Any, table: TableInfo, path: str, n: int) -> tuple[str, ...]:
    if n <= 0:
        return ()
    source, expr, _ = leaf_query(table, path, SAMPLE_SCAN_ROWS)
    rows = conn.execute(  # as text: json and other types have no equality for DISTINCT
        f"SELECT DISTINCT {expr}::text FROM {source} WHERE {expr} IS NOT NULL LIMIT %s", (n,)
    ).fetchall()
    return tuple(_sample(row[0]) for row in rows)


def _row_count(conn: Any, name: str, estimate: float) -> int:
    if estimate >= 0:
        return int(estimate)
    (count,) = conn.execute(f"SELECT count(*) FROM {table_sql(name)}").fetchone()
    return int(count)


def _field_columns(
    prefix: str, owner: int, fields: dict[int, list[tuple[str, str, int]]]
) -> tuple[ColumnInfo, ...]:
    return tuple(
        ColumnInfo(
            name=f"{prefix}.{name}",
            type=sql_type,
            children=_field_columns(f"{prefix}.{name}", inner, fields) if inner else (),
        )
        for name, sql_type, inner in fields.get(owner, [])
    )


def _with_samples(conn: Any, table: TableInfo, column: ColumnInfo, n: int) -> ColumnInfo:
    if column.children:  # a composite is shown through its fields' samples
        kids = tuple(_with_samples(conn, table, child, n) for child in column.children)
        return column.model_copy(update={"children": kids})
    return column.model_copy(update={"samples": sample_values(conn, table, column.name, n)})


def read_schema(conn: Any, *, samples: int) -> tuple[list[TableInfo], list[ForeignKey]]:
    tables_rows = conn.execute(TABLES_SQL).fetchall()
    oids = [row[0] for row in tables_rows]
    names = {oid: name for oid, name, _, _ in tables_rows}
    columns: dict[int, dict[int, tuple[str, str, str | None, int]]] = {oid: {} for oid in oids}
    for relid, attnum, name, sql_type, comment, composite in conn.execute(
        _COLUMNS_SQL, (oids,)
    ).fetchall():
        columns[relid][attnum] = (name, sql_type, comment, composite)
    composites = [c[3] for by_number in columns.values() for c in by_number.values() if c[3]]
    fields: dict[int, list[tuple[str, str, int]]] = {}
    if composites:
        for owner, name, sql_type, inner in conn.execute(_FIELDS_SQL, (composites,)).fetchall():
            fields.setdefault(owner, []).append((name, sql_type, inner))
    primary: dict[int, set[int]] = {}
    fks: list[ForeignKey] = []
    for relid, kind, keys, ref_relid, ref_keys in conn.execute(_KEYS_SQL, (oids,)).fetchall():
        if kind == "p":
            primary[relid] = set(keys)
        elif ref_relid in names:  # a key to a table the role cannot read joins nothing here
            fks += [
                ForeignKey(
                    table=names[relid],
                    column=columns[relid][key][0],
                    ref_table=names[ref_relid],
                    ref_column=columns[ref_relid][ref_key][0],
                )
                for key, ref_key in zip(keys, ref_keys)
            ]
    tables = []
    for oid, name, comment, estimate in tables_rows:
        table = TableInfo(
            name=name,
            description=comment or None,
            row_count=_row_count(conn, name, estimate),
            columns=tuple(
                ColumnInfo(
                    name=column,
                    type=sql_type,
                    description=note or None,
                    primary_key=attnum in primary.get(oid, ()),
                    children=_field_columns(column, composite, fields) if composite else (),
                )
                for attnum, (column, sql_type, note, composite) in columns[oid].items()
            ),
        )
        sampled = tuple(_with_samples(conn, table, c, samples) for c in table.columns)
        tables.append(table.model_copy(update={"columns": sampled}))
    return tables, fks


def read_functions(conn: Any) -> tuple[str, ...]:
    """The names a query may call on the server, lower-cased, sorted (module docstring)."""
    return tuple(name for (name,) in conn.execute(FUNCTIONS_SQL, (FUNCTION_ROWS,)).fetchall())


def text_columns(table: TableInfo) -> list[str]:
    """Columns of a text type, or a one-dimensional array of one. A composite's fields are left
    out: a value hint would name them ``home.city``, which PostgreSQL reads as a table's column
    (it is written ``(home).city``)."""
    return [c.name for c in table.columns if TEXT_TYPES.match(c.type.removesuffix("[]"))]


def distinct_text_values(
    conn: Any, table: TableInfo, column: str, *, limit: int, max_chars: int
) -> Iterator[str]:
    """Distinct values of a text column (array elements one by one), most frequent first, at
    most ``limit``, from at most ``SCAN_ROWS`` rows."""
    source, expr, _ = leaf_query(table, column)
    cursor = conn.execute(
        f"SELECT x, count(*) AS k FROM (SELECT {expr}::text AS x FROM {source}) AS t "
        "WHERE x IS NOT NULL AND length(x) BETWEEN 1 AND %s GROUP BY x ORDER BY k DESC, x LIMIT %s",
        (max_chars, limit),
    )
    for value, _count in cursor.fetchall():
        yield value


def _bare(node: exp.Expression) -> exp.Expression:
    """``node`` without the parentheses and casts the server writes around it."""
    while isinstance(node, (exp.Paren, exp.Cast)):
        node = node.this
    return node


def check_value_lists(definition: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(column, values)`` for each list of string literals a CHECK constraint compares a
    column to (``col IN (…)``, ``col = ANY (ARRAY[…])``).

    >>> list(check_value_lists("CHECK ((status = ANY (ARRAY['open'::text, 'closed'::text])))"))
    [('status', ('open', 'closed'))]
    """
    try:
        tree = sqlglot.parse_one(f"SELECT {definition.removeprefix('CHECK')}", read="postgres")
    except sqlglot.errors.SqlglotError:
        return
    for node in tree.find_all(exp.In, exp.EQ):
        if isinstance(node, exp.In):
            column, items = node.this, node.expressions
        elif isinstance(node.expression, exp.Any):
            column, array = node.this, _bare(node.expression.this)
            items = array.expressions if isinstance(array, exp.Array) else []
        else:
            continue
        column = _bare(column)
        values = [_bare(item) for item in items]
        if isinstance(column, exp.Column) and values and all(v.is_string for v in values):
            yield column.name, tuple(v.name for v in values)
