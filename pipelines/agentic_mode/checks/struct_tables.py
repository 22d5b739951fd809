"""Rewriter: a struct column read as a table, read as its owner's column.

Small models read a nested struct (``tickets.sla_tracker``, or a struct inside it such as
``sla_tracker.policy``) as a table of its own and join it on a key that does not exist. A struct
is one value per row of its owner, so where the query's FROM holds the one table that owns a
struct of that name, the join goes and each column read off the "table" is read off the owner's
struct; the join condition's parts that name a field the struct lacks (the invented key) are
dropped, the others kept as filters. A struct in FROM whose owner the query does not name is read
off the one table of the schema that owns a struct of that name.

    FROM tickets AS t JOIN sla_tracker AS s ON s.ticket_id = t.id WHERE s.status = 'breached'
    ──► FROM tickets AS t WHERE t.sla_tracker.status = 'breached'

    SELECT policy.name FROM tickets JOIN policy ON tickets.sla_tracker.policy.name = policy.name
    ──► SELECT tickets.sla_tracker.policy.name FROM tickets
        WHERE tickets.sla_tracker.policy.name = tickets.sla_tracker.policy.name

    SELECT s.status, COUNT(*) FROM sla_tracker AS s GROUP BY s.status
    ──► SELECT tickets.sla_tracker.status, COUNT(*) FROM tickets GROUP BY tickets.sla_tracker.status

Left alone: a name that is a table, a CTE, or a struct of no table in FROM that no table or two
tables of the schema own; a struct that two tables in FROM own; an outer join to it; a query
that reads the "table" as a whole (``s.*``, a bare alias) or from a subquery; a dialect without
structs (SQLite).

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
    sole_owner,
    sources,
)
from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex


class StructColumnTables(SelectRewriter):
    """Reads a struct column read as a table off its owner in FROM (module docstring)."""

    name: ClassVar[str] = "struct_column_tables"

    def rewrite_select(self, select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
        return _read_off_owner(select, schema, ctes)


def _read_off_owner(select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
    start = sources(select, schema)
    if start is None:
        return []
    first, joins, known = start
    from_ = select.args["from_"]
    whole = _reads_of(select, first.alias_or_name.lower()) is None
    if (found := nested_owner(first, known, schema, ctes, lists=False)) is not None:
        # the struct first: its owner's (inner) join becomes the FROM, the struct a join
        join = next((j for j in joins if j.this is found[0]), None)
        if whole or join is None or is_outer(join):
            return []  # the query fails on the struct in FROM whatever its joins become
        joins.remove(join)
        from_.set("this", found[0])
        joins.insert(0, exp.Join(this=first, on=join.args.get("on")))
    elif (sole := sole_owner(first, schema, ctes, lists=False)) is not None:
        # its owner nowhere in the query: the one table of the schema that owns it is read,
        # unless the query reads the struct's fields unqualified (or all with *)
        owner_named = any(
            table_name(t).lower() == sole[0].lower() for t in select.find_all(exp.Table)
        )
        unqualified = any(isinstance(e, exp.Star) for e in select.expressions) or any(
            not c.table and schema.column(sole[0], f"{sole[1].name}.{c.name}") is not None
            for c in select.find_all(exp.Column)
        )
        if whole or owner_named or unqualified:
            return []  # as above
        owner = exp.to_table(sole[0], dialect=schema.dialect)
        from_.set("this", owner)
        joins.insert(0, exp.Join(this=first))
        known.append(owner)
    select.set("joins", joins)
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
        struct = column.name  # its path from the owner, as the schema spells it
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
            top.replace(dotted(owner.alias_or_name, (*struct.split("."), *names[1:])))
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
