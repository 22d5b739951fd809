"""Ground the string literals of an empty-result query in the stored values: no LLM call.

Small models filter the right value in the wrong column (``Abbreviation = 'JetBlue Airways'``
where ``Airline`` holds it) or spell a stored value with another case or padding
(``'jetblue airways'``). On SQLite and DuckDB both find nothing (no rows, a count of zero), an
answer a vote can then choose. For such a query, each ``column = 'literal'`` filter whose literal
the column does not hold (one read-only probe) is looked up in the text columns of the tables in
its scope (a second probe; both through the sandbox):

    Abbreviation = 'JetBlue Airways'  ──► Airline = 'JetBlue Airways'   (one other column holds it)
    Airline = 'jetblue airways'       ──► Airline = 'JetBlue Airways'   (the column holds it as that)

A literal that no column in scope holds, filtering a key that references another table, may
name that table's row instead of its key (a third probe):

    CountryCode = 'Aruba'             ──► CountryCode = 'ABW'           (country.Name is 'Aruba')

A filter that excludes a literal its column does not hold excludes nothing, whatever the
query returns, so a ``column != 'literal'`` filter is grounded the same way in a query with rows
too (``propose(..., negated_only=True)``):

    Maker != 'Ford Motor Company'     ──► Maker != 5                    (car_makers.FullName)

A literal the column holds, a literal no column holds, or more than one equally good place
(more than one row, for a key) proposes nothing: an empty result can be the right answer.

    >>> import asyncio
    >>> from pipelines.sandbox import Sandbox
    >>> from pipelines.schema import introspect
    >>> repair, sandbox = ValueRepair(introspect(db)), Sandbox()
    >>> asyncio.run(repair.propose(
    ...     "SELECT count(*) FROM singer WHERE Name = 'france'",
    ...     lambda probe: sandbox.aexecute(probe, db),
    ... ))
    "SELECT COUNT(*) FROM singer WHERE Country = 'France'"
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from pipelines.contracts import ExecutionResult, SchemaView
from pipelines.repair.base import Grounder, RepairContext, Rewrite, RunProbe
from pipelines.repair.columns import Source, scope_sources
from pipelines.schema.joins import JoinGraph, join_graph

# Declared types whose values a string literal can name; SQLite's untyped columns read as "".
_TEXT_TYPES = ("CHAR", "TEXT", "CLOB", "STRING", "VARCHAR")
# Distinct (column, value) matches a probe returns: enough to tell one place from several.
_PROBE_LIMIT = 8
# An SQL sqlglot cannot read, or whose scopes it cannot resolve: nothing to propose.
_UNREADABLE = (SqlglotError, RecursionError, ValueError, KeyError, AttributeError)


@dataclass(frozen=True)
class Probe:
    """One filter ``alias.column = 'literal'`` (or ``!=``) and the read-only query that finds its
    literal.

    The query returns rows ``(source index, column name, "[stored value]")`` for every text column
    of the filter's scope that holds the literal up to case and surrounding spaces.
    """

    holds: str  # returns a row when the filtered column holds the literal as written
    sql: str
    # When the filtered column references another table's key: the distinct keys, as rows
    # ("[key]", type), of the referenced rows that a text column names by the literal.
    key: str | None
    literal: str
    column: str  # the filtered column as the schema spells it
    source: int  # index into ``sources`` of the filtered column's table
    sources: tuple[Source, ...]


class ValueRepair:
    """Proposes a rewrite of a query whose string filters miss: an empty result's ``=`` and
    ``!=`` filters, or any query's ``!=`` filters (module docstring)."""

    def __init__(self, view: SchemaView, graph: JoinGraph | None = None) -> None:
        self.dialect = view.dialect
        self.columns: dict[str, tuple[str, ...]] = {
            t.name.lower(): tuple(c.name for c in t.columns) for t in view.tables
        }
        self.text_columns: dict[str, tuple[str, ...]] = {
            t.name.lower(): tuple(c.name for c in t.columns if _is_text(c.type))
            for t in view.tables
        }
        self.tables: dict[str, str] = {t.name.lower(): t.name for t in view.tables}
        # (table, column) lower-cased -> the (table, column) its values reference.
        self.references: dict[tuple[str, str], tuple[str, str]] = {
            (fk.table.lower(), fk.column.lower()): (fk.ref_table.lower(), fk.ref_column)
            for fk in (graph if graph is not None else join_graph(view)).edges
        }

    async def propose(
        self,
        sql: str,
        run_probe: Callable[[str], Awaitable[ExecutionResult]],
        *,
        negated_only: bool = False,
    ) -> str | None:
        """A rewrite of ``sql`` whose string filters name stored values, or None.

        ``run_probe`` executes one read-only probe query (the sandbox); a probe that fails
        leaves its filter as written. ``negated_only``: only the ``!=`` filters (a query with
        rows, whose ``=`` filters matched).
        """
        kinds = (exp.NEQ,) if negated_only else (exp.EQ, exp.NEQ)
        try:
            tree = sqlglot.parse_one(sql, read=self.dialect)
            filters = list(self._filters(tree, kinds))
        except _UNREADABLE:
            return None
        changed = False
        for literal, column, probe in filters:
            held = await run_probe(probe.holds)
            if not held.ok or held.row_count:
                continue  # the column holds the literal (or cannot be asked): not why it is empty
            result = await run_probe(probe.sql)
            if not result.ok:
                continue
            if not result.rows and probe.key is not None:
                named = await run_probe(probe.key)
                key = _one_key(named.rows) if named.ok else None
                if key is not None:
                    literal.replace(key)
                    changed = True
                continue
            place = _place(probe, result.rows)
            if place is None:
                continue
            source, name, value = place
            column.set("this", exp.to_identifier(name))
            if column.table or len(probe.sources) > 1:
                column.set("table", exp.to_identifier(probe.sources[source].alias))
            literal.replace(exp.Literal.string(value))
            changed = True
        return tree.sql(dialect=self.dialect) if changed else None

    def probes(self, sql: str) -> list[Probe]:
        """The probe of every ``column = 'literal'`` or ``!=`` filter of ``sql`` (for inspection
        and tests)."""
        tree = sqlglot.parse_one(sql, read=self.dialect)
        return [probe for _literal, _column, probe in self._filters(tree, (exp.EQ, exp.NEQ))]

    def excludes_a_literal(self, sql: str) -> bool:
        """Whether ``sql`` has a ``column != 'literal'`` filter (no probe run)."""
        try:
            tree = sqlglot.parse_one(sql, read=self.dialect)
            return next(self._filters(tree, (exp.NEQ,)), None) is not None
        except _UNREADABLE:
            return False

    # --- finding the filters ---------------------------------------------------------------------

    def _filters(self, tree: exp.Expression, kinds: tuple[type[exp.Binary], ...]):
        seen: set[tuple[str, str, str]] = set()
        for scope in traverse_scope(tree):
            sources = tuple(scope_sources(scope, self.columns))
            if not sources:
                continue
            where = scope.expression.args.get("where")
            if where is None:
                continue
            names = {c.lower() for s in sources for c in self.columns[s.table]}
            for node in where.find_all(*kinds):
                found = self._column_and_string(node, names)
                if found is None or node.parent_select is not scope.expression:
                    continue
                column, literal_node, literal = found
                owner = self._owner(sources, column)
                if owner is None:
                    continue
                table = sources[owner].table
                name = next(c for c in self.columns[table] if c.lower() == column.name.lower())
                key = (sources[owner].alias.lower(), name.lower(), literal)
                if key in seen:
                    continue
                seen.add(key)
                yield literal_node, column, self._probe(sources, owner, name, literal)

    def _column_and_string(
        self, node: exp.Binary, names: set[str]
    ) -> tuple[exp.Column, exp.Expression, str] | None:
        """The column, the string node and its text of ``column = 'text'`` (either order).

        On SQLite ``"text"`` that names no column in scope is a string too (SQLite's fallback for
        a double-quoted identifier it cannot bind), and Spider-trained models write it so.
        """
        for column, other in ((node.this, node.expression), (node.expression, node.this)):
            if not isinstance(column, exp.Column):
                continue
            if isinstance(other, exp.Literal) and other.is_string and other.this.strip():
                return column, other, other.this
            if (
                self.dialect == "sqlite"
                and isinstance(other, exp.Column)
                and not other.table
                and other.this.args.get("quoted")
                and other.name.strip()
                and other.name.lower() not in names
            ):
                return column, other, other.name
        return None

    def _owner(self, sources: Sequence[Source], column: exp.Column) -> int | None:
        """Index of the in-scope table the column belongs to (by qualifier, else by name)."""
        if column.table:
            found = [i for i, s in enumerate(sources) if s.alias.lower() == column.table.lower()]
        else:
            found = [
                i
                for i, s in enumerate(sources)
                if any(c.lower() == column.name.lower() for c in self.columns[s.table])
            ]
        return found[0] if len(found) == 1 else None

    def _probe(self, sources: tuple[Source, ...], owner: int, column: str, literal: str) -> Probe:
        branches = []
        for i, s in enumerate(sources):
            names = self.text_columns[s.table]
            if i == owner and column not in names:
                names = (column, *names)  # the filtered column is probed whatever its type
            for name in names:
                value = exp.column(name, quoted=True)
                branches.append(
                    exp.select(exp.Literal.number(i), exp.Literal.string(name), _bracketed(value))
                    .from_(exp.to_table(self.tables[s.table], quoted=True))
                    .where(_names(value, literal))
                    .distinct()
                )
        union = branches[0]
        for branch in branches[1:]:
            union = exp.union(union, branch, distinct=False)
        query = exp.select("*").from_(union.subquery("matches")).limit(_PROBE_LIMIT)
        holds = (
            exp.select(exp.Literal.number(1))
            .from_(exp.to_table(self.tables[sources[owner].table], quoted=True))
            .where(
                exp.EQ(this=exp.column(column, quoted=True), expression=exp.Literal.string(literal))
            )
            .limit(1)
        )
        return Probe(
            holds=holds.sql(dialect=self.dialect),
            sql=query.sql(dialect=self.dialect),
            key=self._key_probe(sources[owner].table, column, literal),
            literal=literal,
            column=column,
            source=owner,
            sources=sources,
        )

    def _key_probe(self, table: str, column: str, literal: str) -> str | None:
        referenced = self.references.get((table, column.lower()))
        if referenced is None:
            return None
        ref_table, ref_column = referenced
        names = [c for c in self.text_columns[ref_table] if c.lower() != ref_column.lower()]
        if not names:
            return None
        key = exp.column(ref_column, quoted=True)
        query = (
            exp.select(_bracketed(key), exp.func("typeof", key.copy()))
            .distinct()
            .from_(exp.to_table(self.tables[ref_table], quoted=True))
            .where(exp.or_(*(_names(exp.column(n, quoted=True), literal) for n in names)))
            .limit(_PROBE_LIMIT)
        )
        return query.sql(dialect=self.dialect)


