"""The reference schema prompt: the database's own CREATE TABLE statements, each followed by
how its columns' values are stored (where the database has BIRD-style descriptions) and a few
example rows, read through the read-only sandbox.

    DatabaseRef ──► sandbox: SELECT sql FROM sqlite_master / duckdb_tables() ──► DDL
                ──► database_description/<table>.csv value notes ──► /* Column values: ... */
                ──► sandbox: SELECT * FROM t LIMIT 3 ──► /* 3 example rows ... */

This is the prompt format of the single-pass baseline (docs/benchmarks.md, *Single-pass
baseline*).
"""

from __future__ import annotations

import asyncio

from pipelines.agents.errors import PipelineError
from pipelines.contracts import DatabaseRef, ExecutionResult
from pipelines.schema.descriptions import load_value_notes

# (query listing the tables and their DDL, per dialect) — one row per table: (name, sql)
_CATALOG_SQL = {
    "sqlite": "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
    "AND sql IS NOT NULL",
    "duckdb": "SELECT table_name, sql FROM duckdb_tables() WHERE NOT internal",
}


class SchemaReadError(PipelineError):
    """The database's catalog could not be read (missing file, unreadable database)."""


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _format_notes(notes: dict[str, str]) -> str:
    return "\n".join(["/*\nColumn values:", *(f"{c}: {n}" for c, n in notes.items()), "*/"])


def _format_rows(table: str, result: ExecutionResult, n: int) -> str:
    header = " ".join(result.columns)
    rows = [" ".join("NULL" if v is None else str(v) for v in row) for row in result.rows[:n]]
    return "\n".join(
        [f"/*\n{n} example rows:", f"SELECT * FROM {table} LIMIT {n};", header, *rows, "*/"]
    )


async def reference_schema(
    executor, db: DatabaseRef, *, sample_rows: int = 3, value_notes: bool = True
) -> str:
    """CREATE TABLE statements + value notes + ``sample_rows`` example rows per table, tables in
    catalog order."""
    catalog = await executor.execute(_CATALOG_SQL[db.dialect], db)
    if not catalog.ok:
        raise SchemaReadError(f"cannot read the schema of {db.db_id} ({db.path}): {catalog.error}")
    tables = [(str(name), str(ddl).strip()) for name, ddl in catalog.rows]
    notes = await asyncio.to_thread(load_value_notes, db.description_dir) if value_notes else {}
    samples = await asyncio.gather(
        *(
            executor.execute(f"SELECT * FROM {_quote(name)} LIMIT {sample_rows}", db)
            for name, _ in (tables if sample_rows > 0 else ())
        )
    )
    blocks = []
    for i, (name, ddl) in enumerate(tables):
        parts = [ddl]
        if notes.get(name.lower()):
            parts.append(_format_notes(notes[name.lower()]))
        if samples and samples[i].ok:
            parts.append(_format_rows(name, samples[i], sample_rows))
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)
