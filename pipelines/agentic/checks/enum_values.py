"""Blocker: a column with a documented vocabulary compared with a value that is none of its
labels — a query that runs and silently finds nothing.

    WHERE t.stage = 'open'               ──► enum_value_outside_vocabulary 'open'
                                             (candidates: queued, work_in_progress, ...)
    WHERE link.type IN ('resolves', 'fixes')  ──► 'fixes' (for links.type)
    WHERE lower(t.severity) = 'HIGH'     ──► 'HIGH' (lower() gives lower-case labels only)
    CASE t.severity WHEN 'urgent' THEN 1 …    ──► 'urgent'

Labels compare as stored: exactly, or as ``lower()`` / ``upper()`` around the column makes them
(``lower(stage) = 'queued'`` passes, ``lower(stage) = 'Queued'`` can match nothing).
Vocabularies are the labels the schema's documentation lists
(``pipelines/schema/documentation/vocabulary.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from sqlglot import exp

from pipelines.agentic.checks.base import ParsedSQL, case_fold, unwrap
from pipelines.agentic.checks.unknown_names import close
from pipelines.agentic.references import Resolver
from pipelines.agentic.taxonomy import Finding
from pipelines.repair.base import Blocker, RepairContext

LISTED_LABELS = 12  # a vocabulary up to this size is offered whole when no label is close


def _comparisons(tree: exp.Expression) -> Iterator[tuple[exp.Expression, exp.Literal]]:
    """(column side, string literal) of every =, <>, IN and ``CASE column WHEN`` in ``tree``."""
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.In, exp.Case):
        if isinstance(node, exp.Case):
            if node.this is not None:
                for branch in node.args.get("ifs") or []:
                    if isinstance(branch.this, exp.Literal) and branch.this.is_string:
                        yield node.this, branch.this
            continue
        if isinstance(node, exp.In):
            for value in node.expressions:
                if isinstance(value, exp.Literal) and value.is_string:
                    yield node.this, value
            continue
        for side, other in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(other, exp.Literal) and other.is_string:
                yield side, other


def offer(value: str, labels: tuple[str, ...]) -> str:
    """The labels closest to ``value``, else all of a short vocabulary."""
    near = close(value, list(labels))
    return near or (", ".join(labels) if len(labels) <= LISTED_LABELS else "")


class EnumValues(Blocker):
    """Reports comparisons with values outside a column's vocabulary (module docstring)."""

    name: ClassVar[str] = "enum_values"
    emits: ClassVar[tuple[str, ...]] = ("enum_value_outside_vocabulary",)

    def check(self, parsed: ParsedSQL, context: RepairContext) -> tuple[Finding, ...]:
        if parsed.resolver is None or parsed.qualified is None:
            return ()
        found: dict[tuple[str, str], Finding] = {}
        for side, literal in _comparisons(parsed.qualified):
            finding = self._judge(context, parsed.resolver, side, literal.this)
            if finding is not None:
                found.setdefault((finding.detail, finding.identifier), finding)
        return tuple(found.values())

    def _judge(
        self, context: RepairContext, resolver: Resolver, side: exp.Expression, value: str
    ) -> Finding | None:
        ref = resolver.resolve(unwrap(side))
        labels = context.index.vocabulary(ref.table, ref.path) if ref else ()
        if not labels or ref is None:
            return None
        fold = case_fold(side)
        if value in {fold(label) for label in labels}:
            return None
        where = f"{ref.table}.{ref.path}"
        return self.finding(
            context,
            "enum_value_outside_vocabulary",
            f"'{value}' is not a documented value of {where}",
            identifier=value,
            suggestion=offer(value, labels),
        )
