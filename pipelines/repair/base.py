"""What every repair and check of a candidate SQL is: a small frozen pydantic model (its fields
are its settings), one file, one line in ``pipelines/repair/registry.py``; a strategy lists the
ones it runs by name in its settings (``scaling.repairs``, ``scaling.checks``). Its ``phase``
says when in a candidate's life it runs, and so what it is shown and what it answers:

    phase          shown                                         answers
    written        the SQL before it runs (no database)          Rewriter: a Rewrite or None
                                                                 Blocker:  findings (none: pass)
    failed         the SQL and the engine's error (context.error)   a Rewrite or None
    found_nothing  the SQL of a result with nothing in it, and a     a Rewrite or None
                   probe that runs a read-only query

The adaptive pipeline runs its written rewriters before a candidate runs, its failed ones on an
errored candidate (rounds, each rewrite executed) and its found_nothing ones on an empty result
(``pipelines/repair/rounds.py``); the agentic checker chain runs written rewriters and blockers
(``pipelines/agentic_mode/chain.py``). Every one reads the schema through ``RepairContext.index``.
A failed-phase repair's ``rounds`` setting (1 where it has none) bounds the rewrites an errored
candidate gets: the largest of the listed ones.

    class Shouting(Rewriter):
        name: ClassVar[str] = "shouting"
        def rewrite(self, sql, context):
            return Rewrite(stage=self.name, detail="upper", before=sql, after=sql.upper())
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, ClassVar, Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.types import Frozen
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy
from pipelines.contracts import ExecutionResult

if TYPE_CHECKING:
    from pipelines.agentic_mode.checks.base import ParsedSQL

Phase = Literal["written", "failed", "found_nothing"]
RunProbe = Callable[[str], Awaitable[ExecutionResult]]

# What sqlglot raises on a query it cannot parse or resolve, besides its own errors.
UNREADABLE = (SqlglotError, RecursionError, ValueError, KeyError, AttributeError)


def parsed(sql: str, dialect: str) -> exp.Expression | None:
    """``sql``'s tree in ``dialect``, or None where sqlglot cannot read it (a rewriter then
    leaves the SQL as it is).

    >>> parsed("SELECT a FROM t", "duckdb").sql()
    'SELECT a FROM t'
    >>> parsed("SELECT FROM WHERE (", "duckdb") is None
    True
    """
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except UNREADABLE:
        return None


def cte_names(tree: exp.Expression) -> set[str]:
    """The names of ``tree``'s common table expressions, lower-cased."""
    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


class RepairContext(Frozen):
    """What a repair reads: the schema, the taxonomy a finding comes from, and (phase
    ``failed``) the engine's error of the SQL it is shown."""

    index: SchemaIndex
    taxonomy: Taxonomy
    error: str = ""


class Rewrite(Frozen):
    """One rewriter's change: the SQL before and after, and what changed, in words."""

    stage: str
    detail: str
    before: str
    after: str


class Repair(Frozen):
    """Base of the repairs and checks (module docstring). ``lineage``: the tag a rewrite adds
    to a candidate's lineage, ``agent``: the name its probes and decisions go under in the
    trace (both ``name`` when empty); ``emits``: the taxonomy classes its findings use."""

    name: ClassVar[str]
    phase: ClassVar[Phase] = "written"
    lineage: ClassVar[str] = ""
    agent: ClassVar[str] = ""
    emits: ClassVar[tuple[str, ...]] = ()


class Rewriter(Repair):
    """A repair that may change the SQL and never fails."""

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        raise NotImplementedError

    def rewritten(
        self, tree: exp.Expression, before: str, detail: str, dialect: str
    ) -> Rewrite | None:
        """``tree`` written in ``dialect`` as this stage's rewrite of ``before``; None when the
        written SQL does not parse again (a rewrite never hands on what the engine would refuse)."""
        after = tree.sql(dialect=dialect)
        if parsed(after, dialect) is None:
            return None
        return Rewrite(stage=self.name, detail=detail, before=before, after=after)


class Blocker(Repair):
    """A check that passes the SQL (no findings) or reports what is wrong with it."""

    def check(self, parsed: ParsedSQL, context: RepairContext) -> tuple[Finding, ...]:
        raise NotImplementedError

    def finding(
        self,
        context: RepairContext,
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


class Grounder(Repair):
    """A repair of a result with nothing in it, which may ask the database (``probe``)."""

    phase: ClassVar[Phase] = "found_nothing"

    def suspect(self, sql: str, context: RepairContext) -> bool:
        """Whether a result *with* rows is still worth grounding (no probe run)."""
        return False

    async def ground(
        self, sql: str, context: RepairContext, probe: RunProbe, *, rows: bool
    ) -> Rewrite | None:
        """A rewrite of ``sql``; ``rows``: its result had rows (``suspect`` said so)."""
        raise NotImplementedError
