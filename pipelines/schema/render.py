"""Render a SchemaView as prompt text: a light markdown view and a DDL view.

    >>> from pipelines.schema import introspect, restrict
    >>> view = restrict(introspect(db), columns=["singer.Name"])
    >>> print(render_light(view))
    ## singer (6 rows)
    | column | type | description | samples |
    |---|---|---|---|
    | Singer_ID (PK) | INTEGER |  | 1, 2, 3 |
    | Name | TEXT | full name | Joe Sharp, Timbaland, Justin Brown |
    >>> print(render_ddl(view))
    CREATE TABLE singer (
      Singer_ID INTEGER, -- samples: 1, 2, 3
      Name TEXT, -- full name; samples: Joe Sharp, Timbaland, Justin Brown
      PRIMARY KEY (Singer_ID)
    );

Nested columns list their sub-fields: as extra ``parent.child`` rows in the light view, and as
comment lines under the column in the DDL. Inferred join keys appear as comments in the DDL
(they are not constraints of the database) and are marked ``(inferred)`` in the light view.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipelines.contracts import ColumnInfo, ForeignKey, SchemaView, TableInfo

PLAIN_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Words that must be quoted to be used as identifiers in both SQLite and DuckDB.
RESERVED = frozenset(
    [
        "all",
        "and",
        "as",
        "asc",
        "between",
        "by",
        "case",
        "check",
        "column",
        "constraint",
        "create",
        "default",
        "delete",
        "desc",
        "distinct",
        "drop",
        "else",
        "end",
        "except",
        "exists",
        "foreign",
        "from",
        "group",
        "having",
        "in",
        "index",
        "insert",
        "intersect",
        "into",
        "is",
        "join",
        "key",
        "limit",
        "not",
        "null",
        "on",
        "or",
        "order",
        "primary",
        "references",
        "select",
        "set",
        "table",
        "then",
        "to",
        "union",
        "unique",
        "update",
        "using",
        "values",
        "when",
        "where",
        "with",
    ]
)


def ident(name: str) -> str:
    """An identifier as both engines read it: bare when plain, double-quoted otherwise."""
    if PLAIN_IDENTIFIER.match(name) and name.lower() not in RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


def _one_line(text: str) -> str:
    return " ".join(text.split())


def flatten(column: ColumnInfo) -> Iterator[ColumnInfo]:
    """The column, then each of its nested sub-fields, depth first."""
    yield column
    for child in column.children:
        yield from flatten(child)


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


def _edge(fk: ForeignKey) -> str:
    return f"{fk.table}.{fk.column} -> {fk.ref_table}.{fk.ref_column}" + (
        " (inferred)" if fk.inferred else ""
    )


def _light_table(table: TableInfo, fks: list[ForeignKey]) -> str:
    rows = f" ({table.row_count} rows)" if table.row_count is not None else ""
    lines = [f"## {table.name}{rows}"]
    if table.description:
        lines.append(_one_line(table.description))
    lines += ["| column | type | description | samples |", "|---|---|---|---|"]
    for top in table.columns:
        for column in flatten(top):
            name = column.name + (" (PK)" if column.primary_key else "")
            samples = ", ".join(column.samples)
            lines.append(
                f"| {_cell(name)} | {_cell(column.type)} | {_cell(column.description or '')} | {_cell(samples)} |"
            )
    if fks:
        lines.append("joins: " + "; ".join(_edge(fk) for fk in fks))
    return "\n".join(lines)


def render_light(view: SchemaView) -> str:
    """Per table a markdown table of column, type, description and sample values."""
    return "\n\n".join(
        _light_table(t, [fk for fk in view.foreign_keys if fk.table == t.name]) for t in view.tables
    )


def _comment(column: ColumnInfo) -> str:
    parts = [column.description] if column.description else []
    if column.samples:
        parts.append("samples: " + ", ".join(column.samples))
    return _one_line("; ".join(parts))


def _ddl_table(table: TableInfo, fks: list[ForeignKey]) -> str:
    # Each entry is (definition, trailing comment, comment lines below it).
    entries: list[tuple[str, str, list[str]]] = []
    for column in table.columns:
        below = [
            f"  --   {child.name} {child.type}"
            + (f": {_comment(child)}" if _comment(child) else "")
            for top_child in column.children
            for child in flatten(top_child)
        ]
        entries.append((f"  {ident(column.name)} {column.type}".rstrip(), _comment(column), below))
    pks = [ident(c.name) for c in table.columns if c.primary_key]
    if pks:
        entries.append((f"  PRIMARY KEY ({', '.join(pks)})", "", []))
    for fk in fks:
        if not fk.inferred:
            ref = f"{ident(fk.ref_table)} ({ident(fk.ref_column)})"
            entries.append((f"  FOREIGN KEY ({ident(fk.column)}) REFERENCES {ref}", "", []))
    lines = [f"CREATE TABLE {ident(table.name)} ("]
    if table.description:
        lines.insert(0, f"-- {_one_line(table.description)}")
    for i, (definition, comment, below) in enumerate(entries):
        comma = "," if i < len(entries) - 1 else ""
        lines.append(definition + comma + (f" -- {comment}" if comment else ""))
        lines += below
    lines.append(");")
    lines += [
        f"-- join key (inferred): {_edge(fk).removesuffix(' (inferred)')}"
        for fk in fks
        if fk.inferred
    ]
    return "\n".join(lines)


def render_ddl(view: SchemaView) -> str:
    """CREATE TABLE statements with descriptions and samples as inline comments, PKs and FKs."""
    return "\n\n".join(
        _ddl_table(t, [fk for fk in view.foreign_keys if fk.table == t.name]) for t in view.tables
    )
