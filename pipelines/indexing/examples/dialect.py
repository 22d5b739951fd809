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

A question's evidence that names SQL in its prose (a benchmark's hints, written for its file) has
each call in it translated the same way, the prose left as written:

    >>> translated_calls("weekday = strftime('%w', paid), '0' = Sunday", "sqlite", "postgres")
    "weekday = CAST(CAST(EXTRACT(DOW FROM CAST(paid AS TIMESTAMP)) AS INT) AS TEXT), '0' = Sunday"
"""

from __future__ import annotations

import re

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


_CALL = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\(")


def translated_calls(text: str, source: Dialect, target: Dialect) -> str:
    """``text`` with each SQL call in it (``name(…)``, to its closing parenthesis) written for
    ``source`` shown in ``target``'s dialect; a call the translation leaves as it was (up to
    case), or cannot read, is kept as written."""
    if source == target:
        return text
    parts, position = [], 0
    while (call := _CALL.search(text, position)) is not None:
        end = _closing(text, call.end() - 1)
        if end is None:
            break
        fragment = text[call.start() : end + 1]
        try:
            shown = translated(f"SELECT {fragment}", source, target).removeprefix("SELECT ")
        except sqlglot.errors.SqlglotError:
            shown = fragment
        if _folded(shown) == _folded(fragment):
            shown = fragment
        parts += [text[position : call.start()], shown]
        position = end + 1
    return "".join(parts) + text[position:]


def _closing(text: str, opening: int) -> int | None:
    """The index of the parenthesis closing the one at ``opening`` (quoted text skipped)."""
    depth, quote = 0, None
    for index in range(opening, len(text)):
        char = text[index]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
    return None


def _folded(sql: str) -> str:
    return " ".join(sql.lower().split())
