"""What the checker stages read of a query: it parsed once in the schema's dialect and qualified
(``ParsedSQL``), and the case folding around a column. The stages themselves are repairs of the
written phase (``Rewriter``, ``Blocker``: ``pipelines/repair/base.py``); ``QualifiedBlocker`` is
the blocker that reads the qualified query, ``first_of_each`` the one finding kept per key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.optimizer.qualify import qualify

from pipelines.agentic_mode.references import Resolver
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.repair.base import UNREADABLE, Blocker, RepairContext


@dataclass(frozen=True)
class ParsedSQL:
    """One SQL as the blockers read it; sqlglot trees are mutable, so no stage may change them.

    ``qualified``: every column qualified by its source against the schema, stars expanded
    (sqlglot's ``qualify``, no validation: the blockers report what does not resolve); None
    where sqlglot cannot qualify the query, and the blockers that need it pass.
    """

    sql: str
    tree: exp.Expression
    qualified: exp.Expression | None
    resolver: Resolver | None


def parse(sql: str, schema: SchemaIndex) -> ParsedSQL:
    """``sql`` parsed in the schema's dialect and qualified; sqlglot's ParseError when it does
    not parse or is not exactly one statement (the sandbox runs one)."""
    statements = [s for s in sqlglot.parse(sql, read=schema.dialect) if s is not None]
    if len(statements) != 1:
        raise ParseError(f"expected one statement, found {len(statements)}")
    tree = statements[0]
    try:
        qualified = qualify(
            tree.copy(),
            schema=schema.sqlglot_schema,
            dialect=schema.dialect,
            validate_qualify_columns=False,
            allow_partial_qualification=True,  # an unknown column is reported, not raised
        )
        resolver = Resolver(qualified, schema)
    except UNREADABLE:
        return ParsedSQL(sql=sql, tree=tree, qualified=None, resolver=None)
    return ParsedSQL(sql=sql, tree=tree, qualified=qualified, resolver=resolver)


def unwrap(node: exp.Expression) -> exp.Expression:
    """``node`` without case folding and trimming around it (``lower(t.stage)`` -> ``t.stage``)."""
    while isinstance(node, (exp.Lower, exp.Upper, exp.Trim, exp.Paren)):
        node = node.this
    return node


def case_fold(node: exp.Expression) -> Callable[[str], str]:
    """What ``node`` does to the case of the value it wraps: ``str.lower`` for ``lower(x)``,
    ``str.upper`` for ``upper(x)``, nothing otherwise (innermost fold wins)."""
    while isinstance(node, (exp.Trim, exp.Paren)):
        node = node.this
    if isinstance(node, exp.Lower):
        return str.lower
    if isinstance(node, exp.Upper):
        return str.upper
    return str


class QualifiedBlocker(Blocker):
    """A blocker that reads the qualified query through its ``Resolver``; a query sqlglot could
    not qualify passes it."""

    def check(self, parsed: ParsedSQL, context: RepairContext) -> tuple[Finding, ...]:
        if parsed.resolver is None:
            return ()
        return self.findings(parsed.resolver, context)

    def findings(self, resolver: Resolver, context: RepairContext) -> tuple[Finding, ...]:
        raise NotImplementedError


def first_of_each(
    findings: Iterable[Finding | None], key: Callable[[Finding], Hashable]
) -> tuple[Finding, ...]:
    """The first finding of each ``key``, in order; None entries are passed over."""
    kept: dict[Hashable, Finding] = {}
    for finding in findings:
        if finding is not None:
            kept.setdefault(key(finding), finding)
    return tuple(kept.values())
