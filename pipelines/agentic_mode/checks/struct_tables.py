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

import sqlglot
from sqlglot import exp

from pipelines.agentic_mode.checks.nesting import conjuncts, dotted, is_outer, path_of
from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.contracts import ColumnInfo
from pipelines.repair.base import UNREADABLE, RepairContext, Rewrite, Rewriter


class StructColumnTables(Rewriter):
    """Reads a struct column read as a table off its owner in FROM (module docstring)."""

    name: ClassVar[str] = "struct_column_tables"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        schema = context.index
        if schema.dialect != "duckdb":
            return None
        try:
            tree = sqlglot.parse_one(sql, read=schema.dialect)
        except UNREADABLE:
            return None
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        changed: list[str] = []
        for select in list(tree.find_all(exp.Select)):
            changed += _read_off_owner(select, schema, ctes)
        if not changed:
            return None
        return self.rewritten(tree, sql, "; ".join(changed), schema.dialect)


def _struct_owner(
    node: exp.Expression, tables: list[exp.Table], schema: SchemaIndex, ctes: set[str]
) -> tuple[exp.Table, ColumnInfo] | None:
    """The one table of ``tables`` owning a struct column named as ``node`` is, and that column,
    when ``node`` is a table reference that names no table or CTE; else None."""
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        return None
    name = table_name(node)
    if node.args.get("db") or name.lower() in ctes or schema.table(name) is not None:
        return None
    owners = []
    for table in tables:
        column = schema.column(table_name(table), name)
        if column is not None and column.children and not schema.is_list(column):
            owners.append((table, column))
    return owners[0] if len(owners) == 1 else None


def _read_off_owner(select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
    from_ = select.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return []
    joins: list[exp.Join] = list(select.args.get("joins") or [])
    known = [
        t
        for t in [from_.this, *(j.this for j in joins)]
        if isinstance(t, exp.Table) and schema.table(table_name(t)) is not None
    ]
    changed: list[str] = []
    for join in list(joins):
        found = _struct_owner(join.this, known, schema, ctes)
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
