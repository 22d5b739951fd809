"""Rewriter: a column the schema lacks, bound by the schema-grounded column repair
(``pipelines/repair/columns.py``): no LLM, the schema alone.

Small models qualify a column with the wrong alias or spell it another way, and shown the
finding they often write the same name again. Each column the ``UnknownNames`` blocker would
report as ``column_not_found`` is offered to the repair as the engine would name it; what it
binds with one answer is rewritten, and the next unknown column is tried on the result, at
most ``rounds`` times:

    SELECT p.specialty FROM claims AS c JOIN providers AS pr ON … JOIN plans AS p ON …
    ──► SELECT pr.specialty FROM claims AS c JOIN providers AS pr ON … JOIN plans AS p ON …

A column it cannot bind (no table in scope or one key away has it, or several equally) is left
as written, for the blocker to report.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from pipelines.agentic_mode.checks.base import parse
from pipelines.agentic_mode.checks.unknown_names import UnknownNames
from pipelines.repair.base import UNREADABLE, RepairContext, Rewrite, Rewriter
from pipelines.repair.columns import ColumnRepair

_BLOCKER = UnknownNames()


class ColumnNames(Rewriter):
    """Binds unknown columns with the schema-grounded column repair (module docstring)."""

    name: ClassVar[str] = "column_names"
    rounds: int = Field(default=3, ge=1)

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        repair = context.index.bound(ColumnRepair)
        current, bound = sql, []
        for _ in range(self.rounds):
            try:
                parsed = parse(current, context.index)
            except UNREADABLE:
                break
            missing = [
                f.identifier
                for f in _BLOCKER.check(parsed, context)
                if f.error_class == "column_not_found"
            ]
            proposal = next(
                (
                    (name, after)
                    for name in missing
                    if (after := repair.propose(current, f"no such column: {name}"))
                    not in (None, current)
                ),
                None,
            )
            if proposal is None:
                break
            bound.append(proposal[0])
            current = proposal[1]
        if not bound:
            return None
        return Rewrite(
            stage=self.name, detail=f"bound {', '.join(bound)}", before=sql, after=current
        )
