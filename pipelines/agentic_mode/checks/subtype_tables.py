"""Rewriter: a kind of row read as a table, read as its table's rows of that kind.

Where one table holds several kinds of rows told apart by a column (``parts.part_type`` is
``product``, ``capability`` or ``feature``), small models read each kind as a table of its own:
``JOIN capabilities AS c``. Where no table, CTE or nested column has that name and exactly one
top-level column's documented vocabulary holds it (as written, or its singular), the "table"
becomes that table's rows of that kind, under the same alias, so the query's own references to
it resolve unchanged:

    FROM parts AS f JOIN capabilities AS c ON f.parent_part_id = c.part_id
    ──► FROM parts AS f
        JOIN (SELECT * FROM parts WHERE part_type = 'capability') AS c ON f.parent_part_id = c.part_id

Any dialect: the rewrite is plain SQL. A query it touches could not have run as written (it named
a table that does not exist).

    >>> from pipelines.agentic_mode.taxonomy import load_taxonomy
    >>> from pipelines.repair.base import RepairContext
    >>> from pipelines.agentic_mode.schema_index import SchemaIndex
    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> kind = ColumnInfo(name="kind", type="TEXT",
    ...                   description="One of: 'capability' = a group; 'feature' = a leaf.")
    >>> index = SchemaIndex.from_view(SchemaView(db_id="p", dialect="sqlite",
    ...     tables=(TableInfo(name="parts", columns=(ColumnInfo(name="name", type="TEXT"), kind)),)))
    >>> context = RepairContext(index=index, taxonomy=load_taxonomy())
    >>> SubtypeTables().rewrite("SELECT name FROM features", context).after
    "SELECT name FROM (SELECT * FROM parts WHERE kind = 'feature') AS features"
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from pipelines.agentic_mode.checks.nesting import missing_table
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.indexing.examples.question_skeleton import singular
from pipelines.repair.base import RepairContext, Rewrite, Rewriter, cte_names, parsed


class SubtypeTables(Rewriter):
    """Reads a kind of row named as a table off the table that holds it (module docstring)."""

    name: ClassVar[str] = "subtype_tables"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        schema = context.index
        tree = parsed(sql, schema.dialect)
        if tree is None:
            return None
        ctes = cte_names(tree)
        changed: list[str] = []
        for table in list(tree.find_all(exp.Table)):
            name = missing_table(table, schema, ctes)
            kind = _kind_named(name, schema) if name is not None else None
            if kind is None:
                continue
            holder, column, value = kind
            rows = (
                exp.select("*")
                .from_(holder)
                .where(exp.column(column).eq(exp.Literal.string(value)))
            )
            table.replace(rows.subquery(table.alias_or_name))
            changed.append(f"{name} read as {holder} WHERE {column} = '{value}'")
        if not changed:
            return None
        return self.rewritten(tree, sql, "; ".join(changed), schema.dialect)


def _kind_named(name: str, schema: SchemaIndex) -> tuple[str, str, str] | None:
    """(table, column, value): the one documented value of a top-level column that ``name``
    (or its singular) spells, where no column of any table is called ``name``; else None."""
    words = {name.lower(), singular(name.lower())}
    found = []
    for table in schema.view.tables:
        for column in table.columns:
            if column.name.lower() == name.lower():
                return None  # a column read as a table: the nested rewriters' case, or no case
            found += [
                (table.name, column.name, value)
                for value in schema.vocabulary(table.name, column.name)
                if value.lower() in words
            ]
    return found[0] if len(found) == 1 else None
