"""Typed errors of the schema views.

    SchemaError
    └── UnknownSchemaObject   a table or column name that the view does not have (restrict)
        └── UnknownEntity     an entity name the schema catalog does not have (catalog/model.py)

A database that cannot be opened raises the sandbox's ``DatabaseUnavailable``; description
files that cannot be read are skipped with a warning (descriptions are optional).
"""

from __future__ import annotations


class SchemaError(Exception):
    """Base of every schema-view error."""


class UnknownSchemaObject(SchemaError, ValueError):
    """A table or ``table.column`` name asked for that the schema view does not contain."""

    def __init__(self, kind: str, name: str, db_id: str, hint: str = "") -> None:
        self.kind = kind
        self.name = name
        super().__init__(
            f"unknown {kind} {name!r} in database {db_id!r}" + (f" ({hint})" if hint else "")
        )
