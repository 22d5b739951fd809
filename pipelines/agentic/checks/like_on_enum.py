"""Blocker: LIKE (or ILIKE) on a column with a documented vocabulary, which guesses at labels
where the documentation names them: ``stage LIKE '%open%'`` matches no label of a stage whose
open states are ``queued``, ``work_in_progress`` and the ``awaiting_*`` ones.

    WHERE t.stage LIKE '%progress%'   ──► like_on_enum '%progress%' (candidates: work_in_progress)

The candidates are the labels the pattern matches, else the whole vocabulary when it is short.
"""

from __future__ import annotations

import re
from typing import ClassVar

from sqlglot import exp

from pipelines.agentic.checks.base import ParsedSQL, unwrap
from pipelines.agentic.checks.enum_values import LISTED_LABELS
from pipelines.agentic.taxonomy import Finding
from pipelines.repair.base import Blocker, RepairContext


def like_matches(pattern: str, label: str, *, ignore_case: bool) -> bool:
    """Whether LIKE ``pattern`` (``%`` any run, ``_`` one character) matches ``label``."""
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, label, re.DOTALL | (re.IGNORECASE if ignore_case else 0)) is not None


class LikeOnEnum(Blocker):
    """Reports pattern matching on enum-like columns (module docstring)."""

    name: ClassVar[str] = "like_on_enum"
    emits: ClassVar[tuple[str, ...]] = ("like_on_enum",)

    def check(self, parsed: ParsedSQL, context: RepairContext) -> tuple[Finding, ...]:
        if parsed.resolver is None or parsed.qualified is None:
            return ()
        found: list[Finding] = []
        for node in parsed.qualified.find_all(exp.Like, exp.ILike):
            pattern = node.expression
            ref = parsed.resolver.resolve(unwrap(node.this))
            labels = context.index.vocabulary(ref.table, ref.path) if ref else ()
            if not labels or ref is None or not isinstance(pattern, exp.Literal):
                continue
            # SQLite's LIKE ignores case (ASCII); DuckDB's LIKE does not, its ILIKE does.
            ignore_case = isinstance(node, exp.ILike) or context.index.dialect == "sqlite"
            matched = [
                label
                for label in labels
                if like_matches(pattern.this, label, ignore_case=ignore_case)
            ]
            keyword = "ILIKE" if isinstance(node, exp.ILike) else "LIKE"
            found.append(
                self.finding(
                    context,
                    "like_on_enum",
                    f"{ref.table}.{ref.path} {keyword} '{pattern.this}' on a column with "
                    "documented values",
                    identifier=pattern.this,
                    suggestion=", ".join(matched)
                    or (", ".join(labels) if len(labels) <= LISTED_LABELS else ""),
                )
            )
        return tuple(found)