def _bracketed(value: exp.Expression) -> exp.Expression:
    """``'[' || value || ']'``: the sandbox trims the cells it returns, a rewrite must not."""
    return exp.DPipe(
        this=exp.DPipe(this=exp.Literal.string("["), expression=exp.cast(value.copy(), "TEXT")),
        expression=exp.Literal.string("]"),
    )


def _names(value: exp.Expression, literal: str) -> exp.Expression:
    """``value`` holds ``literal`` up to case and surrounding spaces."""
    return exp.EQ(
        this=exp.Lower(this=exp.Trim(this=exp.cast(value.copy(), "TEXT"))),
        expression=exp.Literal.string(literal.strip().lower()),
    )


def _one_key(rows: Sequence[Sequence[object]]) -> exp.Literal | None:
    """The one referenced key as a literal of its stored type, or None for none or several."""
    if len(rows) != 1 or rows[0][0] is None:
        return None
    text, kind = str(rows[0][0])[1:-1], str(rows[0][1]).lower()
    numeric = any(t in kind for t in ("int", "real", "double", "float", "decimal", "numeric"))
    return exp.Literal.number(text) if numeric else exp.Literal.string(text)


def _place(probe: Probe, rows: Sequence[Sequence[object]]) -> tuple[int, str, str] | None:
    """Where the literal lives: (source, column, stored value), or None when it already matches,
    lives nowhere, or lives in more than one place."""
    matches = {(int(r[0]), str(r[1]), str(r[2])[1:-1]) for r in rows if r[2] is not None}
    if (probe.source, probe.column, probe.literal) in matches:
        return None  # the column holds the literal as written: the filter is not why it is empty
    same = [m for m in matches if m[:2] == (probe.source, probe.column)]
    if same:
        return same[0] if len(same) == 1 else None
    places = {m[:2] for m in matches}
    if len(places) != 1:
        return None
    values = [m for m in matches if m[2] == probe.literal] or list(matches)
    return values[0] if len(values) == 1 else None


def _is_text(declared: str) -> bool:
    upper = (declared or "").upper()
    return not upper or any(t in upper for t in _TEXT_TYPES)


class Values(Grounder):
    """The repair ``values``: a result with nothing in it, or one whose ``!=`` filter names no
    stored value, rewritten to name the stored values (module docstring)."""

    name: ClassVar[str] = "values"
    lineage: ClassVar[str] = "values"
    agent: ClassVar[str] = "value_repair"

    def suspect(self, sql: str, context: RepairContext) -> bool:
        return context.index.bound(ValueRepair).excludes_a_literal(sql)

    async def ground(
        self, sql: str, context: RepairContext, probe: RunProbe, *, rows: bool
    ) -> Rewrite | None:
        after = await context.index.bound(ValueRepair).propose(sql, probe, negated_only=rows)
        if after is None:
            return None
        return Rewrite(stage=self.name, detail="stored values", before=sql, after=after)
