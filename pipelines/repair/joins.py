"""Repair a join whose ON condition does not join: no LLM call, no execution.

Small models write ``JOIN cars_data AS T2 ON T1.MakeId = T1.Make``: a condition on the tables
already joined (or on the new table alone), so every row of ``cars_data`` pairs with every row
before it. The query executes, its answer is wrong, and samples that share the slip outvote a
right answer. When the schema has exactly one join key between the new table and the tables
before it, the condition is replaced by that key:

    FROM car_names AS T1 JOIN cars_data AS T2 ON T1.MakeId = T1.Make
        ──► FROM car_names AS T1 JOIN cars_data AS T2 ON T1.MakeId = T2.Id

A condition with an unqualified column (its table is unknown), a condition that joins, or no
single key proposes nothing.

    >>> from pipelines.schema import introspect
    >>> JoinRepair(introspect(db)).propose(
    ...     "SELECT T2.concert_Name FROM stadium AS T1 JOIN concert AS T2 ON T1.Stadium_ID = T1.Stadium_ID"
    ... )
    'SELECT T2.concert_Name FROM stadium AS T1 JOIN concert AS T2 ON T1.Stadium_ID = T2.Stadium_ID'
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pipelines.contracts import SchemaView
from pipelines.repair.base import RepairContext, Rewrite, Rewriter
from pipelines.schema.joins import JoinGraph, join_graph


class JoinRepair:
    """Proposes the schema's join key for each join whose condition does not join (module
    docstring)."""

    def __init__(self, view: SchemaView, graph: JoinGraph | None = None) -> None:
        self.dialect = view.dialect
        self.tables: dict[str, str] = {t.name.lower(): t.name for t in view.tables}
        self.graph: JoinGraph = graph if graph is not None else join_graph(view)

    def propose(self, sql: str) -> str | None:
        """``sql`` with its non-joining ON conditions replaced by join keys, or None."""
        try:
            tree = sqlglot.parse_one(sql, read=self.dialect)
        except (SqlglotError, RecursionError, ValueError):
            return None
        changed = False
        for select in tree.find_all(exp.Select):
            changed |= self._rejoin(select)
        return tree.sql(dialect=self.dialect) if changed else None

    def _rejoin(self, select: exp.Select) -> bool:
        start = select.args.get("from_")
        # The tables joined so far: alias lower-cased -> (alias as written, table lower-cased).
        before: dict[str, tuple[str, str]] = {}
        if start is None or not self._add(before, start.this):
            return False
        changed = False
        for join in select.args.get("joins") or []:
            table, on = join.this, join.args.get("on")
            if not self._known(table):
                return changed  # a derived table or an unknown one: the rest is not ours to read
            alias = table.alias_or_name
            if on is not None and not self._joins(on, alias.lower(), before):
                key = self._key(before, alias, table.name.lower())
                if key is not None:
                    join.set("on", key)
                    changed = True
            if not self._add(before, table):
                return changed
        return changed

    def _known(self, node: exp.Expression) -> bool:
        return isinstance(node, exp.Table) and node.name.lower() in self.tables

    def _add(self, before: dict[str, tuple[str, str]], table: exp.Expression) -> bool:
        """Records a schema table under its alias; False for anything else or an alias taken
        (one alias for two tables: the rest is not ours to read)."""
        if not self._known(table) or table.alias_or_name.lower() in before:
            return False
        before[table.alias_or_name.lower()] = (table.alias_or_name, table.name.lower())
        return True

    @staticmethod
    def _joins(on: exp.Expression, alias: str, before: dict[str, tuple[str, str]]) -> bool:
        """Whether the condition names the new table and a table before it (or cannot tell)."""
        qualifiers = {c.table.lower() for c in on.find_all(exp.Column)}
        if not qualifiers or "" in qualifiers or not qualifiers <= {alias, *before}:
            return True  # no column, an unqualified one, or an outer reference: leave it
        return alias in qualifiers and bool(qualifiers & before.keys())

    def _key(
        self, before: dict[str, tuple[str, str]], alias: str, table: str
    ) -> exp.Expression | None:
        keys = [
            (there_alias, edge)
            for there_alias, there in before.values()
            for edge in self.graph.edges
            if there != table and {edge.table.lower(), edge.ref_table.lower()} == {there, table}
        ]
        if len(keys) != 1:
            return None
        there_alias, edge = keys[0]
        here_col, there_col = (
            (edge.column, edge.ref_column)
            if edge.table.lower() == table
            else (edge.ref_column, edge.column)
        )
        return exp.EQ(
            this=exp.column(there_col, table=there_alias),
            expression=exp.column(here_col, table=alias),
        )


class Joins(Rewriter):
    """The repair ``joins``: before a candidate runs, each JOIN whose condition joins no key
    gets the schema's one join key (module docstring)."""

    name: ClassVar[str] = "joins"
    lineage: ClassVar[str] = "rejoin"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        after = context.index.bound(JoinRepair).propose(sql)
        if after is None:
            return None
        return Rewrite(stage=self.name, detail="the join key", before=sql, after=after)
