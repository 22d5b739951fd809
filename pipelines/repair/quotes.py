"""Repair string literals broken by an apostrophe: no LLM call, no schema.

Small models write a name that holds an apostrophe as C would escape it, or not at all; SQLite
and DuckDB escape a quote inside a string by doubling it, so both are syntax errors that every
sample of a question repeats (the 1.5B fixer returns the same SQL):

    'St. Luke\\'s Hospital'   ──►  'St. Luke''s Hospital'     (backslash escape)
    'St. Luke's Hospital'    ──►  'St. Luke''s Hospital'     (apostrophe between two letters)

Only on the engine's syntax error (or the guard's refusal of a string it cannot tokenize, on a
server), only outside double-quoted identifiers, never on a blob
literal (``x'0A'``), and only when the rewrite parses in the target dialect.

    >>> QuoteRepair("sqlite").propose("SELECT id FROM t WHERE name = 'O'Brien'", 'near "Brien": syntax error')
    "SELECT id FROM t WHERE name = 'O''Brien'"
    >>> QuoteRepair("sqlite").propose("SELECT id FROM t WHERE name = 'O'Brien'", "no such table: t") is None
    True
"""

from __future__ import annotations

import re
from typing import ClassVar

import sqlglot
from pydantic import Field
from sqlglot.errors import SqlglotError

from pipelines.repair.base import Phase, RepairContext, Rewrite, Rewriter

# What the engines say when a stray quote ends a string early or leaves one open, and what the
# sandbox's guard says of a string it cannot tokenize where no engine parser is at hand (a
# PostgreSQL server's statement is refused unrun: pipelines/sandbox/sandbox.py).
_SYNTAX = re.compile(
    r"syntax error|unrecognized token|unterminated (?:quoted )?string|error tokenizing", re.I
)
# A double-quoted identifier (kept as written) or the text between two of them.
_IDENTIFIER = re.compile(r'("(?:[^"]|"")*")')
_BACKSLASH_QUOTE = re.compile(r"\\'")
# An apostrophe inside a word (O'Brien, Luke's), not a blob literal's opening x'.
_INNER_APOSTROPHE = re.compile(r"(?<=[^\W\d_])(?<!\b[xX])'(?=[^\W\d_])")


def doubled_apostrophes(sql: str, dialect: str) -> str | None:
    r"""``sql`` with the apostrophes that break its strings doubled, or None when there are none
    or the rewrite does not parse in ``dialect``.

    >>> doubled_apostrophes("SELECT 1 FROM t WHERE name = 'St. Luke\\'s'", "duckdb")
    "SELECT 1 FROM t WHERE name = 'St. Luke''s'"
    """
    parts = _IDENTIFIER.split(sql)
    # split keeps the identifiers at odd positions
    rewritten = "".join(
        part if i % 2 else _INNER_APOSTROPHE.sub("''", _BACKSLASH_QUOTE.sub("''", part))
        for i, part in enumerate(parts)
    )
    if rewritten == sql:
        return None
    try:
        sqlglot.parse_one(rewritten, read=dialect)
    except (SqlglotError, RecursionError):
        return None
    return rewritten


class QuoteRepair:
    """Doubles the apostrophes that end a string literal too early, on the engine's syntax error."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect

    def propose(self, sql: str, error: str) -> str | None:
        """``sql`` with its stray apostrophes doubled, or None when the error is not a syntax
        error, nothing changes, or the rewrite does not parse."""
        if not _SYNTAX.search(error or ""):
            return None
        return doubled_apostrophes(sql, self.dialect)


class Quotes(Rewriter):
    """The repair ``quotes``: an errored candidate whose syntax error comes from an apostrophe
    inside a string, the apostrophe doubled. One rewrite doubles every such apostrophe; listed
    with ``columns``, it is asked in the column repair's rounds after it."""

    name: ClassVar[str] = "quotes"
    phase: ClassVar[Phase] = "failed"
    rounds: int = Field(default=1, ge=1)

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        after = QuoteRepair(context.index.dialect).propose(sql, context.error)
        if not after:
            return None
        return Rewrite(stage=self.name, detail="apostrophes doubled", before=sql, after=after)
