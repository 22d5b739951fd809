"""Repair a string written in double quotes, SQLite's way: no LLM call, no model of the data.

SQLite reads ``"Ohio"`` as a string where no column has that name, so models trained on SQLite
benchmarks write strings that way; PostgreSQL and DuckDB read it as a column and refuse the
query (``column "Ohio" does not exist``, ``Referenced column "Ohio" not found``: the first such
name only). On that refusal, each double-quoted name that stands as a value in a comparison
(``=``, ``<>``, ``IN``, ``LIKE``) and that no table of the schema has as a column becomes a string
literal, the one the error names among them:

    WHERE state = "Ohio"                    ──►  WHERE state = 'Ohio'
    WHERE plan IN ("HMO", 'PPO')            ──►  WHERE plan IN ('HMO', 'PPO')

Nothing on SQLite (which reads it as SQLite does), nothing for a name some table has as a column.

    >>> from pipelines.agentic_mode.schema_index import SchemaIndex
    >>> from pipelines.agentic_mode.taxonomy import load_taxonomy
    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> index = SchemaIndex.from_view(SchemaView(db_id="m", dialect="postgres",
    ...     tables=(TableInfo(name="members", columns=(ColumnInfo(name="state", type="TEXT"),)),)))
    >>> context = RepairContext(index=index, taxonomy=load_taxonomy(),
    ...                         error='column "Ohio" does not exist')
    >>> DoubleQuotedStrings().rewrite('SELECT count(*) FROM members WHERE state = "Ohio"', context).after
    "SELECT COUNT(*) FROM members WHERE state = 'Ohio'"
"""

from __future__ import annotations

import re
from typing import ClassVar

from sqlglot import exp

from pipelines.repair.base import Phase, RepairContext, Rewrite, Rewriter, parsed

# PostgreSQL's and DuckDB's refusal of a name as a column.
_REFUSED = re.compile(r'column "((?:[^"]|"")+)" (?:does not exist|not found)', re.IGNORECASE)
# Where a value stands: a side of a comparison, an item of an IN list, a LIKE pattern.
_COMPARISONS = (exp.EQ, exp.NEQ, exp.Like, exp.ILike)


class DoubleQuotedStrings(Rewriter):
    """The repair ``double_quoted_strings`` (module docstring)."""

    name: ClassVar[str] = "double_quoted_strings"
    phase: ClassVar[Phase] = "failed"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        schema = context.index
        refused = {name.replace('""', '"') for name in _REFUSED.findall(context.error)}
        if schema.dialect == "sqlite" or not refused:
            return None
        tree = parsed(sql, schema.dialect)
        if tree is None:
            return None
        values = [
            column
            for column in tree.find_all(exp.Column)
            if not column.table
            and isinstance(column.this, exp.Identifier)
            and column.this.quoted
            and _a_value(column)
            and not any(schema.column(t.name, column.name) for t in schema.view.tables)
        ]
        if not any(column.name in refused for column in values):
            return None
        changed = [column.name for column in values]
        for column in values:
            column.replace(exp.Literal.string(column.name))
        detail = "read as strings: " + ", ".join(f'"{name}"' for name in changed)
        return self.rewritten(tree, sql, detail, schema.dialect)


def _a_value(column: exp.Column) -> bool:
    parent = column.parent
    if isinstance(parent, _COMPARISONS):
        return True
    return isinstance(parent, exp.In) and parent.this is not column
