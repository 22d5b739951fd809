"""The deterministic checker chain of the agentic mode: what a candidate SQL goes through
before it is executed. No LLM, no database access: the schema view, its documentation and
sqlglot.

    sql ──► rewriters (never fail: a string an apostrophe broke, names spelled as the schema,
            other dialects' functions in the target's, a list column read as a table unnested
            from its owner; optionally an unknown column bound by the column repair)
        ──► blockers (pure functions of SQL + schema: pass, or findings that name a taxonomy
            class and the offending part) ──► CheckResult(sql, rewrites, findings)

The blockers parse the (rewritten) SQL once, in the target dialect, and qualify it against the
schema; an SQL sqlglot cannot parse is one ``syntax_error`` finding (the sandbox would refuse it
too). Every finding carries its class's action and repair directive (``taxonomy.yaml``), for
the orchestrator to route and feed back; the chain itself decides nothing.

    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> links = ColumnInfo(name="links", type="STRUCT(type VARCHAR, display_id VARCHAR)[]",
    ...     description="Typed links. type is one of: 'blocks' = it blocks; 'resolves' = it fixes.",
    ...     children=(ColumnInfo(name="links.type", type="VARCHAR"),
    ...               ColumnInfo(name="links.display_id", type="VARCHAR")))
    >>> stage = ColumnInfo(name="stage", type="VARCHAR",
    ...     description="Workflow stage. One of: 'triage' = new; 'completed' = shipped.")
    >>> view = SchemaView(db_id="work", dialect="duckdb", tables=(TableInfo(name="issues",
    ...     columns=(ColumnInfo(name="display_id", type="VARCHAR"), stage, links)),))
    >>> chain = CheckerChain(view)
    >>> result = chain.check("SELECT Display_ID, IFF(stage = 'done', 1, 0) FROM ISSUES AS i")
    >>> print(result.sql)
    SELECT display_id, CASE WHEN stage = 'done' THEN 1 ELSE 0 END FROM issues AS i
    >>> [r.stage for r in result.rewrites]
    ['identifier_casing', 'dialect_functions']
    >>> [(f.error_class, f.identifier, f.suggestion) for f in result.findings]
    [('enum_value_outside_vocabulary', 'done', 'triage, completed')]
    >>> result = chain.check("SELECT count(*) FROM issues AS i WHERE i.links.type = 'blocks'")
    >>> [(f.error_class, f.action, f.identifier) for f in result.findings]
    [('unnest_missing', 'repair_in_place', 'links')]
    >>> chain.check(
    ...     "SELECT count(*) FROM issues AS i, UNNEST(i.links) AS u(link) WHERE link.type = 'blocks'"
    ... ).passed
    True
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from core.types import Frozen
from pipelines.agentic_mode.checks import DEFAULT_CHECKS
from pipelines.agentic_mode.checks.base import ParsedSQL, parse
from pipelines.agentic_mode.schema_index import SchemaIndex
from pipelines.agentic_mode.taxonomy import Finding, Taxonomy, load_taxonomy
from pipelines.contracts import SchemaView
from pipelines.repair.base import UNREADABLE, Blocker, Repair, RepairContext, Rewrite, Rewriter
from pipelines.repair.registry import build_repairs

log = logging.getLogger(__name__)

SYNTAX_ERROR = "syntax_error"  # the class of an SQL sqlglot cannot parse


class CheckResult(Frozen):
    """What the chain made of one SQL: the SQL to execute (rewritten where a rewriter changed
    it), the rewrites in order, and the blockers' findings (none: it may run)."""

    sql: str
    rewrites: tuple[Rewrite, ...] = ()
    findings: tuple[Finding, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.findings


class CheckerChain:
    """Runs its stages (repairs of the written phase, ``DEFAULT_CHECKS`` unless given) over an
    SQL, in order, against one schema (module docstring)."""

    def __init__(
        self,
        schema: SchemaView | SchemaIndex,
        *,
        stages: Sequence[Repair] | None = None,
        taxonomy: Taxonomy | None = None,
    ) -> None:
        stages = build_repairs(DEFAULT_CHECKS) if stages is None else stages
        for stage in stages:
            if not isinstance(stage, (Rewriter, Blocker)) or stage.phase != "written":
                raise TypeError(
                    f"{type(stage).__name__} is not a Rewriter or Blocker of the written phase"
                )
        index = schema if isinstance(schema, SchemaIndex) else SchemaIndex.from_view(schema)
        taxonomy = taxonomy if taxonomy is not None else load_taxonomy()
        taxonomy.require([SYNTAX_ERROR, *(c for s in stages for c in s.emits)], "the checker chain")
        self.context = RepairContext(index=index, taxonomy=taxonomy)
        self.stages = tuple(stages)

    def check(self, sql: str) -> CheckResult:
        rewrites: list[Rewrite] = []
        findings: list[Finding] = []
        parsed: ParsedSQL | None = None
        for stage in self.stages:
            if isinstance(stage, Rewriter):
                rewrite = self._rewrite(stage, sql)
                if rewrite is not None:
                    rewrites.append(rewrite)
                    sql, parsed = rewrite.after, None
                continue
            if parsed is None:
                try:
                    parsed = parse(sql, self.context.index)
                except UNREADABLE as exc:
                    findings.append(self._syntax_error(exc))
                    break
            findings.extend(self._check(stage, parsed))
        return CheckResult(sql=sql, rewrites=tuple(rewrites), findings=tuple(findings))

    def _rewrite(self, stage: Rewriter, sql: str) -> Rewrite | None:
        try:
            return stage.rewrite(sql, self.context)
        except UNREADABLE as exc:  # sqlglot failing on odd SQL: the rewriter does nothing
            log.warning("rewriter %s skipped: %s", stage.name, exc)
            return None

    def _check(self, stage: Blocker, parsed: ParsedSQL) -> tuple[Finding, ...]:
        try:
            return stage.check(parsed, self.context)
        except UNREADABLE as exc:  # sqlglot failing on odd SQL: the blocker cannot judge it
            log.warning("blocker %s skipped: %s", stage.name, exc)
            return ()

    def _syntax_error(self, exc: Exception) -> Finding:
        errors = getattr(exc, "errors", None) or [{}]
        first = errors[0] if isinstance(errors[0], dict) else {}
        detail = first.get("description") or str(exc).splitlines()[0]
        return self.context.taxonomy.finding(
            SYNTAX_ERROR,
            source="parse",
            detail=f"sqlglot cannot parse it as {self.context.index.dialect}: {detail}",
            identifier=str(first.get("highlight") or ""),
        )
