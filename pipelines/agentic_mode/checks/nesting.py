"""What the rewriters of nested columns share: the parts of a join and a dotted path as sqlglot
reads them.

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
