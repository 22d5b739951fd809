"""What the rewriters of nested columns share: the rewrite of a query one SELECT at a time, the
table in FROM that owns a nested column named as a table, and the parts of a join and of a dotted
path as sqlglot reads them.

    >>> import sqlglot
    >>> column = sqlglot.parse_one("SELECT t.sla.policy.name FROM t", read="duckdb").selects[0]
    >>> path_of(column.find(exp.Column))[1]
    ['t', 'sla', 'policy', 'name']
    >>> dotted("s", ("policy", "name")).sql(dialect="duckdb")
    's.policy.name'
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pipelines.agentic_mode.references import table_name
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.contracts import ColumnInfo
from pipelines.repair.base import RepairContext, Rewrite, Rewriter, cte_names, parsed


class SelectRewriter(Rewriter):
    """A rewriter of DuckDB's nested types (nothing on another engine) that changes each SELECT
    of the query on its own and says what it changed."""

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        schema = context.index
        if schema.dialect != "duckdb":
            return None
        tree = parsed(sql, schema.dialect)
        if tree is None:
            return None
        ctes = cte_names(tree)
        changed: list[str] = []
        for select in list(tree.find_all(exp.Select)):
            changed += self.rewrite_select(select, schema, ctes)
        if not changed:
            return None
        return self.rewritten(tree, sql, "; ".join(changed), schema.dialect)

    def rewrite_select(self, select: exp.Select, schema: SchemaIndex, ctes: set[str]) -> list[str]:
        """Changes ``select`` in place; what changed, in words (nothing: [])."""
        raise NotImplementedError


def nested_owner(
    node: exp.Expression,
    tables: list[exp.Table],
    schema: SchemaIndex,
    ctes: set[str],
    *,
    lists: bool,
) -> tuple[exp.Table, ColumnInfo] | None:
    """The one table of ``tables`` owning a nested column named as ``node`` is (a list of structs
    where ``lists``, else a struct: a column or a struct field of one, at any depth), and that
    column, when ``node`` is a table reference that names no table or CTE; else None."""
    name = missing_table(node, schema, ctes)
    if name is None:
        return None
    owners = [
        (table, column)
        for table in tables
        for column in nested_columns(schema, table_name(table), name, lists=lists)
    ]
    return owners[0] if len(owners) == 1 else None


def sole_owner(
    node: exp.Expression, schema: SchemaIndex, ctes: set[str], *, lists: bool
) -> tuple[str, ColumnInfo] | None:
    """The one table of the whole schema owning a nested column (as ``nested_owner`` reads it)
    named as ``node`` is, and that column; else None."""
    name = missing_table(node, schema, ctes)
    if name is None:
        return None
    owners = [
        (table.name, column)
        for table in schema.view.tables
        for column in nested_columns(schema, table.name, name, lists=lists)
    ]
    return owners[0] if len(owners) == 1 else None


def missing_table(node: exp.Expression, schema: SchemaIndex, ctes: set[str]) -> str | None:
    """The name ``node`` reads as a table when it is a plain table reference to no table or CTE."""
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        return None
    name = table_name(node)
    if node.args.get("db") or name.lower() in ctes or schema.table(name) is not None:
        return None
    return name


def nested_columns(schema: SchemaIndex, table: str, name: str, *, lists: bool) -> list[ColumnInfo]:
    """``table``'s nested columns called ``name``: a top-level list of structs where ``lists``;
    else the structs, top-level or a field of a struct (not inside a list), whose last name is
    ``name``."""
    found = schema.table(table)
    if found is None:
        return []
    if lists:
        column = schema.column(table, name)
        return [column] if column and column.children and schema.is_list(column) else []
    matches, level = [], list(found.columns)
    while level:
        column = level.pop()
        if not column.children or schema.is_list(column):
            continue
        if column.name.rsplit(".", 1)[-1].lower() == name.lower():
            matches.append(column)
        level.extend(column.children)
    return matches


def sources(
    select: exp.Select, schema: SchemaIndex
) -> tuple[exp.Table, list[exp.Join], list[exp.Table]] | None:
    """What a rewriter of names read as tables starts from: ``select``'s FROM table, its joins
    (a list to edit and set back) and the tables of both that the schema has; None where FROM
    is not a plain table reference (a subquery, a function, none)."""
    from_ = select.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table):
        return None
    return from_.this, list(select.args.get("joins") or []), schema_tables(select, schema)


def schema_tables(
    select: exp.Select, schema: SchemaIndex, *, inner_only: bool = False
) -> list[exp.Table]:
    """The tables of ``select``'s FROM and joins that the schema has (only those not on the
    inner side of an outer join where ``inner_only``)."""
    from_ = select.args.get("from_")
    sources = [from_.this] if from_ is not None else []
    sources += [
        join.this for join in select.args.get("joins") or [] if not (inner_only and is_outer(join))
    ]
    return [
        source
        for source in sources
        if isinstance(source, exp.Table) and schema.table(table_name(source)) is not None
    ]


def is_outer(join: exp.Join) -> bool:
    """A join that keeps rows without a match (its conditions are not filters)."""
    return bool(join.side) or (join.kind or "").upper() in ("FULL", "OUTER", "ANTI", "SEMI")


def conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    """The parts of an AND chain (one part for any other condition, none for None)."""
    if condition is None:
        return []
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def path_of(column: exp.Column) -> tuple[exp.Expression, list[str]]:
    """The outermost node of the dotted path ``column`` starts (the column, or a dot above it)
    and the path's names."""
    top: exp.Expression = column
    names = [part.name for part in column.parts]
    while isinstance(top.parent, exp.Dot) and top.parent.this is top:
        top = top.parent
        names.append(top.name)
    return top, names


def dotted(base: str, fields: tuple[str, ...] | list[str]) -> exp.Expression:
    """``base.f1.f2…`` as DuckDB reads it."""
    text = ".".join(exp.to_identifier(p).sql(dialect="duckdb") for p in (base, *fields))
    return sqlglot.parse_one(text, read="duckdb")
