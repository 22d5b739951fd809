"""The labels a column's documentation names: the values of an enum-like column, or of each
sub-field of a nested one, read from its description alone.

    description ──► listed: a vocabulary the text states, the column's only values
                      - labels each quoted and given a meaning, introduced by a colon and
                        separated by semicolons (DuckDB ``COMMENT ON`` text):
                        ``One of: 'queued' = open, waiting; 'resolved' = closed, solved.``
                      - dbt's ``accepted_values`` test, which the YAML source writes as
                        ``values: one of OH, PA``
                ──► candidates: every word the text may name as a value — a quoted word
                    ('high', "M", `blocker`; an example too) or an item of its value note
                    (``values: one of OH, PA``, ``values: M: male; F: female``)

The agentic checks hold a column to its listed labels (``vocabularies``); the schema catalog
keeps the candidates its data holds (``catalog/vocabulary.py``).

A nested column's description speaks for its sub-fields. A sub-field's listed labels are those
of its own description, else those of the clauses of the column's description about it
(``subfields.py``: ``role is one of: 'primary' = ...`` → ``owned_by.role``); its candidates are
read from its own description and the column's whole one, since a sub-field's data, which the
catalog checks them against, tells which sub-field holds which.

    >>> labels("Tier. One of: 'gold' = top; 'basic' = the rest (e.g. \\"trial\\").")
    Labels(listed=('gold', 'basic'), candidates=('gold', 'basic', 'trial'))
    >>> from pipelines.contracts import ColumnInfo, SchemaView, TableInfo
    >>> owners = ColumnInfo(
    ...     name="owned_by", type="STRUCT(user_id VARCHAR, role VARCHAR)[]",
    ...     description="Owners. user_id joins users; role is one of: 'primary' = the owner; "
    ...     "'secondary' = a helper.",
    ...     children=(ColumnInfo(name="owned_by.user_id", type="VARCHAR"),
    ...               ColumnInfo(name="owned_by.role", type="VARCHAR")))
    >>> {path: found.listed for path, found in column_labels(owners).items()}
    {'owned_by.user_id': (), 'owned_by.role': ('primary', 'secondary')}
    >>> view = SchemaView(db_id="w", dialect="duckdb", tables=(TableInfo(name="tickets", columns=(
    ...     ColumnInfo(name="stage", type="VARCHAR", description="One of: 'queued' = open; 'resolved' = closed."),
    ...     owners)),))
    >>> vocabularies(view)
    {'tickets.stage': ('queued', 'resolved'), 'tickets.owned_by.role': ('primary', 'secondary')}
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.types import Frozen
from pipelines.contracts import ColumnInfo, SchemaView
from pipelines.schema.documentation.subfields import share

# A listed label and its meaning: 'label' = ...
_LISTED = re.compile(r"'([^'\n]{1,80})'\s*=")
# A quote opens after no letter and closes before none: the apostrophe of "customer's" is none.
_QUOTED = re.compile(r"(?<!\w)(?:'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|`([^`\n]{1,80})`)(?!\w)")
# dbt's accepted_values as the YAML documentation source writes them.
_ACCEPTED = re.compile(r"\bvalues: one of ([^;]+)")
# The label of a value-note item: what comes before "=", ":", " (" or " - ".
_LABEL_END = re.compile(r"\s*(?:=|:|\s\(|\s-\s)")
_NOTE_PREFIX = re.compile(r"^(?:one of|either)\s+", re.IGNORECASE)


class Labels(Frozen):
    """The labels documentation names for one column or sub-field, each in the order the text
    names them (module docstring)."""

    listed: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()


def value_note(text: str) -> str:
    """What follows ``values:`` in a description (how ``ColumnDoc.text`` and the BIRD source
    write how values are stored), ``""`` without one."""
    return text.partition("values:")[2]


def _listed(text: str) -> tuple[str, ...]:
    """The labels of the lists in ``text`` (a list's first label follows a colon, each next one a
    semicolon; any other is an example), else its accepted values."""
    found: list[str] = []
    listing = False  # whether the label before was a list's
    for match in _LISTED.finditer(text):
        before = text[: match.start()].rstrip()
        listing = before.endswith(":") or (listing and before.endswith(";"))
        if listing:
            found.append(match.group(1))
    if not found and (accepted := _ACCEPTED.search(text)):
        found = [v.strip() for v in accepted.group(1).split(",") if v.strip()]
    return tuple(dict.fromkeys(found))


def _candidates(text: str) -> tuple[str, ...]:
    """Quoted words, then the items of the value note (split at commas, semicolons, bars and
    "or")."""
    found = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]
    if note := value_note(text):
        for item in re.split(r"[,;|]|\bor\b", note):
            label = _LABEL_END.split(_NOTE_PREFIX.sub("", item.strip()), maxsplit=1)[0]
            found.append(label.strip(" '\"`."))
    return tuple(label for label in dict.fromkeys(found) if label)


def labels(text: str) -> Labels:
    """The labels ``text``, one column's description, names (module docstring)."""
    return Labels(listed=_listed(text), candidates=_candidates(text))


def below(column: ColumnInfo) -> Iterator[ColumnInfo]:
    """The column's sub-fields at every depth, depth first."""
    for child in column.children:
        yield child
        yield from below(child)


def column_labels(column: ColumnInfo) -> dict[str, Labels]:
    """Column path (``stage``, ``links.type``) -> the labels named for it, for a column without
    sub-fields or each innermost sub-field of a nested one; only those with some."""
    if not column.children:
        found = {column.name: labels(column.description or "")}
    else:
        whole = column.description or ""
        nested = list(below(column))
        shared = share(whole, [c.name[len(column.name) + 1 :] for c in nested])
        found = {}
        for leaf in (c for c in nested if not c.children):
            own = leaf.description or ""
            about = shared.get(leaf.name[len(column.name) + 1 :], "")
            found[leaf.name] = Labels(
                listed=_listed(own) or _listed(about),
                candidates=_candidates(f"{own} {whole}"),
            )
    return {path: named for path, named in found.items() if named.listed or named.candidates}


def vocabularies(view: SchemaView) -> dict[str, tuple[str, ...]]:
    """``table.column_path`` (lower-cased) -> the labels its documentation lists, in order."""
    return {
        f"{table.name}.{path}".lower(): named.listed
        for table in view.tables
        for column in table.columns
        for path, named in column_labels(column).items()
        if named.listed
    }
