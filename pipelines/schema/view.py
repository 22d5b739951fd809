"""Restrict a SchemaView to some tables/columns, and estimate prompt sizes.

    >>> from pipelines.schema import introspect
    >>> small = restrict(introspect(db), tables=["singer"], columns=["concert.Year"])
    >>> [t.name for t in small.tables]
    ['singer', 'concert']
    >>> token_size("zip 45251")   # 5 digits + 4 other characters
    7

``token_size`` is an estimate, not a tokenizer: one token per digit plus one per three other
characters. The code models used here (Qwen2.5) split numbers into single digits, and schema
text (pipes, underscores, sample values) averages about three characters per token otherwise;
against the 1.5B's own tokenizer it is within 10% where sample values are shown and up to 40%
high for bare DDL, while ``len / 4`` is 30-40% low where sample values are shown
(docs/benchmarks.md#schema-prompt-sizes). It needs no model files and is identical on every
machine, which is what budget decisions (how much schema fits) need; use the model's own
tokenizer where exact counts matter.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
from pipelines.schema.errors import UnknownSchemaObject
from pipelines.schema.render import render_ddl, render_light

CHARS_PER_TOKEN = 3  # characters other than digits; every digit is a token of its own


def token_size(text: str) -> int:
    """Estimated tokens of ``text``: digits + ``ceil(other characters / 3)`` (see module docstring)."""
    digits = sum(c.isdigit() for c in text)
    return digits + math.ceil((len(text) - digits) / CHARS_PER_TOKEN)


def view_token_size(view: SchemaView, style: Literal["light", "ddl"] = "ddl") -> int:
    """Estimated tokens of the view as rendered for a prompt."""
    return token_size(render_ddl(view) if style == "ddl" else render_light(view))


def _find_table(view: SchemaView, name: str) -> TableInfo:
    for table in view.tables:
        if table.name.lower() == name.lower():
            return table
    raise UnknownSchemaObject("table", name, view.db_id)


def _split_qualified(view: SchemaView, qualified: str) -> tuple[TableInfo, str]:
    """``table.column`` (or ``table.parent.child``) -> (table, column path); longest table name wins."""
    for table in sorted(view.tables, key=lambda t: -len(t.name)):
        prefix = table.name.lower() + "."
        if qualified.lower().startswith(prefix) and len(qualified) > len(prefix):
            return table, qualified[len(prefix) :]
    raise UnknownSchemaObject("column", qualified, view.db_id)


def _prune(column: ColumnInfo, paths: set[str]) -> ColumnInfo | None:
    """The column with only the sub-fields on ``paths`` (lower-cased dotted names), or None."""
    name = column.name.lower()
    if name in paths:
        return column
    kids = tuple(k for k in (_prune(child, paths) for child in column.children) if k is not None)
    return column.model_copy(update={"children": kids}) if kids else None


def restrict(
    view: SchemaView,
    tables: Iterable[str] = (),
    columns: Iterable[str] = (),
    *,
    keep_keys: bool = True,
) -> SchemaView:
    """A view of only the named tables (whole) and ``table.column`` columns.

    With ``keep_keys`` the primary-key and join-key columns of the kept tables stay, so the
    joins between them can still be written. Unknown names raise ``UnknownSchemaObject``;
    table order follows the original view.
    """
    whole = {_find_table(view, name).name for name in tables}
    wanted: dict[str, set[str]] = {}
    for qualified in columns:
        table, path = _split_qualified(view, qualified)
        tops = {c.name.lower() for c in table.columns}
        if path.lower().split(".")[0] not in tops and path.lower() not in tops:
            raise UnknownSchemaObject("column", qualified, view.db_id)
        wanted.setdefault(table.name, set()).add(path.lower())
    kept_names = whole | set(wanted)
    fks = tuple(
        fk for fk in view.foreign_keys if fk.table in kept_names and fk.ref_table in kept_names
    )
    if keep_keys:
        for fk in fks:
            for table, column in ((fk.table, fk.column), (fk.ref_table, fk.ref_column)):
                if table not in whole:
                    wanted.setdefault(table, set()).add(column.lower())
    kept: list[TableInfo] = []
    for table in view.tables:
        if table.name in whole:
            kept.append(table)
        elif table.name in wanted:
            paths = wanted[table.name]
            cols = []
            for column in table.columns:
                if keep_keys and column.primary_key:
                    cols.append(column)
                elif (pruned := _prune(column, paths)) is not None:
                    cols.append(pruned)
            kept.append(table.model_copy(update={"columns": tuple(cols)}))
    kept_columns = {(t.name, c.name) for t in kept for c in t.columns}
    fks = tuple(
        fk
        for fk in fks
        if (fk.table, fk.column) in kept_columns and (fk.ref_table, fk.ref_column) in kept_columns
    )
    return view.model_copy(update={"tables": tuple(kept), "foreign_keys": fks})
