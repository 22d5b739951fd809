"""Rewriter: a struct column read as a table, read as its owner's column.

Small models read a nested struct (``tickets.sla_tracker``) as a table of its own and join it on a
key that does not exist. A struct is one value per row of its owner, so where the query's FROM
holds the one table that owns a struct column of that name, the join goes and each column read
off the "table" is read off the owner's struct; the join condition's parts that name a field the
struct lacks (the invented key) are dropped, the others kept as filters.

    FROM tickets AS t JOIN sla_tracker AS s ON s.ticket_id = t.id WHERE s.status = 'breached'
    ──► FROM tickets AS t WHERE t.sla_tracker.status = 'breached'

Left alone: a name that is a table, a CTE or a struct of no table in FROM; a struct that two
tables in FROM own; an outer join to it; a query that reads the "table" as a whole (``s.*``, a
bare alias) or from a subquery; a dialect without structs (SQLite).

    >>> from pipelines.agentic_mode.taxonomy import load_taxonomy
    >>> from pipelines.repair.base import RepairContext
    >>> from pipelines.agentic_mode.schema_index import SchemaIndex
    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> sla = ColumnInfo(name="sla", type="STRUCT(status VARCHAR)",
    ...                  children=(ColumnInfo(name="sla.status", type="VARCHAR"),))
    >>> index = SchemaIndex.from_view(SchemaView(db_id="w", dialect="duckdb",
    ...     tables=(TableInfo(name="tickets", columns=(ColumnInfo(name="id", type="INTEGER"), sla)),)))
    >>> context = RepairContext(index=index, taxonomy=load_taxonomy())
    >>> StructColumnTables().rewrite(
    ...     "SELECT count(*) FROM tickets AS t JOIN sla AS s ON s.ticket_id = t.id "
    ...     "WHERE s.status = 'paused'", context).after
    "SELECT COUNT(*) FROM tickets AS t WHERE t.sla.status = 'paused'"
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from pipelines.agentic_mode.checks.nesting import (
    SelectRewriter,
    conjuncts,
    dotted,
    is_outer,
    nested_owner,
    path_of,
    schema_tables,
)
from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex


class StructColumnTables(SelectRewriter):
    """Reads a struct column read as a table off its owner in FROM (module docstring)."""

    name: ClassVar[str] = "struct_column_tables"

    def rewrite_select(self, select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
        return _read_off_owner(select, schema, ctes)


def _read_off_owner(select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
    from_ = select.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return []
    joins: list[exp.Join] = list(select.args.get("joins") or [])
    known = schema_tables(select, schema)
    changed: list[str] = []
    for join in list(joins):
        found = nested_owner(join.this, known, schema, ctes, lists=False)
        if found is None or is_outer(join):
            continue
        owner, column = found
        alias = join.this.alias_or_name.lower()
        reads = _reads_of(select, alias)
        if reads is None:
            continue
        owner_table = table_name(owner)
        struct = column.name
        kept, dropped = [], []
        for condition in conjuncts(join.args.get("on")):
            sound = all(
                schema.column(owner_table, f"{struct}.{names[1]}") is not None
                for names in (path_of(c)[1] for c in condition.find_all(exp.Column))
                if len(names) >= 2 and names[0].lower() == alias
            ) and all(c.table for c in condition.find_all(exp.Column))
            (kept if sound else dropped).append(condition)
        joins.remove(join)
        select.set("joins", joins)
        if kept:
            select.where(exp.and_(*kept), copy=False)
        for top, names in _reads_of(select, alias) or []:
            top.replace(dotted(owner.alias_or_name, (struct, *names[1:])))
        note = f"{struct} read off {owner_table}"
        if dropped:
            note += f" (dropped: {', '.join(c.sql(dialect=schema.dialect) for c in dropped)})"
        changed.append(note)
    return changed


def _reads_of(select: exp.Select, alias: str) -> list[tuple[exp.Expression, list[str]]] | None:
    """Every path ``alias.field…`` of ``select`` (its own scope), or None where the alias is read
    another way: as a whole, or from a subquery."""
    reads = []
    for column in select.find_all(exp.Column):
        top, names = path_of(column)
        if names[0].lower() != alias:
            continue
        if len(names) < 2:
            return None
        if column.find_ancestor(exp.Select) is not select or isinstance(column.this, exp.Star):
            return None
        reads.append((top, names))
    return reads
