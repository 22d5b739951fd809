"""What every checker stage shares: the parsed query, the context, and the two kinds of stage.

    Rewriter.rewrite(sql, context)     -> Rewrite | None    never fails: a new SQL, or nothing
    Blocker.check(parsed, context)     -> (Finding, ...)    empty: the SQL passes

A stage is a small frozen pydantic model: its fields are its settings, ``name`` its label in
findings and rewrites, ``emits`` the taxonomy classes its findings use (checked against the
taxonomy when a chain is built).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from core.types import Frozen
from pipelines.agentic.references import Resolver
from pipelines.agentic.schema_index import SchemaIndex
from pipelines.agentic.taxonomy import Finding, Taxonomy

# What sqlglot raises on a query it cannot parse or resolve, besides its own errors.
UNREADABLE = (SqlglotError, RecursionError, ValueError, KeyError, AttributeError)


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


class CheckContext(Frozen):
    """What the stages check against: the schema and the taxonomy their findings come from."""

    index: SchemaIndex
    taxonomy: Taxonomy


class Rewrite(Frozen):
    """One rewriter's change: the SQL before and after, and what changed, in words."""

    stage: str
    detail: str
    before: str
    after: str


class Stage(Frozen):
    """Base of the checker stages."""

    name: ClassVar[str]
    emits: ClassVar[tuple[str, ...]] = ()


class Rewriter(Stage):
    """A stage that may change the SQL and never fails."""

    def rewrite(self, sql: str, context: CheckContext) -> Rewrite | None:
        raise NotImplementedError

    def rewritten(
        self, tree: exp.Expression, before: str, detail: str, dialect: str
    ) -> Rewrite | None:
        """``tree`` written in ``dialect`` as this stage's rewrite of ``before``; None when the
        written SQL does not parse again (a rewrite never hands on what the engine would refuse)."""
        after = tree.sql(dialect=dialect)
        try:
            sqlglot.parse_one(after, read=dialect)
        except UNREADABLE:
            return None
        return Rewrite(stage=self.name, detail=detail, before=before, after=after)


class Blocker(Stage):
    """A stage that passes the SQL (no findings) or reports what is wrong with it."""

    def check(self, parsed: ParsedSQL, context: CheckContext) -> tuple[Finding, ...]:
        raise NotImplementedError

    def finding(
        self,
        context: CheckContext,
        error_class: str,
        detail: str,
        identifier: str = "",
        suggestion: str = "",
    ) -> Finding:
        return context.taxonomy.finding(
            error_class,
            source=self.name,
            detail=detail,
            identifier=identifier,
            suggestion=suggestion,
        )


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
