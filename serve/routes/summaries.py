"""What ``GET /v1/databases`` shows of a registered database: its tables, columns and row
counts, read once per version of the file.

    >>> from serve.store import RegisteredDatabase
    >>> SchemaSummaries().describe(RegisteredDatabase(name="x", path="/no/such.sqlite",
    ...                                                engine="sqlite")).error
    'the file is missing'
"""

from __future__ import annotations

from serve.databases import database_ref, fingerprint, present
from serve.store import RegisteredDatabase
from serve.types import DatabaseInfo, TableSummary


class SchemaSummaries:
    """Summaries by (name, file fingerprint): a changed file is read again."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str], DatabaseInfo] = {}

    def describe(self, db: RegisteredDatabase) -> DatabaseInfo:
        from pipelines.schema.introspect import introspect

        if not present(db.path):
            return DatabaseInfo(name=db.name, engine=db.engine, error="the file is missing")
        at = (db.name, fingerprint(db.path))
        if at not in self._known:
            try:
                view = introspect(database_ref(db.name, db), sample_values=0, infer_joins=False)
            except Exception:
                return DatabaseInfo(name=db.name, engine=db.engine, error="cannot be read now")
            self._known[at] = DatabaseInfo(
                name=db.name,
                engine=db.engine,
                tables=tuple(
                    TableSummary(
                        name=t.name,
                        columns=tuple(c.name for c in t.columns),
                        row_count=t.row_count,
                    )
                    for t in view.tables
                ),
            )
        return self._known[at]
