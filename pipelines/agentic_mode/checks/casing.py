"""Rewriter: table and column names spelled as the schema spells them.

SQLite and DuckDB match names whatever their case, so this changes no answer; it makes the
SQL read as the schema does (``SELECT NAME FROM SINGER`` → ``SELECT Name FROM singer``), so the
result's column headers match the schema's, equal candidates compare equal as text, and a later
stage or another engine that honours case reads the same names. Aliases, CTE names and names
the schema lacks stay as written; a column two tables in scope spell differently is left alone.
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.contracts import TableInfo
from pipelines.repair.base import UNREADABLE, RepairContext, Rewrite, Rewriter, cte_names


def _visible(scope: Scope, schema: SchemaIndex) -> dict[str, tuple[TableInfo, bool]]:
    """Alias (lower-cased) -> (schema table, whether the alias is the table's own name), for
    the scope and the scopes around it (inner first)."""
    found: dict[str, tuple[TableInfo, bool]] = {}
    current: Scope | None = scope
    while current is not None:
        for alias, (node, source) in current.selected_sources.items():
            if isinstance(source, exp.Table) and alias.lower() not in found:
                table = schema.table(table_name(source))
                if table is not None:
                    found[alias.lower()] = (
                        table,
                        not isinstance(node, exp.Table) or not node.alias,
                    )
        current = current.parent
    return found


class IdentifierCasing(Rewriter):
    """Respells table and column names as the schema does (module docstring)."""

    name: ClassVar[str] = "identifier_casing"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        schema = context.index
        try:
            tree = sqlglot.parse_one(sql, read=schema.dialect)
            scopes = traverse_scope(tree)
        except UNREADABLE:
            return None
        changed: dict[str, str] = {}

        def respell(identifier: exp.Expression | None, spelled: str) -> None:
            if isinstance(identifier, exp.Identifier) and identifier.name != spelled:
                changed.setdefault(identifier.name, spelled)
                identifier.set("this", spelled)

        for scope in scopes:
            visible = _visible(scope, schema)
            selected = [
                visible[a.lower()][0] for a in scope.selected_sources if a.lower() in visible
            ]
            for column in scope.columns:
                if column.table:
                    table, own_name = visible.get(column.table.lower(), (None, False))
                    tables = [table] if table is not None else []
                    if table is not None and own_name:
                        respell(column.args.get("table"), table.name)
                else:
                    tables = selected
                spellings = {
                    c.name for t in tables if (c := schema.column(t.name, column.name)) is not None
                }
                if len(spellings) == 1:
                    respell(column.this, spellings.pop())
        ctes = cte_names(tree)
        for node in tree.find_all(exp.Table):
            table = schema.table(table_name(node))
            if table is not None and node.name.lower() not in ctes and not node.args.get("db"):
                respell(node.this, table.name)
        if not changed:
            return None
        detail = ", ".join(f"{before} → {after}" for before, after in changed.items())
        return self.rewritten(tree, sql, detail, schema.dialect)
