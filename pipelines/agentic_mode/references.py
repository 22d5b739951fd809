"""Where a column expression of a qualified query points in the schema: a table and a dotted
path, through aliases, outer scopes, UNNEST, list indexes and lambdas.

    "t"."stage"                                  ──► tickets / stage
    "cte"."stage" of WITH cte AS (SELECT t.stage …)  ──► tickets / stage
    "t"."sla_tracker"."status"                   ──► tickets / sla_tracker.status
    UNNEST("t"."links") AS "u"("link") … "u"."link"."type"
                                                 ──► tickets / links.type (through an element)
    list_filter("i"."links", lambda x: x.type)   ──► issues / links.type (through an element)

A ``Ref`` says whether it denotes one element of a LIST (``element``): reading a field of a
list itself, not of an element, is what the nested-path check reports.

    >>> import sqlglot
    >>> from sqlglot.optimizer.qualify import qualify
    >>> from pipelines.agentic_mode.schema_index import SchemaIndex
    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> links = ColumnInfo(name="links", type="STRUCT(type VARCHAR)[]",
    ...                    children=(ColumnInfo(name="links.type", type="VARCHAR"),))
    >>> index = SchemaIndex.from_view(SchemaView(db_id="w", dialect="duckdb",
    ...     tables=(TableInfo(name="tickets", columns=(links,)),)))
    >>> sql = "SELECT link.type FROM tickets AS t, UNNEST(t.links) AS u(link)"
    >>> tree = qualify(sqlglot.parse_one(sql, read="duckdb"), schema=index.sqlglot_schema,
    ...                dialect="duckdb", validate_qualify_columns=False)
    >>> Resolver(tree, index).resolve(tree.selects[0].this)
    Ref(table='tickets', path='links.type', element=False)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from pipelines.agentic_mode.schema_index import SchemaIndex


@dataclass(frozen=True)
class Ref:
    """A schema path: ``table`` (the schema's name, lower-cased) and ``path`` (dotted,
    lower-cased); ``element``: one element of the LIST at ``path``, not the list."""

    table: str
    path: str
    element: bool = False


def table_name(table: exp.Table) -> str:
    """The schema view's name of a FROM table: ``name``, or ``schema.name`` outside ``main``."""
    db = table.text("db")
    return f"{db}.{table.name}" if db and db.lower() != "main" else table.name


def ancestors(node: exp.Expression) -> Iterator[exp.Expression]:
    """The nodes above ``node``, innermost first."""
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def lambda_parameter(node: exp.Expression, name: str) -> exp.Lambda | None:
    """The innermost lambda around ``node`` that binds ``name``, or None."""
    for ancestor in ancestors(node):
        if isinstance(ancestor, exp.Lambda) and any(
            p.name.lower() == name.lower() for p in ancestor.expressions
        ):
            return ancestor
    return None


def _first_argument(call: exp.Expression, lam: exp.Lambda) -> exp.Expression | None:
    """The list a higher-order call (``list_filter(list, lambda)``) applies ``lam`` to."""
    args = [call.this, *call.expressions] if call.this is not None else list(call.expressions)
    return next((a for a in args if a is not lam and isinstance(a, exp.Expression)), None)


class Resolver:
    """Resolves column expressions of one qualified query (module docstring)."""

    def __init__(self, tree: exp.Expression, schema: SchemaIndex) -> None:
        self.tree = tree  # the qualified query
        self.schema = schema
        self.scopes: list[Scope] = traverse_scope(tree)
        self._scope_of = {id(c): scope for scope in self.scopes for c in scope.columns}

    def scope_of(self, column: exp.Column) -> Scope | None:
        return self._scope_of.get(id(column))

    def source(self, scope: Scope, name: str) -> exp.Table | Scope | None:
        """What ``name`` stands for in ``scope`` or a scope around it (a correlated reference)."""
        current: Scope | None = scope
        while current is not None:
            if name in current.sources:
                return current.sources[name]
            current = current.parent
        return None

    def resolve(self, node: exp.Expression) -> Ref | None:
        """The schema path ``node`` reads, or None where it reads no schema column."""
        if isinstance(node, exp.Column):
            scope = self.scope_of(node)
            return self._column(node, scope) if scope is not None else None
        if isinstance(node, exp.Dot):
            base = self.resolve(node.this)
            return Ref(base.table, f"{base.path}.{node.name.lower()}") if base else None
        if isinstance(node, (exp.Bracket, exp.Explode)):  # links[1], unnest(links)
            base = self.resolve(node.this)
            return replace(base, element=True) if base and not base.element else None
        if isinstance(node, exp.Identifier):  # a lambda's parameter: an element of its list
            lam = lambda_parameter(node, node.name)
            argument = _first_argument(lam.parent, lam) if lam and lam.parent else None
            base = self.resolve(argument) if argument is not None else None
            return replace(base, element=True) if base and not base.element else None
        return None

    def _column(self, column: exp.Column, scope: Scope) -> Ref | None:
        source = self.source(scope, column.table)
        if isinstance(source, exp.Table):
            name = table_name(source)
            return Ref(name.lower(), column.name.lower()) if self.schema.table(name) else None
        if isinstance(source, Scope) and isinstance(source.expression, exp.Unnest):
            return self._unnested(column, source.expression)
        if isinstance(source, Scope) and isinstance(source.expression, exp.Select):
            return self._passed_through(column, source.expression)
        return None

    def _passed_through(self, column: exp.Column, select: exp.Select) -> Ref | None:
        """A CTE's or derived table's column that is one of its sources' columns as is."""
        for projection in select.selects:
            if projection.alias_or_name.lower() == column.name.lower():
                inner = projection.this if isinstance(projection, exp.Alias) else projection
                return self.resolve(inner) if isinstance(inner, (exp.Column, exp.Dot)) else None
        return None

    def _unnested(self, column: exp.Column, unnest: exp.Unnest) -> Ref | None:
        if len(unnest.expressions) != 1:
            return None
        base = self.resolve(unnest.expressions[0])
        if base is None or base.element:
            return None
        alias = unnest.args.get("alias")
        names = [c.name.lower() for c in alias.columns] if alias else []
        if names:
            return replace(base, element=True) if column.name.lower() == names[0] else None
        # UNNEST(t.links) AS u without a column name: DuckDB reads u.type off the element
        return Ref(base.table, f"{base.path}.{column.name.lower()}")
