"""The reference schema prompt: the database's own CREATE TABLE statements, each followed by
notes from the database's own documentation and a few example rows, read through the read-only
sandbox; kept per table so a focused prompt shows only the tables a question needs.

    DatabaseRef ──► sandbox: SELECT sql FROM sqlite_master / duckdb_tables(), or PostgreSQL's
                    CREATE TABLE built from its catalog ──► DDL per table
                ──► documentation (YAML, comments, ENUMs, tables.json, BIRD CSVs)
                      ──► /* Column notes: ... */, a nested column's sub-fields each on a line
                ──► sandbox: SELECT * FROM t LIMIT 3 ──► /* 3 example rows ... */
                ──► ReferenceSchema(tables=(TableBlock(name, text, rows), ...))
                ──► .text() the whole prompt │ .text(["singer"]) the focused one

This is the prompt format of the single-pass baseline (docs/benchmarks.md#single-pass-baseline).
The notes come from ``ColumnDoc.note`` (``column_notes``: ``values``, ``auto``,
``all``, ``off``; see pipelines/settings.py). A nested column's documentation is shared out
among its sub-fields (``documentation/subfields.py``): each sub-field the text speaks of, or
that is documented itself (an ENUM sub-field), gets its own line, ``links.type: ...``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from functools import cached_property

from core.types import Frozen
from pipelines.agents.errors import PipelineError
from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.schema import postgres
from pipelines.schema.documentation import ColumnDoc, SchemaDocs, TableDoc, load_documentation
from pipelines.schema.documentation.subfields import share
from pipelines.schema.duckdb import subfield_paths
from pipelines.schema.view import token_size

# (query listing the tables and their DDL, per dialect) — one row per table: (name, sql)
CATALOG_SQL = {
    "sqlite": "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
    "AND sql IS NOT NULL",
    "duckdb": "SELECT table_name, sql FROM duckdb_tables() WHERE NOT internal",
    "postgres": postgres.DDL_SQL,
}
# DuckDB's column types, for the sub-fields of nested columns; SQLite has none.
_NESTED_SQL = (
    "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal "
    "AND (data_type LIKE 'STRUCT%' OR data_type LIKE 'MAP%' OR data_type LIKE '%[]%')"
)


class SchemaReadError(PipelineError):
    """The database's catalog could not be read (missing file, unreadable database)."""


class TableBlock(Frozen):
    """One table's part of the prompt: DDL and column notes (``text``), example rows apart: a
    prompt too long for the model's context gives them up before any table
    (``pipelines.prompt_fit``)."""

    name: str
    text: str
    rows: str = ""

    def render(self, *, rows: bool = True) -> str:
        return f"{self.text}\n{self.rows}" if rows and self.rows else self.text


class ReferenceSchema(Frozen):
    """The reference schema prompt of one database, table by table in catalog order."""

    tables: tuple[TableBlock, ...]

    def text(self, tables: Iterable[str] | None = None, *, rows: bool = True) -> str:
        """The prompt text: every table in catalog order, or only those named (case-insensitive)
        in the order named; without example rows where ``rows`` is False."""
        if tables is None:
            return "\n\n".join(b.render(rows=rows) for b in self.tables)
        blocks = {b.name.lower(): b for b in self.tables}
        named = dict.fromkeys(t.lower() for t in tables)
        return "\n\n".join(blocks[t].render(rows=rows) for t in named if t in blocks)

    @cached_property
    def sizes(self) -> dict[str, int]:
        """Estimated tokens of each table's block (``pipelines.schema.token_size``)."""
        return {b.name: token_size(b.render()) + 1 for b in self.tables}

    @cached_property
    def tokens(self) -> int:
        """Estimated tokens of the whole prompt."""
        return sum(self.sizes.values())


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# A table's catalog name as SQL, where it may be ``schema.table``.
_TABLE_SQL = {"postgres": postgres.table_sql}


def column_notes(
    table: str, column: str, doc: TableDoc, subfields: Sequence[str], mode: str
) -> list[str]:
    """The note lines of one column: its own, then one per sub-field its documentation speaks
    of (``column.path: ...``), in the type's order."""
    found = doc.columns.get(column.lower(), ColumnDoc())
    shared = share(found.description, subfields) if subfields and found.description else {}
    own = found.model_copy(update={"description": shared.get("", found.description)})
    lines = [f"{column}: {note}"] if (note := own.note(column, mode, table)) else []
    for path in subfields:
        leaf = doc.columns.get(f"{column}.{path}".lower(), ColumnDoc())
        if path in shared:
            leaf = ColumnDoc(description=shared[path]).or_else(leaf)
        if note := leaf.note(path.rsplit(".", 1)[-1], mode, column):
            lines.append(f"{column}.{path}: {note}")
    return lines


def _notes(
    table: str, docs: SchemaDocs, columns: list[str], nested: dict[str, tuple[str, ...]], mode: str
) -> str:
    doc = docs.table(table)
    if doc is None or mode == "off":
        return ""
    lines = []
    for column in columns or [c for c in doc.columns if "." not in c]:
        lines += column_notes(table, column, doc, nested.get(column.lower(), ()), mode)
    described = doc.description if mode in ("auto", "all") else ""
    if not lines and not described:
        return ""
    head = [f"Table: {described}"] if described else []
    return "\n".join(["/*", *head, *(["Column notes:"] if lines else []), *lines, "*/"])


def _format_rows(table: str, result: ExecutionResult, n: int) -> str:
    header = " ".join(result.columns)
    rows = [" ".join("NULL" if v is None else str(v) for v in row) for row in result.rows[:n]]
    return "\n".join(
        [f"/*\n{n} example rows:", f"SELECT * FROM {table} LIMIT {n};", header, *rows, "*/"]
    )


async def reference_schema(
    executor, db: DatabaseRef, *, sample_rows: int = 3, column_notes: str = "auto"
) -> ReferenceSchema:
    """CREATE TABLE statements + column notes + ``sample_rows`` example rows per table, tables in
    catalog order."""
    catalog = await executor.execute(CATALOG_SQL[db.dialect], db)
    if not catalog.ok:
        raise SchemaReadError(f"cannot read the schema of {db.db_id} ({db.path}): {catalog.error}")
    tables = [(str(name), str(ddl).strip()) for name, ddl in catalog.rows]
    docs = (
        await asyncio.to_thread(load_documentation, db) if column_notes != "off" else SchemaDocs()
    )
    nested: dict[str, dict[str, tuple[str, ...]]] = {}
    if db.dialect == "duckdb" and docs:
        types = await executor.execute(_NESTED_SQL, db)
        for table, column, data_type in types.rows if types.ok else ():
            paths = subfield_paths(str(data_type))
            nested.setdefault(str(table).lower(), {})[str(column).lower()] = paths
    samples = await asyncio.gather(
        *(
            executor.execute(
                f"SELECT * FROM {_TABLE_SQL.get(db.dialect, _quote)(name)} "
                f"LIMIT {max(sample_rows, 1)}",
                db,
            )
            for name, _ in tables
        )
    )
    blocks = []
    for (name, ddl), rows in zip(tables, samples):
        parts = [ddl]
        columns = list(rows.columns) if rows.ok else []
        if notes := _notes(name, docs, columns, nested.get(name.lower(), {}), column_notes):
            parts.append(notes)
        shown = _format_rows(name, rows, sample_rows) if sample_rows > 0 and rows.ok else ""
        blocks.append(TableBlock(name=name, text="\n".join(parts), rows=shown))
    return ReferenceSchema(tables=tuple(blocks))
