"""Blocker: functions the target engine does not have, by the name the query calls them
(``DATEDIFF`` on SQLite, ``IFF`` on DuckDB), against the engine's own function list (a
PostgreSQL server's, read with the schema; ``pipelines/agentic_mode/functions.py``). Runs after
the dialect rewriter, so what it reports is what sqlglot could not translate.

    SELECT YEAR(c) FROM t   (SQLite)   ──► function_not_in_dialect YEAR
"""

from __future__ import annotations

from typing import ClassVar

from pipelines.agentic_mode.checks.base import ParsedSQL
from pipelines.agentic_mode.checks.unknown_names import close
from pipelines.agentic_mode.functions import calls, engine_functions, has_function
from pipelines.agentic_mode.taxonomy import Finding
from pipelines.repair.base import Blocker, RepairContext


class UnknownFunctions(Blocker):
    """Reports calls of functions the engine lacks (module docstring)."""

    name: ClassVar[str] = "unknown_functions"
    emits: ClassVar[tuple[str, ...]] = ("function_not_in_dialect",)

    def check(self, parsed: ParsedSQL, context: RepairContext) -> tuple[Finding, ...]:
        dialect, known = context.index.dialect, context.index.functions
        found: dict[str, Finding] = {}
        for call in calls(parsed.tree, parsed.sql, dialect):
            name = call.name
            if name.lower() in found or has_function(dialect, name, known):
                continue
            found[name.lower()] = self.finding(
                context,
                "function_not_in_dialect",
                f"{dialect} has no function {name}",
                identifier=name,
                suggestion=close(name, sorted(engine_functions(dialect, known))),
            )
        return tuple(found.values())
