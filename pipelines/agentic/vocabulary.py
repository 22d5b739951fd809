"""The documented vocabularies of enum-like columns: the labels a column's documentation says
are its only values, read from the schema view's column descriptions.

Two ways documentation states a vocabulary:

- a list of labels, each quoted and given its meaning, introduced by a colon and separated by
  semicolons (DuckDB ``COMMENT ON`` text):
  ``Workflow stage. One of: 'queued' = open, waiting; 'resolved' = closed, solved.``;
- dbt's ``accepted_values`` test, which the YAML source turns into ``values: one of OH, PA``.

On a STRUCT column (or a list of them) the comment speaks for its sub-fields: each list goes to
the sub-field named last before it (``role is one of: 'primary' = ...`` → ``owned_by.role``).
A sub-field with a description of its own is read from that description.

    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> owners = ColumnInfo(
    ...     name="owned_by", type="STRUCT(user_id VARCHAR, role VARCHAR)[]",
    ...     description="Owners. user_id joins users; role is one of: 'primary' = the owner; "
    ...     "'secondary' = a helper.",
    ...     children=(ColumnInfo(name="owned_by.user_id", type="VARCHAR"),
    ...               ColumnInfo(name="owned_by.role", type="VARCHAR")))
    >>> view = SchemaView(db_id="w", dialect="duckdb", tables=(TableInfo(name="tickets", columns=(
    ...     ColumnInfo(name="stage", type="VARCHAR", description="One of: 'queued' = open; 'resolved' = closed."),
    ...     owners)),))
    >>> vocabularies(view)
    {'tickets.stage': ('queued', 'resolved'), 'tickets.owned_by.role': ('primary', 'secondary')}
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipelines.contracts import ColumnInfo, SchemaView

# A label and its meaning: 'label' = ...
_LABEL = re.compile(r"'([^'\n]{1,80})'\s*=")
# dbt's accepted_values as the YAML documentation source writes them.
_ACCEPTED = re.compile(r"\bvalues: one of ([^;]+)")


def _runs(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each list of labels in ``text`` with the text that introduces it (since the last list)."""
    since = start = end = 0
    labels: list[str] = []
    for found in _LABEL.finditer(text):
        before = text[: found.start()].rstrip()
        goes_on = bool(labels) and before.endswith(";")
        if labels and not goes_on:  # the list ended before this label
            yield text[since:start], tuple(labels)
            since, labels = end, []
        if before.endswith(":"):  # a list starts
            start, labels = found.start(), [found.group(1)]
        elif goes_on:
            labels.append(found.group(1))
        else:  # a quoted example, not a list item
            continue
        end = found.end()
    if labels:
        yield text[since:start], tuple(labels)


def _accepted(text: str) -> tuple[str, ...]:
    found = _ACCEPTED.search(text)
    if not found:
        return ()
    return tuple(v.strip() for v in found.group(1).split(",") if v.strip())


def _own(column: ColumnInfo) -> tuple[str, ...]:
    """The labels a column's own description lists for it (a column without sub-fields)."""
    text = column.description or ""
    labels = [label for _, run in _runs(text) for label in run] or list(_accepted(text))
    return tuple(dict.fromkeys(labels))


def _leaves(column: ColumnInfo) -> Iterator[ColumnInfo]:
    for child in column.children:
        if child.children:
            yield from _leaves(child)
        else:
            yield child


def _mentioned_last(window: str, names: dict[str, str]) -> str | None:
    """Of ``names`` (relative path -> full path), the one mentioned last in ``window``."""
    best: tuple[int, int, str] | None = None
    for relative, full in names.items():
        for found in re.finditer(rf"(?<![\w.]){re.escape(relative)}(?!\w)", window):
            key = (found.end(), len(relative), full)
            best = key if best is None or key > best else best
    return best[2] if best else None


def _nested(column: ColumnInfo) -> dict[str, tuple[str, ...]]:
    """Sub-field path -> labels, from the STRUCT column's own description."""
    names = {leaf.name[len(column.name) + 1 :]: leaf.name for leaf in _leaves(column)}
    found: dict[str, tuple[str, ...]] = {}
    for window, labels in _runs(column.description or ""):
        owner = _mentioned_last(window, names)
        if owner is not None and owner not in found:
            found[owner] = labels
    return found


def column_vocabularies(column: ColumnInfo) -> dict[str, tuple[str, ...]]:
    """Column path (``stage``, ``links.type``) -> its documented labels, for a column and its
    sub-fields."""
    if not column.children:
        own = _own(column)
        return {column.name: own} if own else {}
    found = _nested(column)
    for leaf in _leaves(column):
        own = _own(leaf)
        if own:
            found[leaf.name] = own
    return found


def vocabularies(view: SchemaView) -> dict[str, tuple[str, ...]]:
    """``table.column_path`` (lower-cased) -> the labels its documentation lists, in order."""
    return {
        f"{table.name}.{path}".lower(): labels
        for table in view.tables
        for column in table.columns
        for path, labels in column_vocabularies(column).items()
    }
