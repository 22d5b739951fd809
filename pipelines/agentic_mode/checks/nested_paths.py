"""Blocker: paths into nested columns that do not exist or skip an UNNEST.

    WHERE t.links.type = 'blocks'          ──► unnest_missing   links is a list: unnest it first
    FROM tickets t, UNNEST(t.links) AS u(link)
      WHERE link.typ = 'blocks'            ──► missing_subfield links.typ (candidates: type)
    t.sla_tracker.state                    ──► missing_subfield sla_tracker.state (candidates: status)

An index (``links[1].type``), ``unnest(links).type`` and a lambda over the list
(``list_filter(links, lambda x: x.type = 'blocks')``) read an element, which is fine. Paths
through tables outside the schema, derived tables and CTEs pass unjudged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from sqlglot import exp

from pipelines.agentic_mode.checks.base import QualifiedBlocker, first_of_each
from pipelines.agentic_mode.checks.unknown_names import close
from pipelines.agentic_mode.references import Ref, Resolver
from pipelines.agentic_mode.schema_index import SchemaIndex, data_type
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.contracts import ColumnInfo
from pipelines.repair.base import RepairContext

# Types that have no fields (reading ``x.field`` off one is an error); others (JSON, MAP,
# UNKNOWN, ...) may have some the schema does not list.
_SCALARS = (
    *exp.DataType.TEXT_TYPES,
    *exp.DataType.NUMERIC_TYPES,
    *exp.DataType.TEMPORAL_TYPES,
    exp.DataType.Type.BOOLEAN,
)


def _fields(column: ColumnInfo) -> list[str]:
    return [c.name.rsplit(".", 1)[-1] for c in column.children]


class NestedPaths(QualifiedBlocker):
    """Reports field access on lists and on fields that do not exist (module docstring)."""

    name: ClassVar[str] = "nested_paths"
    emits: ClassVar[tuple[str, ...]] = ("unnest_missing", "missing_subfield")

    def findings(self, resolver: Resolver, context: RepairContext) -> tuple[Finding, ...]:
        return first_of_each(
            self._judged(resolver, context),
            key=lambda finding: (finding.error_class, finding.identifier),
        )

    def _judged(self, resolver: Resolver, context: RepairContext) -> Iterator[Finding | None]:
        for dot in resolver.tree.find_all(exp.Dot):
            base = resolver.resolve(dot.this)
            yield self._field(context, base, dot.name) if base is not None else None
        for scope in resolver.scopes:  # u.typ of UNNEST(t.links) AS u
            for column in scope.columns:
                ref = resolver.resolve(column)
                if ref is None or ref.element or "." not in ref.path:
                    continue
                parent, field = ref.path.rsplit(".", 1)
                yield self._field(context, Ref(ref.table, parent, element=True), field)

    def _field(self, context: RepairContext, base: Ref, field: str) -> Finding | None:
        """The finding for reading ``field`` off ``base``, or None when that is fine."""
        schema: SchemaIndex = context.index
        column = schema.column(base.table, base.path)
        if column is None:
            return None
        if schema.is_list(column) and not base.element:
            return self.finding(
                context,
                "unnest_missing",
                f"{base.table}.{column.name} is a list; .{field} reads a field of its elements, "
                "which needs UNNEST",
                identifier=column.name,
            )
        if column.children:
            if schema.column(base.table, f"{base.path}.{field}") is not None:
                return None
            return self.finding(
                context,
                "missing_subfield",
                f"{base.table}.{column.name} has no field {field}",
                identifier=f"{column.name}.{field}",
                suggestion=close(field, _fields(column)) or ", ".join(_fields(column)),
            )
        if data_type(column.type, schema.dialect).is_type(*_SCALARS):
            return self.finding(
                context,
                "missing_subfield",
                f"{base.table}.{column.name} is a {column.type}, not a STRUCT: it has no field {field}",
                identifier=f"{column.name}.{field}",
            )
        return None
