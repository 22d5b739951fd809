"""Repair "no such column" errors from the schema alone: no LLM call, a few milliseconds.

Small models name the right column with the wrong spelling (``pet_type`` for ``PetType``,
``age`` for ``pet_age``), qualify it with the wrong alias (``T2.name`` where ``T1`` holds
``name``), or use a column of a table they forgot to join. The engine names the column it could
not bind; this module proposes one rewrite for it:

    "no such column: T2.first_name"   ──► the one other table in scope that has ``first_name``
    "no such column: pet_type"        ──► the in-scope column with the same letters (``PetType``)
    "no such column: age"             ──► the in-scope column whose words contain it (``pet_age``)
    "no such column: T2.course"       ──► not ``T2.Course_ID``, the key in scope whose words contain
                                          it, but ``Course`` of the table that key references
    "no such column: T2.weight"       ──► ``weight`` lives only in ``cars_data``, one join key away
                                          from ``T2``'s table: join it and qualify the column
    "no such column: Language"        ──► the same join, but ``Language`` of ``countrylanguage``
      in ``WHERE Language != 'English'``  (many rows per country) is only tested negated: no
                                          such row, ``NOT EXISTS (… j1.Language = 'English')``
    "ambiguous column name: id"       ──► qualified with the first table in FROM that has it

Anything else, more than one equally good answer, or a rewrite that would compare a column with
itself (``ON c.code = pr.code`` where only ``pr`` has ``code``: ``pr.code = pr.code`` is a cross
join, which on a large table runs until the sandbox stops it) proposes nothing: the LLM fixer
takes it.

    >>> from pipelines.schema import introspect
    >>> repair = ColumnRepair(introspect(db))
    >>> repair.propose("SELECT name FROM concert", "no such column: name")
    'SELECT concert_Name FROM concert'
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass
from typing import ClassVar

import sqlglot
from pydantic import Field
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from pipelines.contracts import ForeignKey, SchemaView
from pipelines.indexing.examples.question_skeleton import name_words
from pipelines.repair.base import Phase, RepairContext, Rewrite, Rewriter
from pipelines.schema.joins import JoinGraph, join_graph, sole_primary_key

# The engine's message naming the column it could not bind: (qualifier, column).
_MISSING = (
    re.compile(r"no such column: (?:(?P<q>[^.\s]+)\.)?(?P<c>\S+)", re.I),  # SQLite
    re.compile(r'Table "(?P<q>[^"]+)" does not have a column named "(?P<c>[^"]+)"', re.I),  # DuckDB
    re.compile(r'Referenced column "(?P<c>[^"]+)" not found', re.I),  # DuckDB
    # PostgreSQL: column t2.category / column "drug_name" does not exist
    re.compile(r'\bcolumn (?:"?(?P<q>[^".\s]+)"?\.)?"?(?P<c>[^".\s]+)"? does not exist', re.I),
)
_AMBIGUOUS = (
    re.compile(r"ambiguous column name: (?:(?P<q>[^.\s]+)\.)?(?P<c>\S+)", re.I),  # SQLite
    re.compile(r'Ambiguous reference to column name "(?P<c>[^"]+)"', re.I),  # DuckDB
    re.compile(r'column reference "(?P<c>[^"]+)" is ambiguous', re.I),  # PostgreSQL
)


def words(name: str) -> frozenset[str]:
    """The identifier's words as a set: ``PetType`` and ``pet_type`` both give {pet, type}."""
    return frozenset(name_words(name))


