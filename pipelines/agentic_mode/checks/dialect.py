"""Rewriter: functions of other dialects translated by sqlglot into the target's.

Models trained on many warehouses call functions the target engine lacks (``IFF``, ``NVL``,
``GETDATE`` on DuckDB; ``DATEDIFF``, ``NVL`` on SQLite). Each call whose written name the
target engine lacks (the engine, or a PostgreSQL server's list, is asked:
``pipelines/agentic_mode/functions.py``) is read as written by each source dialect in turn and
written back in the target dialect; the first translation that keeps every column written in
the call, uses only functions the engine has, and parses in the target replaces the call:

    IFF(t.n > 1, 'a', 'b')      (duckdb) ──► CASE WHEN t.n > 1 THEN 'a' ELSE 'b' END   (snowflake)
    DATEDIFF('day', a, b)       (sqlite) ──► CAST((JULIANDAY(b) - JULIANDAY(a)) AS INTEGER)

A call no source translates stays as written (the unknown-function blocker reports it).
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
from pydantic import field_validator
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect as SqlglotDialect
from sqlglot.errors import ErrorLevel

from pipelines.agentic_mode.functions import Call, calls, has_function
from pipelines.agentic_mode.references import ancestors
from pipelines.contracts import Dialect
from pipelines.repair.base import UNREADABLE, RepairContext, Rewrite, Rewriter


def _names(node: exp.Expression) -> set[str]:
    """The columns and bare words (a unit such as ``day``) an expression reads."""
    return {c.sql().lower() for c in node.find_all(exp.Column)} | {
        v.name.lower() for v in node.find_all(exp.Var)
    }


def _written_columns(call: Call, dialect: Dialect) -> set[str]:
    """The columns of ``call`` as written: its arguments read as those of a function no
    dialect knows, so no reading of the name's own arguments takes part."""
    generic = "unknown_function_" + call.text[len(call.name) :]
    return {c.sql().lower() for c in sqlglot.parse_one(generic, read=dialect).find_all(exp.Column)}


def _calls_only(sql: str, dialect: Dialect, known: frozenset[str]) -> exp.Expression | None:
    """``sql`` parsed in ``dialect`` when every function it calls by name is the engine's
    (``known``: a server's list, as ``has_function`` takes it)."""
    try:
        node = sqlglot.parse_one(sql, read=dialect)
    except UNREADABLE:
        return None
    ok = all(has_function(dialect, call.name, known) for call in calls(node, sql, dialect))
    return node if ok else None


class DialectFunctions(Rewriter):
    """Translates calls of functions the target engine lacks (module docstring)."""

    name: ClassVar[str] = "dialect_functions"
    # Dialects a call is read as, in order: those that quote identifiers with double quotes
    # first, so a quoted column is not read as a string.
    sources: tuple[str, ...] = ("snowflake", "tsql", "postgres", "oracle", "bigquery", "mysql")

    @field_validator("sources")
    @classmethod
    def _known_dialects(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            SqlglotDialect.get_or_raise(name)  # ValueError naming the dialects sqlglot has
        return value

    def rewrite(self, sql: str, context: RepairContext) -> Rewrite | None:
        dialect, known = context.index.dialect, context.index.functions
        try:
            tree = sqlglot.parse_one(sql, read=dialect)
        except UNREADABLE:
            return None
        replaced: list[str] = []
        done: list[exp.Expression] = []  # calls replaced, whose insides went with them
        for call in calls(tree, sql, dialect):
            if has_function(dialect, call.name, known):
                continue
            if any(a is d for a in ancestors(call.func) for d in done):
                continue
            translation = self._translate(call, dialect, known)
            if translation is not None:
                node, source = translation
                call.func.replace(node)
                done.append(call.func)
                replaced.append(f"{call.name} ({source}) → {node.sql(dialect=dialect)}")
        if not replaced:
            return None
        return self.rewritten(tree, sql, "; ".join(replaced), dialect)

    def _translate(
        self, call: Call, dialect: Dialect, known: frozenset[str]
    ) -> tuple[exp.Expression, str] | None:
        try:
            wanted = _written_columns(call, dialect)
        except UNREADABLE:
            return None
        for source in self.sources:
            try:
                read = sqlglot.parse_one(call.text, read=source)
                written = read.sql(dialect=dialect, unsupported_level=ErrorLevel.RAISE)
            except UNREADABLE:
                continue
            # the source does not know the function either, or lost a column written in the
            # call (read "x" as a string, or the arguments as another signature)
            if isinstance(read, exp.Anonymous) or not wanted <= _names(read):
                continue
            node = _calls_only(written, dialect, known)
            if node is not None:
                return node, source
        return None
