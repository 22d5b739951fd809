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

from pipelines.agentic_mode.checks.base import QualifiedBlocker
from pipelines.agentic_mode.checks.enum_values import documented, offer
from pipelines.agentic_mode.references import Resolver
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.repair.base import RepairContext


def like_matches(pattern: str, label: str, *, ignore_case: bool) -> bool:
    """Whether LIKE ``pattern`` (``%`` any run, ``_`` one character) matches ``label``."""
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(regex, label, re.DOTALL | (re.IGNORECASE if ignore_case else 0)) is not None


class LikeOnEnum(QualifiedBlocker):
    """Reports pattern matching on enum-like columns (module docstring)."""

    name: ClassVar[str] = "like_on_enum"
    emits: ClassVar[tuple[str, ...]] = ("like_on_enum",)

    def findings(self, resolver: Resolver, context: RepairContext) -> tuple[Finding, ...]:
        found: list[Finding] = []
        for node in resolver.tree.find_all(exp.Like, exp.ILike):
            pattern = node.expression
            column = documented(resolver, context.index, node.this)
            if column is None or not isinstance(pattern, exp.Literal):
                continue
            ref, labels = column
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
                    suggestion=offer(", ".join(matched), labels),
                )
            )
        return tuple(found)
