"""Classify what an executed candidate met: the engine's error message, or the answer's shape,
as one class of the taxonomy (``taxonomy.yaml``).

    ExecutionResult ──error──► error_kind (timeout, read_only_violation, ...) ──► its class
                             ──► the engine's message ──► the first class whose pattern matches
                             ──► else the taxonomy's fallback class
                    ──rows───► none: empty_result; every value NULL: null_only_result

The patterns live in the taxonomy file, per class and per engine, so a new message is taught
without code; the groups ``identifier`` and ``suggestion`` of the matching pattern give the
name the message blames and what the engine proposes instead. It never raises on a message.

    >>> classifier = Classifier()
    >>> found = classifier.classify_error("no such column: T2.nme", "sqlite")
    >>> found.error_class, found.action, found.identifier
    ('column_not_found', 'expand_schema', 'T2.nme')
    >>> classifier.classify_error("something new went wrong", "duckdb").error_class
    'unclassified'
"""

from __future__ import annotations

import re

from pipelines.agentic_mode.taxonomy import Finding, Taxonomy, load_taxonomy
from pipelines.contracts import Dialect, ExecutionResult

# The classes the answer's shape is classified into.
EMPTY_RESULT = "empty_result"
NULL_ONLY_RESULT = "null_only_result"


class Classifier:
    """Maps engine errors and answers to taxonomy classes (module docstring)."""

    def __init__(self, taxonomy: Taxonomy | None = None) -> None:
        self.taxonomy = taxonomy if taxonomy is not None else load_taxonomy()
        self.taxonomy.require((EMPTY_RESULT, NULL_ONLY_RESULT), "the result check")
        self._patterns: dict[str, list[tuple[re.Pattern[str], str]]] = {}
        self._kinds: dict[str, str] = {}
        for cls in self.taxonomy.classes:
            for dialect, patterns in cls.messages.items():
                self._patterns.setdefault(dialect, []).extend(
                    (re.compile(p), cls.name) for p in patterns
                )
            for kind in cls.error_kinds:
                self._kinds.setdefault(kind, cls.name)

    def classify_error(
        self, message: str, dialect: Dialect, error_kind: str | None = None
    ) -> Finding:
        """The class of an engine or sandbox error; the fallback class when none matches."""
        message = message or ""
        detail = next((line.strip() for line in message.splitlines() if line.strip()), "")
        name, found = self._kinds.get(error_kind or ""), None
        if name is None:
            for pattern, candidate in self._patterns.get(dialect, ()):
                found = pattern.search(message)
                if found:
                    name = candidate
                    break
        groups = found.groupdict() if found else {}
        return self.taxonomy.finding(
            name or self.taxonomy.fallback,
            source=dialect,
            detail=detail or f"{error_kind or 'an error'} without a message",
            identifier=(groups.get("identifier") or "").strip(),
            suggestion=(groups.get("suggestion") or "").strip(),
        )

    def classify_result(self, result: ExecutionResult, dialect: Dialect) -> Finding | None:
        """The class of an executed candidate's outcome: its error's, ``empty_result`` for no
        rows, ``null_only_result`` when every value is NULL; None for an answer with values."""
        if result.error is not None:
            return self.classify_error(result.error, dialect, result.error_kind)
        if result.row_count == 0:
            return self.taxonomy.finding(
                EMPTY_RESULT, source="result", detail="the query returned no rows"
            )
        if result.rows and all(cell is None for row in result.rows for cell in row):
            return self.taxonomy.finding(
                NULL_ONLY_RESULT,
                source="result",
                detail=f"all {result.row_count} rows hold only NULL",
            )
        return None
