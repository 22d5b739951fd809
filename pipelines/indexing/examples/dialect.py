"""A solved example written for one engine, shown in the asking database's dialect.

A model imitates the examples in its prompt: an example in SQLite's idioms shown for a PostgreSQL
database teaches calls the server refuses (``julianday``, ``strftime``). An examples file says
which dialect its SQL is written in (``dialect: sqlite``, docs/schemas.md), and each example is
shown translated: sqlglot's transpiler, with the two SQLite date idioms it leaves as written
(``julianday(d)``, ``strftime('%w', d)``) built for PostgreSQL as ``pipelines/repair/dates.py``
builds them, and a subquery in FROM named (PostgreSQL 15 requires it; SQLite and DuckDB do not).

    >>> translated("SELECT strftime('%Y', paid_date) FROM claims", "sqlite", "postgres")
    "SELECT TO_CHAR(CAST(paid_date AS TIMESTAMP), 'YYYY') FROM claims"
    >>> translated("SELECT julianday(d) FROM t", "sqlite", "postgres")
    'SELECT (EXTRACT(EPOCH FROM CAST(d AS TIMESTAMP)) / 86400.0 + 2440587.5) FROM t'

The transpiler keeps SQLite's meaning where the engines differ (a division is made fractional, a
NULL sorts first), so a translated example can be longer than one written for the engine.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pipelines.contracts import Dialect
from pipelines.repair.dates import julianday, weekday


def _sqlite_dates_for_postgres(tree: exp.Expression) -> None:
    """Rewrites in place the SQLite date calls sqlglot does not translate to PostgreSQL."""
    # inner calls first, so an outer call's rewrite takes its arguments translated
    for node in reversed(list(tree.find_all(exp.Anonymous, exp.TimeToStr, bfs=False))):
        if isinstance(node, exp.Anonymous):
            if node.name.lower() == "julianday" and len(node.expressions) == 1:
                node.replace(julianday(node.expressions[0]))
        elif node.args.get("format") is not None and node.args["format"].name == "%w":
            node.replace(weekday(node.this))


def _alias_derived_tables(tree: exp.Expression) -> None:
    """Names each unnamed subquery in FROM or JOIN (PostgreSQL before 16 refuses one)."""
    taken = {t.alias_or_name.lower() for t in tree.find_all(exp.Table, exp.Subquery)}
    number = 0
    for subquery in tree.find_all(exp.Subquery):
        if subquery.alias or not isinstance(subquery.parent, (exp.From, exp.Join)):
            continue
        number += 1
        while f"t{number}" in taken:
            number += 1
        subquery.set("alias", exp.TableAlias(this=exp.to_identifier(f"t{number}")))


# (written for, shown on) ──► what sqlglot's transpiler leaves to be done
_AFTER_PARSING = {
    ("sqlite", "postgres"): (_sqlite_dates_for_postgres, _alias_derived_tables),
    ("duckdb", "postgres"): (_alias_derived_tables,),
}


def translated(sql: str, source: Dialect, target: Dialect) -> str:
    """``sql``, written for ``source``, in ``target``'s dialect (sqlglot raises what it cannot
    read)."""
    if source == target:
        return sql
    tree = sqlglot.parse_one(sql, read=source)
    for rewrite in _AFTER_PARSING.get((source, target), ()):
        rewrite(tree)
    return tree.sql(dialect=target)
