"""The reference schema prompt: the database's own CREATE TABLE statements, each followed by
a few example rows, read through the read-only sandbox.

    DatabaseRef ──► sandbox: SELECT sql FROM sqlite_master / duckdb_tables() ──► DDL
                ──► sandbox: SELECT * FROM t LIMIT 3 ──► /* 3 example rows ... */

This is the prompt format of the single-pass baseline (docs/benchmarks.md, *Single-pass
baseline*).
"""

from __future__ import annotations

import asyncio

from pipelines.agents.errors import PipelineError
from pipelines.contracts import DatabaseRef, ExecutionResult

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


def _format_rows(table: str, result: ExecutionResult, n: int) -> str:
    header = " ".join(result.columns)
    rows = [" ".join("NULL" if v is None else str(v) for v in row) for row in result.rows[:n]]
    return "\n".join(
        [f"/*\n{n} example rows:", f"SELECT * FROM {table} LIMIT {n};", header, *rows, "*/"]
    )


async def reference_schema(executor, db: DatabaseRef, *, sample_rows: int = 3) -> str:
    """CREATE TABLE statements + ``sample_rows`` example rows per table, tables in catalog order."""
    catalog = await executor.execute(_CATALOG_SQL[db.dialect], db)
    if not catalog.ok:
        raise SchemaReadError(f"cannot read the schema of {db.db_id} ({db.path}): {catalog.error}")
    tables = [(str(name), str(ddl).strip()) for name, ddl in catalog.rows]
    if sample_rows <= 0:
        return "\n\n".join(ddl for _, ddl in tables)
    samples = await asyncio.gather(
        *(
            executor.execute(f"SELECT * FROM {_quote(name)} LIMIT {sample_rows}", db)
            for name, _ in tables
        )
    )
    return "\n\n".join(
        ddl + ("\n" + _format_rows(name, rows, sample_rows) if rows.ok else "")
        for (name, ddl), rows in zip(tables, samples)
    )
