"""The structure of a SQL query: literals and identifiers masked (sqlglot).

    >>> sql_skeleton("SELECT T1.name FROM singer AS T1 WHERE T1.age > 30 AND country = 'France'")
    'select _._ from _ as _ where _._ > ? and _ = ?'

Two queries with the same skeleton differ only in which tables/columns/values they name.
Spider writes string values in double quotes, which SQLite's grammar reads as identifiers;
with ``double_quotes_are_strings`` (the default) they are read as the strings they are.
Unparsable SQL yields ``None``.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

IDENTIFIER_MASK = "_"


def _double_to_single_quotes(sql: str) -> str:
    """``"France"`` -> ``'France'`` outside single-quoted strings (Spider's string style)."""
    out: list[str] = []
    quote: str | None = None
    for ch in sql:
        if quote is None and ch in "'\"":
            quote = ch
            out.append("'")
        elif ch == quote:
            quote = None
            out.append("'")
        elif quote == '"' and ch == "'":
            out.append("''")
        else:
            out.append(ch)
    return "".join(out)


def _mask(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Literal):
        return exp.Placeholder()
    if isinstance(node, exp.Identifier):
        return exp.to_identifier(IDENTIFIER_MASK)
    return node


def sql_skeleton(
    sql: str, dialect: str = "sqlite", *, double_quotes_are_strings: bool = True
) -> str | None:
    text = _double_to_single_quotes(sql) if double_quotes_are_strings else sql
    try:
        tree = sqlglot.parse_one(text, read=dialect)
    except SqlglotError:
        return None
    if tree is None:
        return None
    return " ".join(tree.transform(_mask).sql(dialect=dialect).lower().split())


def string_literals(
    sql: str, dialect: str = "sqlite", *, double_quotes_are_strings: bool = True
) -> list[str]:
    """The string literals a query compares against (LIKE wildcards ``%`` stripped), deduplicated."""
    text = _double_to_single_quotes(sql) if double_quotes_are_strings else sql
    try:
        tree = sqlglot.parse_one(text, read=dialect)
    except SqlglotError:
        return []
    if tree is None:
        return []
    values = (lit.this.strip("%").strip() for lit in tree.find_all(exp.Literal) if lit.is_string)
    return list(dict.fromkeys(v for v in values if v))
