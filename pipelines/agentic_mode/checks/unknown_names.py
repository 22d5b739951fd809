"""Blocker: tables, qualifiers and columns the schema does not have, found by qualifying the
query against the schema (sqlglot) before it runs.

    FROM ticket                      ──► table_not_found   ticket   (candidates: tickets)
    FROM tickets JOIN tags ...       ──► unnest_missing    tags     (tags is a list column of tickets)
    SELECT x.stage FROM tickets AS t ──► unresolved_alias  x        (candidates: t)
    SELECT t.stagee FROM tickets t   ──► column_not_found  t.stagee (candidates: stage)
    SELECT id FROM tickets, users    ──► ambiguous_column  id       (candidates: tickets.id, users.id)

A name it cannot judge passes: a column that a derived table, a CTE with ``*``, an UNNEST or a
table outside the schema may provide, an alias of the select list, a lambda's parameter.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import ClassVar

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from pipelines.agentic_mode.checks.base import QualifiedBlocker, first_of_each
from pipelines.agentic_mode.references import Resolver, ancestors, lambda_parameter, table_name
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.repair.base import RepairContext

# Columns every SQLite table has without declaring them.
_PSEUDO_COLUMNS = frozenset({"rowid", "oid", "_rowid_"})


def close(name: str, options: list[str], n: int = 3) -> str:
    """The ``n`` options closest to ``name`` (any case), comma-separated."""
    by_lower = {o.lower(): o for o in options}
    return ", ".join(by_lower[m] for m in difflib.get_close_matches(name.lower(), by_lower, n=n))


class UnknownNames(QualifiedBlocker):
    """Reports tables, qualifiers and columns that resolve to nothing (module docstring)."""

    name: ClassVar[str] = "unknown_names"
    emits: ClassVar[tuple[str, ...]] = (
        "table_not_found",
        "unnest_missing",
        "unresolved_alias",
        "column_not_found",
        "ambiguous_column",
    )

    def findings(self, resolver: Resolver, context: RepairContext) -> tuple[Finding, ...]:
        return first_of_each(  # one finding per class and name
            self._judged(resolver, context),
            key=lambda finding: (finding.error_class, finding.identifier.lower()),
        )

    def _judged(self, resolver: Resolver, context: RepairContext) -> Iterator[Finding | None]:
        for scope in resolver.scopes:
            for table in self._unknown_tables(scope, context.index):
                yield self._table(context, table)
            if not isinstance(scope.expression, exp.Select):
                continue
            aliases = {
                s.alias.lower(): s for s in scope.expression.selects if isinstance(s, exp.Alias)
            }
            for column in scope.columns:
                yield self._column(context, resolver, scope, column, aliases)

    def _table(self, context: RepairContext, table: str) -> Finding:
        """A name read as a table that is none: a nested column of a table (read as a table, the
        most common error of small models on nested schemas), else an unknown table."""
        schema = context.index
        for owner in schema.tables.values():
            column = next((c for c in owner.columns if c.name.lower() == table.lower()), None)
            if column is None or not column.children:
                continue
            if schema.is_list(column):
                return self.finding(
                    context,
                    "unnest_missing",
                    f"{column.name} is a list column of {owner.name}, not a table: unnest it, "
                    f"FROM {owner.name} AS x, UNNEST(x.{column.name}) AS u(item), then item.field",
                    identifier=column.name,
                )
            return self.finding(
                context,
                "table_not_found",
                f"{column.name} is a struct column of {owner.name}, not a table: read its "
                f"fields with dots, x.{column.name}.field, FROM {owner.name} AS x",
                identifier=column.name,
                suggestion=owner.name,
            )
        options = [t.name for t in schema.tables.values()]
        return self.finding(
            context,
            "table_not_found",
            f"table {table} is not in the schema",
            identifier=table,
            suggestion=close(table, options),
        )

    @staticmethod
    def _unknown_tables(scope: Scope, schema: SchemaIndex) -> list[str]:
        return [
            table_name(source)
            for source in scope.sources.values()
            if isinstance(source, exp.Table)
            and isinstance(source.this, exp.Identifier)  # not a table function
            and schema.table(table_name(source)) is None
        ]

    def _column(
        self,
        context: RepairContext,
        resolver: Resolver,
        scope: Scope,
        column: exp.Column,
        aliases: dict[str, exp.Alias],
    ) -> Finding | None:
        name, qualifier = column.name, column.table
        if lambda_parameter(column, qualifier or name) is not None:
            return None
        if not qualifier:
            alias = aliases.get(name.lower())
            if alias is not None and not any(a is alias for a in ancestors(column)):
                return None  # a reference to a select-list alias (ORDER BY n, DuckDB's WHERE n)
            if name.lower() in _PSEUDO_COLUMNS:
                return None
            return self._unqualified(context, resolver, scope, name)
        source = resolver.source(scope, qualifier)
        if source is None:
            return self.finding(
                context,
                "unresolved_alias",
                f"{qualifier}.{name}: no table or alias {qualifier} in FROM",
                identifier=qualifier,
                suggestion=", ".join(sorted(scope.selected_sources)),
            )
        if not isinstance(source, exp.Table):
            return None
        table = context.index.table(table_name(source))
        if table is None or context.index.column(table.name, name) is not None:
            return None
        return self.finding(
            context,
            "column_not_found",
            f"{qualifier}.{name}: table {table.name} has no column {name}",
            identifier=f"{qualifier}.{name}",
            suggestion=close(name, [c.name for c in table.columns]),
        )

    def _unqualified(
        self, context: RepairContext, resolver: Resolver, scope: Scope, name: str
    ) -> Finding | None:
        owners: list[str] = []
        current: Scope | None = scope
        while current is not None:
            for alias, (_node, source) in current.selected_sources.items():
                has = self._provides(context.index, source, name)
                if has is None:
                    return None  # a source that may hold it: not ours to judge
                if has:
                    owners.append(f"{alias}.{name}")
            if owners:
                break  # the innermost scope that has it binds it
            current = current.parent
        if len(owners) > 1:
            return self.finding(
                context,
                "ambiguous_column",
                f"{name} is a column of more than one table in FROM",
                identifier=name,
                suggestion=", ".join(owners),
            )
        if owners:
            return None
        visible = [
            c.name
            for source in scope.sources.values()
            if isinstance(source, exp.Table)
            and (table := context.index.table(table_name(source))) is not None
            for c in table.columns
        ]
        return self.finding(
            context,
            "column_not_found",
            f"{name}: no table in FROM has this column",
            identifier=name,
            suggestion=close(name, visible),
        )

    @staticmethod
    def _provides(schema: SchemaIndex, source: exp.Table | Scope, name: str) -> bool | None:
        """Whether ``source`` has a column ``name``; None when it cannot be told."""
        if isinstance(source, exp.Table):
            table = schema.table(table_name(source))
            return None if table is None else schema.column(table.name, name) is not None
        expression = source.expression
        if isinstance(expression, exp.Select):
            if any(isinstance(s, exp.Star) or s.is_star for s in expression.selects):
                return None
            return name.lower() in {s.lower() for s in expression.named_selects}
        alias = expression.args.get("alias")
        if isinstance(expression, exp.Unnest) and alias is not None and alias.columns:
            return name.lower() in {c.name.lower() for c in alias.columns}
        return None
