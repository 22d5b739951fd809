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

from pipelines.agentic_mode.checks.base import QualifiedBlocker, case_fold, first_of_each, unwrap
from pipelines.agentic_mode.checks.unknown_names import close
from pipelines.agentic_mode.references import Ref, Resolver
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.repair.base import RepairContext

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


def documented(
    resolver: Resolver, schema: SchemaIndex, side: exp.Expression
) -> tuple[Ref, tuple[str, ...]] | None:
    """The column ``side`` reads (case folding and trimming around it ignored) and its
    documented labels; None where it reads no column with a vocabulary."""
    ref = resolver.resolve(unwrap(side))
    labels = schema.vocabulary(ref.table, ref.path) if ref else ()
    return (ref, labels) if ref is not None and labels else None


def offer(near: str, labels: tuple[str, ...]) -> str:
    """``near`` (the labels close to what was written), else all of a short vocabulary."""
    return near or (", ".join(labels) if len(labels) <= LISTED_LABELS else "")


class EnumValues(QualifiedBlocker):
    """Reports comparisons with values outside a column's vocabulary (module docstring)."""

    name: ClassVar[str] = "enum_values"
    emits: ClassVar[tuple[str, ...]] = ("enum_value_outside_vocabulary",)

    def findings(self, resolver: Resolver, context: RepairContext) -> tuple[Finding, ...]:
        return first_of_each(
            (
                self._judge(context, resolver, side, literal.this)
                for side, literal in _comparisons(resolver.tree)
            ),
            key=lambda finding: (finding.detail, finding.identifier),
        )

    def _judge(
        self, context: RepairContext, resolver: Resolver, side: exp.Expression, value: str
    ) -> Finding | None:
        column = documented(resolver, context.index, side)
        if column is None:
            return None
        ref, labels = column
        fold = case_fold(side)
        if value in {fold(label) for label in labels}:
            return None
        where = f"{ref.table}.{ref.path}"
        return self.finding(
            context,
            "enum_value_outside_vocabulary",
            f"'{value}' is not a documented value of {where}",
            identifier=value,
            suggestion=offer(close(value, list(labels)), labels),
        )
