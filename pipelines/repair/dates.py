"""Repair SQLite's date idioms on a PostgreSQL server: no LLM call, a few milliseconds.

Models trained on SQLite benchmarks compute dates the SQLite way whatever dialect the prompt
names, and a PostgreSQL server refuses those calls (``function julianday(text) does not
exist``). sqlglot translates some of them (``strftime('%Y', d)``) but not ``julianday`` or the
weekday, and a date kept as ISO text (as a copied SQLite file keeps it) needs a cast first. On an
errored candidate whose error names one of these functions, every such call is rewritten:

    julianday(d)                 ──► EXTRACT(EPOCH FROM CAST(d AS TIMESTAMP)) / 86400.0 + 2440587.5
    strftime('%Y-%m', d)         ──► TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY-MM')
    strftime('%w', d)            ──► CAST(CAST(EXTRACT(DOW FROM CAST(d AS TIMESTAMP)) AS INT) AS TEXT)
    EXTRACT(YEAR FROM d)         ──► EXTRACT(YEAR FROM CAST(d AS TIMESTAMP))   (d a column or text)
    TO_CHAR(d, 'YYYY')           ──► TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY')     (d a column or text)

A ``strftime`` with modifiers, a format code without a PostgreSQL pattern, or letters written in
the format stays as written (the LLM fixer takes it).

    >>> from pipelines.agentic_mode.schema_index import SchemaIndex
    >>> from pipelines.agentic_mode.taxonomy import load_taxonomy
    >>> from pipelines.contracts import SchemaView
    >>> index = SchemaIndex.from_view(SchemaView(db_id="t", dialect="postgres", tables=()))
    >>> context = RepairContext(index=index, taxonomy=load_taxonomy(),
    ...     error="function strftime(unknown, text) does not exist")
    >>> SqliteDates().rewrite("SELECT strftime('%Y-%m', d) FROM t", context).after
    "SELECT TO_CHAR(CAST(d AS TIMESTAMP), 'YYYY-MM') FROM t"
"""

from __future__ import annotations

import re
from typing import ClassVar

from sqlglot import exp

from pipelines.repair.base import Phase, RepairContext, Rewrite, Rewriter, parsed

# PostgreSQL's refusal of a SQLite call, or of EXTRACT or TO_CHAR on text.
_REFUSED = re.compile(
    r"function (?:pg_catalog\.)?(?:julianday|strftime|extract|to_char)\(", re.IGNORECASE
)
# SQLite's strftime codes that have a TO_CHAR pattern; other characters a format may hold as
# they are (TO_CHAR reads letters as patterns, so a format with other letters is left alone).
_PATTERNS = {
    "%Y": "YYYY",
    "%m": "MM",
    "%d": "DD",
    "%H": "HH24",
    "%M": "MI",
    "%S": "SS",
    "%j": "DDD",
}
_LITERAL = re.compile(r"[-/:. ,]")
# The Unix epoch's Julian day number.
_EPOCH_JULIAN_DAY = "2440587.5"


def _timestamp(node: exp.Expression) -> exp.Expression:
    return exp.cast(node.copy(), "TIMESTAMP")


def julianday(argument: exp.Expression) -> exp.Expression:
    """PostgreSQL's value of SQLite's ``julianday(argument)``: days since the Julian epoch."""
    seconds = exp.Extract(this=exp.var("EPOCH"), expression=_timestamp(argument))
    # typed: a fractional division on every engine (no cast added when written for another)
    days = exp.Div(this=seconds, expression=exp.Literal.number("86400.0"), typed=True)
    return exp.paren(exp.Add(this=days, expression=exp.Literal.number(_EPOCH_JULIAN_DAY)))


def weekday(timestamp: exp.Expression) -> exp.Expression:
    """PostgreSQL's value of SQLite's ``strftime('%w', …)`` of a timestamp: '0' (Sunday) to '6',
    as text (DOW counts the same way)."""
    dow = exp.Extract(this=exp.var("DOW"), expression=timestamp)
    return exp.cast(exp.cast(dow, "INT"), "TEXT")


def _to_char_pattern(format_: str) -> str | None:
    """The TO_CHAR pattern of a SQLite strftime format, or None when it has no exact one."""
    pattern, i = [], 0
    while i < len(format_):
        code = format_[i : i + 2]
        if code in _PATTERNS:
            pattern.append(_PATTERNS[code])
            i += 2
        elif _LITERAL.fullmatch(format_[i]):
            pattern.append(format_[i])
            i += 1
        else:
            return None
    return "".join(pattern) or None


def _strftime(format_: exp.Expression, argument: exp.Expression) -> exp.Expression | None:
    if not (isinstance(format_, exp.Literal) and format_.is_string):
        return None
    if format_.this == "%w":
        return weekday(_timestamp(argument))
    pattern = _to_char_pattern(format_.this)
    if pattern is None:
        return None
    return exp.func("TO_CHAR", _timestamp(argument), exp.Literal.string(pattern))


def _translated(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.Anonymous):
        name, args = node.name.lower(), node.expressions
        if name == "julianday" and len(args) == 1:
            return julianday(args[0])
        if name == "strftime" and len(args) == 2:
            return _strftime(args[0], args[1])
        return None
    if isinstance(node, exp.Extract) and _text_date(node.expression):
        return exp.Extract(this=node.this.copy(), expression=_timestamp(node.expression))
    if isinstance(node, exp.TimeToStr) and _text_date(node.this):
        return node.__class__(this=_timestamp(node.this), format=node.args["format"].copy())
    return None


def _text_date(operand: exp.Expression) -> bool:
    """A column or a string literal: what may hold a date as ISO text (not a cast or a call)."""
    return isinstance(operand, exp.Column) or (
        isinstance(operand, exp.Literal) and operand.is_string
    )


class SqliteDates(Rewriter):
    """Rewrites SQLite's date calls a PostgreSQL server refused (module docstring)."""

    name: ClassVar[str] = "sqlite_dates"
    phase: ClassVar[Phase] = "failed"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        dialect = context.index.dialect
        if dialect != "postgres" or not _REFUSED.search(context.error):
            return None
        tree = parsed(sql, dialect)
        if tree is None:
            return None
        changed: list[str] = []
        # inner calls first, so an outer call's rewrite takes its arguments translated
        found = tree.find_all(exp.Anonymous, exp.Extract, exp.TimeToStr, bfs=False)
        for node in reversed(list(found)):
            replacement = _translated(node)
            if replacement is not None:
                changed.append(node.sql(dialect=dialect))
                node.replace(replacement)
        if not changed:
            return None
        return self.rewritten(tree, sql, "; ".join(changed), dialect)
