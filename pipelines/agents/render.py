"""Typed values → the short text blocks prompts are filled with."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.contracts import CellHit, ExampleHit, ExecutionResult

DIALECT_NAME = {"sqlite": "SQLite", "duckdb": "DuckDB", "postgres": "PostgreSQL"}


def render_evidence(evidence: str) -> str:
    """The generation prompts' evidence line (an SQL comment); "" without evidence."""
    return f"-- External knowledge: {evidence.strip()}" if evidence.strip() else ""


def evidence_line(evidence: str) -> str:
    return f"Evidence: {evidence.strip()}" if evidence.strip() else ""


def clip(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def examples_block(hits: Sequence[ExampleHit], limit: int) -> str:
    if not hits or limit <= 0:
        return "(none)"
    return "\n\n".join(f"Question: {h.question}\nSQL: {h.sql}" for h in hits[:limit])


def solved_examples(hits: Sequence[ExampleHit], db_id: str, limit: int) -> str:
    """The prompt's examples: the asking database's own first, then those of other databases,
    each group under its heading; "" without any."""
    hits = list(hits)[:limit]
    own = [h for h in hits if h.db_id == db_id]
    other = [h for h in hits if h.db_id != db_id]
    parts = []
    if own:
        parts.append("Solved examples on this database:\n" + examples_block(own, limit))
    if other:
        parts.append("Solved examples from other databases:\n" + examples_block(other, limit))
    return "\n\n".join(parts)


def cells_block(hits: Sequence[CellHit]) -> str:
    if not hits:
        return ""
    lines = [f"- {h.table}.{h.column} = '{h.value}'" for h in hits]
    return "Database values that match words of the question:\n" + "\n".join(lines)


def preview(result: ExecutionResult | None, rows: int = 5) -> str:
    """One compact line: error, or row count with the first rows."""
    if result is None:
        return "(not executed)"
    if not result.ok:
        return f"ERROR {clip(result.error, 200)}"
    if result.row_count == 0:
        return "0 rows"
    shown = "; ".join(
        ", ".join("NULL" if v is None else str(v) for v in row) for row in result.rows[:rows]
    )
    more = " …" if result.row_count > rows else ""
    cols = ", ".join(result.columns)
    return clip(f"{result.row_count} rows ({cols}): {shown}{more}", 600)
