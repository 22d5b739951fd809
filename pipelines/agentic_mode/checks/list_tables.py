"""Rewriter: a list column read as a table, unnested from the table that owns it.

Small models read a nested list (``tickets.tags``, ``issues.links``) as a table of its own and
join it on a key that does not exist. Where the query's FROM holds the one table that owns a
list column of that name, the "table" becomes a lateral unnest of that table's list, whose
columns are the items' fields, so the query's own references to them resolve unchanged; the
join condition's parts that name a field the items lack (the invented key) are dropped, the
others kept as filters. (``max_depth := 2`` unnests the list and its items, not the structs
inside an item, so ``g.policy.name`` still reads a nested field.)

    FROM tickets AS t JOIN tags AS g ON g.ticket_id = t.id AND g.type = 'topic'
    ──► FROM tickets AS t CROSS JOIN (SELECT UNNEST(t.tags, max_depth := 2)) AS g
        WHERE g.type = 'topic'

    FROM links AS l JOIN issues AS i ON l.issue_id = i.id      (the list first: FROM its owner)
    ──► FROM issues AS i CROSS JOIN (SELECT UNNEST(i.links, max_depth := 2)) AS l

Left alone: a name that is a table, a CTE or a list of no table in FROM; a list that two
tables in FROM own; an outer join to it (dropping its condition would change which rows are
kept); a dialect without lists (SQLite).
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
from sqlglot import exp

from pipelines.agentic_mode.checks.nesting import (
    SelectRewriter,
    conjuncts,
    is_outer,
    nested_owner,
    sources,
)
from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex


class ListColumnTables(SelectRewriter):
    """Unnests a list column read as a table from its owner in FROM (module docstring)."""

    name: ClassVar[str] = "list_column_tables"

    def rewrite_select(self, select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
        return _unnest_in(select, schema, ctes)


def _unnest_in(select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
    start = sources(select, schema)
    if start is None:
        return []
    first, joins, known = start
    from_ = select.args["from_"]
    changed: list[str] = []
    found = nested_owner(first, known, schema, ctes, lists=True)
    if found is not None:  # the list first: its owner's (inner) join becomes the FROM
        owner = found[0]
        join = next((j for j in joins if j.this is owner), None)
        if join is None or is_outer(join):
            return []  # the query fails on the list in FROM whatever its joins become
        conditions = conjuncts(join.args.get("on"))
        joins.remove(join)
        from_.set("this", owner)
        joins.insert(0, exp.Join(this=first, on=exp.and_(*conditions) if conditions else None))
        select.set("joins", joins)
    for join in list(joins):
        found = nested_owner(join.this, known, schema, ctes, lists=True)
        if found is None or is_outer(join):
            continue
        owner, column = found
        alias = join.this.alias_or_name
        list_name = column.name  # as the schema spells it
        owner_ref = owner.alias_or_name
        kept, dropped = [], []
        for condition in conjuncts(join.args.get("on")):
            columns = list(condition.find_all(exp.Column))
            # kept: every column qualified, and those of the item fields the items have
            sound = all(c.table for c in columns) and all(
                schema.column(table_name(owner), f"{list_name}.{c.name}") is not None
                for c in columns
                if c.table.lower() == alias.lower()
            )
            (kept if sound else dropped).append(condition)
        lateral = sqlglot.parse_one(
            f"(SELECT UNNEST({owner_ref}.{list_name}, max_depth := 2)) AS {alias}",
            read=schema.dialect,
        )
        join.replace(exp.Join(this=lateral, kind="CROSS"))
        if kept:
            select.where(exp.and_(*kept), copy=False)
        note = f"{list_name} unnested from {table_name(owner)}"
        if dropped:
            note += f" (dropped: {', '.join(c.sql(dialect=schema.dialect) for c in dropped)})"
        changed.append(note)
    return changed