def letters(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


@dataclass(frozen=True)
class Binding:
    """Where an unbound column binds: ``alias.column``; ``many`` is the join added to reach it
    when the column's table holds many rows per row of the table it was joined to."""

    alias: str
    column: str
    many: exp.Join | None = None


@dataclass(frozen=True)
class Source:
    """A schema table as one query scope names it."""

    alias: str  # how the query names it
    table: str  # the schema's table name, lower-cased


def scope_sources(scope: Scope, tables: Container[str]) -> list[Source]:
    """The scope's tables among ``tables`` (lower-cased names), in FROM order; derived tables
    and CTEs are left out."""
    return [
        Source(alias=alias, table=source.name.lower())
        for alias, (_node, source) in scope.selected_sources.items()
        if isinstance(source, exp.Table) and source.name.lower() in tables
    ]


class ColumnRepair:
    """Proposes schema-grounded rewrites of one unbound column reference (see module docstring)."""

    def __init__(self, view: SchemaView, graph: JoinGraph | None = None) -> None:
        self.dialect = view.dialect
        self.columns: dict[str, tuple[str, ...]] = {
            t.name.lower(): tuple(c.name for c in t.columns) for t in view.tables
        }
        self.tables: dict[str, str] = {t.name.lower(): t.name for t in view.tables}
        # The one primary-key column of each table that has exactly one (a 1:1 join key).
        self.sole_keys: dict[str, str] = {
            t.name.lower(): key.name.lower()
            for t in view.tables
            if (key := sole_primary_key(t)) is not None
        }
        self.graph: JoinGraph = graph if graph is not None else join_graph(view)

    def propose(self, sql: str, error: str) -> str | None:
        """A rewrite of ``sql`` that binds the column ``error`` names, or None."""
        for pattern, ambiguous in [(p, False) for p in _MISSING] + [(p, True) for p in _AMBIGUOUS]:
            found = pattern.search(error or "")
            if found:
                qualifier = (found.groupdict().get("q") or "").strip('"`[]')
                try:
                    return self._rewrite(sql, qualifier, found.group("c").strip('"`[]'), ambiguous)
                except (SqlglotError, RecursionError, ValueError, KeyError, AttributeError):
                    # Model SQL sqlglot cannot resolve (a repeated alias, an odd scope): the fixer's.
                    return None
        return None

    # --- rewriting -----------------------------------------------------------------------------

    def _rewrite(self, sql: str, qualifier: str, name: str, ambiguous: bool) -> str | None:
        tree = sqlglot.parse_one(sql, read=self.dialect)
        before = _self_comparisons(tree)
        changed = False
        for scope in traverse_scope(tree):
            targets = [
                c
                for c in scope.columns
                if c.name.lower() == name.lower()
                and c.table.lower() == qualifier.lower()
                # sqlglot lists a subquery's unqualified columns with the outer scope's too
                and c.parent_select is scope.expression
            ]
            if not targets:
                continue
            sources = scope_sources(scope, self.columns)
            if not ambiguous and self._binds(sources, qualifier, name):
                continue  # not the reference the engine could not bind
            fix = (
                self._qualify_ambiguous(sources, name)
                if ambiguous
                else self._bind(scope, sources, qualifier, name)
            )
            if fix is None:
                continue
            for col in targets:
                col.set("this", exp.to_identifier(fix.column))  # quoted only where it must be
                if fix.alias:
                    col.set("table", exp.to_identifier(fix.alias))
            if fix.many is not None:
                _negated_filters_as_anti_joins(scope.expression, fix.many)
            changed = True
        if not changed or _self_comparisons(tree) > before:
            return None
        return tree.sql(dialect=self.dialect)

    def _binds(self, sources: list[Source], qualifier: str, name: str) -> bool:
        return any(
            self._has(s.table, name) is not None
            for s in sources
            if not qualifier or s.alias.lower() == qualifier.lower()
        )

    def _has(self, table: str, name: str) -> str | None:
        return next((c for c in self.columns[table] if c.lower() == name.lower()), None)

    def _qualify_ambiguous(self, sources: list[Source], name: str) -> Binding | None:
        for s in sources:
            if (column := self._has(s.table, name)) is not None:
                return Binding(s.alias, column)
        return None

    def _bind(
        self, scope: Scope, sources: list[Source], qualifier: str, name: str
    ) -> Binding | None:
        # 1. the wrong alias: exactly one other table in scope has the column as written
        if qualifier:
            exact = [
                (s.alias, c)
                for s in sources
                if s.alias.lower() != qualifier.lower()
                and (c := self._has(s.table, name)) is not None
            ]
            if len(exact) == 1:
                return Binding(*exact[0])
        # 2. the wrong spelling: the column of an in-scope table that reads the same
        owner = [s for s in sources if s.alias.lower() == qualifier.lower()] if qualifier else []
        for pool in [owner, sources] if owner else [sources]:
            hit = self._closest(pool, name)
            if hit is not None:
                source, column = hit
                if self._names_its_reference(source, column, name):
                    break  # ``T2.course`` where T2 has Course_ID: course.Course, joined below
                return Binding(source.alias if qualifier or len(sources) > 1 else "", column)
        # 3. the forgotten join: one table outside the scope has the column, one join key away
        return self._join(scope, sources, qualifier, name)

    def _names_its_reference(self, source: Source, column: str, name: str) -> bool:
        """``column`` (Course_ID) is a key referencing a table that has ``name`` (Course) itself."""
        if letters(column) == letters(name):
            return False
        return any(
            edge.table.lower() == source.table
            and edge.column.lower() == column.lower()
            and any(letters(c) == letters(name) for c in self.columns[edge.ref_table.lower()])
            for edge in self.graph.edges
        )

    def _closest(self, pool: list[Source], name: str) -> tuple[Source, str] | None:
        """Same letters beats same words beats contained words; a tie proposes nothing."""
        want_letters, want_words = letters(name), words(name)
        tiers: list[list[tuple[Source, str]]] = [[], [], []]
        for s in pool:
            for c in self.columns[s.table]:
                have = words(c)
                if letters(c) == want_letters:
                    tiers[0].append((s, c))
                elif have == want_words:
                    tiers[1].append((s, c))
                elif want_words and have and (want_words < have or have < want_words):
                    tiers[2].append((s, c))
        for tier in tiers:
            if len(tier) == 1:
                return tier[0]
            if tier:
                return None
        return None

    def _join(
        self, scope: Scope, sources: list[Source], qualifier: str, name: str
    ) -> Binding | None:
        select = scope.expression
        if not isinstance(select, exp.Select) or not sources or select.args.get("from_") is None:
            return None
        in_scope = {s.table for s in sources}
        owners = [
            t
            for t in self.columns
            if t not in in_scope and any(letters(c) == letters(name) for c in self.columns[t])
        ]
        if len(owners) != 1:
            return None
        target = owners[0]
        starts = [s for s in sources if s.alias.lower() == qualifier.lower()] or sources
        paths = [
            (s, p)
            for s in starts
            if (p := self.graph.path(self._name(s.table), self._name(target))) is not None
            and len(p) <= 2
        ]
        if not paths:
            return None
        start, path = min(paths, key=lambda sp: len(sp[1]))
        # Aliases of nested queries too: an anti-join's subquery keeps its join's alias.
        used = {s.alias.lower() for s in sources} | {
            t.alias.lower() for t in select.find_all(exp.Table) if t.alias
        }
        here_alias, here = start.alias, start.table
        for edge in path:
            there = edge.ref_table if edge.table.lower() == here else edge.table
            here_col, there_col = (
                (edge.column, edge.ref_column)
                if edge.table.lower() == here
                else (edge.ref_column, edge.column)
            )
            alias = _fresh_alias(used)
            select.join(
                exp.alias_(exp.to_table(there), alias, table=True),
                on=exp.EQ(
                    this=exp.column(here_col, table=here_alias),
                    expression=exp.column(there_col, table=alias),
                ),
                copy=False,
            )
            here_alias, here = alias, there.lower()
        column = next(c for c in self.columns[target] if letters(c) == letters(name))
        return Binding(
            here_alias,
            column,
            many=select.args["joins"][-1] if self._to_many(path, start) else None,
        )

    def _to_many(self, path: tuple[ForeignKey, ...], start: Source) -> bool:
        """One key from ``start``'s table to a table whose rows reference it, not 1:1."""
        if len(path) != 1:
            return False
        edge = path[0]
        return (
            edge.ref_table.lower() == start.table
            and edge.table.lower() != start.table
            and self.sole_keys.get(edge.table.lower()) != edge.column.lower()
        )

    def _name(self, table: str) -> str:
        return self.tables[table]


def _positive(condition: exp.Expression) -> exp.Expression | None:
    """``a = b`` for ``a != b``, ``x IN/LIKE …`` for ``NOT x IN/LIKE …`` and ``x NOT LIKE …``;
    None for the rest."""
    if isinstance(condition, exp.NEQ):
        return exp.EQ(this=condition.this.copy(), expression=condition.expression.copy())
    if isinstance(condition, exp.Not) and isinstance(
        condition.this, (exp.EQ, exp.In, exp.Like, exp.ILike)
    ):
        return condition.this.copy()
    if isinstance(condition, (exp.Like, exp.ILike)) and condition.args.get("negate"):
        positive = condition.copy()
        positive.set("negate", None)
        return positive
    return None


def _negated_filters_as_anti_joins(select: exp.Expression, join: exp.Join) -> None:
    """Rewrite a join to the many side whose columns are only tested negated in WHERE.

    ``FROM country JOIN countrylanguage AS j1 … WHERE j1.Language <> 'English'`` keeps each
    country that speaks some other language; the question meant the countries with no English
    row. Each negated conjunct that names only the join's columns becomes
    ``NOT EXISTS (SELECT 1 FROM countrylanguage AS j1 WHERE <join key> AND <conjunct, positive>)``
    and the join goes. Any other use of the join's columns (select list, grouping, a positive
    filter) leaves the query as it is.
    """
    alias = join.alias_or_name
    where = select.args.get("where")
    on = join.args.get("on")
    if where is None or on is None:
        return
    conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
    negated = [
        c
        for c in conjuncts
        if _positive(c) is not None and {col.table for col in c.find_all(exp.Column)} == {alias}
    ]
    in_negated = {id(col) for c in negated for col in c.find_all(exp.Column)}
    in_on = {id(col) for col in on.find_all(exp.Column)}
    uses = [
        col for col in select.find_all(exp.Column) if col.table == alias and id(col) not in in_on
    ]
    if not negated or any(id(col) not in in_negated for col in uses):
        return
    for condition in negated:
        exists = (
            exp.select("1").from_(join.this.copy()).where(on.copy()).where(_positive(condition))
        )
        condition.replace(exp.Not(this=exp.Exists(this=exists)))
    join.pop()


def _self_comparisons(tree: exp.Expression) -> int:
    """``T1.a = T1.a`` comparisons: true on every row, so a join ON one is a cross join."""
    return sum(
        isinstance(eq.this, exp.Column)
        and isinstance(eq.expression, exp.Column)
        and eq.this.name.lower() == eq.expression.name.lower()
        and eq.this.table.lower() == eq.expression.table.lower()
        for eq in tree.find_all(exp.EQ)
    )


def _fresh_alias(used: set[str]) -> str:
    n = 1
    while f"j{n}" in used:
        n += 1
    used.add(f"j{n}")
    return f"j{n}"


class Columns(Rewriter):
    """The repair ``columns``: an errored candidate whose error names a column it could not bind,
    rewritten from the schema, up to ``rounds`` rewrites (each executed) per candidate."""

    name: ClassVar[str] = "columns"
    phase: ClassVar[Phase] = "failed"
    rounds: int = Field(default=3, ge=1)

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        after = context.index.bound(ColumnRepair).propose(sql, context.error)
        if not after:
            return None
        return Rewrite(stage=self.name, detail=context.error, before=sql, after=after)
