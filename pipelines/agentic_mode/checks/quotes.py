"""Rewriter: a string an apostrophe broke, the apostrophe doubled (``pipelines/repair/quotes.py``).

Small models write ``'St. Luke\\'s Hospital'`` or ``'O'Brien'``; neither engine nor sqlglot reads
them, so every later stage would see one ``syntax_error``. Only an SQL sqlglot cannot parse is
rewritten, and only into one it can.
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot

from pipelines.repair.base import UNREADABLE, RepairContext, Rewrite, Rewriter
from pipelines.repair.quotes import doubled_apostrophes


class StrayApostrophes(Rewriter):
    """Doubles the apostrophes that end a string early (module docstring)."""

    name: ClassVar[str] = "stray_apostrophes"

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        dialect = context.index.dialect
        try:
            sqlglot.parse_one(sql, read=dialect)
            return None
        except UNREADABLE:
            pass
        after = doubled_apostrophes(sql, dialect)
        if after is None:
            return None
        return Rewrite(
            stage=self.name, detail="apostrophes inside strings doubled", before=sql, after=after
        )
